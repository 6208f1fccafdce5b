package proxy

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The Accept values of a browser's navigation: Firefox's and Safari's, and
// Chrome's (and Edge's).
const (
	acceptFirefox = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	acceptChrome  = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7"
)

func TestAsksPage(t *testing.T) {
	for _, tc := range []struct {
		accept []string
		want   bool
	}{
		{[]string{acceptFirefox}, true},
		{[]string{acceptChrome}, true},
		{[]string{"application/xhtml+xml"}, true},
		{[]string{"TEXT/HTML"}, true},
		{[]string{" text/html ; charset=utf-8 ; q=0.5"}, true},
		{[]string{"text/html;level=1;q=0.001"}, true},
		{[]string{"text/html;q=1.000"}, true},
		{[]string{"text/html;Q=1"}, true},
		{[]string{"image/png", "text/html"}, true}, // a second field
		{[]string{"image/png, text/html;q=0.1"}, true},
		{[]string{`text/plain;x="a,text/html", text/html`}, true},
		{[]string{`application/json;x="text/html"`}, false}, // inside a quoted parameter
		{[]string{`text/plain;x="a,text/html"`}, false},
		{[]string{"text/html;q=0"}, false},
		{[]string{"text/html;q=0.000"}, false},
		{[]string{"text/html;q=0, application/xhtml+xml;q=0"}, false},
		{[]string{"text/html;q=bogus"}, false}, // malformed: 0, as parseQ reads it
		{[]string{"text/html;q=1.5"}, false},
		{[]string{"text/html;q="}, false},
		{[]string{"*/*"}, false},                                                // fetch(), XMLHttpRequest
		{[]string{"image/avif,image/webp,*/*"}, false},                          // <img> in Firefox
		{[]string{"image/avif,image/webp,image/apng,image/*,*/*;q=0.8"}, false}, // <img> in Chrome
		{[]string{"text/css,*/*;q=0.1"}, false},
		{[]string{"text/*"}, false},
		{[]string{"text/htmlx", "xtext/html"}, false},
		{[]string{"text/markdown"}, false},
		{[]string{""}, false},
		{nil, false},
	} {
		if got := asksPage(tc.accept); got != tc.want {
			t.Errorf("Accept %q: %v, want %v", tc.accept, got, tc.want)
		}
	}
}

// TestAsksPageAllocs: the check runs on every GET and allocates nothing,
// whatever the Accept.
func TestAsksPageAllocs(t *testing.T) {
	for _, vs := range [][]string{{acceptFirefox}, {acceptChrome}, {"image/avif,image/webp,*/*"}, {"text/css;x=\"a;b\", text/html;q=0"}, nil} {
		if n := testing.AllocsPerRun(100, func() { asksPage(vs) }); n != 0 {
			t.Errorf("Accept %q: %v allocations, want 0", vs, n)
		}
	}
}

func BenchmarkAsksPage(b *testing.B) {
	for _, bc := range []struct{ name, accept string }{
		{"firefox", acceptFirefox},
		{"chrome", acceptChrome},
		{"img", "image/avif,image/webp,image/apng,image/*,*/*;q=0.8"},
		{"any", "*/*"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			vs := []string{bc.accept}
			b.ReportAllocs()
			for b.Loop() {
				asksPage(vs)
			}
		})
	}
}

// identityUpstream is an origin that compresses as a real one does: gzip
// when the request's Accept-Encoding names it, with an ETag per coding
// (nginx weakens its own). It records the Accept-Encoding each path was
// asked with.
type identityUpstream struct {
	mu   sync.Mutex
	seen map[string][]string // path → Accept-Encoding headers, in order ("-": none)
}

const identityTail = "</head>\n<body><main>" // the page's bytes after its head begin here

var identityPage = "<!doctype html><html><head><title>Old</title>\n<link rel=\"canonical\" href=\"https://notes.example/same\">\n" + identityTail +
	strings.Repeat("<p>Some body text of the page, the same on every request.</p>\n", 1500) + "</main></body></html>\n"

var identityAsset = strings.Repeat("function f(){return 42}\n", 2000)

func gzipped(s string) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	io.WriteString(zw, s)
	zw.Close()
	return b.Bytes()
}

