// Package recode is the gzip re-encoding of headgate's reference proxies
// (test/internal/plainproxy for the load benchmark, test/perf/peer for the
// perf scripts): a gzip response is decoded in ReverseProxy's
// ModifyResponse and encoded again in the response writer, both pooled, as
// headgate does, with no goroutine and no pipe per response, and nothing
// rewritten. It is a measuring tool, not part of headgate.
package recode

import (
	"io"
	"net/http"
	"sync"

	"github.com/klauspost/compress/gzip"
)

// mark tells the response writer that ModifyResponse decoded the body; it
// never leaves the process.
const mark = "X-Recode"

// Gzip re-encodes gzip responses at Level (klauspost/compress's gzip, the
// library headgate uses).
type Gzip struct {
	Level            int
	readers, writers sync.Pool
}

// ModifyResponse is the ReverseProxy's ModifyResponse: it decodes a gzip
// body and marks the response for Handler's writer.
func (g *Gzip) ModifyResponse(res *http.Response) error {
	if res.Header.Get("Content-Encoding") != "gzip" {
		return nil
	}
	zr, _ := g.readers.Get().(*gzip.Reader)
	if zr == nil {
		zr = new(gzip.Reader)
	}
	if err := zr.Reset(res.Body); err != nil {
		return err
	}
	res.Body = &gunzipBody{zr: zr, up: res.Body, pool: &g.readers}
	// res.ContentLength stays as it came: ReverseProxy flushes after every
	// write only for -1.
	res.Header.Del("Content-Length")
	res.Header.Set(mark, "gzip")
	return nil
}

// Handler serves rp (whose ModifyResponse is g's) through a writer that
// encodes what ModifyResponse decoded.
func (g *Gzip) Handler(rp http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gw := &gzipWriter{ResponseWriter: w, g: g}
		rp.ServeHTTP(gw, r)
		gw.close()
	})
}

type gunzipBody struct {
	zr   *gzip.Reader
	up   io.ReadCloser
	pool *sync.Pool
}

func (b *gunzipBody) Read(p []byte) (int, error) { return b.zr.Read(p) }

func (b *gunzipBody) Close() error {
	err := b.up.Close()
	if b.zr != nil {
		b.pool.Put(b.zr)
		b.zr = nil
	}
	return err
}

// gzipWriter encodes the body when ModifyResponse decoded one.
type gzipWriter struct {
	http.ResponseWriter
	g  *Gzip
	zw *gzip.Writer
}

func (w *gzipWriter) WriteHeader(code int) {
	if w.Header().Get(mark) != "" {
		w.Header().Del(mark)
		w.zw, _ = w.g.writers.Get().(*gzip.Writer)
		if w.zw == nil {
			w.zw, _ = gzip.NewWriterLevel(w.ResponseWriter, w.g.Level)
		} else {
			w.zw.Reset(w.ResponseWriter)
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *gzipWriter) Write(p []byte) (int, error) {
	if w.zw != nil {
		return w.zw.Write(p)
	}
	return w.ResponseWriter.Write(p)
}

func (w *gzipWriter) Flush() {
	if w.zw != nil {
		w.zw.Flush()
	}
	http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *gzipWriter) close() {
	if w.zw != nil {
		w.zw.Close()
		w.zw.Reset(io.Discard)
		w.g.writers.Put(w.zw)
		w.zw = nil
	}
}
