// Package hgtest holds what headgate's behaviour tests share, in process
// (package proxy, behind httptest) and against the real binary (package
// test): the test page and its rules, a counting upstream, a client that
// sees the bytes on the wire, the content codings, and readers of the log
// and of /metrics. Only tests import it.
package hgtest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	kgzip "github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

// Page is the upstream's document: a wrong relative canonical and its own
// title, which PageRules replace.
const Page = `<!DOCTYPE html>
<html lang="en"><head>
<meta charset="utf-8">
<title>Upstream title</title>
<link rel="canonical" href="/wrong">
<link rel="stylesheet" href="/style.css">
</head>
<body><p>Hello body</p>
</body></html>
`

// PageRules rewrite Page's head on every path.
const PageRules = `
[[rule]]
match = "/*"
title = "Rewritten title"
description = "A rewritten page."
canonical = "self"
`

// Config is a test's headgate config: its upstream and its own TOML.
type Config struct {
	Upstream string
	Server   string // more [server] keys
	Site     string // more [site] keys
	Rules    string // [[rule]] tables and anything after
	BaseURL  string // site.base_url; "": https://notes.example
}

// Render writes the config file; listen and admin are left out when "".
func (c Config) Render(listen, admin string) string {
	base := c.BaseURL
	if base == "" {
		base = "https://notes.example"
	}
	var b strings.Builder
	b.WriteString("[server]\n")
	if listen != "" {
		fmt.Fprintf(&b, "listen = %q\nadmin_listen = %q\n", listen, admin)
	}
	fmt.Fprintf(&b, "upstream = %q\nshutdown_timeout = \"2s\"\n%s\n\n[site]\nbase_url = %q\n%s\n\n%s\n", c.Upstream, c.Server, base, c.Site, c.Rules)
	return b.String()
}

// RewrittenHead checks that body carries PageRules' head for path.
func RewrittenHead(t testing.TB, body []byte, path string) {
	t.Helper()
	for _, want := range []string{
		"<title>Rewritten title</title>",
		`<meta name="description" content="A rewritten page.">`,
		`<link rel="canonical" href="https://notes.example` + path + `">`,
	} {
		if !bytes.Contains(body, []byte(want)) {
			t.Fatalf("body lacks %s:\n%s", want, Clip(body))
		}
	}
	if bytes.Contains(body, []byte("Upstream title")) || bytes.Contains(body, []byte(`href="/wrong"`)) {
		t.Fatalf("body still has the upstream's tags:\n%s", Clip(body))
	}
}

// Clip shortens a body for a failure message.
func Clip(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "…"
	}
	return string(b)
}

// HTMLHandler serves body as a sized UTF-8 HTML page.
func HTMLHandler(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		io.WriteString(w, body)
	}
}

// Encode compresses b in a content coding.
func Encode(t testing.TB, coding string, b []byte) []byte {
	var buf bytes.Buffer
	var w io.WriteCloser
	switch coding {
	case "identity":
		return b
	case "gzip":
		w = gzip.NewWriter(&buf)
	case "deflate":
		w = zlib.NewWriter(&buf)
	case "br":
		w = brotli.NewWriter(&buf)
	case "zstd":
		zw, err := zstd.NewWriter(&buf)
		if err != nil {
			t.Fatal(err)
		}
		w = zw
	default:
		t.Fatalf("coding %q", coding)
	}
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// Decode reads a body in its Content-Encoding.
func Decode(t testing.TB, coding string, b []byte) []byte {
	t.Helper()
	var r io.Reader
	var err error
	switch coding {
	case "", "identity":
		return b
	case "gzip":
		r, err = kgzip.NewReader(bytes.NewReader(b))
	case "deflate":
		r, err = zlib.NewReader(bytes.NewReader(b))
	case "br":
		r = brotli.NewReader(bytes.NewReader(b))
	case "zstd":
		var d *zstd.Decoder
		d, err = zstd.NewReader(bytes.NewReader(b))
		if err == nil {
			defer d.Close()
		}
		r = d
	default:
		t.Fatalf("unexpected Content-Encoding %q", coding)
	}
	if err != nil {
		t.Fatalf("decoding %s: %v", coding, err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("decoding %s: %v", coding, err)
	}
	return out
}

// Client talks to headgate without Go's transparent gzip, so that tests
// see the bytes on the wire, and follows no redirect.
var Client = &http.Client{
	Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 16},
	CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	},
	Timeout: 30 * time.Second,
}

// Get requests base+path with the headers given as "Name: value" pairs
// ("Host: x" sets the Host) and returns the response with its body read.
func Get(t testing.TB, base, method, path string, headers ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range headers {
		k, v, _ := strings.Cut(kv, ": ")
		if strings.EqualFold(k, "Host") {
			req.Host = v
			continue
		}
		req.Header.Add(k, v)
	}
	res, err := Client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, path, err)
	}
	return res, body
}

