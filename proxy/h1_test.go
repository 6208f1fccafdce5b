package proxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/headgate/headgate/internal/hgtest"
)

// scriptedUpstream is an upstream on loopback that answers every request
// on a connection with answer(n, req) written raw, n counting the
// requests of all connections from 0. answer's second result closes the
// connection after the answer (with a reset when reset is set). It counts
// connections and requests.
type scriptedUpstream struct {
	ln          net.Listener
	conns       atomic.Int32
	reqs        atomic.Int32
	mu          sync.Mutex
	seen        []string // "conn/method path" of every request
	serverConns []net.Conn
	closed      chan struct{} // a value each time a connection is closed
	wg          sync.WaitGroup
	reset       atomic.Bool // close connections with a reset (SO_LINGER 0)
}

func newScriptedUpstream(t testing.TB, answer func(n int, r *http.Request) (string, bool)) *scriptedUpstream {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := &scriptedUpstream{ln: ln, closed: make(chan struct{}, 100)}
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			id := u.conns.Add(1)
			u.mu.Lock()
			u.serverConns = append(u.serverConns, c)
			u.mu.Unlock()
			u.wg.Add(1)
			go func() {
				defer u.wg.Done()
				defer func() {
					if u.reset.Load() {
						c.(*net.TCPConn).SetLinger(0)
					}
					c.Close()
					select {
					case u.closed <- struct{}{}:
					default:
					}
				}()
				br := bufio.NewReader(c)
				for {
					r, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, r.Body)
					n := int(u.reqs.Add(1)) - 1
					u.mu.Lock()
					u.seen = append(u.seen, string(rune('0'+id))+"/"+r.Method+" "+r.URL.Path)
					u.mu.Unlock()
					out, closeAfter := answer(n, r)
					if _, err := io.WriteString(c, out); err != nil || closeAfter {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); u.wg.Wait() })
	return u
}

func (u *scriptedUpstream) url(path string) string { return "http://" + u.ln.Addr().String() + path }

func newTestH1(t *testing.T) *h1Transport {
	if !canPeek {
		t.Skip("idle connections can not be peeked at here: h1Transport sends everything through http.Transport")
	}
	tr := newH1Transport(newTransport(), nil)
	t.Cleanup(tr.close)
	return tr
}

func h1Get(t *testing.T, tr http.RoundTripper, method, url string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	res, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatalf("%s %s: body: %v", method, url, err)
	}
	return res, string(b)
}

// h1AtOnce has n GETs of url in flight at once (n connections), then reads
// and closes their bodies.
func h1AtOnce(t *testing.T, tr http.RoundTripper, url string, n int) {
	t.Helper()
	var bodies []io.ReadCloser
	for range n {
		req, _ := http.NewRequest("GET", url, nil)
		res, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, res.Body)
	}
	for _, b := range bodies {
		io.ReadAll(b)
		b.Close()
	}
}

