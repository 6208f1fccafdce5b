package proxy_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/headgate/headgate/internal/hgtest"
)

// Hostile clients (issue 19) and normalization, in process: what reaches
// the upstream and what the client gets, from headgate as serve builds it
// (front_test.go). Moved from test/hostile_test.go and test/redirect_test.go;
// what needs the binary (memory of the process, slow clients, smuggling and
// h2c on raw connections, the log of the whole process) stays there.

// The deny bypasses of issue 19 reach no upstream: ";" parameters, "..;"
// segments, backslashes and trailing slashes under deny rules are refused
// (400) or denied (404); a legitimate ";" under no deny still passes.
func TestDenyBypassesNeverForwarded(t *testing.T) {
	up := hgtest.NewRecorder(t, hgtest.HTMLHandler(hgtest.Page))
	hg := serve(t, hgtest.Config{Upstream: up.URL, Rules: hgtest.PageRules + `
[[rule]]
match = "/internal/*"
deny = true
[[rule]]
match = "/admin"
deny = true
`})
	for _, target := range []string{
		"/x/..;/internal/admin", "/x/..%3B/internal/admin", "/x/..%3b/internal/admin", "/x/.;/internal/admin",
		"/internal;x=1/admin", "/;/internal/admin", "/;x/internal/admin", "/internal%3Bx/admin",
		"/internal\\admin", "/internal%5Cadmin", "/%5Cinternal%5Cadmin", "/x\\..\\internal\\admin",
		"/admin;jsessionid=1", "/admin/", "/admin//", "/admin\\",
		"/internal%2Fadmin", "//internal/admin", "/x/%2e%2e/internal/admin",
	} {
		if status := hgtest.RawGet(t, hg.URL, target); status != 400 && status != 404 {
			t.Errorf("%s: status %d, want 400 or 404", target, status)
		}
	}
	if targets, _ := up.Seen(); len(targets) > 0 {
		t.Errorf("the upstream received %q", targets)
	}
	for _, target := range []string{"/public;v=1/x", "/a;b", "/matrix;color=red/item", "/adminx/"} {
		if status := hgtest.RawGet(t, hg.URL, target); status != 200 {
			t.Errorf("%s: status %d, want 200", target, status)
		}
	}
	if targets, _ := up.Seen(); len(targets) != 4 || targets[0] != "/public;v=1/x" {
		t.Errorf("the upstream received %q, want the four paths as sent", targets)
	}
}

// Routing-override headers never reach the upstream; other headers do.
func TestRoutingOverridesStripped(t *testing.T) {
	up := hgtest.NewRecorder(t, hgtest.HTMLHandler(hgtest.Page))
	hg := serve(t, hgtest.Config{Upstream: up.URL, Rules: hgtest.PageRules + `
[[rule]]
match = "/internal/*"
deny = true
`})
	res, _ := hg.Get(t, "GET", "/public", "X-Original-URL: /internal/admin", "X-Rewrite-URL: /internal/admin",
		"X-Original-URI: /internal/admin", "X-Custom: kept")
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
	targets, headers := up.Seen()
	if len(targets) != 1 || targets[0] != "/public" {
		t.Fatalf("upstream saw %q", targets)
	}
	for _, k := range []string{"X-Original-Url", "X-Rewrite-Url", "X-Original-Uri"} {
		if v := headers[0].Values(k); len(v) > 0 {
			t.Errorf("upstream received %s: %q", k, v)
		}
	}
	if headers[0].Get("X-Custom") != "kept" {
		t.Errorf("X-Custom did not reach the upstream: %v", headers[0])
	}
}

// The minor decisions of issue 19, as docs/security.md states them: of two
// Content-Type headers the last decides (as in browsers) and is the one
// sent; /robots%2Etxt is headgate's /robots.txt; /Robots.txt is another
// URL and goes to the upstream.
func TestContentTypeAndOwnPaths(t *testing.T) {
	up := hgtest.NewRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/two-types":
			w.Header().Add("Content-Type", "text/plain")
			w.Header().Add("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, hgtest.Page)
		case "/html-then-png":
			w.Header().Add("Content-Type", "text/html")
			w.Header().Add("Content-Type", "image/png")
			io.WriteString(w, "\x89PNG\r\n\x1a\nnot html")
		default:
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "the upstream's "+r.URL.Path)
		}
	})
	hg := serve(t, hgtest.Config{Upstream: up.URL, Rules: hgtest.PageRules + `
[[rule]]
match = "/about"
sitemap = true
`})
	res, body := hg.Get(t, "GET", "/two-types")
	if got := res.Header.Values("Content-Type"); len(got) != 1 || got[0] != "text/html; charset=utf-8" {
		t.Errorf("Content-Type %q, want the last one only", got)
	}
	hgtest.RewrittenHead(t, body, "/two-types")
	res, body = hg.Get(t, "GET", "/html-then-png")
	if got := res.Header.Values("Content-Type"); len(got) != 1 || got[0] != "image/png" || string(body) != "\x89PNG\r\n\x1a\nnot html" {
		t.Errorf("Content-Type %q, body %q; want image/png and the bytes unchanged", got, body)
	}
	before, _ := up.Seen()
	for _, target := range []string{"/robots%2Etxt", "/sitemap%2Exml", "/%73itemap.xml"} {
		if status := hgtest.RawGet(t, hg.URL, target); status != 200 {
			t.Errorf("%s: status %d", target, status)
		}
	}
	if after, _ := up.Seen(); len(after) != len(before) {
		t.Errorf("headgate's own paths reached the upstream: %q", after[len(before):])
	}
	hgtest.RawGet(t, hg.URL, "/Robots.txt")
	if after, _ := up.Seen(); len(after) != len(before)+1 || after[len(after)-1] != "/Robots.txt" {
		t.Errorf("/Robots.txt: the upstream saw %q, want it forwarded", after[len(before):])
	}
}

// Through headgate as serve builds it, over HTTP: normalization in one
// hop, HEAD, POST forwarded.
func TestRedirectNormalizeServed(t *testing.T) {
	up := hgtest.NewUpstream(t, hgtest.HTMLHandler(hgtest.Page))
	hg := serve(t, hgtest.Config{Upstream: up.URL, Rules: `
[normalize]
redirect_hosts = ["www.notes.example"]
https = true
trailing_slash = "strip"
lowercase = true
merge_slashes = true
`})
	res, body := hg.Get(t, "GET", "//A/", "Host: WWW.notes.example")
	if res.StatusCode != 301 || res.Header.Get("Location") != "https://notes.example/a" || !strings.Contains(string(body), `href="https://notes.example/a"`) {
		t.Fatalf("GET: %d %q\n%s", res.StatusCode, res.Header.Get("Location"), body)
	}
	res, body = hg.Get(t, "HEAD", "//A/", "Host: www.notes.example")
	if res.StatusCode != 301 || len(body) != 0 {
		t.Fatalf("HEAD: %d, %d body bytes", res.StatusCode, len(body))
	}
	before := up.Hits()
	res, _ = hg.Get(t, "POST", "//A/", "Host: www.notes.example")
	if res.StatusCode != 200 || up.Hits() != before+1 {
		t.Fatalf("POST: %d, upstream hits %d → %d", res.StatusCode, before, up.Hits())
	}
}
