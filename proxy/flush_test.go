package proxy

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// flushCounter is a ResponseWriter that counts flushes.
type flushCounter struct {
	*httptest.ResponseRecorder
	flushes int
}

func (f *flushCounter) Flush() { f.flushes++; f.ResponseRecorder.Flush() }

// A rewritten page whose length is known goes out as it is read, never
// flushed write by write: each flush is a system call of its own, and
// net/http sends what is buffered when the handler returns. A page of
// unknown length is flushed, but by the timer (flush.go), not after every
// write. The body is several copy buffers long, so that a flush per write
// would show.
func TestNoFlushPerWrite(t *testing.T) {
	body := "<html><head><title>t</title></head><body>" + strings.Repeat("<p>lorem ipsum dolor sit amet</p>\n", 12000) + "</body></html>"
	for _, tc := range []struct {
		name   string
		length bool
		max    int
	}{
		{"length", true, 0},
		// The timer flushes 50 ms after the first unflushed write: in
		// process the whole page is written within one or two of those
		// windows, a busy machine's scheduler may stretch it to a few;
		// a flush per write would be 50 or more (the upstream's writes).
		{"chunked", false, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := newTestProxy(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				if tc.length {
					w.Header().Set("Content-Length", strconv.Itoa(len(body)))
				}
				for rest := body; rest != ""; {
					n := min(len(rest), 8<<10)
					if _, err := w.Write([]byte(rest[:n])); err != nil {
						return
					}
					if !tc.length {
						w.(http.Flusher).Flush()
					}
					rest = rest[n:]
				}
			}, testRules)
			w := &flushCounter{ResponseRecorder: httptest.NewRecorder()}
			p.ServeHTTP(w, httptest.NewRequest("GET", "/p", nil))
			if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "A rewritten page.") {
				t.Fatalf("status %d, not rewritten", w.Code)
			}
			if got, want := w.Body.Len(), len(body); got < want {
				t.Fatalf("body %d bytes, want at least %d", got, want)
			}
			if tc.length && w.Header().Get("Content-Length") != strconv.Itoa(w.Body.Len()) {
				t.Fatalf("Content-Length %q, body %d", w.Header().Get("Content-Length"), w.Body.Len())
			}
			if w.flushes > tc.max {
				t.Fatalf("%d flushes for a %d-byte page, want at most %d", w.flushes, len(body), tc.max)
			}
		})
	}
}
