package proxy

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// readFromRecorder is a ResponseRecorder with a ReadFrom, as net/http's
// own response writer has: it counts the bytes that came through it.
type readFromRecorder struct {
	*httptest.ResponseRecorder
	readFrom int64
}

func (r *readFromRecorder) ReadFrom(src io.Reader) (int64, error) {
	n, err := io.Copy(r.ResponseRecorder, src)
	r.readFrom += n
	return n, err
}

// directPage is an HTML page of about n bytes with a head the test rules
// change.
func directPage(n int) string {
	var b strings.Builder
	b.WriteString("<!doctype html><html><head><title>Old title</title>\n<meta name=\"description\" content=\"old\">\n</head><body>\n")
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "<p>paragraph %d of a long page, with some filler text in it</p>\n", i)
	}
	b.WriteString("</body></html>\n")
	return b.String()
}

func answer(ctype, body string, extra ...string) string {
	h := "HTTP/1.1 200 OK\r\nContent-Type: " + ctype + "\r\n"
	for _, e := range extra {
		h += e + "\r\n"
	}
	return h + "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}

func chunked(ctype, body string) string {
	var b strings.Builder
	b.WriteString("HTTP/1.1 200 OK\r\nContent-Type: " + ctype + "\r\nTransfer-Encoding: chunked\r\n\r\n")
	for len(body) > 0 {
		n := min(len(body), 10000)
		fmt.Fprintf(&b, "%x\r\n%s\r\n", n, body[:n])
		body = body[n:]
	}
	b.WriteString("0\r\n\r\n")
	return b.String()
}

var dateRE = regexp.MustCompile(`(?m)^Date: .*$`)

// TestDirectSameBytes: a body that goes the direct way (the client's
// writer has a ReadFrom) reaches the client byte for byte as the one
// ReverseProxy copies, with the same headers and access-log byte count;
// it goes that way exactly when its length is known and nothing encodes
// it; the upstream connection is used again after it.
func TestDirectSameBytes(t *testing.T) {
	if !canSplice || !canPeek {
		t.Skip("the direct write path is for Linux only (splice(2))")
	}
	big := directPage(300 << 10)
	blob := strings.Repeat("\x89PNG binary bytes\x00\xff", 20000)
	for _, tc := range []struct {
		name, answer, method, accept string
		direct                       bool
	}{
		{"rewritten page", answer("text/html; charset=utf-8", big), "GET", "", true},
		{"a rule's rewrite = false", answer("text/html; charset=utf-8", big), "GET", "", true},
		{"an asset", answer("image/png", blob), "GET", "", true},
		{"a page the client takes gzipped", answer("text/html; charset=utf-8", big), "GET", "gzip", false},
		{"a chunked page", chunked("text/html; charset=utf-8", big), "GET", "", false},
		{"a page's HEAD", answer("text/html; charset=utf-8", big), "HEAD", "", false},
		{"a page that ends in the reader's first read", answer("text/html; charset=utf-8", directPage(2000)), "GET", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := newScriptedUpstream(t, func(n int, r *http.Request) (string, bool) {
				if r.Method == "HEAD" {
					head, _, _ := strings.Cut(tc.answer, "\r\n\r\n")
					return head + "\r\n\r\n", false
				}
				return tc.answer, false
			})
			rules := testRules
			if strings.Contains(tc.name, "rewrite = false") {
				rules += "\n[[rule]]\nmatch = \"/p\"\nrewrite = false\n"
			}
			var logs syncBuffer
			p, err := New(testConfig(t, up.url(""), "[server]\naccess_log = true\ncompress = [\"gzip\"]\n\n"+rules),
				Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Close() })
			serve := func(w http.ResponseWriter) string {
				req := httptest.NewRequest(tc.method, "http://notes.example/p", nil)
				if tc.accept != "" {
					req.Header.Set("Accept-Encoding", tc.accept)
				}
				p.ServeHTTP(w, req)
				lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
				return lines[len(lines)-1]
			}
			direct := &readFromRecorder{ResponseRecorder: httptest.NewRecorder()}
			logDirect := serve(direct)
			copied := httptest.NewRecorder()
			logCopied := serve(copied)

			if got := direct.readFrom > 0; got != tc.direct {
				t.Errorf("direct way taken: %v (%d bytes by ReadFrom), want %v", got, direct.readFrom, tc.direct)
			}
			if direct.Code != copied.Code || direct.Body.String() != copied.Body.String() {
				t.Fatalf("direct: %d, %d bytes; copied: %d, %d bytes; bodies differ", direct.Code, direct.Body.Len(), copied.Code, copied.Body.Len())
			}
			var hd, hc strings.Builder
			direct.Result().Header.Write(&hd)
			copied.Result().Header.Write(&hc)
			if a, b := dateRE.ReplaceAllString(hd.String(), ""), dateRE.ReplaceAllString(hc.String(), ""); a != b {
				t.Errorf("headers differ:\n%s\n---\n%s", a, b)
			}
			if tc.method == "GET" && tc.accept == "" {
				if cl := direct.Result().Header.Get("Content-Length"); tc.direct && cl != strconv.Itoa(direct.Body.Len()) {
					t.Errorf("Content-Length %q for %d bytes", cl, direct.Body.Len())
				}
				if tc.name == "rewritten page" && !strings.Contains(direct.Body.String(), "<title>Rewritten title</title>") {
					t.Errorf("not rewritten:\n%.300s", direct.Body.String())
				}
			}
			bytesOf := regexp.MustCompile(` bytes=(\d+) `)
			bd, bc := bytesOf.FindStringSubmatch(logDirect), bytesOf.FindStringSubmatch(logCopied)
			if bd == nil || bc == nil || bd[1] != bc[1] || (tc.method == "GET" && bd[1] != strconv.Itoa(direct.Body.Len())) {
				t.Errorf("access log bytes: direct %q, copied %q, body %d", logDirect, logCopied, direct.Body.Len())
			}
			if n := up.conns.Load(); n != 1 {
				t.Errorf("%d upstream connections for two requests, want 1 (the first's released at its end)", n)
			}
		})
	}
}

