// Command spike is the HTTP-core spike of issue 18: the smallest streaming
// reverse proxies on valyala/fasthttp and on net/http, to measure what a
// leaner HTTP/1.1 core could save per request against
// httputil.ReverseProxy (test/perf/peer plain) and nginx proxy_pass. It has
// its own go.mod so that fasthttp never enters headgate's module; it is a
// measuring tool, not part of headgate. See spike.sh and
// docs/performance.md, "HTTP core: the fasthttp spike".
//
//	spike fasthttp -listen 127.0.0.1:18110 -upstream 127.0.0.1:18101
//	spike nethttp  -listen 127.0.0.1:18111 -upstream 127.0.0.1:18101
//	spike rp       -listen 127.0.0.1:18112 -upstream 127.0.0.1:18101
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: spike fasthttp|nethttp|rp [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	listen := fs.String("listen", "127.0.0.1:18110", "address to listen on (loopback only)")
	upstream := fs.String("upstream", "127.0.0.1:18101", "the upstream's host:port (loopback)")
	bufSize := fs.Int("buf", 64<<10, "nethttp, rp: copy buffer and transport buffer size")
	fs.Parse(os.Args[2:])
	for _, a := range []string{*listen, *upstream} {
		if host, _, err := net.SplitHostPort(a); err != nil || (host != "127.0.0.1" && host != "localhost") {
			log.Fatalf("spike runs on loopback only, not %q", a)
		}
	}
	switch os.Args[1] {
	case "fasthttp":
		log.Fatal(newFast(*upstream).ListenAndServe(*listen))
	case "nethttp":
		srv := &http.Server{Addr: *listen, Handler: newNet(*upstream, *bufSize), ReadHeaderTimeout: 10 * time.Second}
		log.Fatal(srv.ListenAndServe())
	case "rp":
		srv := &http.Server{Addr: *listen, Handler: newRP(*upstream, *bufSize), ReadHeaderTimeout: 10 * time.Second}
		log.Fatal(srv.ListenAndServe())
	default:
		log.Fatalf("unknown mode %q", os.Args[1])
	}
}

// hopHeaders are the hop-by-hop fields of RFC 9110 §7.6.1 that a proxy
// must not forward (besides those the Connection field names).
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// ---- fasthttp ----

// newFast is a streaming reverse proxy on fasthttp: the request body and
// the response body are streamed (StreamRequestBody, StreamResponseBody),
// never buffered whole.
func newFast(upstream string) *fasthttp.Server {
	hc := &fasthttp.HostClient{
		Addr:                upstream,
		MaxConns:            512,
		MaxIdleConnDuration: 90 * time.Second,
		StreamResponseBody:  true,
		ReadTimeout:         30 * time.Second,
		WriteTimeout:        30 * time.Second,
		// The request's path goes upstream as the client sent it.
		DisablePathNormalizing: true,
	}
	h := func(ctx *fasthttp.RequestCtx) {
		req := &ctx.Request
		for _, name := range connectionTokens(string(req.Header.Peek("Connection"))) {
			req.Header.Del(name)
		}
		for _, k := range hopHeaders {
			req.Header.Del(k)
		}
		req.Header.Set("X-Forwarded-For", ctx.RemoteIP().String())
		req.SetHost(upstream)
		resp := fasthttp.AcquireResponse()
		if err := hc.Do(req, resp); err != nil {
			fasthttp.ReleaseResponse(resp)
			ctx.Error("bad gateway", fasthttp.StatusBadGateway)
			return
		}
		out := &ctx.Response
		resp.Header.CopyTo(&out.Header)
		for _, name := range connectionTokens(string(resp.Header.Peek("Connection"))) {
			out.Header.Del(name)
		}
		for _, k := range hopHeaders {
			out.Header.Del(k)
		}
		// The upstream's body, streamed; released once written.
		out.SetBodyStream(&released{resp: resp}, resp.Header.ContentLength())
	}
	return &fasthttp.Server{
		Handler:               h,
		StreamRequestBody:     true,
		ReadTimeout:           30 * time.Second,
		IdleTimeout:           90 * time.Second,
		NoDefaultServerHeader: true,
		// Headers as they came: a proxy should not rewrite their case.
		DisableHeaderNamesNormalizing: true,
	}
}

// released is an upstream response body that returns the response (and
// its connection) to fasthttp when the server has written it.
type released struct{ resp *fasthttp.Response }

func (r *released) Read(p []byte) (int, error) { return r.resp.BodyStream().Read(p) }

func (r *released) Close() error {
	err := r.resp.CloseBodyStream()
	fasthttp.ReleaseResponse(r.resp)
	return err
}

func connectionTokens(v string) []string {
	var out []string
	for _, t := range strings.Split(v, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// ---- net/http, by hand ----

var bufs sync.Pool

func getBuf(n int) *[]byte {
	if b, ok := bufs.Get().(*[]byte); ok && len(*b) == n {
		return b
	}
	b := make([]byte, n)
	return &b
}

func transport(buf int) *http.Transport {
	return &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		DisableCompression:  true,
		MaxIdleConns:        512,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     90 * time.Second,
		ReadBufferSize:      buf,
		WriteBufferSize:     buf,
	}
}

// newNet is the smallest streaming reverse proxy on net/http: one
// RoundTrip, the headers copied less the hop-by-hop ones, the body copied
// with a pooled buffer; the upstream's Content-Length kept, so the server
// writes it without chunking, and no flush until the end.
func newNet(upstream string, buf int) http.Handler {
	tr := transport(buf)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out := r.Clone(r.Context())
		out.RequestURI = ""
		out.URL.Scheme, out.URL.Host, out.Host = "http", upstream, upstream
		for _, name := range connectionTokens(r.Header.Get("Connection")) {
			out.Header.Del(name)
		}
		for _, k := range hopHeaders {
			out.Header.Del(k)
		}
		if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
			out.Header.Set("X-Forwarded-For", host)
		}
		if r.ContentLength == 0 {
			out.Body = nil
		}
		res, err := tr.RoundTrip(out)
		if err != nil {
			http.Error(w, "bad gateway", http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		h := w.Header()
		for k, v := range res.Header {
			h[k] = v
		}
		for _, name := range connectionTokens(res.Header.Get("Connection")) {
			h.Del(name)
		}
		for _, k := range hopHeaders {
			h.Del(k)
		}
		w.WriteHeader(res.StatusCode)
		b := getBuf(buf)
		var dst io.Writer = w
		if res.ContentLength < 0 {
			// No length: a stream whose pauses must reach the client,
			// flushed after every read (as ReverseProxy does).
			dst = flushWriter{w}
		}
		io.CopyBuffer(dst, res.Body, *b)
		bufs.Put(b)
	})
}

type flushWriter struct{ w http.ResponseWriter }

func (f flushWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if err == nil {
		err = http.NewResponseController(f.w).Flush()
	}
	return n, err
}

// ---- httputil.ReverseProxy, tuned ----

type bufPool struct{ n int }

func (p bufPool) Get() []byte  { return *getBuf(p.n) }
func (p bufPool) Put(b []byte) { bufs.Put(&b) }

// newRP is test/perf/peer's plain proxy with larger transport buffers and
// copy buffer: what buffer sizes alone do to httputil.ReverseProxy.
func newRP(upstream string, buf int) http.Handler {
	u := &url.URL{Scheme: "http", Host: upstream}
	return &httputil.ReverseProxy{
		Rewrite:    func(pr *httputil.ProxyRequest) { pr.SetURL(u); pr.SetXForwarded() },
		Transport:  transport(buf),
		BufferPool: bufPool{buf},
	}
}
