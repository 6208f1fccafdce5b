package proxy

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// rangeUpstream serves testPage as HTML at /p, an image at /img.png and a
// page at /raw/ (rewrite = false there), all through http.ServeContent,
// which answers a Range with a 206; it records the Range of each request.
// fail makes the requests that ask for no Range fail (the connection
// closed before an answer).
type rangeUpstream struct {
	mu     sync.Mutex
	ranges []string
	fail   atomic.Bool
}

func (u *rangeUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.mu.Lock()
	u.ranges = append(u.ranges, r.Header.Get("Range"))
	u.mu.Unlock()
	if u.fail.Load() && r.Header.Get("Range") == "" {
		c, _, _ := http.NewResponseController(w).Hijack()
		c.Close()
		return
	}
	body, ct := testPage, "text/html; charset=utf-8"
	switch r.URL.Path {
	case "/img.png":
		body, ct = strings.Repeat("\x89PNG", 200), "image/png"
	case "/export.html":
		w.Header().Set("Content-Disposition", "attachment; filename=export.html")
	case "/slow":
		if r.Header.Get("Range") == "" {
			<-r.Context().Done() // the whole page never comes
			return
		}
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("ETag", `"v1"`)
	http.ServeContent(w, r, "", time.Unix(1e9, 0), strings.NewReader(body))
}

func (u *rangeUpstream) seen() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.ranges...)
}

// TestRangeOfAPage: a Range the upstream answers with a part of a page
// (a 206 of HTML) would hand the client the upstream's head as it came;
// headgate asks again for the whole page and sends it rewritten, in a 200.
// What is not a page, or not rewritten, keeps its 206; a HEAD is not asked
// again; a failed second request lets the part through as before.
func TestRangeOfAPage(t *testing.T) {
	up := &rangeUpstream{}
	srv := httptest.NewUnstartedServer(up)
	var conns atomic.Int64
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	p, front := newFront(t, srv.URL, testRules+`
[[rule]]
match = "/raw/*"
rewrite = false
`, io.Discard)

	get := func(method, path, rng string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, front.URL+path, nil)
		req.Header.Set("Range", rng)
		req.Header.Set("Accept-Encoding", "identity")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		return res, string(b)
	}

	for _, tc := range []struct {
		name, method, path, rng string
		status                  int
		asked                   []string // the Range of each upstream request
		rewritten               bool
	}{
		{"a page's first bytes", "GET", "/p", "bytes=0-99", 200, []string{"bytes=0-99", ""}, true},
		{"a page's middle", "GET", "/p", "bytes=40-80", 200, []string{"bytes=40-80", ""}, true},
		{"an image keeps its range", "GET", "/img.png", "bytes=0-99", 206, []string{"bytes=0-99"}, false},
		{"rewrite = false keeps its range", "GET", "/raw/p", "bytes=0-99", 206, []string{"bytes=0-99"}, false},
		{"a HEAD is not asked again", "HEAD", "/p", "bytes=0-99", 206, []string{"bytes=0-99"}, false},
		{"a download keeps its range", "GET", "/export.html", "bytes=50-", 206, []string{"bytes=50-"}, false},
		{"several parts of a page", "GET", "/p", "bytes=0-20,40-60", 200, []string{"bytes=0-20,40-60", ""}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(up.seen())
			res, body := get(tc.method, tc.path, tc.rng)
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", res.StatusCode, tc.status)
			}
			if got := up.seen()[before:]; strings.Join(got, "|") != strings.Join(tc.asked, "|") {
				t.Errorf("the upstream was asked for ranges %q, want %q", got, tc.asked)
			}
			if tc.rewritten {
				if !strings.Contains(body, "<title>Rewritten title</title>") || !strings.HasSuffix(body, "</html>\n") {
					t.Errorf("not the whole page rewritten:\n%s", body)
				}
				if cr := res.Header.Get("Content-Range"); cr != "" {
					t.Errorf("Content-Range %q on a 200", cr)
				}
				if res.Header.Get("Accept-Ranges") != "" {
					t.Errorf("Accept-Ranges %q on a rewritten page", res.Header.Get("Accept-Ranges"))
				}
			} else if res.Header.Get("Content-Range") == "" {
				t.Errorf("a 206 without Content-Range")
			}
		})
	}

	t.Run("the record says so", func(t *testing.T) {
		for _, path := range []string{"/p", "/img.png"} {
			var rec *Record
			req := httptest.NewRequest("GET", path, nil)
			req.Header.Set("Range", "bytes=0-99")
			req = req.WithContext(Observe(req.Context(), func(r *Record) { rec = r }))
			p.ServeHTTP(httptest.NewRecorder(), req)
			if rec == nil || rec.UpstreamWhole != (path == "/p") {
				t.Errorf("%s: Record.UpstreamWhole = %v", path, rec != nil && rec.UpstreamWhole)
			}
		}
	})

	t.Run("a small part's connection is kept", func(t *testing.T) {
		get("GET", "/p", "") // a connection in the pool
		before := conns.Load()
		for range 10 {
			if res, _ := get("GET", "/p", "bytes=0-99"); res.StatusCode != 200 {
				t.Fatalf("status %d", res.StatusCode)
			}
		}
		if n := conns.Load() - before; n > 1 {
			t.Errorf("%d upstream connections opened for 10 ranges, one after another", n)
		}
	})

	t.Run("the second request's failure is the upstream's", func(t *testing.T) {
		up.fail.Store(true)
		defer up.fail.Store(false)
		res, body := get("GET", "/p", "bytes=0-99")
		if res.StatusCode != http.StatusBadGateway || strings.Contains(body, "Upstream title") {
			t.Errorf("status %d, body %q: want a 502 without the part", res.StatusCode, body)
		}
	})
}

// TestRangeOfAPageTimeout: upstream_timeout's clock runs while the whole
// page is asked for; when it runs out the client gets a 504, not the part.
func TestRangeOfAPageTimeout(t *testing.T) {
	up := &rangeUpstream{}
	srv := httptest.NewServer(up)
	t.Cleanup(srv.Close)
	p, err := New(testConfig(t, srv.URL, "[server]\nupstream_timeout = \"100ms\"\n\n"+testRules), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	req := httptest.NewRequest("GET", "/slow", nil)
	req.Header.Set("Range", "bytes=0-99")
	w := httptest.NewRecorder()
	p.ServeHTTP(w, req)
	if w.Code != http.StatusGatewayTimeout || strings.Contains(w.Body.String(), "Upstream title") {
		t.Errorf("status %d, body %q: want a 504 without the part", w.Code, w.Body.String())
	}
}
