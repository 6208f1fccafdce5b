package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// h1Transport is headgate's transport toward its upstream. A GET or HEAD
// without a body to a plain-http upstream (nearly every request headgate
// proxies) is sent by the handler's own goroutine: it writes the request
// on a pooled connection and reads the response there, with net/http's own
// ReadResponse and Request.Write's bytes (writeH1Request, h1write.go), so
// the bytes on the wire and the parsing are http.Transport's. What it leaves out is http.Transport's two
// goroutines per connection (a reader and a writer) and the channel
// handoffs between them and the handler on every request: three goroutine
// wake-ups a request, their stacks (two per upstream connection, scanned
// by every collection), and ~1.2 KB of allocations (measured in
// docs/performance.md). Everything else (a request with a body, an
// upgrade, Expect, https, userinfo in the URL) goes through the embedded
// http.Transport unchanged.
//
// Every idle connection is peeked at before use (one non-blocking
// recvfrom): one the upstream closed is dropped, and one on which it sent
// bytes nobody asked for is logged and closed, so that they are never read
// as the next request's answer (http.Transport's reader goroutine watches
// idle connections for the same). A connection the upstream closes just
// as it is reused is found when the request written on it reads nothing
// back; such a request (a GET or HEAD, nothing of its response read) is
// sent again once on a new connection, as http.Transport retries.
type h1Transport struct {
	*http.Transport
	log *slog.Logger
	// own is false when the embedded transport has a setting this path
	// does not keep (a proxy, no keep-alives, its own TLS dialer, a
	// per-host connection limit), or where an idle connection can not be
	// peeked at (canPeek, h1_other.go): everything then goes through it.
	own bool

	mu      sync.Mutex
	idle    map[string][]*h1Conn // by the URL's host, most recently used last
	nidle   int
	swept   bool // a sweep is scheduled
	closed  bool
	sweeper *time.Timer
}

const (
	// h1MaxHeaderBytes bounds a response's header block (and each 1xx's):
	// what ReadResponse holds of it. http.Transport's default is 10 MB;
	// nginx answers 502 past its 4-8 KiB proxy_buffer_size.
	h1MaxHeaderBytes = 1 << 20
	// h1BufferSize is each connection's read buffer and the request's
	// write buffer, as newTransport's (a body's reads larger than it go
	// straight to the socket).
	h1BufferSize = 4 << 10
)

// h1Writers are the write buffers requests are written through: one is
// held while a request is written (a few hundred bytes, at once), not for a
// connection's life, so that an idle connection holds its 4 KiB reader
// only (up to 512 idle connections a pool: 2 MiB less).
var h1Writers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, h1BufferSize) }}

// newH1Transport returns headgate's transport over t, logging to log.
func newH1Transport(t *http.Transport, log *slog.Logger) *h1Transport {
	t.MaxResponseHeaderBytes = h1MaxHeaderBytes
	own := canPeek && t.Proxy == nil && !t.DisableKeepAlives && t.DialTLSContext == nil && t.MaxConnsPerHost == 0
	return &h1Transport{Transport: t, log: log, own: own, idle: map[string][]*h1Conn{}}
}

// h1Eligible reports whether r goes through h1Transport's own path.
func h1Eligible(r *http.Request) bool {
	u := r.URL
	if u == nil || u.Scheme != "http" || u.User != nil || r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	if u.Host == "" || strings.ContainsFunc(u.Host, func(r rune) bool { return r >= utf8.RuneSelf }) {
		// No host is http.Transport's error to give; a host in Unicode
		// is dialled by its punycode, which http.Transport converts.
		return false
	}
	if r.Body != nil && r.Body != http.NoBody || r.ContentLength != 0 {
		return false
	}
	h := r.Header
	return len(h["Upgrade"]) == 0 && len(h["Expect"]) == 0 && len(r.TransferEncoding) == 0
}

// RoundTrip implements http.RoundTripper.
func (t *h1Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	if !t.own || !h1Eligible(r) {
		return t.Transport.RoundTrip(r)
	}
	ctx := r.Context()
	if ctx.Err() != nil {
		// As http.Transport: nothing is sent for a request already over.
		return nil, context.Cause(ctx)
	}
	// The pool's key is the URL's host as written (the upstream's, the
	// same on every request); the address to dial is made only to dial.
	key := r.URL.Host
	c, reused := t.get(key)
	for {
		if c == nil {
			var err error
			if c, err = t.dial(ctx, key, h1Addr(r.URL)); err != nil {
				return nil, err
			}
		}
		res, err := c.roundTrip(r)
		if err == nil {
			return res, nil
		}
		c.nc.Close()
		if !reused || c.lr.read > 0 || ctx.Err() != nil || !closedEarly(err) {
			return nil, err
		}
		// Closed by the upstream as it was reused, before a byte of the
		// answer: once more, on a new connection.
		c, reused = nil, false
	}
}

