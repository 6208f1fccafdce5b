package sitemap

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

const servedConfig = `
[sitemap]
max_urls_per_file = 2
[[rule]]
match = "/"
sitemap = true
[[rule]]
match = "/n/:id"
sitemap = true
sitemap_source = "upstream:/s"
`

const servedSource = `{"params":{"id":"1"}}
{"params":{"id":"2"}}
`

func TestHandles(t *testing.T) {
	on := New(loadConfig(t, "[[rule]]\nmatch = \"/\"\nsitemap = true\n", nil), Options{})
	off := New(loadConfig(t, "[[rule]]\nmatch = \"/\"\n", nil), Options{})
	upstream := New(loadConfig(t, "[robots]\nmode = \"upstream\"\n[[rule]]\nmatch = \"/\"\nsitemap = true\n", nil), Options{})
	staging := New(loadConfig(t, "mode = \"staging\"\n[[rule]]\nmatch = \"/\"\n", nil), Options{})
	for _, tc := range []struct {
		s    *Sitemap
		path string
		want bool
	}{
		{on, "/sitemap.xml", true},
		{on, "/sitemap-1.xml", true},
		{on, "/sitemap-50000.xml", true},
		{on, "/sitemap-50001.xml", false},
		{on, "/sitemap-0.xml", false},
		{on, "/sitemap-01.xml", false},
		{on, "/sitemap-.xml", false},
		{on, "/sitemap-1a.xml", false},
		{on, "/sitemap.xml/", false},
		{on, "/Sitemap.xml", false},
		{on, "/robots.txt", true},
		{on, "/other", false},
		{off, "/sitemap.xml", false},
		{off, "/robots.txt", false},
		{upstream, "/sitemap.xml", true},
		{upstream, "/robots.txt", false},
		{staging, "/robots.txt", true},
		{staging, "/sitemap.xml", false},
	} {
		if got := tc.s.Handles(tc.path); got != tc.want {
			t.Errorf("Handles(%q) = %v, want %v (enabled %v)", tc.path, got, tc.want, tc.s.Enabled())
		}
	}
	if !on.Enabled() || off.Enabled() || staging.Enabled() {
		t.Error("Enabled is wrong")
	}
}

