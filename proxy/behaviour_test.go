package proxy_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	kgzip "github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/headgate/headgate/internal/hgtest"
)

// Behaviour tests of the proxy that once ran against the real binary
// (test/e2e_test.go) and need none of it: what a client gets — statuses,
// headers, bodies, the log and the metrics — from headgate as serve builds
// it (front_test.go). What needs the binary (signals, reload, shutdown)
// stays in test/.

func TestRewriteExactLength(t *testing.T) {
	up := hgtest.NewUpstream(t, hgtest.HTMLHandler(hgtest.Page))
	hg := serve(t, hgtest.Config{Upstream: up.URL, Rules: hgtest.PageRules})
	res, body := hg.Get(t, "GET", "/p")
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
	hgtest.RewrittenHead(t, body, "/p")
	if res.ContentLength != int64(len(body)) {
		t.Errorf("Content-Length %d, body %d bytes", res.ContentLength, len(body))
	}
	if !bytes.HasSuffix(body, []byte("<body><p>Hello body</p>\n</body></html>\n")) {
		t.Errorf("the body after the head changed:\n%s", body)
	}
}

// Forged Host, X-Forwarded-Host and Forwarded change no URL headgate
// writes; the upstream gets the client's Host and headgate's own
// X-Forwarded-* headers.
func TestForgedHostHeaders(t *testing.T) {
	up := hgtest.NewUpstream(t, hgtest.HTMLHandler(hgtest.Page))
	hg := serve(t, hgtest.Config{Upstream: up.URL, Rules: hgtest.PageRules + `
[rule.open_graph]
image = "/cover.png"
`})
	res, body := hg.Get(t, "GET", "/notes/1",
		"Host: evil.example",
		"X-Forwarded-Host: evil2.example",
		"X-Forwarded-Proto: gopher",
		"Forwarded: host=evil3.example;proto=http")
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
	hgtest.RewrittenHead(t, body, "/notes/1")
	if !bytes.Contains(body, []byte(`<meta property="og:image" content="https://notes.example/cover.png">`)) {
		t.Errorf("og:image not made from the base URL:\n%s", body)
	}
	if bytes.Contains(body, []byte("evil")) {
		t.Errorf("a forged host reached the page:\n%s", body)
	}
	r := up.LastRequest()
	if r.Host != "evil.example" {
		t.Errorf("preserve_host: upstream got Host %q", r.Host)
	}
	if got := r.Header.Get("X-Forwarded-Host"); got != "evil.example" {
		t.Errorf("upstream got X-Forwarded-Host %q, want the request's Host", got)
	}
	if got := r.Header.Get("X-Forwarded-Proto"); got != "http" {
		t.Errorf("upstream got X-Forwarded-Proto %q", got)
	}
	if got := r.Header.Get("Forwarded"); got != "" {
		t.Errorf("the client's Forwarded reached the upstream: %q", got)
	}
	if got := r.Header.Get("X-Forwarded-For"); got != "127.0.0.1" {
		t.Errorf("upstream got X-Forwarded-For %q", got)
	}
}

