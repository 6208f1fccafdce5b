package main

// What the spike's proxies keep of streaming, semantics and safety: the
// same probes against the fasthttp proxy and the two net/http ones, so the
// decision in docs/performance.md rests on behaviour, not on reputation.
//
//	cd test/perf/spike && go test -v -count=1 .

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// seen is what the upstream received.
type seen struct {
	mu   sync.Mutex
	reqs []string // "METHOD path te=... cl=... body=..."
}

func (s *seen) add(r *http.Request) {
	body, err := io.ReadAll(r.Body)
	line := fmt.Sprintf("%s %s te=%v cl=%d body=%q", r.Method, r.URL.Path, r.TransferEncoding, r.ContentLength, body)
	if err != nil {
		line += " err=" + err.Error()
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, line)
	s.mu.Unlock()
}

func (s *seen) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reqs...)
}

type target struct {
	name  string
	start func(t *testing.T, upstream string) string // returns the proxy's host:port
}

func targets() []target {
	serveNet := func(h func(string, int) http.Handler) func(*testing.T, string) string {
		return func(t *testing.T, up string) string {
			s := httptest.NewServer(h(up, 64<<10))
			t.Cleanup(s.Close)
			return s.Listener.Addr().String()
		}
	}
	return []target{
		{"fasthttp", func(t *testing.T, up string) string {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			s := newFast(up)
			go s.Serve(ln)
			t.Cleanup(func() { s.Shutdown() })
			return ln.Addr().String()
		}},
		{"nethttp", serveNet(newNet)},
		{"rp", serveNet(newRP)},
	}
}

func upstreamServer(t *testing.T, h http.HandlerFunc) string {
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s.Listener.Addr().String()
}

// TestPassThrough: a page goes through whole, with its length.
func TestPassThrough(t *testing.T) {
	page := bytes.Repeat([]byte("<p>headgate spike</p>\n"), 10000)
	up := upstreamServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Length", fmt.Sprint(len(page)))
		w.Write(page)
	})
	for _, tg := range targets() {
		px := tg.start(t, up)
		for i := 0; i < 3; i++ {
			res, err := http.Get("http://" + px + "/p")
			if err != nil {
				t.Fatalf("%s: %v", tg.name, err)
			}
			got, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil || !bytes.Equal(got, page) || res.ContentLength != int64(len(page)) {
				t.Fatalf("%s: %d bytes, length %d, %v", tg.name, len(got), res.ContentLength, err)
			}
		}
	}
}

// TestStreamsResponse: the first bytes of a slow upstream's body reach
// the client before the upstream has finished.
func TestStreamsResponse(t *testing.T) {
	for _, tg := range targets() {
		release := make(chan struct{})
		up := upstreamServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("<html><head><title>first</title></head>"))
			w.(http.Flusher).Flush()
			<-release
			w.Write([]byte("<body>rest</body></html>"))
		})
		px := tg.start(t, up)
		// Headers and first bytes both, in time: a proxy that buffers
		// holds the headers too.
		got := make(chan string, 1)
		bodies := make(chan io.ReadCloser, 1)
		go func() {
			res, err := http.Get("http://" + px + "/")
			if err != nil {
				got <- "error: " + err.Error()
				return
			}
			bodies <- res.Body
			b := make([]byte, 64)
			n, _ := io.ReadAtLeast(res.Body, b, len("<html>"))
			got <- string(b[:n])
		}()
		select {
		case s := <-got:
			if !strings.HasPrefix(s, "<html>") {
				t.Errorf("%s: first bytes %q", tg.name, s)
			}
			t.Logf("%s: streams the first bytes of a paused upstream", tg.name)
		case <-time.After(2 * time.Second):
			t.Errorf("%s: no byte before the upstream finished: the body is buffered", tg.name)
		}
		close(release)
		select {
		case body := <-bodies:
			io.Copy(io.Discard, body)
			body.Close()
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: no response after the upstream finished", tg.name)
		}
	}
}

// TestSmuggling sends requests that desynchronize a proxy from its
// upstream when the two read a body's length differently (RFC 9112 §6.3):
// the proxy must reject them, or forward only requests it framed itself
// and answered. A request reaching the upstream that the client got no
// answer for is a desync; a pipelined /smuggled that the proxy parsed and
// answered as a request of its own is not (the proxy saw it, as headgate's
// test/hostile_test.go checks with a denied path). A last request with
// Connection: close ends each exchange without a timeout.
func TestSmuggling(t *testing.T) {
	cases := []struct{ name, raw string }{
		{"CL.TE", "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"},
		{"TE.CL", "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n1\r\nZ\r\n0\r\n\r\n"},
		{"TE obfuscated", "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"},
		{"TE twice", "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n0\r\n\r\n"},
		{"CL twice", "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 44\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"},
		{"space before colon", "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\nContent-Length: 4\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"},
		{"bare LF chunk", "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\n\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"},
		{"obs-fold", "GET /a HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n Transfer-Encoding: chunked\r\n\r\n"},
	}
	for _, tg := range targets() {
		for _, tc := range cases {
			var s seen
			up := upstreamServer(t, func(w http.ResponseWriter, r *http.Request) {
				s.add(r)
				w.Write([]byte("ok"))
			})
			px := tg.start(t, up)
			c, err := net.Dial("tcp", px)
			if err != nil {
				t.Fatal(err)
			}
			c.SetDeadline(time.Now().Add(2 * time.Second))
			io.WriteString(c, tc.raw+"GET /end HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
			var statuses []string
			br := bufio.NewReader(c)
			for {
				res, err := http.ReadResponse(br, nil)
				if err != nil {
					break
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				statuses = append(statuses, res.Status)
			}
			c.Close()
			got := s.list()
			verdict := "ok"
			if len(got) > len(statuses) {
				verdict = "DESYNC"
			}
			t.Logf("%-8s %-18s client got %v; upstream got %v: %s", tg.name, tc.name, statuses, got, verdict)
			if verdict != "ok" {
				t.Errorf("%s %s: the upstream got a request the client got no answer for", tg.name, tc.name)
			}
		}
	}
}

// TestUpstreamBothLengths: a hostile upstream answers with both
// Transfer-Encoding and Content-Length; the proxy must not pass both on
// (the client would read the body one way, the next proxy another).
func TestUpstreamBothLengths(t *testing.T) {
	for _, tg := range targets() {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() {
					defer c.Close()
					br := bufio.NewReader(c)
					if _, err := http.ReadRequest(br); err != nil {
						return
					}
					io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
				}()
			}
		}()
		t.Cleanup(func() { ln.Close() })
		px := tg.start(t, ln.Addr().String())
		c, err := net.Dial("tcp", px)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(2 * time.Second))
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		raw, _ := io.ReadAll(io.LimitReader(c, 4096))
		c.Close()
		head, _, _ := strings.Cut(string(raw), "\r\n\r\n")
		both := strings.Contains(strings.ToLower(head), "content-length") && strings.Contains(strings.ToLower(head), "transfer-encoding")
		t.Logf("%s: response head %q", tg.name, head)
		if both {
			t.Errorf("%s: passed both Content-Length and Transfer-Encoding", tg.name)
		}
	}
}
