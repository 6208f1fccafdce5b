package test

// Hostile upstreams and hostile clients (issue 19): each test runs the real
// binary against an upstream on 127.0.0.1 that does what an attacker's
// upstream, or an attacker's client through headgate, would.

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// emptyMembers is a body of n bytes (rounded up to whole members) of empty
// gzip members, or of empty stored deflate blocks: it decodes to nothing.
type emptyMembers struct {
	unit []byte
	n    int64
}

func newEmptyMembers(t testing.TB, coding string, n int64) *emptyMembers {
	var one []byte
	switch coding {
	case "gzip":
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Close()
		one = b.Bytes()
	case "deflate":
		one = []byte{0x00, 0x00, 0x00, 0xff, 0xff} // a stored block, not final, of length 0
	default:
		t.Fatalf("coding %s", coding)
	}
	return &emptyMembers{unit: bytes.Repeat(one, (64<<10)/len(one)), n: n}
}

func (e *emptyMembers) size() int64 {
	u := int64(len(e.unit))
	return (e.n + u - 1) / u * u
}

func (e *emptyMembers) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for total < e.n {
		k, err := w.Write(e.unit)
		total += int64(k)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// Compressed bytes that decode to nothing are not recorded without end
// while headgate looks for the head: a 400 MiB body of empty gzip members,
// and three at once, go through unchanged with headgate's peak RSS
// bounded; the head search stops at 4 × max_head_bytes and is counted.
func TestEmptyMembersBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 1.6 GB through headgate")
	}
	const size = 400 << 20
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		coding := r.URL.Query().Get("coding")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Encoding", coding)
		n := int64(size)
		if coding == "deflate" {
			n = 100 << 20
		}
		newEmptyMembers(t, coding, n).WriteTo(w)
	})
	hg := start(t, config{Upstream: up.URL, Rules: pageRules})
	base := hg.peakRSS(t)
	fetch := func(coding string) error {
		req, _ := http.NewRequest("GET", hg.URL+"/page?coding="+coding, nil)
		req.Header.Set("Accept-Encoding", coding)
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		n, err := io.Copy(io.Discard, res.Body)
		if err != nil {
			return fmt.Errorf("after %d bytes: %v", n, err)
		}
		want := newEmptyMembers(t, coding, size).size()
		if coding == "deflate" {
			want = newEmptyMembers(t, coding, 100<<20).size()
		}
		if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != coding || n != want {
			return fmt.Errorf("status %d, coding %q, %d bytes; want 200, %s, %d bytes (the upstream's, unchanged)",
				res.StatusCode, res.Header.Get("Content-Encoding"), n, coding, want)
		}
		return nil
	}
	const bound = 96 << 20
	if err := fetch("gzip"); err != nil {
		t.Fatal(err)
	}
	one := hg.peakRSS(t)
	t.Logf("peak RSS: %d MiB at start, %d MiB after one 400 MiB body of empty gzip members", base>>20, one>>20)
	if one > bound {
		t.Errorf("peak RSS %d MiB after one body, want under %d MiB", one>>20, bound>>20)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for _, coding := range []string{"gzip", "gzip", "gzip", "deflate"} {
		wg.Go(func() { errs <- fetch(coding) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	three := hg.peakRSS(t)
	t.Logf("peak RSS: %d MiB after three more at once (and 100 MiB of empty deflate blocks)", three>>20)
	if three > bound {
		t.Errorf("peak RSS %d MiB after three bodies at once, want under %d MiB", three>>20, bound>>20)
	}
	if v := hg.Metric(t, "headgate_head_search_limit_total"); v != 5 {
		t.Errorf("headgate_head_search_limit_total = %v, want 5", v)
	}
	if v := hg.Metric(t, `headgate_requests_total{outcome="skipped_too_large"}`); v != 5 {
		t.Errorf(`requests_total{outcome="skipped_too_large"} = %v, want 5`, v)
	}
	// A real compressed page is still rewritten.
	up2 := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(encode(t, "gzip", []byte(page)))
	})
	hg2 := start(t, config{Upstream: up2.URL, Rules: pageRules})
	res, body := hg2.Get(t, "GET", "/p", "Accept-Encoding: gzip")
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
	rewrittenHead(t, decode(t, res.Header.Get("Content-Encoding"), body), "/p")
}

// An h2c upgrade is never tunnelled: the upstream receives a plain request
// (no Upgrade, no HTTP2-Settings), and an upstream that switches anyway is
// answered 502. A WebSocket upgrade still passes.
func TestH2CNotTunnelled(t *testing.T) {
	up := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		upgrade := r.Header.Get("Upgrade")
		if upgrade == "" && r.URL.Path != "/always-h2c" {
			htmlHandler(page)(w, r)
			return
		}
		if upgrade == "" {
			upgrade = "h2c"
		}
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		fmt.Fprintf(conn, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: %s\r\n\r\n", upgrade)
		line, _ := brw.ReadString('\n')
		io.WriteString(conn, "echo: "+line)
	})
	hg := start(t, config{Upstream: up.URL, Rules: pageRules})
	send := func(target, upgrade string) (*http.Response, *bufio.Reader, net.Conn) {
		conn, err := net.Dial("tcp", strings.TrimPrefix(hg.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		settings := ""
		if upgrade == "h2c" {
			settings = "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n"
		}
		fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: notes.example\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: %s\r\n%s\r\n", target, upgrade, settings)
		br := bufio.NewReader(conn)
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%s with Upgrade: %s: %v", target, upgrade, err)
		}
		return res, br, conn
	}

	res, _, conn := send("/page", "h2c")
	body, _ := io.ReadAll(res.Body)
	conn.Close()
	if res.StatusCode != 200 || !bytes.Contains(body, []byte("Rewritten title")) {
		t.Errorf("h2c upgrade: status %d, want 200 with the rewritten page over HTTP/1.1", res.StatusCode)
	}
	_, headers := up.Seen()
	if len(headers) != 1 || headers[0].Get("Upgrade") != "" || headers[0].Get("Http2-Settings") != "" {
		t.Errorf("upstream received %v, want no Upgrade and no HTTP2-Settings", headers)
	}

	res, _, conn = send("/always-h2c", "h2c")
	res.Body.Close()
	conn.Close()
	if res.StatusCode != 502 {
		t.Errorf("an upstream that switches to h2c unasked: status %d, want 502", res.StatusCode)
	}

	res, br, conn := send("/ws", "websocket")
	defer conn.Close()
	if res.StatusCode != 101 {
		t.Fatalf("websocket: status %d, want 101", res.StatusCode)
	}
	io.WriteString(conn, "hello\n")
	if line, err := br.ReadString('\n'); err != nil || line != "echo: hello\n" {
		t.Errorf("websocket: got %q, %v", line, err)
	}
}

// With -log-format json every line is JSON, also those the standard
// library writes through the log package: an upstream that sends bytes on
// an idle keep-alive connection makes net/http's transport log
// "Unsolicited response received on idle HTTP channel" (a POST, which
// goes through http.Transport), and headgate's own upstream path log its
// line for a GET.
func TestLogsAllJSON(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				br := bufio.NewReader(conn)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					// A whole response, then an unasked one on the idle connection.
					io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok"+
						"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
				}
			}()
		}
	}()
	hg := start(t, config{Upstream: "http://" + l.Addr().String(), Rules: pageRules})
	for i := 0; i < 3; i++ {
		if res, _ := hg.Get(t, "GET", "/x.txt"); res.StatusCode != 200 {
			t.Fatalf("status %d", res.StatusCode)
		}
		res, err := http.Post(hg.URL+"/form", "text/plain", strings.NewReader("x"))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	hg.WaitLog(t, "idle HTTP channel starting with")
	hg.WaitLog(t, "upstream sent bytes on an idle connection")
	for _, line := range strings.Split(strings.TrimSpace(hg.Logs.String()), "\n") {
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Errorf("a log line that is not JSON: %q", line)
		}
	}
}