// Each coding from the upstream × each Accept-Encoding from the client:
// the body decodes and carries the rewritten head.
func TestCodings(t *testing.T) {
	up := hgtest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		coding := strings.TrimPrefix(r.URL.Path, "/")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if coding != "identity" {
			w.Header().Set("Content-Encoding", coding)
		}
		w.Header().Set("Vary", "Accept-Encoding")
		w.Write(hgtest.Encode(t, coding, []byte(hgtest.Page)))
	})
	hg := serve(t, hgtest.Config{Upstream: up.URL, Rules: hgtest.PageRules})
	for _, from := range []string{"identity", "gzip", "deflate", "br", "zstd"} {
		for _, tc := range []struct {
			accept, want, upstream string
		}{
			{"", "", ""},
			{"identity", "", ""},
			{"gzip", "gzip", "gzip"},
			{"deflate", "", "deflate"}, // headgate decodes deflate but produces only server.compress
			{"br", "br", "br"},
			{"zstd", "zstd", "zstd"},
			{"gzip, deflate, br, zstd", "zstd", "zstd, br, gzip, deflate"},
			{"br;q=0.5, gzip;q=0.8, compress, zstd;q=0", "gzip", "br;q=0.5, gzip;q=0.8"},
			{"*;q=0.1, br", "br", "zstd;q=0.1, br, gzip;q=0.1, deflate;q=0.1"},
		} {
			t.Run(fmt.Sprintf("%s/%q", from, tc.accept), func(t *testing.T) {
				var hdr []string
				if tc.accept != "" {
					hdr = append(hdr, "Accept-Encoding: "+tc.accept)
				}
				res, body := hg.Get(t, "GET", "/"+from, hdr...)
				if res.StatusCode != 200 {
					t.Fatalf("status %d", res.StatusCode)
				}
				if got := res.Header.Get("Content-Encoding"); got != tc.want {
					t.Errorf("Content-Encoding %q, want %q", got, tc.want)
				}
				if got := up.LastRequest().Header.Get("Accept-Encoding"); got != tc.upstream {
					t.Errorf("upstream got Accept-Encoding %q, want %q", got, tc.upstream)
				}
				if !strings.Contains(strings.Join(res.Header.Values("Vary"), ","), "Accept-Encoding") {
					t.Errorf("no Vary: Accept-Encoding: %q", res.Header.Values("Vary"))
				}
				plain := hgtest.Decode(t, res.Header.Get("Content-Encoding"), body)
				hgtest.RewrittenHead(t, plain, "/"+from)
				if !bytes.Contains(plain, []byte("<p>Hello body</p>\n</body></html>\n")) {
					t.Errorf("body incomplete:\n%s", plain)
				}
			})
		}
	}
}

// An upstream that sends the head, pauses, then the body: the client has
// the rewritten head within 200 ms of the upstream's flush.
func TestStreamingHead(t *testing.T) {
	type step struct {
		flushed chan time.Time
		release chan struct{}
	}
	steps := make(chan step, 1)
	head, rest, _ := strings.Cut(hgtest.Page, "<body>")
	up := hgtest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		s := <-steps
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		var out io.Writer = w
		var gz *gzip.Writer
		if r.URL.Path == "/gzip" {
			w.Header().Set("Content-Encoding", "gzip")
			gz = gzip.NewWriter(w)
			out = gz
		}
		io.WriteString(out, head+"<body>")
		if gz != nil {
			gz.Flush()
		}
		w.(http.Flusher).Flush()
		s.flushed <- time.Now()
		<-s.release
		io.WriteString(out, rest)
		if gz != nil {
			gz.Close()
		}
	})
	hg := serve(t, hgtest.Config{Upstream: up.URL, Rules: hgtest.PageRules})
	for _, tc := range []struct{ path, accept string }{
		{"/identity", ""}, {"/identity", "gzip"}, {"/gzip", ""}, {"/gzip", "gzip"}, {"/gzip", "zstd"}, {"/identity", "br"},
	} {
		t.Run(tc.path+"/"+tc.accept, func(t *testing.T) {
			s := step{make(chan time.Time, 1), make(chan struct{})}
			steps <- s
			// The upstream holds the rest of the page until the head has
			// reached the client. A proxy that held the head back would
			// wait for ever; the watchdog lets the upstream go on after 5 s,
			// and a head that arrives after that was not streamed.
			var release sync.Once
			var watchdog atomic.Bool
			let := func() { release.Do(func() { close(s.release) }) }
			defer let()
			timer := time.AfterFunc(5*time.Second, func() { watchdog.Store(true); let() })
			defer timer.Stop()
			req, _ := http.NewRequest("GET", hg.URL+tc.path, nil)
			if tc.accept != "" {
				req.Header.Set("Accept-Encoding", tc.accept)
			}
			type result struct {
				res *http.Response
				err error
			}
			done := make(chan result, 1)
			go func() {
				res, err := hgtest.Client.Do(req)
				done <- result{res, err}
			}()
			flushedAt := <-s.flushed
			var r result
			select {
			case r = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("no response headers within 5s of the upstream's head")
			}
			if r.err != nil {
				t.Fatal(r.err)
			}
			defer r.res.Body.Close()
			var body io.Reader = r.res.Body
			switch ce := r.res.Header.Get("Content-Encoding"); ce {
			case "gzip":
				zr, err := kgzip.NewReader(body)
				if err != nil {
					t.Fatal(err)
				}
				body = zr
			case "zstd":
				zr, err := zstd.NewReader(body)
				if err != nil {
					t.Fatal(err)
				}
				defer zr.Close()
				body = zr
			case "br":
				body = brotli.NewReader(body)
			}
			var got []byte
			buf := make([]byte, 4096)
			for !bytes.Contains(got, []byte("</head>")) {
				n, err := body.Read(buf)
				got = append(got, buf[:n]...)
				if err != nil {
					t.Fatalf("reading the head: %v (have %q)", err, got)
				}
			}
			d := time.Since(flushedAt)
			if watchdog.Load() {
				t.Fatalf("the rewritten head reached the client only after the upstream sent the rest (%v)", d)
			}
			// The flush interval is 50 ms; a second leaves room for a
			// loaded machine and none for a head held back.
			if d > time.Second {
				t.Errorf("rewritten head arrived %v after the upstream's flush", d)
			}
			t.Logf("head arrived %v after the upstream's flush", d)
			let()
			tail, err := io.ReadAll(body)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, tail...)
			hgtest.RewrittenHead(t, got, tc.path)
			if !bytes.HasSuffix(got, []byte("</body></html>\n")) {
				t.Errorf("body incomplete:\n%s", got)
			}
		})
	}
}