// TestH1Framing sends each kind of response, then a second request: the
// body is read as http.Transport reads it, and the connection is used
// again exactly when the response ended at a boundary it can know.
func TestH1Framing(t *testing.T) {
	for _, tc := range []struct {
		name, method, answer string
		body                 string
		trailer              string
		reuse                bool
	}{
		{"length", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", "hello", "", true},
		{"chunked with trailer", "GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n3\r\nhel\r\n2\r\nlo\r\n0\r\nX-T: done\r\n\r\n", "hello", "done", true},
		{"close-delimited", "GET", "HTTP/1.1 200 OK\r\n\r\nhello", "hello", "", false},
		{"connection close", "GET", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 5\r\n\r\nhello", "hello", "", false},
		{"http/1.0", "GET", "HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello", "hello", "", false},
		{"http/1.0 keep-alive", "GET", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 5\r\n\r\nhello", "hello", "", true},
		{"head with length", "HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n", "", "", true},
		{"204", "GET", "HTTP/1.1 204 No Content\r\n\r\n", "", "", true},
		{"304", "GET", "HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n", "", "", true},
		{"empty", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", "", "", true},
		{"100 then 200", "GET", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", "ok", "", true},
		{"103 then 200", "GET", "HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", "ok", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := newScriptedUpstream(t, func(n int, r *http.Request) (string, bool) {
				if n == 0 {
					// A close-delimited body ends with the connection.
					return tc.answer, tc.name == "close-delimited"
				}
				return "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nsecond", false
			})
			tr := newTestH1(t)
			res, body := h1Get(t, tr, tc.method, up.url("/a"))
			if body != tc.body {
				t.Errorf("body %q, want %q", body, tc.body)
			}
			if got := res.Trailer.Get("X-T"); got != tc.trailer {
				t.Errorf("trailer %q, want %q", got, tc.trailer)
			}
			if _, body := h1Get(t, tr, "GET", up.url("/b")); body != "second" {
				t.Errorf("second body %q", body)
			}
			want := int32(2)
			if tc.reuse {
				want = 1
			}
			if got := up.conns.Load(); got != want {
				t.Errorf("%d connections for two requests, want %d (reuse %v)", got, want, tc.reuse)
			}
		})
	}
}

// TestH1Reuse: sequential requests share one connection, and what the
// pool keeps is bounded by MaxIdleConnsPerHost.
func TestH1Reuse(t *testing.T) {
	up := newScriptedUpstream(t, func(int, *http.Request) (string, bool) {
		return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false
	})
	tr := newTestH1(t)
	for range 20 {
		h1Get(t, tr, "GET", up.url("/"))
	}
	if n := up.conns.Load(); n != 1 {
		t.Fatalf("20 sequential requests used %d connections, want 1", n)
	}
	tr.MaxIdleConnsPerHost = 2
	h1AtOnce(t, tr, up.url("/"), 5)
	tr.mu.Lock()
	idle := tr.nidle
	tr.mu.Unlock()
	if idle != 2 {
		t.Fatalf("%d idle connections after 5 at once, want MaxIdleConnsPerHost 2", idle)
	}
}

// TestH1StaleRetry: a request on a reused connection that the upstream
// closes before answering (its keep-alive ran out as the request came) is
// sent once more on a new connection; one whose answer had begun, or on a
// new connection, is not.
func TestH1StaleRetry(t *testing.T) {
	var raced atomic.Bool
	up := newScriptedUpstream(t, func(n int, r *http.Request) (string, bool) {
		switch r.URL.Path {
		case "/race":
			if !raced.Swap(true) {
				return "", true // closed, nothing answered
			}
		case "/partial":
			return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n", true // cut before the blank line
		case "/fresh-close":
			return "", true
		}
		return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false
	})
	tr := newTestH1(t)
	h1Get(t, tr, "GET", up.url("/"))
	if _, body := h1Get(t, tr, "GET", up.url("/race")); body != "ok" {
		t.Fatalf("after the race: body %q", body)
	}
	up.mu.Lock()
	seen := strings.Join(up.seen, " ")
	up.mu.Unlock()
	if seen != "1/GET / 1/GET /race 2/GET /race" {
		t.Fatalf("the upstream saw %q, want the request on the reused connection, then once more on a new one", seen)
	}
	// A live pooled connection (the new one), whose answer begins and
	// breaks: an error, not a second try.
	req, _ := http.NewRequest("GET", up.url("/partial"), nil)
	if _, err := tr.RoundTrip(req); err == nil {
		t.Fatal("a response cut in its headers gave no error")
	}
	// A new connection closed before an answer: an error, not a retry.
	req, _ = http.NewRequest("GET", up.url("/fresh-close"), nil)
	if _, err := tr.RoundTrip(req); err == nil {
		t.Fatal("a new connection closed without an answer gave no error")
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	count := map[string]int{}
	for _, s := range up.seen {
		_, path, _ := strings.Cut(s, " ")
		count[path]++
	}
	if count["/partial"] != 1 || count["/fresh-close"] != 1 {
		t.Fatalf("the upstream saw %q: a request whose answer had begun, or on a new connection, was sent again", up.seen)
	}
}

// TestH1IdlePeek: a pooled connection the upstream closed is found before
// a request is written on it.
func TestH1IdlePeek(t *testing.T) {
	up := newScriptedUpstream(t, func(int, *http.Request) (string, bool) {
		return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", true
	})
	tr := newTestH1(t)
	h1Get(t, tr, "GET", up.url("/"))
	<-up.closed // the upstream closed the connection
	tr.mu.Lock()
	idle := tr.idle[h1Addr(&url.URL{Host: up.ln.Addr().String()})][0]
	tr.mu.Unlock()
	waitPeek(t, idle) // its FIN reached this side
	if c, reused := tr.get(h1Addr(&url.URL{Host: up.ln.Addr().String()})); c != nil || reused {
		t.Fatal("a connection the upstream closed was handed out")
	}
	h1Get(t, tr, "GET", up.url("/"))
	if n := up.reqs.Load(); n != 2 {
		t.Fatalf("the upstream read %d requests, want 2 (none written on the closed connection)", n)
	}
}

// TestH1Cancel: a request whose context ends while the upstream has not
// answered returns the context's cause at once and closes the connection.
func TestH1Cancel(t *testing.T) {
	release, started := make(chan struct{}), make(chan struct{}, 1)
	up := newScriptedUpstream(t, func(int, *http.Request) (string, bool) {
		started <- struct{}{}
		<-release
		return "", true
	})
	defer close(release)
	tr := newTestH1(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", up.url("/slow"), nil)
	done := make(chan error, 1)
	go func() {
		_, err := tr.RoundTrip(req)
		done <- err
	}()
	<-started
	cancel(errHeaderTimeout)
	select {
	case err := <-done:
		if !errors.Is(err, errHeaderTimeout) {
			t.Fatalf("error %v, want the context's cause", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("RoundTrip did not return after its context ended")
	}
	if tr.nidle != 0 {
		t.Fatal("a cancelled request's connection went back to the pool")
	}
}

// TestH1BodyCancel: a body read while the context ends fails with its cause.
func TestH1BodyCancel(t *testing.T) {
	up := newScriptedUpstream(t, func(int, *http.Request) (string, bool) {
		return "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npart", false
	})
	tr := newTestH1(t)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", up.url("/"), nil)
	res, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(res.Body, buf); err != nil {
		t.Fatal(err)
	}
	cancel()
	read := make(chan error, 1)
	go func() {
		_, err := res.Body.Read(buf)
		read <- err
	}()
	select {
	case err := <-read:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("read after cancel: %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a body read did not end when its context did")
	}
	res.Body.Close()
	if tr.nidle != 0 {
		t.Fatal("a cancelled body's connection went back to the pool")
	}
}

// TestH1EarlyClose: a body closed before its end closes its connection;
// the next request gets a new one and its own answer.
func TestH1EarlyClose(t *testing.T) {
	up := newScriptedUpstream(t, func(n int, r *http.Request) (string, bool) {
		if n == 0 {
			return "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789", false
		}
		return "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nsecond", false
	})
	tr := newTestH1(t)
	req, _ := http.NewRequest("GET", up.url("/"), nil)
	res, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Read(make([]byte, 3))
	res.Body.Close()
	if _, err := res.Body.Read(make([]byte, 3)); err == nil {
		t.Error("a read after Close succeeded")
	}
	if _, body := h1Get(t, tr, "GET", up.url("/")); body != "second" {
		t.Fatalf("next body %q: the rest of the first answer was read as the second", body)
	}
	if n := up.conns.Load(); n != 2 {
		t.Fatalf("%d connections, want 2", n)
	}
}

// TestH1HeaderLimit: a header block over h1MaxHeaderBytes is an error, not
// memory.
func TestH1HeaderLimit(t *testing.T) {
	big := strings.Repeat("a", h1MaxHeaderBytes+10)
	up := newScriptedUpstream(t, func(int, *http.Request) (string, bool) {
		return "HTTP/1.1 200 OK\r\nX-Big: " + big + "\r\nContent-Length: 0\r\n\r\n", true
	})
	tr := newTestH1(t)
	req, _ := http.NewRequest("GET", up.url("/"), nil)
	if _, err := tr.RoundTrip(req); !errors.Is(err, errH1HeaderTooLarge) {
		t.Fatalf("error %v, want errH1HeaderTooLarge", err)
	}
}

// TestH1Wire: the request written is http.Transport's, byte for byte.
func TestH1Wire(t *testing.T) {
	var got [2]string
	own := newTestH1(t)
	dials := 0
	dial := own.DialContext
	own.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials++
		return dial(ctx, network, addr)
	}
	for i, tr := range []http.RoundTripper{own, newTransport()} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan string, 1)
		go func() {
			c, err := ln.Accept()
			if err != nil {
				done <- ""
				return
			}
			defer c.Close()
			br := bufio.NewReader(c)
			tp := textproto.NewReader(br)
			var b strings.Builder
			for {
				l, err := tp.ReadLine()
				if err != nil || l == "" {
					break
				}
				b.WriteString(l + "\n")
			}
			io.WriteString(c, "HTTP/1.1 204 No Content\r\n\r\n")
			done <- b.String()
		}()
		req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/p?q=1", nil)
		req.Host = "public.example"
		req.Header.Set("User-Agent", "")
		req.Header.Set("X-Forwarded-For", "192.0.2.1")
		req.Header["Accept"] = []string{"text/html", "*/*"}
		req.Close = true
		if i == 0 && (!own.own || !h1Eligible(req)) {
			t.Fatal("the request would not take h1Transport's own path")
		}
		res, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		got[i] = <-done
		ln.Close()
	}
	if dials != 1 {
		t.Fatalf("h1Transport dialled %d times, want 1 (its own path)", dials)
	}
	if got[0] != got[1] {
		t.Fatalf("h1Transport wrote\n%s\nhttp.Transport wrote\n%s", got[0], got[1])
	}
	if !strings.Contains(got[0], "Connection: close") || strings.Contains(got[0], "User-Agent") {
		t.Fatalf("request written:\n%s", got[0])
	}
}

// TestH1EarlyHints: a 103 from the upstream reaches the client through
// headgate, by the trace httputil.ReverseProxy installs.
func TestH1EarlyHints(t *testing.T) {
	up := newScriptedUpstream(t, func(int, *http.Request) (string, bool) {
		return "HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n" +
			"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok", false
	})
	p, err := New(testConfig(t, up.url(""), ""), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	front := httptest.NewServer(p)
	defer front.Close()
	var hints []string
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
			hints = append(hints, h.Get("Link"))
			return nil
		},
	})
	req, _ := http.NewRequestWithContext(ctx, "GET", front.URL+"/x.txt", nil)
	res, err := front.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(res.Body)
	res.Body.Close()
	if len(hints) != 1 || hints[0] != "</s.css>; rel=preload" {
		t.Fatalf("103s the client saw: %q", hints)
	}
}

// TestH1Fallback: a request with a body, and one to an https upstream, go
// through http.Transport.
func TestH1Fallback(t *testing.T) {
	for _, tc := range []struct {
		method, body string
		ok           bool
	}{
		{"GET", "", true},
		{"HEAD", "", true},
		{"POST", "x", false},
		{"GET", "x", false},
		{"OPTIONS", "", false},
	} {
		req, _ := http.NewRequest(tc.method, "http://127.0.0.1:1/", nil)
		if tc.body != "" {
			req, _ = http.NewRequest(tc.method, "http://127.0.0.1:1/", strings.NewReader(tc.body))
		}
		if got := h1Eligible(req); got != tc.ok {
			t.Errorf("%s with body %q: eligible %v, want %v", tc.method, tc.body, got, tc.ok)
		}
	}
	for _, h := range []string{"Upgrade", "Expect"} {
		req, _ := http.NewRequest("GET", "http://127.0.0.1:1/", nil)
		req.Header.Set(h, "x")
		if h1Eligible(req) {
			t.Errorf("GET with %s: eligible", h)
		}
	}
	for _, u := range []string{"https://127.0.0.1:1/", "http://bücher.example/", "http://u:p@127.0.0.1:1/"} {
		req, _ := http.NewRequest("GET", u, nil)
		if h1Eligible(req) {
			t.Errorf("%s: eligible", u)
		}
	}
	var req *http.Request
	up := newScriptedUpstream(t, func(int, *http.Request) (string, bool) {
		return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false
	})
	tr := newTestH1(t)
	req, _ = http.NewRequest("POST", up.url("/"), strings.NewReader("body"))
	res, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(res.Body)
	res.Body.Close()
	if tr.nidle != 0 {
		t.Fatal("a POST's connection went into h1Transport's pool")
	}
}

// TestH1Sweep: connections idle past IdleConnTimeout are closed by the
// sweep; newer ones stay.
func TestH1Sweep(t *testing.T) {
	up := newScriptedUpstream(t, func(int, *http.Request) (string, bool) {
		return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false
	})
	tr := newTestH1(t)
	h1AtOnce(t, tr, up.url("/"), 3)
	tr.mu.Lock()
	if !tr.swept || tr.sweeper == nil {
		tr.mu.Unlock()
		t.Fatal("connections went idle and no sweep was scheduled")
	}
	l := tr.idle[h1Addr(&url.URL{Host: up.ln.Addr().String()})]
	if len(l) != 3 {
		tr.mu.Unlock()
		t.Fatalf("%d idle, want 3", len(l))
	}
	l[0].idleAt = l[0].idleAt.Add(-2 * tr.idleTimeout())
	l[1].idleAt = l[1].idleAt.Add(-2 * tr.idleTimeout())
	tr.mu.Unlock()
	tr.sweep()
	tr.mu.Lock()
	n := tr.nidle
	tr.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d idle after the sweep, want 1", n)
	}
	<-up.closed // the two swept connections are closed: the upstream sees it
	<-up.closed
	select {
	case <-up.closed:
		t.Fatal("the sweep closed a connection not yet idle for IdleConnTimeout")
	default:
	}
}

func TestH1Addr(t *testing.T) {
	for in, want := range map[string]string{
		"example.com":      "example.com:80",
		"example.com:8080": "example.com:8080",
		"app:":             "app:80",
		"127.0.0.1":        "127.0.0.1:80",
		"[::1]":            "[::1]:80",
		"[::1]:81":         "[::1]:81",
		"[fe80::1%25eth0]": "[fe80::1%eth0]:80",
	} {
		u, err := url.Parse("http://" + in + "/")
		if err != nil {
			t.Fatal(err)
		}
		if got := h1Addr(u); got != want {
			t.Errorf("h1Addr(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestH1Unsolicited: bytes the upstream sends after an answer, with it or
// later while the connection is idle, close the connection (logged), and
// never become the next request's answer.
func TestH1Unsolicited(t *testing.T) {
	for _, tc := range []struct {
		name, method, answer, late string
	}{
		{"with the answer", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nEVIL", ""},
		{"after a HEAD", "HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nEVIL"},
		{"after a 204", "GET", "HTTP/1.1 204 No Content\r\n\r\n", "oops"},
		{"after a body", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nEVIL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := newScriptedUpstream(t, func(n int, r *http.Request) (string, bool) {
				if n == 0 {
					return tc.answer, false
				}
				return "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ngood", false
			})
			var logs hgtest.LogBuffer
			tr := newH1Transport(newTransport(), slog.New(slog.NewTextHandler(&logs, nil)))
			t.Cleanup(tr.close)
			h1Get(t, tr, tc.method, up.url("/a"))
			if tc.late != "" {
				// The late bytes, on the pooled connection, before the
				// next request: written by the test on the upstream's side.
				tr.mu.Lock()
				c := tr.idle[h1Addr(&url.URL{Host: up.ln.Addr().String()})][0]
				tr.mu.Unlock()
				up.mu.Lock()
				for _, sc := range up.serverConns {
					if sc.RemoteAddr().String() == c.nc.LocalAddr().String() {
						io.WriteString(sc, tc.late)
					}
				}
				up.mu.Unlock()
				waitPeek(t, c)
			}
			if _, body := h1Get(t, tr, "GET", up.url("/b")); body != "good" {
				t.Fatalf("next answer %q, want good", body)
			}
			if !strings.Contains(logs.String(), "Unsolicited response") || tc.late != "" && !strings.Contains(logs.String(), tc.late[:4]) {
				t.Errorf("not logged: %q", logs.String())
			}
		})
	}
}

// TestH1DoneBeforeSend: a request whose context is over is not sent, and
// the idle connection it would have used stays in the pool.
func TestH1DoneBeforeSend(t *testing.T) {
	up := newScriptedUpstream(t, func(int, *http.Request) (string, bool) {
		return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false
	})
	tr := newTestH1(t)
	h1Get(t, tr, "GET", up.url("/"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", up.url("/"), nil)
	if _, err := tr.RoundTrip(req); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if n := up.reqs.Load(); n != 1 {
		t.Fatalf("the upstream read %d requests, want 1", n)
	}
	if tr.nidle != 1 {
		t.Fatalf("%d idle connections, want 1", tr.nidle)
	}
}

// TestH1ProxyLife: a reload keeps the Proxy's transport and its pooled
// connections; Close closes them.
func TestH1ProxyLife(t *testing.T) {
	up := newScriptedUpstream(t, func(int, *http.Request) (string, bool) {
		return "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok", false
	})
	p, err := New(testConfig(t, up.url(""), ""), Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr := p.state.Load().transport
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, httptest.NewRequest("GET", "http://notes.example/x.txt", nil))
	if err := p.Swap(testConfig(t, up.url(""), "")); err != nil {
		t.Fatal(err)
	}
	if p.state.Load().transport != tr {
		t.Fatal("a reload replaced the upstream transport")
	}
	p.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "http://notes.example/x.txt", nil))
	if n := up.conns.Load(); n != 1 {
		t.Fatalf("%d upstream connections across a reload, want 1", n)
	}
	p.Close()
	select {
	case <-up.closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close left the idle upstream connection open")
	}
}

// TestH1PeekAllocs: the peek before every reuse allocates nothing.
func TestH1PeekAllocs(t *testing.T) {
	up := newScriptedUpstream(t, func(int, *http.Request) (string, bool) {
		return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false
	})
	tr := newTestH1(t)
	h1Get(t, tr, "GET", up.url("/"))
	tr.mu.Lock()
	c := tr.idle[h1Addr(&url.URL{Host: up.ln.Addr().String()})][0]
	tr.mu.Unlock()
	if got := c.peek(); got != peekIdle {
		t.Fatalf("peek of a live idle connection: %d, want peekIdle", got)
	}
	if n := testing.AllocsPerRun(100, func() { c.peek() }); n != 0 {
		t.Fatalf("a peek allocates %v times", n)
	}
}

// waitPeek waits until a peek at c finds what its upstream did (a close,
// bytes): the kernel's delivery on loopback, which has no signal of its
// own to wait for.
func waitPeek(t *testing.T, c *h1Conn) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); c.peek() == peekIdle; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the upstream's close or bytes never reached the connection")
		}
	}
}
