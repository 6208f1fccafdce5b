package proxy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The tests count what went the direct way and what forward sent.
func init() { directSent, forwardSent = new(atomic.Int64), new(atomic.Int64) }

// forwardUpstream answers by path and keeps the last request it read, as a
// line per field, sorted.
type forwardUpstream struct {
	mu   sync.Mutex
	last string
}

func (u *forwardUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var lines []string
	for k, vs := range r.Header {
		for _, v := range vs {
			lines = append(lines, k+": "+v)
		}
	}
	slices.Sort(lines)
	u.mu.Lock()
	u.last = r.Method + " " + r.RequestURI + " Host=" + r.Host + "\n" + strings.Join(lines, "\n")
	u.mu.Unlock()
	h := w.Header()
	page := `<!DOCTYPE html><html><head><title>T</title></head><body><p>x</p></body></html>`
	switch {
	case strings.HasPrefix(r.URL.Path, "/hop"):
		h.Set("Connection", "X-Drop")
		h.Set("X-Drop", "1")
		h.Set("Keep-Alive", "timeout=5")
		h.Set("Proxy-Authenticate", "Basic")
		h.Set("X-Keep", "2")
		h.Set("Content-Type", "text/html")
		io.WriteString(w, page)
	case strings.HasPrefix(r.URL.Path, "/trailers"):
		h.Set("Trailer", "X-Announced")
		h.Set("Content-Type", "application/octet-stream")
		w.WriteHeader(200)
		io.WriteString(w, "body")
		w.(http.Flusher).Flush()
		h.Set("X-Announced", "a")
		h.Set(http.TrailerPrefix+"X-Late", "b")
	case strings.HasPrefix(r.URL.Path, "/hints"):
		h.Set("Link", "</style.css>; rel=preload; as=style")
		w.WriteHeader(http.StatusEarlyHints)
		h.Del("Link")
		h.Set("Content-Type", "text/html")
		io.WriteString(w, page)
	case strings.HasPrefix(r.URL.Path, "/events"):
		h.Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: 1\n\n")
		w.(http.Flusher).Flush()
		io.WriteString(w, "data: 2\n\n")
	case strings.HasPrefix(r.URL.Path, "/chunked"):
		h.Set("Content-Type", "text/html")
		io.WriteString(w, page[:20])
		w.(http.Flusher).Flush()
		io.WriteString(w, page[20:])
	case strings.HasPrefix(r.URL.Path, "/image"):
		h.Set("Content-Type", "image/png")
		h.Set("Content-Length", "4")
		io.WriteString(w, "\x89PNG")
	case strings.HasPrefix(r.URL.Path, "/cut"):
		h.Set("Content-Type", "image/png")
		h.Set("Content-Length", "100")
		io.WriteString(w, "short")
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	case strings.HasPrefix(r.URL.Path, "/notmod"):
		w.WriteHeader(http.StatusNotModified)
	default:
		h.Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page)
	}
}