// Upstream failures give a clear status or an aborted response, a log line
// and a metric, and the next request is served normally.
func TestUpstreamFailures(t *testing.T) {
	hang := make(chan struct{})
	defer close(hang)
	big := hgtest.Page + strings.Repeat("<p>filler filler filler filler filler</p>\n", 20000)
	corruptMid := hgtest.Encode(t, "gzip", []byte(big))
	for i := len(corruptMid) / 2; i < len(corruptMid)/2+64; i++ {
		corruptMid[i] ^= 0x55
	}
	up := hgtest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/ok":
			io.WriteString(w, hgtest.Page)
		case "/corrupt-gzip":
			w.Header().Set("Content-Encoding", "gzip")
			io.WriteString(w, "this is not gzip at all, not even a header")
		case "/corrupt-gzip-mid":
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(corruptMid)
		case "/cut":
			w.Header().Set("Content-Length", "100000")
			w.WriteHeader(200)
			io.WriteString(w, hgtest.Page)
			w.(http.Flusher).Flush()
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		case "/hang":
			select {
			case <-hang:
			case <-r.Context().Done():
			}
		}
	})
	hg := serve(t, hgtest.Config{Upstream: up.URL, Rules: hgtest.PageRules, Server: `upstream_timeout = "500ms"`})
	next := func(t *testing.T) {
		t.Helper()
		res, body := hg.Get(t, "GET", "/ok")
		if res.StatusCode != 200 {
			t.Fatalf("next request: status %d", res.StatusCode)
		}
		hgtest.RewrittenHead(t, body, "/ok")
	}
	aborted := func(t *testing.T, path string) {
		t.Helper()
		res, err := hgtest.Client.Get(hg.URL + path)
		if err != nil {
			return // cut before or while the headers came
		}
		defer res.Body.Close()
		var r io.Reader = res.Body
		if res.Header.Get("Content-Encoding") == "zstd" {
			zr, err := zstd.NewReader(res.Body)
			if err != nil {
				return
			}
			defer zr.Close()
			r = zr
		}
		if _, err := io.Copy(io.Discard, r); err == nil {
			t.Fatalf("GET %s: status %d and a complete body; want an aborted response", path, res.StatusCode)
		}
	}

	t.Run("corrupt gzip", func(t *testing.T) {
		res, body := hg.Get(t, "GET", "/corrupt-gzip", "Accept-Encoding: gzip")
		if res.StatusCode != http.StatusBadGateway {
			t.Fatalf("status %d, want 502: %s", res.StatusCode, body)
		}
		hg.WaitLog(t, `upstream error.*corrupt`)
		if v := hg.Metric(t, `headgate_upstream_errors_total{kind="corrupt"}`); v < 1 {
			t.Errorf("corrupt errors %v", v)
		}
		next(t)
	})
	t.Run("corrupt gzip mid-body", func(t *testing.T) {
		before := hg.Metric(t, `headgate_requests_total{outcome="upstream_error"}`)
		aborted(t, "/corrupt-gzip-mid")
		hg.WaitLog(t, `cut short.*corrupt`)
		if v := hg.Metric(t, `headgate_requests_total{outcome="upstream_error"}`); v != before+1 {
			t.Errorf("upstream_error outcomes %v, want %v", v, before+1)
		}
		next(t)
	})
	t.Run("upstream closes mid-body", func(t *testing.T) {
		aborted(t, "/cut")
		hg.WaitLog(t, `cut short.*aborted`)
		if v := hg.Metric(t, `headgate_upstream_errors_total{kind="aborted"}`); v < 1 {
			t.Errorf("aborted errors %v", v)
		}
		next(t)
	})
	t.Run("upstream never answers", func(t *testing.T) {
		t0 := time.Now()
		res, _ := hg.Get(t, "GET", "/hang")
		if res.StatusCode != http.StatusGatewayTimeout {
			t.Fatalf("status %d, want 504", res.StatusCode)
		}
		if d := time.Since(t0); d > 5*time.Second {
			t.Errorf("took %v with upstream_timeout 500ms", d)
		}
		hg.WaitLog(t, `upstream error.*timeout`)
		if v := hg.Metric(t, `headgate_upstream_errors_total{kind="timeout"}`); v < 1 {
			t.Errorf("timeout errors %v", v)
		}
		next(t)
	})
	t.Run("connection refused", func(t *testing.T) {
		dead := "http://" + hgtest.FreeAddr(t)
		hg2 := serve(t, hgtest.Config{Upstream: dead, Rules: hgtest.PageRules})
		res, body := hg2.Get(t, "GET", "/x")
		if res.StatusCode != http.StatusBadGateway || !bytes.Contains(body, []byte("did not answer")) {
			t.Fatalf("status %d: %s", res.StatusCode, body)
		}
		hg2.WaitLog(t, `upstream error.*connect`)
		if v := hg2.Metric(t, `headgate_upstream_errors_total{kind="connect"}`); v != 1 {
			t.Errorf("connect errors %v", v)
		}
		res, _ = http.Get(hg2.Admin + "/readyz")
		if res.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("/readyz %d with the upstream down", res.StatusCode)
		}
		res, _ = http.Get(hg.Admin + "/readyz")
		if res.StatusCode != http.StatusOK {
			t.Errorf("/readyz %d with the upstream up", res.StatusCode)
		}
	})
}