func TestServe(t *testing.T) {
	up := newSource(map[string]string{"/s": servedSource})
	s := New(loadConfig(t, servedConfig, nil), Options{Fetch: up.Fetch})

	// Plain: the index, with exact Content-Length and the headers of §5.5.
	w := get(s, "GET", "/sitemap.xml")
	if w.Code != 200 {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	index := w.Body.String()
	if !strings.Contains(index, "<sitemapindex") || !strings.Contains(index, "https://notes.example/sitemap-2.xml") {
		t.Fatalf("not the index:\n%s", index)
	}
	h := w.Header()
	for k, v := range map[string]string{
		"Content-Type":   "application/xml; charset=utf-8",
		"Cache-Control":  "public, max-age=300",
		"Vary":           "Accept-Encoding",
		"Content-Length": strconv.Itoa(len(index)),
	} {
		if got := h.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if h.Get("Content-Encoding") != "" || h.Get("Set-Cookie") != "" {
		t.Errorf("headers %v", h)
	}
	etag := h.Get("ETag")
	if !strings.HasPrefix(etag, `"`) || len(etag) < 10 {
		t.Errorf("ETag = %q", etag)
	}

	// gzip: the stored bytes, which decompress to the same document.
	w = get(s, "GET", "/sitemap.xml", "Accept-Encoding", "br;q=1, gzip;q=0.8")
	if w.Header().Get("Content-Encoding") != "gzip" || w.Header().Get("Content-Length") != strconv.Itoa(w.Body.Len()) {
		t.Fatalf("headers %v", w.Header())
	}
	zr, err := gzip.NewReader(bytes.NewReader(w.Body.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(zr); string(b) != index {
		t.Error("gzip body differs")
	}
	gzTag := w.Header().Get("ETag")
	if gzTag == etag {
		t.Error("gzip and identity share an ETag")
	}

	// Conditional requests.
	if w := get(s, "GET", "/sitemap.xml", "If-None-Match", `"x", `+etag); w.Code != http.StatusNotModified || w.Body.Len() != 0 {
		t.Errorf("If-None-Match: %d", w.Code)
	}
	if w := get(s, "GET", "/sitemap.xml", "If-None-Match", gzTag); w.Code != 200 {
		t.Errorf("If-None-Match with the gzip ETag, no gzip accepted: %d", w.Code)
	}
	if w := get(s, "GET", "/sitemap.xml", "If-None-Match", "W/"+gzTag, "Accept-Encoding", "gzip"); w.Code != http.StatusNotModified {
		t.Errorf("weak If-None-Match: %d", w.Code)
	}

	// HEAD: the same headers, no body.
	w = get(s, "HEAD", "/sitemap-1.xml", "Accept-Encoding", "gzip")
	if w.Code != 200 || w.Body.Len() != 0 || w.Header().Get("Content-Encoding") != "gzip" || w.Header().Get("Content-Length") == "" {
		t.Errorf("HEAD: %d %v %q", w.Code, w.Header(), w.Body)
	}

	// Parts, and the ones that do not exist.
	if w := get(s, "GET", "/sitemap-2.xml?x=1"); w.Code != 200 || !strings.Contains(w.Body.String(), "<loc>https://notes.example/n/2</loc>") {
		t.Errorf("part 2: %d\n%s", w.Code, w.Body)
	}
	if w := get(s, "GET", "/sitemap-3.xml"); w.Code != 404 {
		t.Errorf("part 3: %d", w.Code)
	}
	if w := get(s, "POST", "/sitemap.xml"); w.Code != 405 || w.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d %v", w.Code, w.Header())
	}
	if w := get(s, "GET", "/elsewhere"); w.Code != 404 {
		t.Errorf("/elsewhere: %d", w.Code)
	}
	if n := up.count("/s"); n != 1 {
		t.Errorf("%d fetches, want 1 (cached)", n)
	}

	// Never a cookie, even if a wrapper set one before.
	r := httptest.NewRequest("GET", "/sitemap.xml", nil)
	rec := httptest.NewRecorder()
	rec.Header().Set("Set-Cookie", "session=1")
	s.ServeHTTP(rec, r)
	if rec.Header().Get("Set-Cookie") != "" {
		t.Error("Set-Cookie survived")
	}
}

func TestAcceptsGzip(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"", false},
		{"gzip", true},
		{"GZIP", true},
		{"deflate, gzip;q=0.5", true},
		{"gzip;q=0", false},
		{"gzip; q=0.0", false},
		{"*", true},
		{"*;q=0", false},
		{"*, gzip;q=0", false},
		{"br, x-gzip", true},
		{"identity", false},
		{"gzip;q=abc", false},
	} {
		if got := acceptsGzip([]string{tc.in}); got != tc.want {
			t.Errorf("acceptsGzip(%q) = %v", tc.in, got)
		}
	}
}

// 200 requests on a cold cache: one generation, and all get its files.
func TestConcurrentColdCache(t *testing.T) {
	const n = 200
	var fetches atomic.Int32
	entered := make(chan struct{})
	release := make(chan struct{})
	waiting := make(chan struct{}, n)
	reg := prometheus.NewRegistry()
	s := New(loadConfig(t, servedConfig, nil), Options{
		Registerer: reg,
		Fetch: func(ctx context.Context, path string) (io.ReadCloser, error) {
			if fetches.Add(1) == 1 {
				close(entered)
			}
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return io.NopCloser(strings.NewReader(servedSource)), nil
		},
	})
	s.onWait = func() { waiting <- struct{}{} }
	var wg sync.WaitGroup
	bodies := make([]string, n)
	codes := make([]int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := get(s, "GET", "/sitemap-1.xml")
			codes[i], bodies[i] = w.Code, w.Body.String()
		}()
	}
	// Every other request waits for the one generation. (The deadline only
	// turns a broken single-flight into a failure instead of a hang.)
	deadline := time.After(20 * time.Second)
	select {
	case <-entered:
	case <-deadline:
		t.Fatal("no fetch")
	}
	for i := range n - 1 {
		select {
		case <-waiting:
		case <-deadline:
			close(release)
			t.Fatalf("only %d of %d requests joined the generation in flight", i, n-1)
		}
	}
	close(release)
	wg.Wait()
	if got := fetches.Load(); got != 1 {
		t.Errorf("%d fetches, want 1", got)
	}
	for i := range n {
		if codes[i] != 200 || bodies[i] != bodies[0] || !strings.Contains(bodies[0], "/n/1</loc>") {
			t.Fatalf("request %d: %d\n%s", i, codes[i], bodies[i])
		}
	}
	if got := metric(t, reg, "headgate_sitemap_generations_total", "ok"); got != 1 {
		t.Errorf("generations_total{ok} = %v, want 1", got)
	}
	if got := metric(t, reg, "headgate_sitemap_urls", ""); got != 3 {
		t.Errorf("sitemap_urls = %v, want 3", got)
	}
}

