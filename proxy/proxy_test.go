package proxy

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/headgate/headgate/rules"
)

const testPage = `<!DOCTYPE html>
<html><head>
<meta charset="utf-8">
<title>Upstream title</title>
<link rel="canonical" href="/wrong">
</head>
<body><p>Hello body</p>
</body></html>
`

func testConfig(t testing.TB, upstream, extra string) *rules.Config {
	t.Helper()
	server := ""
	if rest, ok := strings.CutPrefix(extra, "[server]\n"); ok {
		server, extra, _ = strings.Cut(rest, "\n\n")
	}
	cfg, err := rules.Parse("test.toml", []byte(`[server]
upstream = "`+upstream+`"
`+server+`
[site]
base_url = "https://notes.example"
`+extra), nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

const testRules = `
[[rule]]
match = "/*"
title = "Rewritten title"
description = "A rewritten page."
canonical = "self"
`

func newTestProxy(t testing.TB, h http.HandlerFunc, extra string) (*Proxy, *httptest.Server) {
	t.Helper()
	up := httptest.NewServer(h)
	t.Cleanup(up.Close)
	return newFront(t, up.URL, extra, os.Stderr)
}

// newFront is headgate in front of upstream, served by net/http on
// loopback, logging at debug level to log.
func newFront(t testing.TB, upstream, extra string, log io.Writer) (*Proxy, *httptest.Server) {
	t.Helper()
	p, err := New(testConfig(t, upstream, extra), Options{Logger: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	front := httptest.NewServer(p)
	t.Cleanup(front.Close)
	return p, front
}

func TestRewriteInProcess(t *testing.T) {
	_, front := newTestProxy(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, testPage)
	}, testRules)
	res, err := http.Get(front.URL + "/p")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), "<title>Rewritten title</title>") {
		t.Fatalf("body:\n%s", body)
	}
}

type fakeSitemap struct {
	fetch func(ctx context.Context, path string) (io.ReadCloser, error)
}

func (f *fakeSitemap) Handles(path string) bool { return path == "/sitemap.xml" }
func (f *fakeSitemap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc, err := f.fetch(r.Context(), "/internal/list.jsonl?x=1")
	if err != nil {
		http.Error(w, err.Error(), 503)
		return
	}
	defer rc.Close()
	w.Header().Set("Content-Type", "application/xml")
	io.WriteString(w, "<urlset>")
	io.Copy(w, rc)
	io.WriteString(w, "</urlset>")
}

func TestSitemapHook(t *testing.T) {
	var hits []*http.Request
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits = append(hits, r)
		io.WriteString(w, "listing")
	}))
	defer up.Close()
	p, err := New(testConfig(t, up.URL, ""), Options{
		Sitemap: func(cfg *rules.Config, fetch func(ctx context.Context, path string) (io.ReadCloser, error)) SitemapHandler {
			return &fakeSitemap{fetch}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("GET", "/sitemap.xml", nil)
	req.Header.Set("Cookie", "session=secret")
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, req)
	if rec.Code != 200 || rec.Body.String() != "<urlset>listing</urlset>" {
		t.Fatalf("%d %q", rec.Code, rec.Body)
	}
	if len(hits) != 1 || hits[0].URL.String() != "/internal/list.jsonl?x=1" {
		t.Fatalf("upstream hits %v", hits)
	}
	if hits[0].Host != "notes.example" || hits[0].Header.Get("Cookie") != "" {
		t.Errorf("fetch sent Host %q, Cookie %q", hits[0].Host, hits[0].Header.Get("Cookie"))
	}
}

// An upstream that sends its headers but not its head within
// upstream_timeout gets a 504, not a hang.
func TestHeadTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	_, front := newTestProxy(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><head><title>x</title>")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}, `[server]
upstream_timeout = "300ms"
`+testRules)
	t0 := time.Now()
	res, err := http.Get(front.URL + "/p")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusGatewayTimeout {
		t.Errorf("status %d, want 504", res.StatusCode)
	}
	if d := time.Since(t0); d > 3*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestAdminEndpoints(t *testing.T) {
	p, err := New(testConfig(t, "http://127.0.0.1:1", ""), Options{})
	if err != nil {
		t.Fatal(err)
	}
	adm := httptest.NewServer(p.Admin())
	defer adm.Close()
	for path, want := range map[string]int{
		"/healthz":       http.StatusOK,
		"/metrics":       http.StatusOK,
		"/debug/pprof/":  http.StatusOK,
		"/nothing-there": http.StatusNotFound,
	} {
		res, err := http.Get(adm.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, res.StatusCode, want)
		}
	}
}
