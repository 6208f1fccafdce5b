package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/headgate/headgate/rules"
)

// Middleware returns headgate's engine as middleware for any Go server:
// mw(next) is an http.Handler that decides every request exactly as
// `headgate serve` does (the same Proxy, ServeHTTP and hooks: deny rules,
// redirects, [bots], the sitemap handler, the head rewrite, Markdown) and
// sends what serve would forward upstream to next, in process.
//
// cfg's server.upstream must be "builtin:next" (rules.BuiltinNext): a
// config meant for a network upstream is refused rather than silently
// ignored. o is as for New, but o.Next is Middleware's own; o.Transport is
// not used for builtin:next.
//
// p is the Proxy behind every handler mw returns: p.Swap reloads the
// config, p.Admin serves /metrics, /healthz and /readyz, and p.Close (an
// io.Closer) stops it once no request is served any more. mw may be called
// more than once (one Proxy, many next handlers). headgate's own upstream
// requests that belong to no client request (the sitemap's generation)
// go to the next of the latest client request, with that request's
// context values (a host such as Caddy keeps per-request state there that
// its handlers need) but their own cancellation, and the Host of
// site.base_url; before any client request, to the first next.
//
// next sees what an upstream would: the path and query as forwarded, the
// client's Host, X-Forwarded-For/-Proto/-Host, an Accept-Encoding headgate
// can decode, and the context of the client's request (cancelled when the
// client goes away or server.upstream_timeout passes). Its response
// streams back through an unbuffered pipe: a write returns once headgate
// has read it, so memory stays bounded whatever the body's length. A
// panic in next is a 502, as an upstream that fails. Connection upgrades
// (Hijack, 101 Switching Protocols) and trailers are not carried.
func Middleware(cfg *rules.Config, o Options) (mw func(next http.Handler) http.Handler, p *Proxy, err error) {
	if cfg.Server.Upstream != rules.BuiltinNext {
		return nil, nil, fmt.Errorf("server.upstream is %q: headgate used as middleware serves the wrapped handler, set it to %q", cfg.Server.Upstream, rules.BuiltinNext)
	}
	t := &nextTransport{}
	o.Next = t
	p, err = New(cfg, o)
	if err != nil {
		return nil, nil, err
	}
	t.p = p
	mw = func(next http.Handler) http.Handler {
		t.first.CompareAndSwap(nil, &next)
		return &nextHandler{p: p, t: t, next: next}
	}
	return mw, p, nil
}

// nextURL is the upstream address of builtin:next: never dialled, it only
// gives ReverseProxy a URL to set.
var nextURL = &url.URL{Scheme: "http", Host: "next.headgate.invalid"}

type nextKey struct{}

// nextCall is what a client request carries to the transport: the handler
// it is bound for and the request as it arrived (its Host, RemoteAddr and
// TLS are next's).
type nextCall struct {
	next http.Handler
	in   *http.Request
}

type nextHandler struct {
	p    *Proxy
	t    *nextTransport
	next http.Handler
}

func (h *nextHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	call := &nextCall{next: h.next, in: r}
	h.t.last.Store(call)
	h.p.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), nextKey{}, call)))
}

// nextTransport is the http.RoundTripper of builtin:next: it serves the
// outgoing request with the wrapped handler and streams its response back.
type nextTransport struct {
	p     *Proxy
	first atomic.Pointer[http.Handler] // for requests that carry no nextCall, before any client request
	last  atomic.Pointer[nextCall]     // the latest client request's, for requests that carry none
}

// valuesFrom is a context with the cancellation of its own and the values
// of another besides: a detached fetch with a client request's values.
type valuesFrom struct {
	context.Context
	values context.Context
}

func (c valuesFrom) Value(k any) any {
	if v := c.Context.Value(k); v != nil {
		return v
	}
	return c.values.Value(k)
}

// errNextPanic is how a panic in next reaches ReverseProxy's ErrorHandler:
// a 502, as an upstream that failed.
var errNextPanic = errors.New("the wrapped handler panicked")

