package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptrace"
	"net/http/httputil"
	"net/textproto"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/net/http/httpguts"
)

// forwardable reports a request forward sends: a GET or HEAD without a
// body that asks for no upgrade, nearly every request headgate proxies.
// Every other one goes through httputil.ReverseProxy.
// (A body of length 0 is none: ReverseProxy drops it too, and an HTTP/2
// request always has a Body.)
func forwardable(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && r.ContentLength == 0 &&
		!httpguts.HeaderValuesContainsToken(r.Header["Connection"], "Upgrade")
}

// forwardSent counts the requests forward sent when the tests ask (their
// init sets it), as directSent.
var forwardSent *atomic.Int64

// forward proxies a forwardable request as httputil.ReverseProxy's
// ServeHTTP does, with the same hooks in the same order (rewriteRequest,
// roundTrip, modifyResponse, proxyError), and does to the request, the
// response and the body what ReverseProxy does to them: hop-by-hop fields
// and the client's Forwarded and X-Forwarded-* dropped, a query with a
// semicolon or a bad escape re-encoded, an empty User-Agent when the
// client sent none, a 1xx relayed until the response comes, the body
// copied through the same pooled buffers and flushed after each write for
// an event stream or a body of unknown length, trailers carried, and a
// copy that fails cut with http.ErrAbortHandler. What it leaves out is
// what only the requests it does not take need (a request body, an
// upgrade, a CloseNotifier) and what costs every request: the request's
// second copy for the trace's context, header deletions that canonicalize
// constant names, a media type parser for the flush decision (about
// 3 µs and 1 KB a request, docs/performance.md). TestForwardLikeReverseProxy
// holds the two to the same exchange.
func (p *Proxy) forward(rs *reqState, r *http.Request, rc *reqCtx) {
	if forwardSent != nil {
		forwardSent.Add(1)
	}
	w := rs.w
	f := &early{w: w}
	f.trace.Got1xxResponse = f.relay
	out := r.Clone(httptrace.WithClientTrace(rc, &f.trace))
	out.Body = nil
	out.Close = false
	h := out.Header
	if h == nil {
		h = make(http.Header)
		out.Header = h
	}
	dropHopByHop(h)
	if httpguts.HeaderValuesContainsToken(r.Header["Te"], "trailers") {
		h["Te"] = []string{"trailers"}
	}
	delete(h, "Forwarded")
	delete(h, "X-Forwarded-For")
	delete(h, "X-Forwarded-Host")
	delete(h, "X-Forwarded-Proto")
	out.URL.RawQuery = cleanQuery(out.URL.RawQuery)
	pr := &httputil.ProxyRequest{In: r, Out: out}
	p.rewriteRequest(pr)
	out = pr.Out
	if _, ok := out.Header["User-Agent"]; !ok {
		out.Header["User-Agent"] = []string{""} // none, not Go's
	}

	res, err := p.roundTrip(out)
	f.mu.Lock()
	f.done = true
	f.mu.Unlock()
	if err != nil {
		p.proxyError(w, out, err)
		return
	}
	if res.StatusCode == http.StatusSwitchingProtocols {
		// Not asked for (an upgrade goes through ReverseProxy), so
		// refused as ReverseProxy refuses a protocol not requested.
		if err := p.modifyResponse(res); err != nil {
			res.Body.Close()
			p.proxyError(w, out, err)
			return
		}
		res.Body.Close()
		p.proxyError(w, out, fmt.Errorf("backend tried to switch protocol %q when %q was requested", upgradeTo(res.Header), ""))
		return
	}
	dropHopByHop(res.Header)
	if err := p.modifyResponse(res); err != nil {
		res.Body.Close()
		p.proxyError(w, out, err)
		return
	}
	dst := w.Header()
	addFields(dst, res.Header, "")
	announced := len(res.Trailer)
	if announced > 0 {
		keys := make([]string, 0, announced)
		for k := range res.Trailer {
			keys = append(keys, k)
		}
		dst.Add("Trailer", strings.Join(keys, ", "))
	}
	w.WriteHeader(res.StatusCode)

	if err := p.copyBody(w, res, r); err != nil {
		defer res.Body.Close()
		if r.Context().Value(http.ServerContextKey) == nil {
			// Not under a server (a test calling ServeHTTP): no panic
			// to cut a connection with, as ReverseProxy.
			p.log.Debug("suppressing panic for copyResponse error in test", "err", err)
			return
		}
		panic(http.ErrAbortHandler)
	}
	res.Body.Close() // now, so that res.Trailer is filled
	if len(res.Trailer) > 0 {
		// Chunked, whatever the length: net/http would otherwise count a
		// short body and send a Content-Length, and no trailer.
		w.FlushError()
	}
	if len(res.Trailer) == announced {
		addFields(w.Header(), res.Trailer, "")
	} else {
		addFields(w.Header(), res.Trailer, http.TrailerPrefix)
	}
}

