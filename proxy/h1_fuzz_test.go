package proxy

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// FuzzH1Answer: whatever bytes an upstream answers a request with, the
// request ends (an answer or an error, its body read to an end) without a
// panic or a hang, and the next request gets its own answer: nothing of
// the first is ever read as the second's. The upstream answers the first
// request with the fuzzed bytes in one write and closes; later ones
// answer "good".
func FuzzH1Answer(f *testing.F) {
	for _, seed := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n3\r\nhel\r\n2\r\nlo\r\n0\r\nX-T: done\r\n\r\n",
		"HTTP/1.1 200 OK\r\n\r\nhello",
		"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nEVIL",
		"HTTP/1.1 304 Not Modified\r\nContent-Length: 4\r\n\r\nEVIL",
		"HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 101 Switching Protocols\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nokk",
		"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
		"HTTP/1.1 099 Low\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Le",
		"",
	} {
		f.Add([]byte(seed), false)
		f.Add([]byte(seed), true)
	}
	// One upstream for the whole run, and connections closed with a reset
	// (SO_LINGER 0), so that a long fuzzing run does not use up the
	// machine's ephemeral ports in TIME_WAIT (two or three connections an
	// execution).
	var answer atomic.Pointer[[]byte]
	var served atomic.Int32
	up := newScriptedUpstream(f, func(_ int, _ *http.Request) (string, bool) {
		if served.Add(1) == 1 {
			return string(*answer.Load()), true
		}
		return "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ngood", false
	})
	f.Fuzz(func(t *testing.T, data []byte, head bool) {
		answer.Store(&data)
		served.Store(0)
		tr := newH1Transport(newTransport(), nil)
		defer tr.close()
		dial := tr.DialContext
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if tc, ok := c.(*net.TCPConn); ok {
				tc.SetLinger(0)
			}
			return c, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		method := "GET"
		if head {
			method = "HEAD"
		}
		req, _ := http.NewRequestWithContext(ctx, method, up.url("/a"), nil)
		if res, err := tr.RoundTrip(req); err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
		if ctx.Err() != nil {
			t.Fatalf("the first request hung on %q", data)
		}
		req, _ = http.NewRequestWithContext(ctx, "GET", up.url("/b"), nil)
		res, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("after %q the next request failed: %v", data, err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != 200 || string(body) != "good" {
			t.Fatalf("after %q the next request got %d %q (%v), want its own 200 good", data, res.StatusCode, body, err)
		}
	})
}
