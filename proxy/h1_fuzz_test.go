package proxy

import (
	"context"
	"io"
	"net/http"
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
	f.Fuzz(func(t *testing.T, answer []byte, head bool) {
		up := newScriptedUpstream(t, func(n int, _ *http.Request) (string, bool) {
			if n == 0 {
				return string(answer), true
			}
			return "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ngood", false
		})
		tr := newH1Transport(newTransport(), nil)
		defer tr.close()
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
			t.Fatalf("the first request hung on %q", answer)
		}
		req, _ = http.NewRequestWithContext(ctx, "GET", up.url("/b"), nil)
		res, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("after %q the next request failed: %v", answer, err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != 200 || string(body) != "good" {
			t.Fatalf("after %q the next request got %d %q (%v), want its own 200 good", answer, res.StatusCode, body, err)
		}
	})
}

