package proxy

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"unicode"
)

// The direct write path: a body of known length that headgate does not
// change past its head goes from the upstream's connection to the
// client's without passing through headgate's memory.
//
// ReverseProxy copies a body with Read and Write through a buffer: every
// byte is copied from the kernel into the buffer and back (two copies of
// 115 KB for a large page, a fifth of the CPU a proxied page costs on
// loopback). When the client's connection is plain HTTP/1.1 (net/http's
// response then has a ReadFrom that splices), the body's length is known
// and nothing encodes it (identity both ways), the body's first Read does
// the whole copy itself: the bytes headgate holds (the head, rewritten or
// not, what the rewriter read past it, and what the upstream connection's
// reader holds) gathered into one Write, then the rest moved by
// http.response.ReadFrom from the upstream's connection, which on Linux is
// splice(2) through a pipe, kernel to kernel. The Read then reports the
// end of the body, and ReverseProxy finishes as it does after any body.
// Anything else (a chunked upstream, a body headgate encodes, HTTPS or
// HTTP/2 clients, a transport of the library user's, other systems) goes
// ReverseProxy's way. docs/performance.md, "The write path", has the
// figures.

// directSent counts the responses sent the direct way when the tests ask
// (their init sets it); nil in a program, where a counter every response
// writes would be one more cache line every core contends for.
var directSent *atomic.Int64

// directTo is the client's writer when res's body may go the direct way,
// nil when it goes ReverseProxy's: a GET's body of known length, nothing
// encoding it or flushing it on a timer, to a plain HTTP/1.x client whose
// writer has a ReadFrom, from a connection of headgate's own client. Not
// an event stream: ReverseProxy flushes those from a timer goroutine of
// its own, which only its copy's writes are ordered with.
func (rs *reqState) directTo(res *http.Response) *responseWriter {
	w := rs.w
	if !canSplice || !rs.plainH1 || res.Request.Method != http.MethodGet ||
		res.ContentLength <= 0 || w.enc != nil || w.lat != nil || rs.body.h1() == nil ||
		eventStream(res.Header) {
		return nil
	}
	if _, ok := w.w.(io.ReaderFrom); !ok {
		return nil
	}
	return w
}

// eventStream reports a Content-Type of text/event-stream, as
// ReverseProxy's flushInterval reads it (mime.ParseMediaType: any leading
// white space, Unicode's included, and any case), but without parsing
// every response's type. The type of a page has been
// handed over to the client's map already (handOver) and is not one.
func eventStream(h http.Header) bool {
	const es = "text/event-stream"
	ct := strings.TrimLeftFunc(hget(h, "Content-Type"), unicode.IsSpace)
	return len(ct) >= len(es) && strings.EqualFold(ct[:len(es)], es)
}

// h1 is the connection body under b when b's next bytes come straight
// from it (no replay, no recording) and their length is known.
func (b *upstreamBody) h1() *h1Body {
	if b.replaying || b.recording || b.err != nil {
		return nil
	}
	hb, _ := b.rc.(*h1Body)
	if hb == nil || hb.err != nil || hb.remain <= 0 {
		return nil
	}
	switch hb.c.nc.(type) {
	case *net.TCPConn, *net.UnixConn:
		// What splice(2) reads from; another net.Conn (a dialer of the
		// library user's) would be copied through a buffer allocated
		// for the call.
		return hb
	}
	return nil
}

// sendDirect writes p[:n] (the bytes headgate holds before the upstream's)
// and the rest of up's body to w: what the connection's reader holds
// gathered with p's bytes into one Write, then the connection's bytes
// through w's ReadFrom. An upstream that fails or ends early is noted as
// up's error, as a Read would note it; a client that goes away is not.
func (w *responseWriter) sendDirect(p []byte, n int, up *upstreamBody, hb *h1Body) error {
	if directSent != nil {
		directSent.Add(1)
	}
	// Everything the connection's reader holds goes before the splice,
	// which reads the connection itself: in p while it has room (p is
	// ReverseProxy's copy buffer, 48 or 128 KiB; the reader holds at most
	// 4 KiB), else in a Write of its own.
	for k := hb.buffered(); k > 0; k = hb.buffered() {
		if n == len(p) {
			if _, err := w.Write(p); err != nil {
				return err
			}
			n = 0
		}
		m, err := io.ReadFull(up, p[n:n+min(k, len(p)-n)]) // no system call: the bytes are in the reader
		n += m
		if err != nil {
			if n > 0 {
				w.Write(p[:n])
			}
			return err
		}
	}
	if n > 0 {
		if _, err := w.Write(p[:n]); err != nil {
			return err
		}
	}
	if hb.err != nil {
		// Read the whole body with the buffered bytes: released.
		return nil
	}
	err, upstream := hb.writeTo(w)
	if err != nil && upstream && up.err == nil {
		up.err = err
	}
	return err
}

// buffered is how many of the body's bytes the connection's reader holds.
func (b *h1Body) buffered() int {
	if b.err != nil || b.remain <= 0 {
		return 0
	}
	return int(min(int64(b.c.br.Buffered()), b.remain))
}

// writeTo moves the rest of the body, none of it in the connection's
// reader, from the connection to w by w's ReadFrom, and releases the
// connection as a Read that reached the end or failed would. upstream
// reports an error that is the upstream's (it closed early, or the
// request's context ended: the client left or upstream_timeout fired,
// which finish tells apart), not the client's.
func (b *h1Body) writeTo(w *responseWriter) (err error, upstream bool) {
	if b.c.br.Buffered() > 0 {
		// sendDirect empties the reader first; bytes left in it would be
		// skipped by a read of the connection.
		err = errors.New("the direct write path found bytes still in the upstream connection's reader")
		b.fail(err)
		return err, false
	}
	lr := io.LimitedReader{R: b.c.nc, N: b.remain}
	_, err = w.readFrom(&lr)
	b.remain = lr.N
	switch {
	case err == nil && lr.N == 0:
		b.ended()
		return nil, false
	case err == nil:
		err, upstream = io.ErrUnexpectedEOF, true
	case b.ctx.Err() != nil:
		err, upstream = context.Cause(b.ctx), true
	default:
		// Which end failed: splice reports both ends' errors alike. A
		// deadline is the client's (the upstream's is set only when the
		// context ends: above); an upstream that closed normally after
		// its bytes (Connection: close, or an idle close while the
		// client stalled) is not at fault either. Only an upstream
		// connection reset by its peer is.
		upstream = !errors.Is(err, os.ErrDeadlineExceeded) && connReset(b.c.nc)
	}
	b.fail(err)
	return err, upstream
}

// readFrom copies r to the client by the underlying writer's ReadFrom
// (directTo checked it has one), counting the bytes.
func (w *responseWriter) readFrom(r *io.LimitedReader) (int64, error) {
	n, err := w.w.(io.ReaderFrom).ReadFrom(r)
	w.bytes += n
	return n, err
}