// A client that hangs up does not fail the generation for the others.
func TestWaiterGivesUp(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{})
	s := New(loadConfig(t, servedConfig, nil), Options{
		Fetch: func(ctx context.Context, path string) (io.ReadCloser, error) {
			close(entered)
			<-release
			return io.NopCloser(strings.NewReader(servedSource)), nil
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *httptest.ResponseRecorder)
	go func() {
		r := httptest.NewRequest("GET", "/sitemap.xml", nil).WithContext(ctx)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		done <- w
	}()
	<-entered
	cancel()
	if w := <-done; w.Body.Len() != 0 {
		t.Errorf("the client that left got %d %q", w.Code, w.Body)
	}
	close(release)
	if w := get(s, "GET", "/sitemap.xml"); w.Code != 200 {
		t.Errorf("next request: %d", w.Code)
	}
}

// A failing source: 503 with Retry-After; no retry within retry_after;
// after it, a new generation and its files.
func TestFailThenRecover(t *testing.T) {
	clk := newClock()
	lg, log := newLogs()
	reg := prometheus.NewRegistry()
	up := newSource(map[string]string{})
	up.set("/s", "", errBoom)
	s := New(loadConfig(t, servedConfig, nil), Options{Fetch: up.Fetch, Now: clk.Now, Logger: log, Registerer: reg})

	w := get(s, "GET", "/sitemap.xml")
	if w.Code != 503 || w.Header().Get("Retry-After") != "30" || w.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("got %d %v", w.Code, w.Header())
	}
	clk.Add(20 * time.Second)
	for range 50 {
		if w := get(s, "GET", "/sitemap-1.xml"); w.Code != 503 || w.Header().Get("Retry-After") != "10" {
			t.Fatalf("within retry_after: %d Retry-After %q", w.Code, w.Header().Get("Retry-After"))
		}
	}
	if n := up.count("/s"); n != 1 {
		t.Errorf("%d fetches within retry_after, want 1", n)
	}
	up.set("/s", servedSource, nil)
	clk.Add(10 * time.Second)
	w = get(s, "GET", "/sitemap-1.xml")
	if w.Code != 200 || !strings.Contains(w.Body.String(), "/n/1</loc>") {
		t.Fatalf("after recovery: %d\n%s", w.Code, w.Body)
	}
	if n := up.count("/s"); n != 2 {
		t.Errorf("%d fetches, want 2", n)
	}
	if n := len(lg.records(t, "sitemap: generation failed; serving the last good sitemap until retry_after has passed")); n != 1 {
		t.Errorf("%d failure logs, want 1", n)
	}
	if ok, bad := metric(t, reg, "headgate_sitemap_generations_total", "ok"), metric(t, reg, "headgate_sitemap_generations_total", "error"); ok != 1 || bad != 1 {
		t.Errorf("generations ok=%v error=%v, want 1 and 1", ok, bad)
	}
	if n := metric(t, reg, "headgate_sitemap_generation_seconds", ""); n != 2 {
		t.Errorf("generation_seconds count = %v, want 2", n)
	}
}

// A source that fails after a success: the old files, no retry storm, and
// a new generation once retry_after has passed.
func TestFailAfterSuccess(t *testing.T) {
	clk := newClock()
	lg, log := newLogs()
	up := newSource(map[string]string{"/s": servedSource})
	s := New(loadConfig(t, servedConfig, nil), Options{Fetch: up.Fetch, Now: clk.Now, Logger: log})
	first := get(s, "GET", "/sitemap-2.xml").Body.String()

	clk.Add(4 * time.Minute) // within cache_ttl: cached
	get(s, "GET", "/sitemap.xml")
	if n := up.count("/s"); n != 1 {
		t.Fatalf("%d fetches within cache_ttl", n)
	}
	up.set("/s", "", errBoom)
	clk.Add(time.Minute) // cache_ttl (5m) over
	for range 100 {
		w := get(s, "GET", "/sitemap-2.xml")
		if w.Code != 200 || w.Body.String() != first {
			t.Fatalf("got %d, want the old file", w.Code)
		}
	}
	if n := up.count("/s"); n != 2 {
		t.Errorf("%d fetches, want 2: one failure, then no retry for retry_after", n)
	}
	if n := len(lg.records(t, "sitemap: generation failed; serving the last good sitemap until retry_after has passed")); n != 1 {
		t.Errorf("%d failure logs, want 1", n)
	}
	up.set("/s", servedSource+`{"params":{"id":"3"}}`+"\n", nil)
	clk.Add(30 * time.Second)
	if w := get(s, "GET", "/sitemap-2.xml"); !strings.Contains(w.Body.String(), "/n/3</loc>") {
		t.Errorf("after retry_after: %s", w.Body)
	}
	if n := up.count("/s"); n != 3 {
		t.Errorf("%d fetches, want 3", n)
	}
}

