package test

// The attack classes of docs/security.md's table that no other test covers:
// slow clients, gzip bombs, endless heads, and reloads and SIGTERM under
// load. Traffic goes to 127.0.0.1 only, bounded in count and time.

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	kgzip "github.com/klauspost/compress/gzip"
)

// Slow clients (slowloris): connections that never finish their request
// headers hold nothing for long — headgate closes them after the 10 s
// header timeout — and new requests are served meanwhile.
func TestSlowClients(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the 10 s header timeout")
	}
	up := newUpstream(t, htmlHandler(page))
	hg := start(t, config{Upstream: up.URL, Rules: pageRules})
	const n = 300
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := net.Dial("tcp", strings.TrimPrefix(hg.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET /slow HTTP/1.1\r\nHost: notes.example\r\nX-Slow: ")
		conns[i] = c
	}
	began := time.Now()
	res, body := hg.Get(t, "GET", "/fresh")
	if res.StatusCode != 200 {
		t.Fatalf("a new request with %d slow clients: status %d", n, res.StatusCode)
	}
	rewrittenHead(t, body, "/fresh")
	var wg sync.WaitGroup
	var closed atomic.Int32
	for _, c := range conns {
		wg.Go(func() {
			c.SetReadDeadline(time.Now().Add(20 * time.Second))
			buf := make([]byte, 512)
			for {
				if _, err := c.Read(buf); err != nil {
					if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
						closed.Add(1)
					}
					return
				}
			}
		})
	}
	wg.Wait()
	t.Logf("%d of %d slow clients closed by headgate within %v", closed.Load(), n, time.Since(began).Round(time.Millisecond))
	if closed.Load() != n {
		t.Errorf("%d of %d slow clients still open after 20 s", n-int(closed.Load()), n)
	}
	if up.Hits() != 1 {
		t.Errorf("upstream hit %d times, want 1 (the fresh request)", up.Hits())
	}
}

// repeatReader is an n-byte source of one repeated chunk.
type repeatReader struct {
	chunk []byte
	n     int64
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	k := copy(p, r.chunk)
	for k < len(p) && int64(k) < r.n {
		k += copy(p[k:], r.chunk)
	}
	k = int(min(int64(k), r.n))
	r.n -= int64(k)
	return k, nil
}

// Gzip bombs: a small compressed body that decodes to hundreds of MiB. In
// the head, decoding stops at max_head_bytes and the page passes through
// compressed; after a head that is rewritten, the body is decoded and
// re-encoded as a stream. Memory stays flat either way.
func TestGzipBombs(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes 256 MiB")
	}
	const decoded = 256 << 20
	bomb := func(prefix string, filler []byte) []byte {
		var b bytes.Buffer
		zw, _ := kgzip.NewWriterLevel(&b, kgzip.BestCompression)
		io.WriteString(zw, prefix)
		io.Copy(zw, &repeatReader{chunk: filler, n: decoded})
		zw.Close()
		return b.Bytes()
	}
	inHead := bomb("<!doctype html><html><head>", bytes.Repeat([]byte(`<meta name="x" content="y">`), 1000))
	inBody := bomb(strings.SplitAfter(page, "<body>")[0], bytes.Repeat([]byte("<p>aaaaaaaa</p>\n"), 1000))
	t.Logf("bombs: %d and %d compressed bytes, %d MiB decoded each", len(inHead), len(inBody), decoded>>20)
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Encoding", "gzip")
		if r.URL.Path == "/head" {
			w.Write(inHead)
		} else {
			w.Write(inBody)
		}
	})
	hg := start(t, config{Upstream: up.URL, Rules: pageRules, Server: "access_log = false"})

	res, body := hg.Get(t, "GET", "/head", "Accept-Encoding: gzip")
	if res.StatusCode != 200 || !bytes.Equal(body, inHead) {
		t.Errorf("bomb in the head: status %d, %d bytes; want the upstream's %d bytes unchanged", res.StatusCode, len(body), len(inHead))
	}
	if v := hg.Metric(t, `headgate_requests_total{outcome="skipped_too_large"}`); v != 1 {
		t.Errorf("skipped_too_large = %v, want 1", v)
	}

	req, _ := http.NewRequest("GET", hg.URL+"/body", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	zr, err := kgzip.NewReader(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 1024)
	n, _ := io.ReadFull(zr, head)
	rewrittenHead(t, head[:n], "/body")
	rest, err := io.Copy(io.Discard, zr)
	if err != nil || int64(n)+rest < decoded {
		t.Errorf("bomb in the body: %d bytes decoded, %v", int64(n)+rest, err)
	}
	rss := hg.peakRSS(t)
	t.Logf("headgate peak RSS: %d MiB", rss>>20)
	if rss > 64<<20 {
		t.Errorf("peak RSS %d MiB, want under 64 MiB", rss>>20)
	}
}

