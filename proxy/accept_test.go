package proxy

import (
	"bytes"
	"cmp"
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
	"time"
)

// The Accept values of a browser's navigation: Firefox's and Safari's, and
// Chrome's (and Edge's).
const (
	acceptFirefox = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	acceptChrome  = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7"
)

// Googlebot's Accept and Accept-Encoding, on every fetch: a stylesheet's,
// a script's and a feed's as well as a page's.
const (
	acceptGooglebot = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	googlebotAE     = "gzip, deflate, br"
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

func TestAssetExt(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{"/style.css", ".css"},
		{"/static/app.js", ".js"},
		{"/m/mod.mjs", ".mjs"},
		{"/api/items.json", ".json"},
		{"/feed.xml", ".xml"},
		{"/sitemap.xml", ".xml"},
		{"/notes.txt", ".txt"},
		{"/export.CSV", ".csv"},
		{"/logo.SvG", ".svg"},
		{"/favicon.ico", ".ico"},
		{"/a.png", ".png"}, {"/a.jpg", ".jpg"}, {"/a.JPEG", ".jpeg"}, {"/a.gif", ".gif"},
		{"/a.webp", ".webp"}, {"/a.avif", ".avif"},
		{"/f.woff", ".woff"}, {"/f.woff2", ".woff2"}, {"/f.ttf", ".ttf"},
		{"/doc.pdf", ".pdf"}, {"/a.zip", ".zip"}, {"/a.tar.gz", ".gz"},
		{"/v.mp4", ".mp4"}, {"/v.webm", ".webm"}, {"/s.mp3", ".mp3"},
		{"/app.js.map", ".map"}, {"/m.wasm", ".wasm"},
		{"/", ""},
		{"", ""},
		{"/api/items", ""}, // no extension: the Accept decides
		{"/page", ""},
		{"/index.html", ""}, // a page's own
		{"/a.HTM", ""},
		{"/index.php", ""}, {"/a.asp", ""}, {"/a.aspx", ""}, {"/a.jsp", ""},
		{"/cgi-bin/a.cgi", ""}, {"/a.shtml", ""},
		{"/a.md", ""},       // anything else
		{"/v1.2/items", ""}, // a dot in an earlier segment
		{"/style.css/", ""}, // the last segment is empty
		{"/.css", ".css"},
		{"/a.", ""},
		{"/a.javascript", ""},
		{"/a.css2", ""},
	} {
		if got := assetExt(tc.path); got != tc.want {
			t.Errorf("assetExt(%q) = %q, want %q", tc.path, got, tc.want)
		}
	}
	for _, p := range []string{"/static/APP.JS", "/api/items", "/index.html", "/v1.2/x"} {
		if n := testing.AllocsPerRun(100, func() { assetExt(p) }); n != 0 {
			t.Errorf("assetExt(%q): %v allocations, want 0", p, n)
		}
	}
}