// exchange is what one request through the proxy came to, upstream and at
// the client, with what differs from run to run (Date) left out.
func forwardExchange(t *testing.T, front string, up *forwardUpstream, method, target string, header http.Header, framing bool) string {
	t.Helper()
	up.mu.Lock()
	up.last = "(none)"
	up.mu.Unlock()
	c, err := net.Dial("tcp", strings.TrimPrefix(front, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	var req strings.Builder
	fmt.Fprintf(&req, "%s %s HTTP/1.1\r\nHost: site.example\r\n", method, target)
	for k, vs := range header {
		for _, v := range vs {
			fmt.Fprintf(&req, "%s: %s\r\n", k, v)
		}
	}
	req.WriteString("Connection: close\r\n\r\n")
	io.WriteString(c, req.String())
	raw, _ := io.ReadAll(bufio.NewReader(c))
	if framing {
		// ReverseProxy flushes an event stream's or an unknown length's
		// header from a timer that may fire after the (short) body was
		// copied, and net/http then sends a Content-Length: the framing
		// is its timer's; the message is compared.
		res, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
		if err != nil {
			t.Fatalf("%v: %q", err, raw)
		}
		body, _ := io.ReadAll(res.Body)
		res.Header.Del("Date")
		res.Header.Del("Content-Length")
		raw = fmt.Appendf(nil, "%d %v %q", res.StatusCode, res.Header, body)
	}
	var lines []string
	for _, l := range strings.Split(string(raw), "\r\n") {
		if !strings.HasPrefix(l, "Date: ") {
			lines = append(lines, l)
		}
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	return "upstream got:\n" + up.last + "\nclient got:\n" + strings.Join(lines, "\n")
}

// forward (nearly every request) does what ReverseProxy did for it: for
// each exchange, the request the upstream reads and the bytes the client
// reads are the same both ways, hop-by-hop fields, forwarding fields,
// queries, trailers, 1xx, event streams, bodies of unknown length, a body
// cut short and an upstream that is not there included.
func TestForwardLikeReverseProxy(t *testing.T) {
	up := &forwardUpstream{}
	upstream := httptest.NewServer(up)
	defer upstream.Close()
	for _, tc := range []struct {
		name, method, target string
		header               http.Header
		gone                 bool // the upstream is not there
		framing              bool // compared as messages, not as bytes
	}{
		{"a page", "GET", "/page", http.Header{"Accept": {"text/html"}, "User-Agent": {"curl/8"}}, false, false},
		{"HEAD", "HEAD", "/page", nil, false, false},
		{"no user agent", "GET", "/page", nil, false, false},
		{"hop-by-hop fields", "GET", "/page", http.Header{
			"Connection": {"X-Custom, keep-alive"}, "X-Custom": {"1"}, "Keep-Alive": {"timeout=5"},
			"Proxy-Authorization": {"Basic eA=="}, "Proxy-Connection": {"keep-alive"}, "Te": {"trailers, deflate"},
		}, false, false},
		{"forwarding fields", "GET", "/page", http.Header{
			"X-Forwarded-For": {"203.0.113.9"}, "X-Forwarded-Host": {"evil.example"}, "X-Forwarded-Proto": {"https"}, "Forwarded": {"for=1.2.3.4"},
		}, false, false},
		{"a query with a semicolon", "GET", "/page?a=1;b=2&c=3", nil, false, false},
		{"a query with a bad escape", "GET", "/page?a=%zz&b=2", nil, false, false},
		{"a query kept", "GET", "/page?a=%20&b=%41", nil, false, false},
		{"a query of too many parameters", "GET", "/page?" + strings.Repeat("a=1&", 10000), nil, false, false},
		{"the upstream's hop-by-hop fields", "GET", "/hop", nil, false, false},
		{"trailers", "GET", "/trailers", http.Header{"Te": {"trailers"}}, false, false},
		{"early hints", "GET", "/hints", nil, false, false},
		{"an event stream", "GET", "/events", nil, false, true},
		{"a page of unknown length", "GET", "/chunked", nil, false, true},
		{"an image", "GET", "/image", nil, false, false},
		{"a body cut short", "GET", "/cut", nil, false, false},
		{"not modified", "GET", "/notmod", http.Header{"If-None-Match": {`"x"`}}, false, false},
		{"the upstream gone", "GET", "/page", nil, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := upstream.URL
			if tc.gone {
				l, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				target = "http://" + l.Addr().String()
				l.Close()
			}
			var got [2]string
			for i, via := range []bool{true, false} {
				p, front := newFront(t, target, testRules, io.Discard)
				p.viaReverseProxy = via
				before := forwardSent.Load()
				got[i] = forwardExchange(t, front.URL, up, tc.method, tc.target, tc.header, tc.framing)
				front.Close()
				if sent := forwardSent.Load() - before; sent != map[bool]int64{true: 0, false: 1}[via] {
					t.Fatalf("viaReverseProxy %v: forward sent %d", via, sent)
				}
			}
			if got[0] != got[1] {
				t.Errorf("ReverseProxy:\n%s\n\nforward:\n%s", got[0], got[1])
			}
		})
	}
}

// An event stream's header reaches the client before its first event, as
// ReverseProxy's flush timer sends it: a client waiting for the response
// is not kept waiting on an upstream that has nothing to say yet.
func TestForwardEventStreamHeaderFirst(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	_, front := newTestProxy(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		<-release
		io.WriteString(w, "data: 1\n\n")
	}, testRules)
	c := &http.Client{Timeout: 5 * time.Second}
	res, err := c.Get(front.URL + "/events")
	if err != nil {
		t.Fatalf("no response while the upstream holds its first event: %v", err)
	}
	res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
}

// FuzzCleanQuery holds cleanQuery to the query ReverseProxy hands its
// Rewrite hook (its cleanQueryParams), for any query.
func FuzzCleanQuery(f *testing.F) {
	for _, q := range []string{"a=1&b=2", "a=1;b=2", "a=%zz", "a=%4", "%", "a=%20+b", ";", "x=%41%4a;y", ""} {
		f.Add(q)
	}
	var seen string
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) { seen = pr.Out.URL.RawQuery },
		Transport: roundTripperFunc(func(*http.Request) (*http.Response, error) {
			return nil, errors.New("not sent")
		}),
		ErrorHandler: func(http.ResponseWriter, *http.Request, error) {},
	}
	f.Fuzz(func(t *testing.T, q string) {
		r := httptest.NewRequest("GET", "http://up/p", nil)
		r.URL.RawQuery = q
		seen = "(not called)"
		rp.ServeHTTP(httptest.NewRecorder(), r)
		if got := cleanQuery(q); got != seen {
			t.Fatalf("cleanQuery(%q) = %q, ReverseProxy sends %q", q, got, seen)
		}
	})
}

func TestGodebugSet(t *testing.T) {
	for env, want := range map[string]bool{
		"": false, "urlmaxqueryparams=0": true, "http2client=0,urlmaxqueryparams=5": true,
		"urlmaxqueryparams=5,urlmaxqueryparams=": false, "urlmaxqueryparamsx=1": false, "urlmaxqueryparams": false,
	} {
		if got := godebugSet(env, "urlmaxqueryparams"); got != want {
			t.Errorf("GODEBUG=%q: %v, want %v", env, got, want)
		}
	}
}

// An HTTP/2 client's GET (whose request always has a Body, of length 0)
// is sent by forward, and its state recycled like an HTTP/1 one's.
func TestForwardHTTP2(t *testing.T) {
	up := httptest.NewServer(&forwardUpstream{})
	defer up.Close()
	p, err := New(testConfig(t, up.URL, testRules), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	front := httptest.NewUnstartedServer(p)
	front.EnableHTTP2 = true
	front.StartTLS()
	defer front.Close()
	before := forwardSent.Load()
	res, err := front.Client().Get(front.URL + "/page")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.ProtoMajor != 2 || res.StatusCode != 200 || !strings.Contains(string(body), "Rewritten title") {
		t.Fatalf("%s %d:\n%s", res.Proto, res.StatusCode, body)
	}
	if n := forwardSent.Load() - before; n != 1 {
		t.Errorf("forward sent %d requests, want 1", n)
	}
}