// An endless head: an upstream that opens <head> and never closes it. After
// max_head_bytes the page streams through unchanged, as far as the client
// reads; headgate holds no more than the limit.
func TestEndlessHead(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/endless" {
			htmlHandler(page)(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!doctype html><html><head>")
		chunk := bytes.Repeat([]byte(`<meta name="x" content="y">`), 2000)
		for {
			select {
			case <-stop:
				return
			case <-r.Context().Done():
				return
			default:
			}
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	hg := start(t, config{Upstream: up.URL, Rules: pageRules})
	res, err := client.Get(hg.URL + "/endless")
	if err != nil {
		t.Fatal(err)
	}
	const want = 64 << 20
	n, err := io.CopyN(io.Discard, res.Body, want)
	res.Body.Close()
	if err != nil || n != want {
		t.Fatalf("read %d bytes of the endless head: %v", n, err)
	}
	hg.WaitLog(t, "head not rewritten")
	if rss := hg.peakRSS(t); rss > 64<<20 {
		t.Errorf("peak RSS %d MiB after 64 MiB of head, want under 64 MiB", rss>>20)
	}
	if res, _ := hg.Get(t, "GET", "/next"); res.StatusCode != 200 {
		t.Errorf("next request: status %d", res.StatusCode)
	}
}

// Reloads and SIGTERM under load: 8 clients request pages while the config
// is reloaded 5 times (SIGHUP) and then headgate gets SIGTERM. Every
// response is a complete 200 with the old or the new head, never a 5xx or
// a cut body; after SIGTERM, requests in flight finish and new connections
// are refused; the process exits 0.
func TestReloadAndShutdownUnderLoad(t *testing.T) {
	up := newUpstream(t, htmlHandler(page))
	c := config{Upstream: up.URL, Rules: pageRules}
	hg := start(t, c)
	listen, admin := strings.TrimPrefix(hg.URL, "http://"), strings.TrimPrefix(hg.Admin, "http://")
	var ok, refused, bad atomic.Int64
	var badMu sync.Mutex
	var badWhat []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	tr := &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 8}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	for i := 0; i < 8; i++ {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				res, err := cl.Get(hg.URL + "/load")
				if err != nil {
					// After SIGTERM: the listener is closed.
					if strings.Contains(err.Error(), "refused") || strings.Contains(err.Error(), "reset") ||
						strings.Contains(err.Error(), "EOF") {
						refused.Add(1)
						select {
						case <-hg.exited:
							return
						default:
						}
						continue
					}
					badMu.Lock()
					badWhat = append(badWhat, err.Error())
					badMu.Unlock()
					bad.Add(1)
					continue
				}
				body, err := io.ReadAll(res.Body)
				res.Body.Close()
				if err != nil || res.StatusCode != 200 || !bytes.Contains(body, []byte("</html>")) ||
					!bytes.Contains(body, []byte("<title>Rewritten title")) {
					badMu.Lock()
					badWhat = append(badWhat, fmt.Sprintf("status %d, %d bytes, %v", res.StatusCode, len(body), err))
					badMu.Unlock()
					bad.Add(1)
					continue
				}
				ok.Add(1)
			}
		})
	}
	for i := 1; i <= 5; i++ {
		c.Rules = strings.Replace(pageRules, "Rewritten title", fmt.Sprintf("Rewritten title %d", i), 1)
		if err := os.WriteFile(hg.Config, []byte(c.Render(listen, admin)), 0o644); err != nil {
			t.Fatal(err)
		}
		hg.cmd.Process.Signal(syscall.SIGHUP)
		deadline := time.Now().Add(10 * time.Second)
		for hg.Metric(t, `headgate_config_reloads_total{result="ok"}`) < float64(i) {
			if time.Now().After(deadline) {
				t.Fatalf("reload %d not done", i)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	before := ok.Load()
	hg.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-hg.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("no exit within 10 s of SIGTERM")
	}
	close(stop)
	wg.Wait()
	t.Logf("%d complete responses (%d before SIGTERM), %d refused after SIGTERM, %d bad", ok.Load(), before, refused.Load(), bad.Load())
	if bad.Load() > 0 {
		t.Errorf("%d bad responses, first: %q", bad.Load(), badWhat[0])
	}
	if before == 0 {
		t.Error("no request completed under load")
	}
	if hg.exitErr != nil {
		t.Errorf("exit: %v", hg.exitErr)
	}
}