// FreeAddr returns a 127.0.0.1 address that was free a moment ago (and
// that nothing listens on, for a dead upstream).
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// RawGet sends a request target exactly as written to base and returns
// the status.
func RawGet(t testing.TB, base, target string) int {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: notes.example\r\nConnection: close\r\n\r\n", target)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%s: %v", target, err)
	}
	res.Body.Close()
	return res.StatusCode
}

// Metric returns the value of one series on admin's /metrics, 0 when
// absent.
func Metric(t testing.TB, admin, series string) float64 {
	t.Helper()
	res, err := http.Get(admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, series+" ") {
			v, err := strconv.ParseFloat(strings.TrimSpace(line[len(series):]), 64)
			if err != nil {
				t.Fatalf("metric %s: %v", line, err)
			}
			return v
		}
	}
	return 0
}

// WaitLog waits until logs hold a line matching re.
func WaitLog(t testing.TB, logs fmt.Stringer, re string) {
	t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(10 * time.Second)
	for !rx.MatchString(logs.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("no log line matching %q in:\n%s", re, logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// LogBuffer collects a log; it is written from other goroutines and read
// by the test.
type LogBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	partial []byte // the start of a line whose end has not been written yet
}

// Write keeps memory flat: past 8 MiB the access log's lines (one per
// request: a load test writes tens of thousands) are dropped, and past
// 16 MiB every line. A reload's or a refusal's line, which a test waits
// for after its load has run, is still kept. The log arrives in chunks
// of a pipe, many lines to a chunk and a line across two, so the choice
// is made line by line.
func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if len(b.partial) > 0 {
		p = append(b.partial, p...)
		b.partial = nil
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(p) > 1<<20 {
				p = p[:1<<20] // a line that never ends: enough of it
			}
			b.partial = append([]byte(nil), p...)
			break
		}
		line := p[:i+1]
		p = p[i+1:]
		if l := b.buf.Len(); l > 16<<20 || l > 8<<20 && bytes.Contains(line, accessLogLine) {
			continue
		}
		b.buf.Write(line)
	}
	return n, nil
}

// accessLogLine is in every line of the access log (proxy/handler.go).
var accessLogLine = []byte(`"msg":"request"`)

func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String() + string(b.partial)
}

// Upstream is an HTTP server on 127.0.0.1 that counts its hits and keeps
// the last request; a recorder (NewRecorder) keeps every request's target
// and headers.
type Upstream struct {
	URL     string
	srv     *http.Server
	mu      sync.Mutex
	hits    int
	last    *http.Request
	record  bool
	targets []string
	headers []http.Header
}

// NewUpstream serves h until the test ends.
func NewUpstream(t testing.TB, h http.HandlerFunc) *Upstream {
	t.Helper()
	return newUpstream(t, h, false)
}

// NewRecorder is an Upstream that logs the request target and headers of
// everything that reaches it (Seen).
func NewRecorder(t testing.TB, h http.HandlerFunc) *Upstream {
	t.Helper()
	return newUpstream(t, h, true)
}

func newUpstream(t testing.TB, h http.HandlerFunc, record bool) *Upstream {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := &Upstream{URL: "http://" + l.Addr().String(), record: record}
	u.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.hits++
		u.last = r.Clone(r.Context())
		if u.record {
			u.targets = append(u.targets, r.RequestURI)
			u.headers = append(u.headers, r.Header.Clone())
		}
		u.mu.Unlock()
		h(w, r)
	}), ReadHeaderTimeout: 10 * time.Second}
	go u.srv.Serve(l)
	t.Cleanup(func() { u.srv.Close() })
	return u
}

// Hits is how many requests the upstream received.
func (u *Upstream) Hits() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.hits
}

// LastRequest is the last request the upstream received (headers only).
func (u *Upstream) LastRequest() *http.Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.last
}

// Seen returns the targets and headers a recorder received, in order.
func (u *Upstream) Seen() ([]string, []http.Header) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.targets...), append([]http.Header(nil), u.headers...)
}

// Fetch GETs url as http.Get does (redirects followed, gzip decoded) and
// returns the response with its body read.
func Fetch(t testing.TB, url string) (*http.Response, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("GET %s: reading the body: %v", url, err)
	}
	return res, string(b)
}

// Server is a headgate under test, a process or in process: its public
// and admin listeners and its log.
type Server struct {
	URL   string // http://127.0.0.1:PORT, the public listener
	Admin string // http://127.0.0.1:PORT, the admin listener
	Logs  *LogBuffer
}

// Get requests path on the public listener (see the function Get).
func (s *Server) Get(t testing.TB, method, path string, headers ...string) (*http.Response, []byte) {
	t.Helper()
	return Get(t, s.URL, method, path, headers...)
}

// Metric returns the value of one series on /metrics, 0 when absent.
func (s *Server) Metric(t testing.TB, series string) float64 {
	t.Helper()
	return Metric(t, s.Admin, series)
}

// WaitLog waits until the log holds a line matching re.
func (s *Server) WaitLog(t testing.TB, re string) {
	t.Helper()
	WaitLog(t, s.Logs, re)
}