func (u *identityUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ae, ok := r.Header["Accept-Encoding"]
	u.mu.Lock()
	if u.seen == nil {
		u.seen = map[string][]string{}
	}
	v := "-"
	if ok {
		v = strings.Join(ae, ", ")
	}
	u.seen[r.URL.Path] = append(u.seen[r.URL.Path], v)
	u.mu.Unlock()
	gz := strings.Contains(r.Header.Get("Accept-Encoding"), "gzip")
	body, etag := identityPage, `"v1"`
	switch {
	case strings.HasSuffix(r.URL.Path, ".js"):
		w.Header().Set("Content-Type", "text/javascript")
		body, etag = identityAsset, `"js1"`
	case strings.HasSuffix(r.URL.Path, ".pdf"):
		w.Header().Set("Content-Type", "application/pdf")
		body, etag = "%PDF-1.4\n"+strings.Repeat("stream data\n", 500)+"%%EOF\n", `"pdf1"`
	default:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
	}
	w.Header().Set("Vary", "Accept-Encoding")
	if gz {
		etag = "W/" + etag
	}
	w.Header().Set("Etag", etag)
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	b := []byte(body)
	if gz {
		w.Header().Set("Content-Encoding", "gzip")
		b = gzipped(body)
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
}

func (u *identityUpstream) asked(path string) string {
	u.mu.Lock()
	defer u.mu.Unlock()
	s := u.seen[path]
	if len(s) == 0 {
		return "(not asked)"
	}
	return s[len(s)-1]
}

const identityConfig = `
[markdown]
enabled = true
match = ["/page"]

[[rule]]
match = "/page"
title = "New title"

[[rule]]
match = "/raw/*"
rewrite = false
`

// fetchRaw sends one request and returns the response with its body as it
// came, not decoded.
func fetchRaw(t *testing.T, method, url string, header http.Header) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	tr := &http.Transport{DisableCompression: true} // no Accept-Encoding of its own, no decoding
	defer tr.CloseIdleConnections()
	res, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}

const browserAE = "gzip, deflate, br, zstd"

// TestUpstreamIdentity: with server.upstream_page_coding's default, a
// browser's request for a page headgate rewrites goes upstream without
// Accept-Encoding, and the client still gets the page compressed in the
// coding its Accept-Encoding chooses, its head rewritten and every byte
// after the head the upstream's. What is not a page request, and a page
// headgate passes through, keeps the client's codings.
func TestUpstreamIdentity(t *testing.T) {
	up := &identityUpstream{}
	_, front := newTestProxy(t, up.ServeHTTP, identityConfig)
	tail := identityPage[strings.Index(identityPage, identityTail):]
	for _, tc := range []struct {
		name, method, path, accept, ae string
		upAE                           string // what the upstream saw; "-": none
		coding                         string // the client's Content-Encoding
		title                          string // the decoded page's title; "" to compare with raw
		raw                            []byte // the bytes the client gets, when not a rewritten page
	}{
		{"firefox page", "GET", "/page", acceptFirefox, browserAE, "-", "zstd", "New title", nil},
		{"chrome page", "GET", "/page", acceptChrome, browserAE, "-", "zstd", "New title", nil},
		{"safari page", "GET", "/page", acceptFirefox, "gzip, deflate, br", "-", "gzip", "New title", nil},
		{"page, no coding", "GET", "/page", acceptFirefox, "", "-", "", "New title", nil}, // an exact Content-Length
		{"unchanged page", "GET", "/same", acceptFirefox, browserAE, "-", "zstd", "Old", nil},
		{"markdown", "GET", "/page", "text/markdown", browserAE, "-", "zstd", "", nil},
		{"fetch", "GET", "/page", "*/*", browserAE, "zstd, br, gzip, deflate", "zstd", "New title", nil},
		{"html refused", "GET", "/page", "text/html;q=0, */*", "gzip", "gzip", "gzip", "New title", nil},
		{"img asset", "GET", "/app.js", "image/avif,image/webp,*/*", browserAE, "zstd, br, gzip, deflate", "gzip", "", gzipped(identityAsset)},
		{"script asset", "GET", "/app.js", "*/*", "gzip", "gzip", "gzip", "", gzipped(identityAsset)},
		{"rewrite = false", "GET", "/raw/1", acceptFirefox, browserAE, "zstd, br, gzip, deflate", "gzip", "", gzipped(identityPage)},
		{"pdf", "GET", "/doc.pdf", acceptFirefox, browserAE, "-", "", "", nil},
		{"post", "POST", "/page", acceptFirefox, browserAE, browserAE, "gzip", "", gzipped(identityPage)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{"Accept": {tc.accept}}
			if tc.ae != "" {
				h.Set("Accept-Encoding", tc.ae)
			}
			res, b := fetchRaw(t, tc.method, front.URL+tc.path, h)
			if got := up.asked(tc.path); got != tc.upAE {
				t.Errorf("upstream Accept-Encoding %q, want %q", got, tc.upAE)
			}
			if got := res.Header.Get("Content-Encoding"); got != tc.coding {
				t.Fatalf("Content-Encoding %q, want %q (%v)", got, tc.coding, res.Header)
			}
			if res.ContentLength >= 0 && res.ContentLength != int64(len(b)) {
				t.Errorf("Content-Length %d of %d bytes", res.ContentLength, len(b))
			}
			switch {
			case tc.raw != nil:
				if !bytes.Equal(b, tc.raw) {
					t.Errorf("%d bytes, want the upstream's %d, byte for byte", len(b), len(tc.raw))
				}
			case tc.title != "":
				page := string(decodeAs(t, tc.coding, b))
				if !strings.Contains(page, "<title>"+tc.title+"</title>") || !strings.HasSuffix(page, tail) {
					t.Errorf("page (%d bytes) lacks the title %q or the upstream's bytes after the head", len(page), tc.title)
				}
				if tc.coding == "" && res.ContentLength < 0 {
					t.Error("an identity page with no Content-Length: SPEC §8 keeps it exact")
				}
				if !slices.Contains(varyTokens(res.Header), "Accept-Encoding") {
					t.Errorf("Vary %q, want Accept-Encoding", res.Header.Values("Vary"))
				}
			case tc.name == "markdown":
				if md := decodeAs(t, tc.coding, b); !isMarkdown(res) || !bytes.Contains(md, []byte("Some body text")) {
					t.Errorf("no Markdown: %v\n%.200s", res.Header, md)
				}
			case tc.name == "pdf":
				if !bytes.HasPrefix(b, []byte("%PDF-1.4")) || res.Header.Get("Etag") != `"pdf1"` {
					t.Errorf("the PDF is not the upstream's identity answer: %v", res.Header)
				}
			}
		})
	}
}