func TestMetricsReload(t *testing.T) {
	reg := prometheus.NewRegistry()
	cfg := loadConfig(t, "[[rule]]\nmatch = \"/\"\nsitemap = true\n", nil)
	a := New(cfg, Options{Registerer: reg})
	b := New(cfg, Options{Registerer: reg}) // a reload: same registry
	get(a, "GET", "/sitemap.xml")
	get(b, "GET", "/sitemap.xml")
	if got := metric(t, reg, "headgate_sitemap_generations_total", "ok"); got != 2 {
		t.Errorf("generations_total{ok} = %v, want 2 (one collector shared)", got)
	}
	if got := metric(t, reg, "headgate_sitemap_generation_seconds", ""); got != 2 {
		t.Errorf("generation_seconds count = %v, want 2", got)
	}
}

func TestRobots(t *testing.T) {
	const rule = "[[rule]]\nmatch = \"/\"\nsitemap = true\n"
	for _, tc := range []struct {
		name     string
		config   string
		upstream *string // robots.txt body; nil: 404
		err      error
		code     int
		want     string
	}{
		{"generate", rule, nil, nil, 200, "User-agent: *\nDisallow:\n\nSitemap: https://notes.example/sitemap.xml\n"},
		{"append", "[robots]\nmode = \"append\"\n" + rule, ptr("User-agent: *\nDisallow: /admin/"), nil, 200,
			"User-agent: *\nDisallow: /admin/\n\nSitemap: https://notes.example/sitemap.xml\n"},
		// §16.6: the upstream's Sitemap lines are replaced by headgate's
		// unless upstream_sitemaps = "keep".
		{"append, already there", "[robots]\nmode = \"append\"\n" + rule, ptr("User-agent: *\nDisallow:\nsitemap:   https://notes.example/sitemap.xml # ours\n"), nil, 200,
			"User-agent: *\nDisallow:\n\nSitemap: https://notes.example/sitemap.xml\n"},
		{"append, another sitemap", "[robots]\nmode = \"append\"\n" + rule, ptr("Sitemap: https://notes.example/news.xml\n"), nil, 200,
			"Sitemap: https://notes.example/sitemap.xml\n"},
		{"append keep, already there", "[robots]\nmode = \"append\"\nupstream_sitemaps = \"keep\"\n" + rule, ptr("User-agent: *\nDisallow:\nsitemap:   https://notes.example/sitemap.xml # ours\n"), nil, 200,
			"User-agent: *\nDisallow:\nsitemap:   https://notes.example/sitemap.xml # ours\n"},
		{"append keep, another sitemap", "[robots]\nmode = \"append\"\nupstream_sitemaps = \"keep\"\n" + rule, ptr("Sitemap: https://notes.example/news.xml\n"), nil, 200,
			"Sitemap: https://notes.example/news.xml\n\nSitemap: https://notes.example/sitemap.xml\n"},
		{"append, none upstream", "[robots]\nmode = \"append\"\n" + rule, nil, nil, 200, "Sitemap: https://notes.example/sitemap.xml\n"},
		{"append, HTML upstream", "[robots]\nmode = \"append\"\n" + rule, ptr("<!doctype html><p>app</p>"), nil, 200, "Sitemap: https://notes.example/sitemap.xml\n"},
		{"append, upstream down", "[robots]\nmode = \"append\"\n" + rule, nil, errBoom, 503, "503 robots.txt is not available\n"},
		{"append, upstream 503", "[robots]\nmode = \"append\"\n" + rule, nil, &StatusError{Path: "/robots.txt", StatusCode: 503}, 503, "503 robots.txt is not available\n"},
		// 429 is no "no robots.txt": Google reads it as a server error.
		{"append, upstream 429", "[robots]\nmode = \"append\"\n" + rule, nil, &StatusError{Path: "/robots.txt", StatusCode: 429}, 503, "503 robots.txt is not available\n"},
		{"append, upstream 404", "[robots]\nmode = \"append\"\n" + rule, nil, &StatusError{Path: "/robots.txt", StatusCode: 404}, 200, "Sitemap: https://notes.example/sitemap.xml\n"},
		{"staging", "mode = \"staging\"\n" + rule, nil, nil, 200, "User-agent: *\nDisallow: /\n"},
		{"staging, no sitemap", "mode = \"staging\"\n[robots]\nmode = \"upstream\"\n", nil, nil, 200, "User-agent: *\nDisallow: /\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lg, log := newLogs()
			up := newSource(map[string]string{})
			if tc.upstream != nil {
				up.set("/robots.txt", *tc.upstream, nil)
			}
			if tc.err != nil {
				up.set("/robots.txt", "", tc.err)
			}
			s := New(loadConfig(t, tc.config, nil), Options{Fetch: up.Fetch, Logger: log})
			w := get(s, "GET", "/robots.txt")
			if w.Code != tc.code || w.Body.String() != tc.want {
				t.Errorf("got %d %q, want %d %q", w.Code, w.Body, tc.code, tc.want)
			}
			if tc.code == 200 {
				if ct := w.Header().Get("Content-Type"); ct != "text/plain; charset=utf-8" {
					t.Errorf("Content-Type %q", ct)
				}
				if w.Header().Get("Content-Length") != strconv.Itoa(len(tc.want)) || w.Header().Get("Cache-Control") != "public, max-age=300" {
					t.Errorf("headers %v", w.Header())
				}
				hw := get(s, "HEAD", "/robots.txt")
				if hw.Code != 200 || hw.Body.Len() != 0 || hw.Header().Get("Content-Length") != w.Header().Get("Content-Length") {
					t.Errorf("HEAD: %d %v", hw.Code, hw.Header())
				}
			} else {
				if w.Header().Get("Retry-After") == "" || !strings.Contains(lg.String(), "unreachable") {
					t.Errorf("503 without Retry-After or log: %v\n%s", w.Header(), lg)
				}
			}
		})
	}
}