// h1Addr is u's host and port, http's default when it has none (as
// http.Transport dials "app:" as "app:80").
func h1Addr(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// dial opens a new connection to addr with the transport's dialer, for
// the pool's key.
func (t *h1Transport) dial(ctx context.Context, key, addr string) (*h1Conn, error) {
	dial := t.DialContext
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	nc, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	c := &h1Conn{t: t, key: key, nc: nc}
	c.pk.init(nc)
	c.lr.r = nc
	c.br = bufio.NewReaderSize(&c.lr, h1BufferSize)
	return c, nil
}

// get takes key's most recently used idle connection, if any.
func (t *h1Transport) get(key string) (*h1Conn, bool) {
	for {
		t.mu.Lock()
		l := t.idle[key]
		if len(l) == 0 {
			t.mu.Unlock()
			return nil, false
		}
		c := l[len(l)-1]
		l[len(l)-1] = nil
		t.idle[key] = l[:len(l)-1]
		t.nidle--
		t.mu.Unlock()
		if time.Since(c.idleAt) < t.idleTimeout() {
			switch c.peek() {
			case peekIdle:
				return c, true
			case peekData:
				t.unsolicited(c, c.pk.start())
			}
		}
		c.nc.Close()
	}
}

// unsolicited logs bytes the upstream sent on a connection with no request
// outstanding (the connection is closed: its framing is lost), as
// http.Transport logs "Unsolicited response received on idle HTTP channel".
func (t *h1Transport) unsolicited(c *h1Conn, start []byte) {
	if t.log != nil {
		t.log.Warn("upstream sent bytes on an idle connection, closed it (Unsolicited response received on idle HTTP channel)",
			"upstream", c.key, "start", string(start))
	}
}

func (t *h1Transport) idleTimeout() time.Duration {
	if t.IdleConnTimeout > 0 {
		return t.IdleConnTimeout
	}
	return 90 * time.Second
}

// put keeps c for the next request to its address, or closes it when the
// pool is full or closed.
func (t *h1Transport) put(c *h1Conn) {
	if n := c.br.Buffered(); n > 0 {
		start, _ := c.br.Peek(min(n, 40))
		t.unsolicited(c, start)
		c.nc.Close()
		return
	}
	perHost, all := t.MaxIdleConnsPerHost, t.MaxIdleConns
	if perHost <= 0 {
		perHost = http.DefaultMaxIdleConnsPerHost
	}
	c.idleAt = time.Now()
	t.mu.Lock()
	if t.closed || len(t.idle[c.key]) >= perHost || all > 0 && t.nidle >= all {
		t.mu.Unlock()
		c.nc.Close()
		return
	}
	t.idle[c.key] = append(t.idle[c.key], c)
	t.nidle++
	if !t.swept {
		t.swept = true
		if t.sweeper == nil {
			t.sweeper = time.AfterFunc(t.idleTimeout(), t.sweep)
		} else {
			t.sweeper.Reset(t.idleTimeout())
		}
	}
	t.mu.Unlock()
}

// sweep closes the connections idle for longer than IdleConnTimeout, and
// comes again while any are left.
func (t *h1Transport) sweep() {
	var old []*h1Conn
	t.mu.Lock()
	limit := time.Now().Add(-t.idleTimeout())
	for addr, l := range t.idle {
		// Oldest first: the ones to close are a prefix.
		n := 0
		for n < len(l) && l[n].idleAt.Before(limit) {
			n++
		}
		old = append(old, l[:n]...)
		rest := append(l[:0], l[n:]...)
		clear(l[len(rest):])
		t.idle[addr] = rest
		t.nidle -= n
		if len(rest) == 0 {
			delete(t.idle, addr)
		}
	}
	t.swept = t.nidle > 0 && !t.closed
	if t.swept {
		t.sweeper.Reset(t.idleTimeout() / 2)
	}
	t.mu.Unlock()
	for _, c := range old {
		c.nc.Close()
	}
}

// CloseIdleConnections closes every idle connection, its own and the
// embedded transport's.
func (t *h1Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = map[string][]*h1Conn{}
	t.nidle = 0
	t.mu.Unlock()
	for _, l := range idle {
		for _, c := range l {
			c.nc.Close()
		}
	}
	t.Transport.CloseIdleConnections()
}

// close closes the idle connections and keeps none from now on.
func (t *h1Transport) close() {
	t.mu.Lock()
	t.closed = true
	if t.sweeper != nil {
		t.sweeper.Stop()
	}
	t.mu.Unlock()
	t.CloseIdleConnections()
}

// h1Conn is one connection to the upstream.
type h1Conn struct {
	t      *h1Transport
	key    string // the pool's: the URL's host
	nc     net.Conn
	lr     h1Reader
	br     *bufio.Reader
	idleAt time.Time
	pk     peeker // h1_unix.go
}

// h1Reader reads the connection: at most limit bytes while a header block
// is read (limit < 0: no limit), counting what it read since the request
// was written.
type h1Reader struct {
	r     io.Reader
	limit int64
	read  int64
}

var errH1HeaderTooLarge = fmt.Errorf("upstream's response headers exceed %d bytes", h1MaxHeaderBytes)

func (l *h1Reader) Read(p []byte) (int, error) {
	if l.limit == 0 {
		return 0, errH1HeaderTooLarge
	}
	if l.limit > 0 && int64(len(p)) > l.limit {
		p = p[:l.limit]
	}
	n, err := l.r.Read(p)
	l.read += int64(n)
	if l.limit > 0 {
		l.limit -= int64(n)
	}
	return n, err
}

// abort makes the connection's pending and future reads and writes fail:
// the request's context is done.
func (c *h1Conn) abort() { c.nc.SetDeadline(time.Unix(1, 0)) }

// roundTrip writes r on c and reads its response's headers.
func (c *h1Conn) roundTrip(r *http.Request) (*http.Response, error) {
	ctx := r.Context()
	stop := context.AfterFunc(ctx, c.abort)
	c.lr.read, c.lr.limit = 0, h1MaxHeaderBytes
	bw := h1Writers.Get().(*bufio.Writer)
	bw.Reset(c.nc)
	err := writeH1Request(bw, r)
	if err == nil {
		err = bw.Flush()
	}
	bw.Reset(nil) // what a failed write left is dropped; the connection is not kept
	h1Writers.Put(bw)
	if err != nil {
		stop()
		return nil, failCause(ctx, err)
	}
	trace := httptrace.ContextClientTrace(ctx)
	for {
		res, err := http.ReadResponse(c.br, r)
		if err != nil {
			stop()
			return nil, failCause(ctx, err)
		}
		code := res.StatusCode
		if code >= 200 || code < 100 {
			c.lr.limit = -1
			if code < 100 {
				res.Close = true // as http.Transport: no reuse after it
			}
			return c.respond(r, res, stop), nil
		}
		if code == http.StatusSwitchingProtocols {
			// Not asked for: upgrades go through http.Transport.
			stop()
			return nil, fmt.Errorf("upstream sent %d to a request that asked for no upgrade", code)
		}
		if trace != nil && trace.Got1xxResponse != nil {
			if err := trace.Got1xxResponse(code, textproto.MIMEHeader(res.Header)); err != nil {
				stop()
				return nil, err
			}
			// Handed on: each gets the limit afresh (as http.Transport);
			// unread ones share one.
			c.lr.limit = h1MaxHeaderBytes
		}
	}
}

// failCause is the error of a request that failed before its response:
// the context's cause when it is done (the client left, or
// upstream_timeout's clock fired).
func failCause(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return err
}

// closedEarly reports a write or read that failed because the upstream
// had closed the connection (its end of input, a reset, a broken pipe).
func closedEarly(err error) bool {
	var ne *net.OpError
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ne)
}

