package proxy

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headgate/headgate/watch"
)

// stallWriter is a client that takes an answer's headers and then reads
// nothing: its first Write says so (started) and blocks until release.
type stallWriter struct {
	h       http.Header
	once    sync.Once
	started chan struct{}
	release chan struct{}
}

func (w *stallWriter) Header() http.Header { return w.h }
func (w *stallWriter) WriteHeader(int)     {}
func (w *stallWriter) Write(b []byte) (int, error) {
	w.once.Do(func() { close(w.started) })
	<-w.release
	return len(b), nil
}

// A Markdown answer holds its conversion slot until its body is closed,
// so clients that never read cannot pile up page-sized buffers past the
// bound (each held its page or its Markdown once its conversion
// returned); a request that finds every slot taken for upstream_timeout
// is answered the page's HTML, streamed, and counted as "busy".
func TestMarkdownSlotsHeldBySlowClients(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, testPage)
	}))
	t.Cleanup(up.Close)
	cfg := testConfig(t, up.URL, "[server]\nupstream_timeout = \"200ms\"\n\n"+testRules+"\n[markdown]\nenabled = true\n")
	p, err := New(cfg, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	get := func(w http.ResponseWriter) {
		req := httptest.NewRequest("GET", "http://notes.example/page", nil)
		req.Header.Set("Accept", "text/markdown")
		p.ServeHTTP(w, req)
	}
	n := cap(p.mdSlots.slots())
	var stalled []*stallWriter
	var wg sync.WaitGroup
	for range n {
		w := &stallWriter{h: http.Header{}, started: make(chan struct{}), release: make(chan struct{})}
		stalled = append(stalled, w)
		wg.Go(func() { get(w) })
		<-w.started
		if ct := w.h.Get("Content-Type"); !strings.HasPrefix(ct, "text/markdown") {
			t.Fatalf("stalled client %d got %q, want Markdown", len(stalled), ct)
		}
	}
	rec := httptest.NewRecorder()
	get(rec)
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/html") || rec.Code != 200 || !strings.Contains(rec.Body.String(), "Hello body") {
		t.Errorf("with every slot held by a client that reads nothing: %d %q, want the page's HTML", rec.Code, ct)
	}
	if v := counterValue(p.mm.fallbacks.WithLabelValues("busy")); v != 1 {
		t.Errorf(`fallbacks{reason="busy"} = %v, want 1`, v)
	}
	for _, w := range stalled {
		close(w.release)
	}
	wg.Wait()
	rec = httptest.NewRecorder()
	get(rec)
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/markdown") {
		t.Errorf("after the slow clients left: %q, want Markdown (their slots given back)", ct)
	}
}

// A page whose body comes slowly is answered Markdown, late, not
// headgate's 504: upstream_timeout times the head, as on the HTML path,
// which streams the same page fine. And a Markdown answer that fails after
// the page's head was read is not the page going down for [watch].
func TestMarkdownSlowBodyIsNotPageDown(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		head, rest, _ := strings.Cut(testPage, "<body>")
		io.WriteString(w, head+"<body>")
		w.(http.Flusher).Flush()
		for range 4 {
			time.Sleep(100 * time.Millisecond)
			io.WriteString(w, "<p>more</p>")
			w.(http.Flusher).Flush()
		}
		io.WriteString(w, rest)
	}))
	t.Cleanup(up.Close)
	cfg := testConfig(t, up.URL, "[server]\nupstream_timeout = \"150ms\"\n\n"+watchRules+"\n[watch]\nenabled = true\nconfirm = 2\n[markdown]\nenabled = true\nmatch = [\"/page\"]\n")
	p, err := New(cfg, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	do := func(accept string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", "http://notes.example/page", nil)
		req.Header.Set("Accept", accept)
		w := httptest.NewRecorder()
		p.ServeHTTP(w, req)
		return w
	}
	for _, accept := range []string{"text/html", "text/markdown", "text/markdown", "text/markdown", "text/html"} {
		w := do(accept)
		if w.Code != 200 {
			t.Errorf("%s: %d, want 200", accept, w.Code)
		}
		if accept == "text/markdown" && !strings.Contains(w.Body.String(), "more") {
			t.Errorf("Markdown without the page's late text: %q", w.Body.String())
		}
	}
	if ev := p.watcher().Events(watch.Critical); len(ev) != 0 {
		t.Errorf("critical events for a page every client got: %+v", ev)
	}
}