func TestRobotsAppendBounded(t *testing.T) {
	big := strings.Repeat("Disallow: /a-long-path-to-fill-the-file\n", 20000) // ~800 KiB
	up := newSource(map[string]string{"/robots.txt": "User-agent: *\n" + big})
	s := New(loadConfig(t, "[robots]\nmode = \"append\"\n[[rule]]\nmatch = \"/\"\nsitemap = true\n", nil), Options{Fetch: up.Fetch})
	w := get(s, "GET", "/robots.txt")
	body := w.Body.String()
	if w.Code != 200 || len(body) > maxRobots+100 || !strings.HasSuffix(body, "/a-long-path-to-fill-the-file\n\nSitemap: https://notes.example/sitemap.xml\n") {
		t.Errorf("got %d, %d bytes, ending %q", w.Code, len(body), body[max(0, len(body)-120):])
	}
}

func TestRobotsAppendHangs(t *testing.T) {
	s := New(loadConfig(t, "[robots]\nmode = \"append\"\n[[rule]]\nmatch = \"/\"\nsitemap = true\n", nil), Options{
		SourceTimeout: 30 * time.Millisecond,
		Fetch: func(ctx context.Context, path string) (io.ReadCloser, error) {
			return newHangingBody("User-agent: *\n"), nil
		},
	})
	if w := get(s, "GET", "/robots.txt"); w.Code != 503 {
		t.Errorf("got %d, want 503", w.Code)
	}
}

func ptr(s string) *string { return &s }

// metric reads a counter (by its one label's value), a gauge, or a
// histogram's count from reg.
func metric(t *testing.T, reg *prometheus.Registry, name, label string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if label != "" && (len(m.GetLabel()) != 1 || m.GetLabel()[0].GetValue() != label) {
				continue
			}
			switch {
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				return float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	t.Fatalf("no metric %s{%s}", name, label)
	return 0
}

// In shadow mode the crawler files are the upstream's (§6: headgate
// computes, the upstream's bytes go out): /robots.txt, the sitemap files
// and /llms.txt are forwarded; only the IndexNow key file, which no
// upstream has, is headgate's.
func TestShadowForwardsCrawlerFiles(t *testing.T) {
	src := `mode = "%s"
[robots]
mode = "generate"
[[robots.group]]
user_agents = ["GPTBot"]
disallow = ["/"]
[[rule]]
match = "/"
sitemap = true
[llms_txt]
title = "Notes"
[[llms_txt.section]]
name = "All"
match = "/*"
[indexnow]
key = "abcdefgh"
`
	for mode, want := range map[string]bool{"shadow": false, "production": true} {
		s := New(loadConfig(t, fmt.Sprintf(src, mode), nil), Options{})
		for _, path := range []string{"/robots.txt", "/sitemap.xml", "/sitemap-1.xml", "/llms.txt"} {
			if got := s.Handles(path); got != want {
				t.Errorf("%s: Handles(%s) = %v, want %v", mode, path, got, want)
			}
		}
		if !s.Handles("/abcdefgh.txt") {
			t.Errorf("%s: the IndexNow key file is not served", mode)
		}
	}
}