// 304 through the proxy: the rewritten response's weak ETag is mapped
// back to the upstream's, and the 304 carries the mapped ETag.
func TestConditional(t *testing.T) {
	up := hgtest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Accept-Ranges", "bytes")
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		if r.Method == "HEAD" {
			w.Header().Set("Content-Length", strconv.Itoa(len(hgtest.Page)))
			return
		}
		io.WriteString(w, hgtest.Page)
	})
	hg := serve(t, hgtest.Config{Upstream: up.URL, Rules: hgtest.PageRules})
	res, body := hg.Get(t, "GET", "/c")
	hgtest.RewrittenHead(t, body, "/c")
	etag := res.Header.Get("ETag")
	if !strings.HasPrefix(etag, `W/"hg`) {
		t.Fatalf("ETag %q, want a weak headgate tag", etag)
	}
	if res.Header.Get("Accept-Ranges") != "" {
		t.Errorf("Accept-Ranges kept on a rewritten response")
	}

	res, body = hg.Get(t, "GET", "/c", "If-None-Match: "+etag)
	if res.StatusCode != http.StatusNotModified || len(body) != 0 {
		t.Fatalf("status %d, want 304", res.StatusCode)
	}
	if got := up.LastRequest().Header.Get("If-None-Match"); got != `"v1"` {
		t.Errorf("upstream got If-None-Match %q", got)
	}
	if got := res.Header.Get("ETag"); got != etag {
		t.Errorf("304 ETag %q, want %q", got, etag)
	}

	// A tag headgate did not make goes upstream as it is.
	res, _ = hg.Get(t, "GET", "/c", `If-None-Match: "other", W/"hg.0000000000000000.IjEi"`)
	if res.StatusCode != 200 {
		t.Errorf("status %d for foreign and stale tags", res.StatusCode)
	}
	if got := up.LastRequest().Header.Get("If-None-Match"); got != `"other"` {
		t.Errorf("upstream got If-None-Match %q, want the foreign tag only", got)
	}

	t.Run("HEAD", func(t *testing.T) {
		res, body := hg.Get(t, "HEAD", "/c")
		if res.StatusCode != 200 || len(body) != 0 {
			t.Fatalf("HEAD: status %d, %d body bytes", res.StatusCode, len(body))
		}
		if got := res.Header.Get("ETag"); got != etag {
			t.Errorf("HEAD ETag %q, GET's %q", got, etag)
		}
		if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Errorf("HEAD Content-Type %q", ct)
		}
		if up.LastRequest().Method != "HEAD" {
			t.Errorf("upstream got %s", up.LastRequest().Method)
		}
	})
}