// A HEAD for a page goes upstream as its GET would, and answers the
// GET's coding; the ETag of a rewritten page maps back to the upstream's
// identity ETag, which it answers 304 for.
func TestUpstreamIdentityHEADAndETag(t *testing.T) {
	up := &identityUpstream{}
	_, front := newTestProxy(t, up.ServeHTTP, identityConfig)
	h := http.Header{"Accept": {acceptChrome}, "Accept-Encoding": {browserAE}}
	head, b := fetchRaw(t, "HEAD", front.URL+"/page", h)
	if got := up.asked("/page"); got != "-" || len(b) != 0 || head.Header.Get("Content-Encoding") != "zstd" {
		t.Fatalf("HEAD: upstream Accept-Encoding %q, Content-Encoding %q, %d bytes", got, head.Header.Get("Content-Encoding"), len(b))
	}
	res, _ := fetchRaw(t, "GET", front.URL+"/page", h)
	tag := res.Header.Get("Etag")
	if tag == "" || tag != head.Header.Get("Etag") {
		t.Fatalf("GET ETag %q, HEAD's %q", tag, head.Header.Get("Etag"))
	}
	h.Set("If-None-Match", tag)
	res, _ = fetchRaw(t, "GET", front.URL+"/page", h)
	if res.StatusCode != http.StatusNotModified || res.Header.Get("Etag") != tag {
		t.Errorf("If-None-Match %s: %d, ETag %q; want 304 with the same tag", tag, res.StatusCode, res.Header.Get("Etag"))
	}
}

// With server.upstream_page_coding = "client" a browser's page request
// asks for the client's codings that headgate decodes, as before, and the
// Record says so. So does shadow mode, which serves the upstream's bytes.
func TestUpstreamPageCodingClient(t *testing.T) {
	for _, tc := range []struct {
		name, extra, upAE string
		identity          bool
	}{
		{"identity", "[server]\nupstream_page_coding = \"identity\"\n\n", "-", true},
		{"client", "[server]\nupstream_page_coding = \"client\"\n\n", "zstd, br, gzip, deflate", false},
		{"shadow", "mode = \"shadow\"\n", "zstd, br, gzip, deflate", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := &identityUpstream{}
			p, front := newTestProxy(t, up.ServeHTTP, tc.extra+identityConfig)
			h := http.Header{"Accept": {acceptFirefox}, "Accept-Encoding": {browserAE}}
			res, b := fetchRaw(t, "GET", front.URL+"/page", h)
			if got := up.asked("/page"); got != tc.upAE {
				t.Errorf("upstream Accept-Encoding %q, want %q", got, tc.upAE)
			}
			title := "<title>New title</title>"
			if tc.name == "shadow" {
				title = "<title>Old</title>"
			}
			if page := decodeAs(t, res.Header.Get("Content-Encoding"), b); !bytes.Contains(page, []byte(title)) {
				t.Errorf("no %s: %v", title, res.Header)
			}
			var rec *Record
			req := httptest.NewRequest("GET", "/page", nil)
			req.Header = h.Clone()
			p.ServeHTTP(httptest.NewRecorder(), req.WithContext(Observe(context.Background(), func(r *Record) { rec = r })))
			if rec == nil || rec.UpstreamIdentity != tc.identity {
				t.Errorf("Record %+v, want UpstreamIdentity %v", rec, tc.identity)
			}
		})
	}
}
