// Command plainproxy is the reference of the load benchmark: an
// httputil.ReverseProxy with headgate's transport settings (proxy.NewTransport)
// and nothing else; a gzip response is decoded and re-encoded with the
// library and level headgate uses (klauspost gzip, proxy.GzipLevel), pooled, in
// the response writer as headgate does, without rewriting. It runs as its
// own process, like headgate, so that both pay the same cross-process
// costs.
package main

import (
	"flag"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"

	kgzip "github.com/klauspost/compress/gzip"

	"github.com/headgate/headgate/proxy"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "listen address")
	upstream := flag.String("upstream", "", "upstream URL")
	flag.Parse()
	target, err := url.Parse(*upstream)
	if err != nil {
		log.Fatal(err)
	}
	var readers, writers sync.Pool
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.SetXForwarded()
		},
		Transport: proxy.NewTransport(30 * time.Second),
		ModifyResponse: func(res *http.Response) error {
			if res.Header.Get("Content-Encoding") != "gzip" {
				return nil
			}
			zr, _ := readers.Get().(*kgzip.Reader)
			if zr == nil {
				zr = new(kgzip.Reader)
			}
			if err := zr.Reset(res.Body); err != nil {
				return err
			}
			res.Body = &gunzipBody{zr, res.Body, &readers}
			res.Header.Del("Content-Length") // res.ContentLength stays: no flush per write
			res.Header.Set("X-Reencode", "gzip")
			return nil
		},
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gw := &gzipWriter{ResponseWriter: w, pool: &writers}
		rp.ServeHTTP(gw, r)
		gw.close()
	})
	srv := &http.Server{Addr: *listen, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}

type gunzipBody struct {
	zr   *kgzip.Reader
	rc   io.ReadCloser
	pool *sync.Pool
}

func (g *gunzipBody) Read(p []byte) (int, error) { return g.zr.Read(p) }
func (g *gunzipBody) Close() error {
	g.pool.Put(g.zr)
	return g.rc.Close()
}

// gzipWriter encodes the body when ModifyResponse decoded one.
type gzipWriter struct {
	http.ResponseWriter
	pool *sync.Pool
	zw   *kgzip.Writer
}

func (g *gzipWriter) WriteHeader(code int) {
	if g.Header().Get("X-Reencode") == "gzip" {
		g.Header().Del("X-Reencode")
		g.zw, _ = g.pool.Get().(*kgzip.Writer)
		if g.zw == nil {
			g.zw, _ = kgzip.NewWriterLevel(g.ResponseWriter, proxy.GzipLevel)
		} else {
			g.zw.Reset(g.ResponseWriter)
		}
	}
	g.ResponseWriter.WriteHeader(code)
}

func (g *gzipWriter) Write(p []byte) (int, error) {
	if g.zw != nil {
		return g.zw.Write(p)
	}
	return g.ResponseWriter.Write(p)
}

func (g *gzipWriter) Flush() {
	if g.zw != nil {
		g.zw.Flush()
	}
	http.NewResponseController(g.ResponseWriter).Flush()
}

func (g *gzipWriter) close() {
	if g.zw != nil {
		g.zw.Close()
		g.pool.Put(g.zw)
	}
}