// A PDF gets its canonical as a Link header (other links kept), its robots
// as X-Robots-Tag, and rule headers.
func TestNonHTMLHeaders(t *testing.T) {
	up := hgtest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		w.Header().Add("Link", `</old.pdf>; rel="canonical", </font.woff2>; rel=preload; as=font`)
		w.Header().Set("X-Robots-Tag", "all")
		io.WriteString(w, "%PDF-1.4 fake")
	})
	hg := serve(t, hgtest.Config{Upstream: up.URL, Rules: `
[[rule]]
match = "/docs/:name"
canonical = "/docs/{name}"
robots = { index = false }
[rule.headers]
x-doc = "{name}"
cache-control = "public, max-age=60"
`})
	res, body := hg.Get(t, "GET", "/docs/manual.pdf")
	if string(body) != "%PDF-1.4 fake" {
		t.Errorf("body changed: %q", body)
	}
	links := strings.Join(res.Header.Values("Link"), ", ")
	if !strings.Contains(links, `<https://notes.example/docs/manual.pdf>; rel="canonical"`) {
		t.Errorf("Link %q lacks the canonical", links)
	}
	if strings.Contains(links, "old.pdf") || !strings.Contains(links, "</font.woff2>; rel=preload; as=font") {
		t.Errorf("Link %q: the upstream canonical must go, other links stay", links)
	}
	if got := res.Header.Values("X-Robots-Tag"); len(got) != 1 || got[0] != "noindex" {
		t.Errorf("X-Robots-Tag %q", got)
	}
	if got := res.Header.Get("X-Doc"); got != "manual.pdf" {
		t.Errorf("X-Doc %q", got)
	}
	if got := res.Header.Get("Cache-Control"); got != "public, max-age=60" {
		t.Errorf("Cache-Control %q", got)
	}
}

// Denied paths and refused paths are answered by headgate; the upstream
// never sees them.
func TestDenyAndBadPath(t *testing.T) {
	up := hgtest.NewUpstream(t, hgtest.HTMLHandler(hgtest.Page))
	hg := serve(t, hgtest.Config{Upstream: up.URL, Rules: hgtest.PageRules + `
[[rule]]
match = "/internal/*"
deny = true
`})
	for _, path := range []string{"/internal/admin", "/internal/", "/internal%2Fadmin", "/internal"} {
		res, body := hg.Get(t, "GET", path)
		if res.StatusCode != 404 || !bytes.Contains(body, []byte("404")) {
			t.Errorf("%s: status %d", path, res.StatusCode)
		}
	}
	for _, target := range []string{"/a/%2e%2e/b", "/a/../b", "/%2E/x", "/a%00b", "/a/%zz"} {
		status := hgtest.RawGet(t, hg.URL, target)
		if status != 400 {
			t.Errorf("%s: status %d, want 400", target, status)
		}
	}
	if n := up.Hits(); n != 0 {
		t.Errorf("upstream hit %d times", n)
	}
	if v := hg.Metric(t, `headgate_requests_total{outcome="denied"}`); v != 4 {
		t.Errorf("denied %v", v)
	}
	if v := hg.Metric(t, `headgate_requests_total{outcome="bad_request"}`); v < 3 {
		t.Errorf("bad_request %v", v)
	}
}

