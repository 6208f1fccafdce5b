package proxy

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A page headgate reads but does not rewrite (its head is longer than
// max_head_bytes) and compresses for the client, having asked the upstream
// for identity: GET, HEAD and the 304 of a revalidation carry one ETag,
// headgate's, which maps back to the upstream's strong one. Before, the
// 200 said W/"big1", the HEAD W/"hg.…" and the 304 "big1": a 304 whose
// strong validator matches no stored response updates none (RFC 9111
// §4.3.4). The upstream compares If-None-Match weakly, as nginx does.
func TestUpstreamIdentitySkippedPageETag(t *testing.T) {
	bigHead := "<!doctype html><html><head><title>Old</title>" + strings.Repeat("<meta name=x content=y>\n", 200) +
		"</head><body>" + strings.Repeat("<p>body</p>\n", 2000) + "</body></html>"
	var sawINM string
	_, front := newTestProxy(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Etag", `"big1"`)
		if inm := r.Header.Get("If-None-Match"); inm != "" {
			sawINM = inm
			if strings.TrimPrefix(inm, "W/") == `"big1"` {
				w.WriteHeader(http.StatusNotModified)
				return
			}
		}
		w.Write([]byte(bigHead))
	}, "[server]\nmax_head_bytes = \"1KiB\"\n\n[[rule]]\nmatch = \"/*\"\ntitle = \"New\"\n")
	h := http.Header{"Accept": {acceptFirefox}, "Accept-Encoding": {"gzip"}}
	res, _ := fetchRaw(t, "GET", front.URL+"/big", h)
	tag := res.Header.Get("Etag")
	if res.Header.Get("Content-Encoding") != "gzip" || !strings.HasPrefix(tag, etagPrefix) {
		t.Fatalf("GET: Content-Encoding %q, ETag %q; want gzip and headgate's tag", res.Header.Get("Content-Encoding"), tag)
	}
	head, _ := fetchRaw(t, "HEAD", front.URL+"/big", h)
	if got := head.Header.Get("Etag"); got != tag {
		t.Errorf("HEAD ETag %q, GET's %q", got, tag)
	}
	h.Set("If-None-Match", tag)
	res2, _ := fetchRaw(t, "GET", front.URL+"/big", h)
	if res2.StatusCode != http.StatusNotModified || res2.Header.Get("Etag") != tag {
		t.Errorf("revalidation: %d with ETag %q; want 304 with the 200's %q", res2.StatusCode, res2.Header.Get("Etag"), tag)
	}
	// RFC 9110 §15.4.5: the 304 carries the Vary the 200 would have
	if v := strings.Join(res2.Header.Values("Vary"), ", "); !strings.Contains(v, "Accept-Encoding") {
		t.Errorf("the 304's Vary %q lacks the 200's Accept-Encoding", v)
	}
	if sawINM != `"big1"` {
		t.Errorf("the upstream saw If-None-Match %q, want its own \"big1\"", sawINM)
	}
}

// A client whose codings headgate does not produce (compress = [], or
// deflate only with the default list) would get a page headgate leaves
// unchanged uncompressed had the upstream been asked for identity: it
// keeps the client's codings, and the page goes out in the upstream's own
// coding (docs/configuration.md, compress).
func TestUpstreamIdentityNoCodingToGive(t *testing.T) {
	// identityUpstream compresses gzip only: asked for deflate, it
	// answers identity, and so does headgate.
	for _, tc := range []struct{ name, extra, ae, upAE, want string }{
		{"compress empty", "[server]\ncompress = []\n\n", "gzip", "gzip", "gzip"},
		{"deflate only", "", "deflate", "deflate", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := &identityUpstream{}
			_, front := newTestProxy(t, up.ServeHTTP, tc.extra+identityConfig)
			h := http.Header{"Accept": {acceptFirefox}, "Accept-Encoding": {tc.ae}}
			res, b := fetchRaw(t, "GET", front.URL+"/same", h)
			if got := up.asked("/same"); got != tc.upAE {
				t.Errorf("upstream asked for %q, want the client's %q: headgate has no coding to give it", got, tc.upAE)
			}
			if got := res.Header.Get("Content-Encoding"); got != tc.want {
				t.Errorf("Content-Encoding %q (%d bytes), want the upstream's %q", got, len(b), tc.want)
			}
		})
	}
}

// The inspector renders what the record says headgate asked the upstream
// for, in JSON and on its page: identity for a page it rewrites, the
// client's codings (and why) for an asset's path.
func TestInspectUpstreamCoding(t *testing.T) {
	f := newInspector(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<!doctype html><html><head><title>T</title></head><body><p>x</p></body></html>`))
	}, testRules)
	for _, tc := range []struct{ path, want string }{
		{"/p", "identity (no Accept-Encoding)"},
		{"/site.css", "(an asset path: .css)"},
	} {
		if _, rep := f.report(t, tc.path); !strings.Contains(rep.UpstreamCoding, tc.want) {
			t.Errorf("%s: upstream_coding %q, want it to say %q", tc.path, rep.UpstreamCoding, tc.want)
		}
	}
	_, _, page := f.get(t, f.admin, "/inspect", url.Values{"path": {"/p"}})
	if !strings.Contains(string(page), "Upstream asked for identity (no Accept-Encoding)") {
		t.Errorf("the inspector page does not say what the upstream was asked for:\n%.2000s", page)
	}
}

// With compress = [], a browser's request keeps its codings upstream
// (headgate produces none of them); explain's and the inspector's own
// request names no coding, and their text must still say what a browser's
// gets, not identity.
func TestInspectUpstreamCodingNoCompress(t *testing.T) {
	var sawAE []string
	f := newInspector(t, func(w http.ResponseWriter, r *http.Request) {
		sawAE = append(sawAE, r.Header.Get("Accept-Encoding"))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<!doctype html><html><head><title>T</title></head><body><p>x</p></body></html>`))
	}, "[server]\ncompress = []\n\n"+testRules)
	_, rep := f.report(t, "/p")
	res, _ := fetchRaw(t, "GET", f.public.URL+"/p", http.Header{"Accept": {acceptFirefox}, "Accept-Encoding": {"gzip, deflate, br, zstd"}})
	res.Body.Close()
	if got := sawAE[len(sawAE)-1]; got == "" {
		t.Fatalf("a browser's request asked the upstream for identity with compress = []")
	}
	if !strings.Contains(rep.UpstreamCoding, "headgate produces none of the client's codings") {
		t.Errorf("inspector says %q; a browser's request asked the upstream for %q", rep.UpstreamCoding, sawAE[len(sawAE)-1])
	}
}