// respond hands res to the caller with c attached to its body.
func (c *h1Conn) respond(r *http.Request, res *http.Response, stop func() bool) *http.Response {
	reuse := !res.Close && !r.Close
	if res.Body == http.NoBody || res.Body == nil {
		res.Body = http.NoBody
		c.release(reuse, stop)
		return res
	}
	res.Body = &h1Body{c: c, rc: res.Body, ctx: r.Context(), stop: stop, reuse: reuse, remain: res.ContentLength}
	return res
}

// release puts c back in the pool when its response was read to the end
// and the request's context never fired, and closes it otherwise.
func (c *h1Conn) release(reuse bool, stop func() bool) {
	if stop() && reuse {
		c.t.put(c)
		return
	}
	c.nc.Close()
}

// h1Body is a response's body on an h1Conn: at its end the connection
// goes back to the pool; closed before, the connection is closed (the
// rest is not read).
type h1Body struct {
	c     *h1Conn
	rc    io.ReadCloser
	ctx   context.Context
	stop  func() bool
	reuse bool
	err   error // set once the connection is released: what reads return
	// remain is how many of the body's bytes are still to come, by its
	// Content-Length; -1 when the upstream gave none.
	remain int64
}

func (b *h1Body) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.rc.Read(p)
	if b.remain > 0 {
		b.remain -= int64(n)
	}
	switch {
	case err == io.EOF:
		b.ended()
	case err != nil:
		if b.ctx.Err() != nil {
			err = context.Cause(b.ctx)
		}
		b.fail(err)
	}
	return n, err
}

func (b *h1Body) Close() error {
	if b.err == nil {
		b.fail(errBodyClosed)
	}
	return nil
}

// ended releases the connection at the body's end: back to the pool when
// it may be used again.
func (b *h1Body) ended() {
	b.err = io.EOF
	b.c.release(b.reuse, b.stop)
}

// fail ends the body with err before its end: the connection, its place
// in the response unknown, is closed.
func (b *h1Body) fail(err error) {
	b.err = err
	b.stop()
	b.c.nc.Close()
}

// What peek found on an idle connection.
const (
	peekIdle   = iota // nothing: usable
	peekClosed        // closed by the upstream, or an error
	peekData          // bytes nobody asked for
)