// Staging: every response says noindex, nofollow — pages, assets, errors,
// headgate's own answers — replacing any other X-Robots-Tag.
func TestStaging(t *testing.T) {
	up := hgtest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Robots-Tag", "all")
		switch r.URL.Path {
		case "/style.css":
			w.Header().Set("Content-Type", "text/css")
			io.WriteString(w, "body{}")
		case "/boom":
			http.Error(w, "boom", 500)
		default:
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, hgtest.Page)
		}
	})
	hg := serve(t, hgtest.Config{Upstream: up.URL, Site: `mode = "staging"`, Rules: hgtest.PageRules + `
robots = { index = true, follow = true }
[rule.headers]
x-robots-tag = "noarchive"
[[rule]]
match = "/internal/*"
deny = true
`})
	for _, path := range []string{"/", "/p", "/style.css", "/boom", "/internal/x"} {
		res, body := hg.Get(t, "GET", path)
		if got := res.Header.Values("X-Robots-Tag"); len(got) != 1 || got[0] != "noindex, nofollow" {
			t.Errorf("%s (%d): X-Robots-Tag %q", path, res.StatusCode, got)
		}
		if path == "/p" {
			// Canonicals still name production.
			hgtest.RewrittenHead(t, body, "/p")
		}
	}
	if status := hgtest.RawGet(t, hg.URL, "/a/%2e%2e/b"); status != 400 {
		t.Errorf("bad path: %d", status)
	}
}

// Shadow: the body is the upstream's, byte for byte (also compressed); the
// changes go to the header and the log.
func TestShadow(t *testing.T) {
	gz := hgtest.Encode(t, "gzip", []byte(hgtest.Page))
	up := hgtest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("ETag", `"s1"`)
		if r.URL.Path == "/gz" {
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gz)
			return
		}
		io.WriteString(w, hgtest.Page)
	})
	hg := serve(t, hgtest.Config{Upstream: up.URL, Site: `mode = "shadow"`, Server: "change_header = true", Rules: hgtest.PageRules})
	res, body := hg.Get(t, "GET", "/p")
	if string(body) != hgtest.Page {
		t.Errorf("shadow changed the body:\n%s", body)
	}
	if res.ContentLength != int64(len(hgtest.Page)) || res.Header.Get("ETag") != `"s1"` {
		t.Errorf("shadow changed headers: length %d, ETag %q", res.ContentLength, res.Header.Get("ETag"))
	}
	ch := res.Header.Get("Headgate-Changes")
	if !strings.HasPrefix(ch, "wrote=3 replaced=2 ") || !strings.HasSuffix(ch, `; rules="/*"`) {
		t.Errorf("Headgate-Changes %q", ch)
	}
	res, body = hg.Get(t, "GET", "/gz", "Accept-Encoding: zstd, gzip")
	if !bytes.Equal(body, gz) || res.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("shadow re-encoded a gzip body (%s)", res.Header.Get("Content-Encoding"))
	}
	hg.WaitLog(t, `shadow: would change the head.*"/p"`)
	if v := hg.Metric(t, `headgate_tags_written_total{kind="canonical"}`); v != 2 {
		t.Errorf("canonical writes counted %v", v)
	}
	// What went out is the upstream's page: the outcome says shadow, in
	// the metric and in the access log, never rewritten.
	if v := hg.Metric(t, `headgate_requests_total{outcome="shadow"}`); v != 2 {
		t.Errorf("shadow outcomes counted %v, want 2", v)
	}
	if v := hg.Metric(t, `headgate_requests_total{outcome="rewritten"}`); v != 0 {
		t.Errorf("rewritten outcomes counted %v in shadow mode, want 0", v)
	}
	hg.WaitLog(t, `"msg":"request".*"path":"/p".*"outcome":"shadow"`)
}