// directFront is headgate in front of up, served by net/http on loopback
// (whose response writer splices), its log in logs.
func directFront(t *testing.T, up *scriptedUpstream, logs *syncBuffer) (*Proxy, *httptest.Server) {
	t.Helper()
	if !canSplice || !canPeek {
		t.Skip("the direct write path is for Linux only (splice(2))")
	}
	p, err := New(testConfig(t, up.url(""), testRules), Options{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	front := httptest.NewServer(p)
	t.Cleanup(front.Close)
	return p, front
}

// TestDirectRealServer: through net/http's own server (splice(2) on
// Linux), a large rewritten page arrives whole, rewritten, at its
// Content-Length, on one upstream connection for every request.
func TestDirectRealServer(t *testing.T) {
	big := directPage(1 << 20)
	up := newScriptedUpstream(t, func(int, *http.Request) (string, bool) {
		return answer("text/html; charset=utf-8", big), false
	})
	var logs syncBuffer
	_, front := directFront(t, up, &logs)
	var first string
	for i := range 5 {
		res, err := identityClient.Get(front.URL + "/p")
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if res.ContentLength != int64(len(b)) || !strings.Contains(string(b), "<title>Rewritten title</title>") || !strings.HasSuffix(string(b), "</body></html>\n") {
			t.Fatalf("request %d: Content-Length %d, %d bytes:\n%.300s", i, res.ContentLength, len(b), b)
		}
		_, rest, _ := strings.Cut(big, "</head>")
		if !strings.HasSuffix(string(b), rest) {
			t.Fatalf("request %d: the body past the head differs from the upstream's", i)
		}
		if i == 0 {
			first = string(b)
		} else if string(b) != first {
			t.Fatalf("request %d differs from the first", i)
		}
	}
	if n := up.conns.Load(); n != 1 {
		t.Errorf("%d upstream connections for five requests one after another, want 1", n)
	}
}

// TestDirectUpstreamCut: an upstream that closes mid-body on the direct
// way is the upstream's error, as on ReverseProxy's: the response is cut,
// logged and counted, and the next request is served.
func TestDirectUpstreamCut(t *testing.T) {
	big := directPage(600 << 10)
	up := newScriptedUpstream(t, func(n int, r *http.Request) (string, bool) {
		full := answer("text/html; charset=utf-8", big)
		if r.URL.Path == "/cut" {
			return full[:len(full)-200<<10], true
		}
		return full, false
	})
	var logs syncBuffer
	p, front := directFront(t, up, &logs)
	res, err := identityClient.Get(front.URL + "/cut")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err == nil {
		t.Fatalf("a complete body of %d bytes from an upstream that sent %d of %d", len(b), len(big)-200<<10, len(big))
	}
	waitFor(t, func() bool { return strings.Contains(logs.String(), "upstream response cut short") }, "the cut logged:\n"+logs.String())
	if v := testutil.ToFloat64(p.m.upstreamErrors.WithLabelValues("aborted")); v != 1 {
		t.Errorf("upstream errors (aborted) %v, want 1", v)
	}
	res, err = identityClient.Get(front.URL + "/p")
	if err != nil {
		t.Fatal(err)
	}
	b, err = io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || int64(len(b)) != res.ContentLength {
		t.Fatalf("next request: %d of %d bytes, %v", len(b), res.ContentLength, err)
	}
}

// TestDirectClientGone: a client that leaves mid-body on the direct way is
// not an upstream error; the upstream connection, its body unread, is
// closed rather than used again.
func TestDirectClientGone(t *testing.T) {
	big := directPage(8 << 20)
	up := newScriptedUpstream(t, func(int, *http.Request) (string, bool) {
		return answer("text/html; charset=utf-8", big), false
	})
	var logs syncBuffer
	p, front := directFront(t, up, &logs)
	c, err := net.Dial("tcp", front.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "GET /p HTTP/1.1\r\nHost: notes.example\r\n\r\n")
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(res.Body, make([]byte, 64<<10)); err != nil {
		t.Fatal(err)
	}
	c.(*net.TCPConn).SetLinger(0) // a reset: the writes fail at once
	c.Close()
	select {
	case <-up.closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream connection of a response the client left was not closed")
	}
	if v := testutil.ToFloat64(p.m.upstreamErrors.WithLabelValues("aborted")); v != 0 {
		t.Errorf("a client that left counted as %v upstream errors", v)
	}
	if strings.Contains(logs.String(), "cut short") {
		t.Errorf("a client that left logged as the upstream's error:\n%s", logs.String())
	}
}

// identityClient asks for no coding: headgate then sends pages as they
// are, the direct way.
var identityClient = &http.Client{Transport: &http.Transport{DisableCompression: true}}

// TestDirectClientStalls: a client that stops reading until the server's
// write timeout fires is the client's failure, not the upstream's, though
// the request's context is still live: the upstream connection, still
// open, tells them apart.
func TestDirectClientStalls(t *testing.T) {
	big := directPage(16 << 20)
	up := newScriptedUpstream(t, func(int, *http.Request) (string, bool) {
		return answer("text/html; charset=utf-8", big), false
	})
	var logs syncBuffer
	p, _ := directFront(t, up, &logs)
	front := httptest.NewUnstartedServer(p)
	front.Config.WriteTimeout = 300 * time.Millisecond
	front.Start()
	t.Cleanup(front.Close)
	c, err := net.Dial("tcp", front.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.(*net.TCPConn).SetReadBuffer(4 << 10)
	io.WriteString(c, "GET /p HTTP/1.1\r\nHost: notes.example\r\n\r\n")
	// Nothing read: the server's writes stall until its deadline.
	select {
	case <-up.closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream connection of a response whose client stalled was not closed")
	}
	waitFor(t, func() bool { return strings.Contains(logs.String(), "response aborted") }, "the abort logged:\n"+logs.String())
	if strings.Contains(logs.String(), "cut short") {
		t.Errorf("a stalled client logged as the upstream's error:\n%s", logs.String())
	}
	if v := testutil.ToFloat64(p.m.upstreamErrors.WithLabelValues("aborted")); v != 0 {
		t.Errorf("a stalled client counted as %v upstream errors", v)
	}
}

// waitFor polls cond (a log line written by another goroutine after the
// response ended) for up to 5 s.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for range 500 {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal(what)
}