// Request smuggling: whatever framing a client sends, nothing reaches the
// upstream that headgate did not see and check as a request of its own. A
// denied path hidden in a body never reaches the upstream.
func TestSmuggling(t *testing.T) {
	up := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		htmlHandler(page)(w, r)
	})
	hg := start(t, config{Upstream: up.URL, Rules: pageRules + `
[[rule]]
match = "/internal/*"
deny = true
`})
	hidden := "GET /internal/admin HTTP/1.1\r\nHost: notes.example\r\n\r\n"
	for _, tc := range []struct{ name, req string }{
		{"CL.TE", "POST /a HTTP/1.1\r\nHost: notes.example\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + hidden},
		{"TE.CL", fmt.Sprintf("POST /a HTTP/1.1\r\nHost: notes.example\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(hidden), hidden)},
		{"duplicate CL", "POST /a HTTP/1.1\r\nHost: notes.example\r\nContent-Length: 0\r\nContent-Length: " + fmt.Sprint(len(hidden)) + "\r\n\r\n" + hidden},
		{"CL list", "POST /a HTTP/1.1\r\nHost: notes.example\r\nContent-Length: 0, " + fmt.Sprint(len(hidden)) + "\r\n\r\n" + hidden},
		{"obs-fold TE", "POST /a HTTP/1.1\r\nHost: notes.example\r\nContent-Length: 0\r\nX-Pad: a\r\n Transfer-Encoding: chunked\r\n\r\n" + hidden},
		{"TE obs-fold", "POST /a HTTP/1.1\r\nHost: notes.example\r\nTransfer-Encoding:\r\n chunked\r\nContent-Length: 0\r\n\r\n" + hidden},
		{"TE xchunked", "POST /a HTTP/1.1\r\nHost: notes.example\r\nTransfer-Encoding: xchunked\r\nContent-Length: 0\r\n\r\n" + hidden},
		{"TE chunked, identity", "POST /a HTTP/1.1\r\nHost: notes.example\r\nTransfer-Encoding: chunked, identity\r\nContent-Length: 0\r\n\r\n" + hidden},
		{"TE space", "POST /a HTTP/1.1\r\nHost: notes.example\r\nTransfer-Encoding : chunked\r\nContent-Length: 0\r\n\r\n" + hidden},
		{"bare LF", "POST /a HTTP/1.1\nHost: notes.example\nContent-Length: 0\n\n" + hidden},
	} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(hg.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		// A last request that closes the connection: whatever headgate
		// made of the ones before, it answers this one and hangs up.
		io.WriteString(conn, tc.req+"GET /end HTTP/1.1\r\nHost: notes.example\r\nConnection: close\r\n\r\n")
		var statuses []int
		br := bufio.NewReader(conn)
		for {
			res, err := http.ReadResponse(br, nil)
			if err != nil {
				break
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			statuses = append(statuses, res.StatusCode)
		}
		conn.Close()
		t.Logf("%s: headgate answered %v", tc.name, statuses)
	}
	targets, _ := up.Seen()
	for _, target := range targets {
		if target != "/a" && target != "/end" {
			t.Errorf("upstream received %q", target)
		}
	}
}

// rss is headgate's resident set size now, in bytes.
func (h *headgate) rss(t testing.TB) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", h.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	var kb int64
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ = strconv.ParseInt(strings.Fields(v)[0], 10, 64)
		}
	}
	return kb << 10
}

