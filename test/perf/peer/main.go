// Command peer runs the reference servers of headgate's performance
// comparison (test/perf/run.sh): the upstream that serves one page, and a
// plain httputil.ReverseProxy with the same transport settings as headgate.
// It is a measuring tool, not part of headgate.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/http/pprof"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/headgate/headgate/internal/gcfloor"
	"github.com/headgate/headgate/proxy"
	"github.com/headgate/headgate/test/internal/recode"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: peer upstream|plain [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	listen := fs.String("listen", "127.0.0.1:18001", "address to listen on (loopback only)")
	page := fs.String("page", "", "upstream: the HTML file to serve at every path")
	upstream := fs.String("upstream", "http://127.0.0.1:18001", "plain: the upstream URL")
	recode := fs.Bool("recode", false, "plain: decode gzip from the upstream and re-encode it, as a rewriting proxy must")
	recodeLevel := fs.Int("recode-level", proxy.GzipLevel, "plain -recode: the gzip level it re-encodes at (default: headgate's)")
	gcFloor := fs.Uint64("gc-floor", 0, "plain: MiB of collector headroom, as headgate serve -gc-floor keeps (internal/gcfloor); 0: the Go default")
	pprofAddr := fs.String("pprof", "", "serve net/http/pprof on this loopback address, to profile the peer beside headgate's admin port")
	fs.Parse(os.Args[2:])
	if err := loopback(*listen); err != nil {
		log.Fatal(err)
	}
	if t := gcfloor.Start(*gcFloor << 20); t != nil {
		defer t.Stop()
	}
	if *pprofAddr != "" {
		if err := loopback(*pprofAddr); err != nil {
			log.Fatal(err)
		}
		mux := http.NewServeMux()
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.Handle("GET /debug/pprof/allocs", pprof.Handler("allocs"))
		go func() { log.Fatal(http.ListenAndServe(*pprofAddr, mux)) }()
	}
	var h http.Handler
	switch os.Args[1] {
	case "upstream":
		doc, err := os.ReadFile(*page)
		if err != nil {
			log.Fatal(err)
		}
		h = newUpstream(doc)
	case "plain":
		u, err := url.Parse(*upstream)
		if err != nil {
			log.Fatal(err)
		}
		level := noRecode
		if *recode {
			level = *recodeLevel
		}
		h = newPlain(u, level)
	default:
		log.Fatalf("unknown mode %q", os.Args[1])
	}
	srv := &http.Server{Addr: *listen, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}

// loopback refuses an address off the loopback interface: the peer is load
// and profile traffic for this machine only.
func loopback(addr string) error {
	if host, _, err := net.SplitHostPort(addr); err != nil || (host != "127.0.0.1" && host != "localhost") {
		return fmt.Errorf("peer listens on loopback only, not %q", addr)
	}
	return nil
}

func newUpstream(doc []byte) http.Handler {
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.DefaultCompression)
	zw.Write(doc)
	zw.Close()
	sum := sha256.Sum256(doc)
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("ETag", etag)
		body := doc
		if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Vary", "Accept-Encoding")
			body = gz.Bytes()
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	})
}

// noRecode is newPlain's level for a proxy that passes gzip through.
const noRecode = -100

// newPlain is the reference proxy: httputil.ReverseProxy with headgate's
// transport settings (compression off, many idle connections per host).
// With a gzip level other than noRecode it decodes a gzip response and
// re-encodes it at that level, as a rewriting proxy must.
func newPlain(u *url.URL, recodeLevel int) http.Handler {
	t := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		DisableCompression:  true,
		MaxIdleConns:        512,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     90 * time.Second,
	}
	rp := &httputil.ReverseProxy{
		Rewrite:    func(pr *httputil.ProxyRequest) { pr.SetURL(u); pr.SetXForwarded() },
		Transport:  t,
		BufferPool: bufPool{},
	}
	if recodeLevel == noRecode {
		return rp
	}
	// Decode in ModifyResponse, encode in the response writer, both pooled:
	// as headgate does, with no goroutine and no pipe per response. (The
	// first -recode copied through an io.Pipe and closed its own reader,
	// which cut every response; a pipe also made ReverseProxy flush after
	// every compressed block.)
	rc := &recode.Gzip{Level: recodeLevel}
	rp.ModifyResponse = rc.ModifyResponse
	return rc.Handler(rp)
}

type bufPool struct{}

var pool = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

func (bufPool) Get() []byte  { return *pool.Get().(*[]byte) }
func (bufPool) Put(b []byte) { pool.Put(&b) }