// addFields adds every value of src to dst, each name after prefix (as
// ReverseProxy's copyHeader: Header.Add, so canonical).
func addFields(dst, src http.Header, prefix string) {
	for k, vs := range src {
		for _, v := range vs {
			dst.Add(prefix+k, v)
		}
	}
}

// early relays the 1xx responses (103 Early Hints) that come before a
// forwarded request's response, until it comes: ReverseProxy's
// Got1xxResponse, with the trace it is in.
type early struct {
	trace httptrace.ClientTrace
	w     *responseWriter
	mu    sync.Mutex
	done  bool
}

func (f *early) relay(code int, header textproto.MIMEHeader) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return nil
	}
	h := f.w.Header()
	addFields(h, http.Header(header), "")
	f.w.WriteHeader(code)
	clear(h) // WriteHeader keeps a 1xx's fields
	return nil
}

// copyBody copies res's body to w through the proxy's copy buffers, as
// ReverseProxy's copyResponse with its FlushInterval of 0: an event stream
// or a body of unknown length is flushed at once and after every write,
// any other is written as it is read. A read error is logged and returned
// (the end of a body is none); so is a write error.
func (p *Proxy) copyBody(w *responseWriter, res *http.Response, r *http.Request) error {
	flush := res.ContentLength == -1
	if !flush && eventStream(res.Header) {
		// As ReverseProxy decides it: text/event-stream as the media type
		// parser reads it, parameters or not.
		t, _, _ := mime.ParseMediaType(hget(res.Header, "Content-Type"))
		flush = t == "text/event-stream"
	}
	if flush {
		w.FlushError() // the header, before the body's first bytes come
	}
	buf := p.bufPool.Get()
	defer p.bufPool.Put(buf)
	for {
		nr, rerr := res.Body.Read(buf)
		if rerr != nil && rerr != io.EOF && !errors.Is(rerr, context.Canceled) {
			p.log.Debug("upstream body read error during copy", "path", r.URL.Path, "err", rerr)
		}
		if nr > 0 {
			nw, werr := w.Write(buf[:nr])
			if werr != nil {
				return werr
			}
			if nw != nr {
				return io.ErrShortWrite
			}
			if flush {
				w.FlushError()
			}
		}
		if rerr != nil {
			if rerr == io.EOF {
				return nil
			}
			return rerr
		}
	}
}

// hopByHop are the fields that concern one connection only (RFC 9110
// §7.6.1, and those RFC 2616 named), canonical, as ReverseProxy drops them.
var hopByHop = [...]string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// dropHopByHop removes from h the fields its Connection names and the
// hop-by-hop fields.
func dropHopByHop(h http.Header) {
	for _, v := range h["Connection"] {
		for name := range strings.SplitSeq(v, ",") {
			if name = textproto.TrimString(name); name != "" {
				h.Del(name)
			}
		}
	}
	for _, k := range hopByHop {
		delete(h, k)
	}
}

// upgradeTo is the protocol a header's Upgrade names when its Connection
// asks for one.
func upgradeTo(h http.Header) string {
	if !httpguts.HeaderValuesContainsToken(h["Connection"], "Upgrade") {
		return ""
	}
	return h.Get("Upgrade")
}

// cleanQuery is a query with a semicolon or a malformed percent escape
// re-encoded from what url.ParseQuery makes of it (which drops those
// parameters), as ReverseProxy sends it: a query an upstream could split
// differently from Go (golang.org/issue/25192). So is one of more than
// url.ParseQuery's 10,000 parameters (it then makes nothing of it, and
// nothing is sent), and every query when GODEBUG sets urlmaxqueryparams.
// Any other is kept as it is.
func cleanQuery(s string) string {
	if maxQueryParamsSet || strings.Count(s, "&") >= maxQueryParams {
		v, _ := url.ParseQuery(s)
		return v.Encode()
	}
	for i := 0; i < len(s); {
		switch s[i] {
		case ';':
			v, _ := url.ParseQuery(s)
			return v.Encode()
		case '%':
			if i+2 >= len(s) || !isHexDigit(s[i+1]) || !isHexDigit(s[i+2]) {
				v, _ := url.ParseQuery(s)
				return v.Encode()
			}
			i += 3
		default:
			i++
		}
	}
	return s
}

// maxQueryParams is net/url's and httputil's limit on a query's
// parameters (defaultMaxParams in both).
const maxQueryParams = 10000

// maxQueryParamsSet: GODEBUG sets urlmaxqueryparams, which makes
// ReverseProxy re-encode every query.
var maxQueryParamsSet = godebugSet(os.Getenv("GODEBUG"), "urlmaxqueryparams")

// godebugSet reports whether a GODEBUG value sets key to a non-empty value
// (the last setting of it winning, as the runtime reads it).
func godebugSet(env, key string) bool {
	set := false
	for kv := range strings.SplitSeq(env, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			set = v != ""
		}
	}
	return set
}