func TestCompressibleType(t *testing.T) {
	for _, tc := range []struct {
		ct   string
		want bool
	}{
		{"text/html; charset=utf-8", true},
		{"text/css", true},
		{"text/plain", true},
		{"text/csv", true},
		{"text/javascript", true},
		{"TEXT/XML", true},
		{" text/markdown ; charset=utf-8", true},
		{"application/json", true},
		{"application/JSON; charset=utf-8", true},
		{"application/javascript", true},
		{"application/x-javascript", true},
		{"application/ecmascript", true},
		{"application/xml", true},
		{"application/ld+json", true},
		{"application/problem+json", true},
		{"application/xhtml+xml", true},
		{"image/svg+xml", true},
		{"application/manifest+json", true},
		{"application/rss+xml", true},
		{"application/atom+xml", true},
		{"application/vnd.api+JSON", true},
		{"text/event-stream", false}, // held open: an encoder per stream
		{"image/png", false},
		{"image/jpeg", false},
		{"image/webp", false},
		{"font/woff2", false},
		{"application/pdf", false},
		{"application/zip", false},
		{"application/gzip", false},
		{"application/octet-stream", false},
		{"application/wasm", false},
		{"video/mp4", false},
		{"application/jsonx", false},
		{"application/+xml", false}, // a suffix with no subtype before it
		{"+xml", false},
		{"text", false},
		{"text/", false},
		{"", false},
	} {
		if got := compressibleType(tc.ct); got != tc.want {
			t.Errorf("compressibleType(%q) = %v, want %v", tc.ct, got, tc.want)
		}
	}
	for _, ct := range []string{"application/json; charset=utf-8", "image/png", "application/rss+xml"} {
		if n := testing.AllocsPerRun(100, func() { compressibleType(ct) }); n != 0 {
			t.Errorf("compressibleType(%q): %v allocations, want 0", ct, n)
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
// (nginx weakens its own) but on its API, and answers ranges, conditions and HEAD as
// http.ServeContent does. It records the Accept-Encoding each path was
// asked with. What it answers each path is identityAnswer's.
type identityUpstream struct {
	mu   sync.Mutex
	seen map[string][]string // path → Accept-Encoding headers, in order ("-": none)
}

const identityTail = "</head>\n<body><main>" // the page's bytes after its head begin here

var identityPage = "<!doctype html><html><head><title>Old</title>\n<link rel=\"canonical\" href=\"https://notes.example/same\">\n" + identityTail +
	strings.Repeat("<p>Some body text of the page, the same on every request.</p>\n", 1500) + "</main></body></html>\n"

var (
	identityAsset = strings.Repeat("function f(){return 42}\n", 2000)
	identityCSS   = strings.Repeat("main p { margin: 0 0 1em; color: #333 }\n", 500)
	identityFeed  = "<?xml version=\"1.0\"?>\n<rss version=\"2.0\"><channel>" +
		strings.Repeat("<item><title>A note</title><link>https://notes.example/n</link></item>\n", 300) + "</channel></rss>\n"
	identityJSON = "[" + strings.Repeat(`{"id":1,"title":"A note","tags":["a","b"]},`, 400) + "{}]\n"
	identityPDF  = "%PDF-1.4\n" + strings.Repeat("stream data\n", 500) + "%%EOF\n"
	identityPNG  = "\x89PNG\r\n\x1a\n" + strings.Repeat("IDAT\x00\x01\x02\x03 pixels ", 300)
	// identityError is an error page headgate does not rewrite (a 404).
	identityError = "<!doctype html><html><head><title>Not found</title></head><body>" +
		strings.Repeat("<p>There is no such note here.</p>\n", 100) + "</body></html>\n"
	identityTiny = `{"ok":true}` // under minEncodeLength
)

// identityAnswer is what identityUpstream answers a path: a page by
// default.
func identityAnswer(path string) (status int, ctype, body, etag string) {
	switch {
	case strings.HasSuffix(path, ".js"):
		return 200, "text/javascript", identityAsset, `"js1"`
	case strings.HasSuffix(path, ".css"):
		return 200, "text/css", identityCSS, `"css1"`
	case strings.HasSuffix(path, ".xml"):
		return 200, "application/rss+xml; charset=utf-8", identityFeed, `"feed1"`
	case strings.HasSuffix(path, ".pdf"):
		return 200, "application/pdf", identityPDF, `"pdf1"`
	case path == "/api/items", path == "/api/fixed":
		return 200, "application/json", identityJSON, `"api1"`
	case path == "/api/tiny":
		return 200, "application/json", identityTiny, `"tiny1"`
	case path == "/logo":
		return 200, "image/png", identityPNG, `"png1"`
	case path == "/missing":
		return 404, "text/html; charset=utf-8", identityError, ""
	}
	return 200, "text/html; charset=utf-8", identityPage, `"v1"`
}

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
	// Its API never compresses, as many application servers do not, and
	// so says no Vary.
	api := strings.HasPrefix(r.URL.Path, "/api/")
	gz := strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") && !api
	status, ctype, body, etag := identityAnswer(r.URL.Path)
	w.Header().Set("Content-Type", ctype)
	if !api {
		w.Header().Set("Vary", "Accept-Encoding")
	}
	if r.URL.Path == "/api/fixed" {
		w.Header().Set("Cache-Control", "public, No-Transform")
	}
	if gz && etag != "" {
		etag = "W/" + etag
	}
	if etag != "" {
		w.Header().Set("Etag", etag)
	}
	b := []byte(body)
	if gz {
		w.Header().Set("Content-Encoding", "gzip")
		b = gzipped(body)
	}
	if status != http.StatusOK {
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.WriteHeader(status)
		w.Write(b)
		return
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(b))
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
//
// A crawler's Accept names text/html on every fetch: a path with an
// asset's extension keeps the client's codings, and an answer that asked
// for identity but is not a page headgate rewrites (JSON at a path with
// no extension, an error page) goes to the client compressed as it allows,
// the upstream's bytes once decoded (plain). Ranges, a type that does not
// compress and a tiny answer go as they came.
func TestUpstreamIdentity(t *testing.T) {
	up := &identityUpstream{}
	p, front := newTestProxy(t, up.ServeHTTP, identityConfig)
	tail := identityPage[strings.Index(identityPage, identityTail):]
	// hgTag is headgate's tag for an upstream one, as on a rewritten page.
	hgTag := func(upstream string) string { return wrapETag(upstream, p.state.Load().cfg.ETagHash()) }
	for _, tc := range []struct {
		name, method, path, accept, ae string
		upAE                           string // what the upstream saw; "-": none
		coding                         string // the client's Content-Encoding
		title                          string // the decoded page's title; "" to compare with raw
		raw                            []byte // the bytes the client gets, when not a rewritten page
		plain                          string // the bytes the client's decode to, for an answer headgate compressed
		etag                           string // the client's ETag, when checked
		rng                            string // the request's Range
		status                         int    // the client's status; 0: 200
	}{
		{"firefox page", "GET", "/page", acceptFirefox, browserAE, "-", "zstd", "New title", nil, "", "", "", 0},
		{"chrome page", "GET", "/page", acceptChrome, browserAE, "-", "zstd", "New title", nil, "", "", "", 0},
		{"safari page", "GET", "/page", acceptFirefox, "gzip, deflate, br", "-", "gzip", "New title", nil, "", "", "", 0},
		{"page, no coding", "GET", "/page", acceptFirefox, "", "-", "", "New title", nil, "", "", "", 0}, // an exact Content-Length
		{"unchanged page", "GET", "/same", acceptFirefox, browserAE, "-", "zstd", "Old", nil, "", "", "", 0},
		{"markdown", "GET", "/page", "text/markdown", browserAE, "-", "zstd", "", nil, "", "", "", 0},
		{"fetch", "GET", "/page", "*/*", browserAE, "zstd, br, gzip, deflate", "zstd", "New title", nil, "", "", "", 0},
		{"html refused", "GET", "/page", "text/html;q=0, */*", "gzip", "gzip", "gzip", "New title", nil, "", "", "", 0},
		{"img asset", "GET", "/app.js", "image/avif,image/webp,*/*", browserAE, "zstd, br, gzip, deflate", "gzip", "", gzipped(identityAsset), "", "", "", 0},
		{"script asset", "GET", "/app.js", "*/*", "gzip", "gzip", "gzip", "", gzipped(identityAsset), "", "", "", 0},
		{"rewrite = false", "GET", "/raw/1", acceptFirefox, browserAE, "zstd, br, gzip, deflate", "gzip", "", gzipped(identityPage), "", "", "", 0},
		{name: "pdf", method: "GET", path: "/doc.pdf", accept: acceptFirefox, ae: browserAE, upAE: "zstd, br, gzip, deflate", coding: "gzip", raw: gzipped(identityPDF)},
		{"post", "POST", "/page", acceptFirefox, browserAE, browserAE, "gzip", "", gzipped(identityPage), "", "", "", 0},

		// Googlebot: an asset's path keeps its codings, byte for byte.
		{name: "googlebot script", method: "GET", path: "/app.js", accept: acceptGooglebot, ae: googlebotAE, upAE: "br, gzip, deflate", coding: "gzip", raw: gzipped(identityAsset), etag: `W/"js1"`},
		{name: "googlebot stylesheet", method: "GET", path: "/style.css", accept: acceptGooglebot, ae: googlebotAE, upAE: "br, gzip, deflate", coding: "gzip", raw: gzipped(identityCSS)},
		{name: "googlebot feed", method: "GET", path: "/feed.xml", accept: acceptGooglebot, ae: googlebotAE, upAE: "br, gzip, deflate", coding: "gzip", raw: gzipped(identityFeed)},
		// No extension: identity upstream, compressed here.
		{name: "googlebot json", method: "GET", path: "/api/items", accept: acceptGooglebot, ae: googlebotAE, upAE: "-", coding: "gzip", plain: identityJSON, etag: hgTag(`"api1"`)},
		{name: "navigation json", method: "GET", path: "/api/items", accept: acceptChrome, ae: browserAE, upAE: "-", coding: "zstd", plain: identityJSON, etag: hgTag(`"api1"`)},
		{name: "json, no coding", method: "GET", path: "/api/items", accept: acceptGooglebot, upAE: "-", plain: identityJSON, etag: `"api1"`},
		{name: "error page", method: "GET", path: "/missing", accept: acceptFirefox, ae: "gzip", upAE: "-", coding: "gzip", plain: identityError, status: 404},
		{name: "error page zstd", method: "GET", path: "/missing", accept: acceptChrome, ae: browserAE, upAE: "-", coding: "zstd", plain: identityError, status: 404},
		{name: "range", method: "GET", path: "/api/items", accept: acceptGooglebot, ae: googlebotAE, upAE: "-", raw: []byte(identityJSON[100:1100]), etag: `"api1"`, rng: "bytes=100-1099", status: 206},
		{name: "no-transform", method: "GET", path: "/api/fixed", accept: acceptGooglebot, ae: googlebotAE, upAE: "-", raw: []byte(identityJSON), etag: `"api1"`},
		{name: "png", method: "GET", path: "/logo", accept: acceptGooglebot, ae: googlebotAE, upAE: "-", raw: []byte(identityPNG), etag: `"png1"`},
		{name: "tiny json", method: "GET", path: "/api/tiny", accept: acceptGooglebot, ae: googlebotAE, upAE: "-", raw: []byte(identityTiny), etag: `"tiny1"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{"Accept": {tc.accept}}
			if tc.ae != "" {
				h.Set("Accept-Encoding", tc.ae)
			}
			if tc.rng != "" {
				h.Set("Range", tc.rng)
			}
			res, b := fetchRaw(t, tc.method, front.URL+tc.path, h)
			if got := up.asked(tc.path); got != tc.upAE {
				t.Errorf("upstream Accept-Encoding %q, want %q", got, tc.upAE)
			}
			if want := cmp.Or(tc.status, http.StatusOK); res.StatusCode != want {
				t.Errorf("status %d, want %d", res.StatusCode, want)
			}
			if got := res.Header.Get("Content-Encoding"); got != tc.coding {
				t.Fatalf("Content-Encoding %q, want %q (%v)", got, tc.coding, res.Header)
			}
			if res.ContentLength >= 0 && res.ContentLength != int64(len(b)) {
				t.Errorf("Content-Length %d of %d bytes", res.ContentLength, len(b))
			}
			if tc.etag != "" && res.Header.Get("Etag") != tc.etag {
				t.Errorf("ETag %q, want %q", res.Header.Get("Etag"), tc.etag)
			}
			switch {
			case tc.raw != nil:
				if !bytes.Equal(b, tc.raw) {
					t.Errorf("%d bytes, want the upstream's %d, byte for byte", len(b), len(tc.raw))
				}
				if tc.coding == "" && res.ContentLength != int64(len(tc.raw)) {
					t.Errorf("Content-Length %d, want the upstream's exact %d", res.ContentLength, len(tc.raw))
				}
			case tc.plain != "":
				if got := decodeAs(t, tc.coding, b); string(got) != tc.plain {
					t.Errorf("decoded %d bytes, want the upstream's %d, byte for byte", len(got), len(tc.plain))
				}
				if ar := res.Header.Get("Accept-Ranges"); ar != "" && tc.coding != "" {
					t.Errorf("Accept-Ranges %q: it describes the upstream's bytes", ar)
				}
				if tc.coding == "" && res.ContentLength != int64(len(tc.plain)) {
					t.Errorf("Content-Length %d, want the upstream's exact %d", res.ContentLength, len(tc.plain))
				}
				if !slices.Contains(varyTokens(res.Header), "Accept-Encoding") {
					t.Errorf("Vary %q, want Accept-Encoding", res.Header.Values("Vary"))
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

// A HEAD that asks for identity and is not answered a page headgate
// rewrites gets its GET's headers (coding, ETag, Vary, length, ranges)
// and no body, whether the GET goes out compressed or as it came.
func TestUpstreamIdentityHEADOnBehalf(t *testing.T) {
	up := &identityUpstream{}
	_, front := newTestProxy(t, up.ServeHTTP, identityConfig)
	for _, tc := range []struct{ path, ae, coding string }{
		{"/api/items", googlebotAE, "gzip"},
		{"/api/items", browserAE, "zstd"},
		{"/api/items", "", ""},
		{"/missing", "gzip", "gzip"},
		{"/logo", googlebotAE, ""},
		{"/api/tiny", googlebotAE, ""},
		{"/app.js", googlebotAE, "gzip"}, // the upstream's own gzip
	} {
		h := http.Header{"Accept": {acceptGooglebot}}
		if tc.ae != "" {
			h.Set("Accept-Encoding", tc.ae)
		}
		get, _ := fetchRaw(t, "GET", front.URL+tc.path, h)
		head, b := fetchRaw(t, "HEAD", front.URL+tc.path, h)
		if len(b) != 0 || head.StatusCode != get.StatusCode {
			t.Errorf("%s %q: HEAD %d with %d bytes, GET %d", tc.path, tc.ae, head.StatusCode, len(b), get.StatusCode)
		}
		if got := head.Header.Get("Content-Encoding"); got != tc.coding {
			t.Errorf("%s %q: HEAD Content-Encoding %q, want %q", tc.path, tc.ae, got, tc.coding)
		}
		keys := []string{"Content-Encoding", "Content-Type", "Etag", "Vary", "Accept-Ranges", "Content-Length"}
		if tc.coding != "" {
			// A compressed GET's length, when it has one, is the
			// server's framing of the encoded bytes (headgate's, or the
			// upstream's, whose http.ServeContent sends no length with a
			// Content-Encoding).
			keys = keys[:len(keys)-1]
			if cl := head.Header.Get("Content-Length"); cl != "" {
				t.Errorf("%s %q: HEAD Content-Length %s of the identity bytes", tc.path, tc.ae, cl)
			}
		}
		for _, k := range keys {
			if g, hd := get.Header.Values(k), head.Header.Values(k); !slices.Equal(g, hd) {
				t.Errorf("%s %q: %s: GET %q, HEAD %q", tc.path, tc.ae, k, g, hd)
			}
		}
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

// FuzzAsksPage: any Accept value is decided without a panic, and case
// does not change the decision (media types, parameter names and q are
// case-insensitive; upper-casing a quoted string changes no structure).
func FuzzAsksPage(f *testing.F) {
	for _, s := range []string{acceptFirefox, acceptChrome, acceptGooglebot, "*/*", "text/html;q=0, */*",
		`text/html;a="x,y;q=0";q=0.5`, "TEXT/HTML;Q=1.000", "application/xhtml+xml;q=0.", `text/html;a="\"`, ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got := asksPage([]string{v})
		b := []byte(v) // ASCII letters only: strings.ToUpper maps "ı" to "I"
		for i, c := range b {
			if 'a' <= c && c <= 'z' {
				b[i] = c - 'a' + 'A'
			}
		}
		if up := asksPage([]string{string(b)}); up != got {
			t.Errorf("asksPage(%q) = %v, upper-cased %v", v, got, up)
		}
	})
}