// idleClients opens n keep-alive connections to hg, each after one
// complete request, and leaves them open.
func idleClients(t testing.TB, hg *headgate, n int) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 32)
	for i := range conns {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			conn, err := net.Dial("tcp", strings.TrimPrefix(hg.URL, "http://"))
			if err != nil {
				errs <- err
				return
			}
			conns[i] = conn
			conn.SetDeadline(time.Now().Add(60 * time.Second))
			io.WriteString(conn, "GET /style.css HTTP/1.1\r\nHost: notes.example\r\n\r\n")
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				errs <- err
				return
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return conns
}

// Idle keep-alive connections are bounded by server.max_idle_connections:
// with 5,000 idle clients headgate keeps 1,024 (the default) and its RSS
// stays flat, while new requests are served. The same run with the bound
// off (0) shows what it saves; both are logged.
func TestIdleConnectionsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 12,000 connections")
	}
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		io.WriteString(w, "body{}")
	})
	measure := func(server string) (at1k, at5k int64, hg *headgate) {
		hg = start(t, config{Upstream: up.URL, Rules: pageRules, Server: server})
		first := idleClients(t, hg, 1000)
		at1k = hg.rss(t)
		rest := idleClients(t, hg, 4000)
		at5k = hg.rss(t)
		start := time.Now()
		if res, _ := hg.Get(t, "GET", "/style.css"); res.StatusCode != 200 {
			t.Errorf("%s: a new request with 5,000 idle connections: status %d", server, res.StatusCode)
		}
		t.Logf("%s: a new request with 5,000 idle connections took %v", server, time.Since(start))
		t.Cleanup(func() {
			for _, c := range append(first, rest...) {
				c.Close()
			}
		})
		return at1k, at5k, hg
	}
	off1k, off5k, hgOff := measure("max_idle_connections = 0")
	idleOff := hgOff.Metric(t, "headgate_idle_connections")
	hgOff.stop()
	on1k, on5k, hg := measure("")
	idleOn := hg.Metric(t, "headgate_idle_connections")
	closed := hg.Metric(t, "headgate_idle_connections_closed_total")
	t.Logf("RSS without a bound: %d MiB at 1,000 idle, %d MiB at 5,000 (%v idle)", off1k>>20, off5k>>20, idleOff)
	t.Logf("RSS with the default bound (1,024): %d MiB at 1,000 idle, %d MiB at 5,000 (%v idle, %v closed)", on1k>>20, on5k>>20, idleOn, closed)
	if idleOn > 1024 || closed < 5000-1024 {
		t.Errorf("with the default bound: %v idle, %v closed; want at most 1024 idle", idleOn, closed)
	}
	if on5k > 96<<20 {
		t.Errorf("RSS %d MiB at 5,000 idle connections with the bound, want under 96 MiB", on5k>>20)
	}
}
