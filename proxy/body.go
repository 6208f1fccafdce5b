package proxy

import (
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/headgate/headgate/internal/codec"
	"github.com/headgate/headgate/rewrite"
)

// The upstream's body as the proxy reads it, the rewritten body, and the
// response writer they go out through.

// ---- bodies ----

// upstreamBody is the upstream's response body: it remembers the first
// read error (to tell a failing upstream from a client that went away),
// records what the head's decoding read, and can replay it.
type upstreamBody struct {
	rc        io.ReadCloser
	err       error
	rec       *[]byte // recorded bytes; nil when not recording nor replaying
	recording bool
	limit     int  // most bytes recorded (recordLimit)
	overLimit bool // the head search read past limit: recording stopped
	replaying bool
	off       int // replay position in *rec
	closed    bool
	direct    *responseWriter // set: the first Read sends the body itself (direct.go)
}

var recPool = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

func (b *upstreamBody) startRecording(limit int) {
	b.rec = recPool.Get().(*[]byte)
	*b.rec = (*b.rec)[:0]
	b.recording, b.limit = true, limit
}

func (b *upstreamBody) stopRecording() { b.recording = false }

// replay makes the next reads return the recorded bytes, then the rest.
func (b *upstreamBody) replay() { b.replaying, b.off = true, 0 }

func (b *upstreamBody) Read(p []byte) (int, error) {
	if w := b.direct; w != nil {
		b.direct = nil
		if hb := b.h1(); hb != nil {
			if err := w.sendDirect(p, 0, b, hb); err != nil {
				return 0, err
			}
			return 0, io.EOF
		}
	}
	if b.replaying {
		if b.off < len(*b.rec) {
			n := copy(p, (*b.rec)[b.off:])
			b.off += n
			return n, nil
		}
		b.replaying = false
		b.release()
	} else if b.rec != nil && !b.recording {
		b.release()
	}
	n, err := b.rc.Read(p)
	if err != nil && err != io.EOF && b.err == nil {
		b.err = err
	}
	if b.recording {
		*b.rec = append(*b.rec, p[:n]...)
		if len(*b.rec) > b.limit {
			// Bytes that decode to (almost) nothing: stop the head
			// search here; the page goes out as it came (passRecorded).
			b.recording, b.overLimit = false, true
			if err == nil {
				err = errRecordLimit
			}
		}
	}
	return n, err
}

func (b *upstreamBody) release() {
	if b.rec != nil {
		if cap(*b.rec) <= 1<<20 {
			recPool.Put(b.rec)
		}
		b.rec = nil
	}
}

func (b *upstreamBody) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	b.release()
	return b.rc.Close()
}

// failed returns err for proxyError, noting it as the body's error.
func (b *upstreamBody) failed(err error) error {
	if b.err == nil {
		b.err = err
	}
	return err
}

// rewrittenBody is the rewriter's output over the decoded upstream body.
type rewrittenBody struct {
	r      *rewrite.Reader
	dec    codec.Decoder
	up     *upstreamBody
	coding string
	direct *responseWriter // set: the first Read sends the body itself (direct.go)
}

func (b *rewrittenBody) Read(p []byte) (int, error) {
	if w := b.direct; w != nil {
		b.direct = nil
		n := 0
		for b.r.Buffered() > 0 && n < len(p) {
			c, _ := b.r.Read(p[n:]) // the buffered bytes: no read of the source
			n += c
		}
		hb := b.up.h1()
		if b.r.Buffered() > 0 || b.r.Done() || hb == nil {
			// A head larger than p, or a page Prepare read whole: the
			// usual way from here on.
			return n, nil
		}
		if err := w.sendDirect(p, n, b.up, hb); err != nil {
			return 0, err
		}
		return 0, io.EOF
	}
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF && b.up.err == nil {
		// The upstream's own errors are noted by up; what is left is the
		// coding.
		b.up.err = fmt.Errorf("%w: %s: %w", codec.ErrBadEncoding, b.coding, err)
	}
	return n, err
}

func (b *rewrittenBody) Close() error {
	if b.dec != nil {
		b.dec.Release()
		b.dec = nil
	}
	return b.up.Close()
}

// ---- response writer ----

// responseWriter records status and bytes for the access log, and encodes
// a rewritten body when ModifyResponse asks for it. Flushes pass through
// the encoder, so a paused upstream's bytes still reach the client.
type responseWriter struct {
	w           http.ResponseWriter
	status      int
	bytes       int64
	wroteHeader bool
	enc         encoder
	wire        wire
	onHeader    func()   // called once, as the status goes out (an Observer's report)
	lat         *latency // the flush timer of a rewritten body of unknown length; nil for others
}

// wire is where the encoder writes: the client connection, counted.
type wire struct{ rw *responseWriter }

func (w wire) Write(b []byte) (int, error) {
	n, err := w.rw.w.Write(b)
	w.rw.bytes += int64(n)
	return n, err
}

func (w *responseWriter) startEncoding(coding string) {
	w.wire.rw = w
	w.enc = newEncoder(coding, w.wire)
}

func (w *responseWriter) Header() http.Header { return w.w.Header() }

func (w *responseWriter) WriteHeader(code int) {
	if !w.wroteHeader && code >= 200 {
		w.status, w.wroteHeader = code, true
		if w.onHeader != nil {
			w.onHeader()
		}
	}
	w.w.WriteHeader(code)
}

func (w *responseWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.lat != nil {
		return w.writeLater(b)
	}
	if w.enc != nil {
		return w.enc.Write(b)
	}
	n, err := w.w.Write(b)
	w.bytes += int64(n)
	return n, err
}

// writeLater writes under the flush timer (flush.go).
func (w *responseWriter) writeLater(b []byte) (n int, err error) {
	w.lat.mu.Lock()
	defer w.lat.mu.Unlock()
	if w.enc != nil {
		n, err = w.enc.Write(b)
	} else {
		n, err = w.w.Write(b)
		w.bytes += int64(n)
	}
	w.lat.wrote()
	return n, err
}

func (w *responseWriter) FlushError() error {
	if w.lat != nil {
		w.lat.mu.Lock()
		defer w.lat.mu.Unlock()
		w.lat.pending = false
	}
	return w.flush()
}

// flush sends what is buffered, through the encoder; the caller holds
// w.lat.mu when there is a timer.
func (w *responseWriter) flush() error {
	if w.enc != nil {
		if err := w.enc.Flush(); err != nil {
			return err
		}
	}
	return http.NewResponseController(w.w).Flush()
}

func (w *responseWriter) Flush() { _ = w.FlushError() }

func (w *responseWriter) Unwrap() http.ResponseWriter { return w.w }

// close ends an encoded body.
func (w *responseWriter) close() error {
	if w.lat != nil {
		w.lat.stop()
	}
	if w.enc == nil {
		return nil
	}
	err := w.enc.Close()
	releaseEncoder(w.enc)
	w.enc = nil
	return err
}