// change_header on a production rewrite names the changes and the rules.
func TestChangeHeader(t *testing.T) {
	up := hgtest.NewUpstream(t, hgtest.HTMLHandler(hgtest.Page))
	hg := serve(t, hgtest.Config{Upstream: up.URL, Server: "change_header = true", Rules: hgtest.PageRules + `
[[rule]]
match = "/notes/:id"
description = "Note {id}"
`})
	res, body := hg.Get(t, "GET", "/notes/7")
	if !bytes.Contains(body, []byte(`content="Note 7"`)) {
		t.Errorf("body:\n%s", body)
	}
	if got, want := res.Header.Get("Headgate-Changes"), `wrote=3 replaced=2 corrected=0 dropped=0; rules="/*" "/notes/:id"`; got != want {
		t.Errorf("Headgate-Changes %q, want %q", got, want)
	}
}

// WebSocket upgrades pass through: the 101 and the bytes after it.
func TestWebSocketUpgrade(t *testing.T) {
	up := hgtest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "websocket" {
			http.Error(w, "no upgrade", 400)
			return
		}
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		io.WriteString(conn, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
		line, _ := brw.ReadString('\n')
		io.WriteString(conn, "echo: "+line)
	})
	hg := serve(t, hgtest.Config{Upstream: up.URL, Rules: hgtest.PageRules})
	conn, err := net.Dial("tcp", strings.TrimPrefix(hg.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(conn, "GET /ws HTTP/1.1\r\nHost: notes.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 101 {
		t.Fatalf("status %d", res.StatusCode)
	}
	io.WriteString(conn, "hello\n")
	line, err := br.ReadString('\n')
	if err != nil || line != "echo: hello\n" {
		t.Fatalf("got %q, %v", line, err)
	}
}

// builtin:demo runs inside the process; its pages are rewritten, its
// internal paths denied, and the sitemap and robots.txt are headgate's.
func TestBuiltinDemoAndSitemap(t *testing.T) {
	hg := serve(t, hgtest.Config{Upstream: "builtin:demo", Rules: `
[[rule]]
match = "/notes/:id{[0-9]+}"
title = "Note {id}"
canonical = "self"
sitemap = true
sitemap_source = "upstream:/internal/sitemap/notes.jsonl"

[[rule]]
match = "/internal/*"
deny = true
`})
	res, body := hg.Get(t, "GET", "/notes/3?utm_source=x", "Accept-Encoding: gzip")
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
	plain := hgtest.Decode(t, res.Header.Get("Content-Encoding"), body)
	if !bytes.Contains(plain, []byte("<title>Note 3</title>")) ||
		!bytes.Contains(plain, []byte(`<link rel="canonical" href="https://notes.example/notes/3">`)) {
		t.Errorf("demo note not rewritten:\n%s", hgtest.Clip(plain))
	}
	if res, _ := hg.Get(t, "GET", "/internal/admin"); res.StatusCode != 404 {
		t.Errorf("/internal/admin: %d", res.StatusCode)
	}
	res, body = hg.Get(t, "GET", "/sitemap.xml")
	if res.StatusCode != 200 || !bytes.Contains(hgtest.Decode(t, res.Header.Get("Content-Encoding"), body),
		[]byte("<loc>https://notes.example/notes/12</loc>")) {
		t.Errorf("sitemap (%d):\n%s", res.StatusCode, hgtest.Clip(body))
	}
	res, body = hg.Get(t, "GET", "/robots.txt")
	if res.StatusCode != 200 || !bytes.Contains(hgtest.Decode(t, res.Header.Get("Content-Encoding"), body),
		[]byte("Sitemap: https://notes.example/sitemap.xml")) {
		t.Errorf("robots.txt (%d):\n%s", res.StatusCode, body)
	}
	if v := hg.Metric(t, `headgate_requests_total{outcome="sitemap"}`); v != 1 {
		t.Errorf("sitemap outcome %v", v)
	}
	if v := hg.Metric(t, `headgate_requests_total{outcome="robots"}`); v != 1 {
		t.Errorf("robots outcome %v", v)
	}
	if res, _ := http.Get(hg.Admin + "/readyz"); res.StatusCode != 200 {
		t.Errorf("/readyz %d", res.StatusCode)
	}
}