func (t *nextTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	call, _ := ctx.Value(nextKey{}).(*nextCall)
	var next http.Handler
	detached := call == nil
	if detached {
		if last := t.last.Load(); last != nil {
			next = last.next
			ctx = valuesFrom{ctx, last.in.Context()}
		} else if f := t.first.Load(); f != nil {
			next = *f
		} else {
			return nil, errors.New("builtin:next: no handler wrapped yet")
		}
	} else {
		next = call.next
	}

	// The request as a server hands it to a handler: a path-only URL, the
	// RequestURI, the client's connection facts, a non-nil body.
	in := req.WithContext(ctx)     // a shallow copy: req stays the caller's
	in.Header = req.Header.Clone() // next may change it (Caddy's handlers do)
	u := *req.URL
	u.Scheme, u.Host = "", ""
	in.URL = &u
	in.RequestURI = u.RequestURI()
	if in.Body == nil {
		in.Body = http.NoBody
	}
	if !detached {
		in.Host = call.in.Host
		in.RemoteAddr = call.in.RemoteAddr
		in.TLS = call.in.TLS
		in.Proto, in.ProtoMajor, in.ProtoMinor = call.in.Proto, call.in.ProtoMajor, call.in.ProtoMinor
	} else {
		in.Proto, in.ProtoMajor, in.ProtoMinor = "HTTP/1.1", 1, 1
		if in.Host == "" || in.Host == nextURL.Host {
			in.Host = t.p.state.Load().host
		}
		in.RemoteAddr = "127.0.0.1:0" // headgate itself
	}

	pr, pw := io.Pipe()
	w := &pipeWriter{header: make(http.Header), pw: pw, req: req, ready: make(chan struct{})}
	w.res.Body = &pipeBody{pr}
	go w.serve(next, in)
	select {
	case <-w.ready:
		if w.err != nil {
			return nil, w.err
		}
		return &w.res, nil
	case <-ctx.Done():
		// next keeps the cancelled context; its writes from now on fail.
		pr.CloseWithError(context.Cause(ctx))
		return nil, context.Cause(ctx)
	}
}

// pipeWriter is next's http.ResponseWriter. Its header goes out on the
// first WriteHeader, Write or Flush; its body through an io.Pipe, so a
// Write returns once headgate read it: no copy of the body is kept.
type pipeWriter struct {
	header http.Header
	pw     *io.PipeWriter
	req    *http.Request

	once  sync.Once
	ready chan struct{} // closed once res or err is set
	res   http.Response
	err   error
	// the header went out; the response has no body (HEAD, 204, 304).
	// Only next's goroutine reads and writes them: res belongs to headgate
	// once ready is closed.
	sent, noBody bool
}

func (w *pipeWriter) Header() http.Header { return w.header }

func (w *pipeWriter) WriteHeader(code int) {
	if w.sent || code < 100 || code > 999 {
		return
	}
	if code < 200 {
		// 1xx informational answers (103 Early Hints) are not carried;
		// 101 Switching Protocols needs Hijack, which next does not get.
		return
	}
	w.sent = true
	h := w.header.Clone()
	w.res.Status = strconv.Itoa(code) + " " + http.StatusText(code)
	w.res.StatusCode = code
	w.res.Proto, w.res.ProtoMajor, w.res.ProtoMinor = "HTTP/1.1", 1, 1
	w.res.Header = h
	w.res.Request = w.req
	w.res.ContentLength = -1
	if cl := h.Get("Content-Length"); cl != "" {
		if n, err := strconv.ParseInt(cl, 10, 64); err == nil && n >= 0 {
			w.res.ContentLength = n
		}
	}
	if w.req.Method == http.MethodHead || code == http.StatusNoContent || code == http.StatusNotModified {
		w.res.Body, w.noBody = http.NoBody, true
		w.pw.Close()
	}
	w.once.Do(func() { close(w.ready) })
}

func (w *pipeWriter) Write(b []byte) (int, error) {
	if !w.sent {
		if w.header.Get("Content-Type") == "" && w.header.Get("Content-Encoding") == "" {
			// As net/http's server does, from what it has (the first write).
			w.header.Set("Content-Type", http.DetectContentType(b))
		}
		w.WriteHeader(http.StatusOK)
	}
	if w.noBody {
		return len(b), nil
	}
	return w.pw.Write(b)
}

// Flush sends the header if it has not gone out; the bytes written are
// already in headgate's hands (the pipe holds none).
func (w *pipeWriter) Flush() {
	if !w.sent {
		w.WriteHeader(http.StatusOK)
	}
}

// serve runs next. A panic before the header is a 502 (RoundTrip's
// error); after it, the body ends with an error and the client's response
// is aborted, as when an upstream's connection breaks.
func (w *pipeWriter) serve(next http.Handler, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			err := fmt.Errorf("%w: %v", errNextPanic, v)
			if !w.sent {
				w.err = err
				w.once.Do(func() { close(w.ready) })
			}
			w.pw.CloseWithError(err)
			return
		}
		if !w.sent {
			w.WriteHeader(http.StatusOK)
		}
		w.pw.Close()
	}()
	next.ServeHTTP(w, r)
}

// pipeBody is the response body headgate reads: closing it before the end
// makes next's pending and later writes fail, so next stops.
type pipeBody struct{ pr *io.PipeReader }

func (b *pipeBody) Read(p []byte) (int, error) { return b.pr.Read(p) }
func (b *pipeBody) Close() error {
	b.pr.CloseWithError(errBodyClosed)
	return nil
}

var errBodyClosed = errors.New("headgate closed the response body")
