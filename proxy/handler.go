package proxy

import (
	"context"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/headgate/headgate/bots"
	"github.com/headgate/headgate/internal/codec"
	"github.com/headgate/headgate/rewrite"
	"github.com/headgate/headgate/rules"
)

// reqState is what one request carries from ServeHTTP through the
// ReverseProxy hooks and back.
type reqState struct {
	st       *state
	m        *rules.Match
	ae       acceptEncoding
	w        *responseWriter
	outcome  Outcome
	kind     Kind // the decision on the request (Record.Kind)
	skip     Skip // why a forwarded response was not rewritten (Record.Skip)
	upstream int  // the upstream's status; 0 when none answered

	etagMapped bool // If-None-Match held a current headgate tag
	// upIdentity: the upstream is asked for the answer without a content
	// coding, a page headgate decodes anyway (asksIdentity,
	// Record.UpstreamIdentity)
	upIdentity bool
	// upAsset: the path's asset extension that kept the client's codings
	// on a request whose Accept asks for a page (assetExt,
	// Record.UpstreamAsset); "" when none did
	upAsset string
	// upKeep: why the client's codings were kept (asksIdentity's Keep*
	// reasons, Record.UpstreamKeep); "" when identity was asked for
	upKeep string
	cancel context.CancelCauseFunc
	clock  clock         // upstream_timeout's clock, from roundTrip on (timer.go)
	body   *upstreamBody // the upstream body, once there is one

	// The request's response writer and bodies, kept here so that a
	// request allocates them with its state, not one by one.
	wv     responseWriter
	bodyv  upstreamBody
	rbodyv rewrittenBody
	// plainH1: the client's connection is plain HTTP/1.x, whose writer
	// splices (direct.go).
	plainH1 bool
	// upWhole: the upstream answered a Range with a part of a page, and
	// was asked again for the whole (Record.UpstreamWhole)
	upWhole bool
	rrv     rewrite.Reader

	obs      *observeHook    // the request's observer (Observe) and its Record; nil for most
	result   *rewrite.Result // for obs: the rewrite's result
	redirect string          // the source of a redirect headgate answered (§11)

	// [markdown] (markdown.go): the client wants the page's Markdown; the
	// page path of the suffix path form ("" for the page's own path); the
	// conversion's record.
	mdWant     bool
	mdHead     bool // the client's request is a HEAD (its upstream one a GET)
	mdHeadRead bool // the page's head was read: a later failure is the Markdown's, not the page's
	mdPage     string
	mdRec      *MarkdownRecord

	bot     bots.Identity // who is asking, with [bots] on (bots.go)
	botRule string        // the access rule that decided (bots.Reason); "" when none
	botDeny bool          // it denies
	// botRobots: the served robots.txt disallows the path for the crawler
	botRobots bool

	// [watch] (watch.go): the rewriter read the upstream head (rrv's
	// Result().Upstream is its facts); the upstream's X-Robots-Tag values
	// as it sent them, before headgate's headers replaced them.
	rewriterRan bool
	upRobots    []string
}

type reqKey struct{}

func reqStateOf(ctx context.Context) *reqState {
	rs, _ := ctx.Value(reqKey{}).(*reqState)
	return rs
}

// reqCtx is the upstream request's context: the request's cancelable one,
// which also answers reqStateOf. It carries the state without a
// context.WithValue, one lookup nearer to the hooks that ask for it. It is
// not in reqState, which goes back to reqStates when the request ends: a
// transport or a library's next handler may still ask a context it was
// given whether it is done. Contexts derived from it stay on the
// standard library's fast path: Done and Value(&cancelCtxKey) are the
// embedded context's own.
type reqCtx struct {
	context.Context
	rs *reqState
}

func (c *reqCtx) Value(key any) any {
	if _, ok := key.(reqKey); ok {
		return c.rs
	}
	return c.Context.Value(key)
}

// ServeHTTP handles one request on the public port.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	st := p.state.Load()
	rs := reqStates.Get().(*reqState)
	rs.st, rs.obs = st, newObserveHook(r.Context(), st.cfg)
	rs.wv.w = w
	rs.w = &rs.wv
	rs.plainH1 = r.TLS == nil && r.ProtoMajor == 1
	rs.clock.rs = rs
	if rs.obs != nil {
		rs.w.onHeader = rs.observed
	}
	defer p.finish(rs, r, start)
	if st.staging {
		// Every response, also headgate's own, says noindex (§6). Not
		// for proxied ones: ReverseProxy adds the upstream's headers to
		// these, so modifyResponse and proxyError set it there.
		hset(w.Header(), "X-Robots-Tag", stagingRobots)
	}

	target := requestTarget(r)
	path, _, _ := strings.Cut(target, "?")
	if rules.CheckPath(path) != nil {
		rs.outcome, rs.kind = BadRequest, KindBadRequest
		errorPage(rs.w, http.StatusBadRequest, "This address is not valid.")
		return
	}
	rs.m = st.cfg.PooledMatch()
	st.cfg.ResolveInto(rs.m, target)
	if rs.m.Deny {
		rs.outcome, rs.kind = Denied, KindDeny
		errorPage(rs.w, http.StatusNotFound, "There is nothing at this address.")
		return
	}
	if st.bots != nil {
		rs.identify(r)
	}
	if st.sitemap != nil && st.sitemap.Handles(r.URL.Path) { // decoded: /sitemap%2Exml is /sitemap.xml
		rs.outcome, rs.kind = Sitemap, KindHeadgate
		if r.URL.Path == "/robots.txt" {
			rs.outcome = Robots
		} else if path == "/llms.txt" {
			rs.outcome = LLMSTxt
		}
		st.sitemap.ServeHTTP(rs.w, r)
		return
	}
	if st.bots != nil && p.botAccess(rs, rs.w, r, target) {
		return
	}
	if st.cfg.Markdown != nil && !st.shadow && mayRewrite(r.Method) && p.markdownRequest(rs, r, path, &target) {
		return
	}
	if p.redirect(rs, rs.w, r, target) {
		return
	}
	if st.staging {
		hdel(w.Header(), "X-Robots-Tag")
	}
	rs.kind = KindNoRules
	if rs.m.Any() {
		rs.kind = KindRules
	}
	rs.upIdentity = rs.asksIdentity(r) // accept.go
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	rs.cancel = cancel
	if rc := (&reqCtx{Context: ctx, rs: rs}); forwardable(r) && !p.viaReverseProxy {
		p.forward(rs, r, rc) // forward.go: nearly every request
	} else {
		p.rp.ServeHTTP(rs.w, r.WithContext(rc))
	}
	if err := rs.w.close(); err != nil {
		p.log.Debug("finishing the response", "path", path, "err", err)
	}
}

const stagingRobots = "noindex, nofollow"

// requestTarget is the path and query as they arrived, percent-encoded.
func requestTarget(r *http.Request) string {
	if strings.HasPrefix(r.RequestURI, "/") {
		return r.RequestURI
	}
	t := r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		t += "?" + r.URL.RawQuery
	}
	return t
}

// finish counts and logs the request; it also sees a response aborted mid-
// body (ReverseProxy panics with http.ErrAbortHandler) and lets the panic go
// on, so that the server cuts the connection.
func (p *Proxy) finish(rs *reqState, r *http.Request, start time.Time) {
	v := recover()
	if v != nil {
		switch {
		case rs.body != nil && rs.body.err != nil && r.Context().Err() == nil:
			rs.outcome = UpstreamError
			kind := "aborted"
			if errors.Is(rs.body.err, codec.ErrBadEncoding) {
				kind = "corrupt"
			}
			p.m.upstreamErrors.WithLabelValues(kind).Inc()
			p.log.Warn("upstream response cut short: response aborted", "path", r.URL.Path, "kind", kind, "err", rs.body.err)
		case r.Context().Err() != nil:
			p.log.Debug("client went away mid-response", "path", r.URL.Path)
		case v == http.ErrAbortHandler:
			p.log.Debug("response aborted", "path", r.URL.Path)
		default:
			rs.outcome = Panic
			p.log.Error("panic serving a request", "path", r.URL.Path, "panic", fmt.Sprint(v))
		}
	}
	if rs.outcome == "" {
		rs.outcome = Passthrough
	}
	rs.observed()            // when no header went out (an upgrade, a panic before one)
	p.clocks.stop(&rs.clock) // stopped already, unless a phase panicked
	inc(&p.m.outcomes, p.m.requests, string(rs.outcome))
	p.m.experimentPage(rs.m, rs.outcome)
	if rs.st.cfg.Server.AccessLog {
		ba := botAttrs(rs)
		p.log.LogAttrs(r.Context(), slog.LevelInfo, "request",
			slog.String("client", rs.st.client(r)),
			slog.String("method", r.Method),
			slog.String("path", r.URL.EscapedPath()),
			slog.Int("status", rs.w.status),
			slog.Int64("bytes", rs.w.bytes),
			slog.Duration("duration", time.Since(start)),
			slog.String("outcome", string(rs.outcome)),
			slog.Int("upstream_status", rs.upstream),
			slog.String("user_agent", r.UserAgent()),
			slog.Any("rules", rulePatterns(rs.m)),
			redirectAttr(rs),
			ba[0], ba[1], ba[2], ba[3],
		)
	}
	p.observeInsight(rs, r, start) // insight.go
	rs.observeWatch(r)             // watch.go
	if v != nil {
		if rs.w.lat != nil {
			rs.w.lat.stop()
		}
		if rs.w.enc != nil {
			releaseEncoder(rs.w.enc)
			rs.w.enc = nil
		}
		panic(v)
	}
	// The Match goes back for the next request, unless an observer (the
	// inspector) holds it in its Record. A panic path keeps it: nothing is
	// sure of who still reads it there.
	if rs.m != nil && rs.obs == nil {
		rs.m.Release()
		rs.m = nil
	}
	p.release(rs, r)
}

// reqStates recycles request states: at 1.8 KB the largest object a
// proxied request allocates, about a fifth of the bytes, and so of the
// collections, a request costs (docs/performance.md, "What a request holds
// and for how long").
var reqStates = sync.Pool{New: func() any { return new(reqState) }}

// release gives rs back to reqStates when nothing can read it once
// ServeHTTP has returned; otherwise it is left to the collector, as every
// state was before. What could: an observer's Record (the inspector keeps
// it, with the rewriter's result); a request with a body, which a
// transport may still be sending. Nothing else the state holds goes into a
// header or anywhere that outlives the request: header values have strings
// and slices of their own (the Markdown alternate's Link, agentHeaders;
// the identity header's, bots.go), since net/http may write the client's
// header after the handler returned and a transport may still read the
// upstream request's; the upstream request's context is an allocation of
// its own (reqCtx). The flush timer is stopped for good first: its
// function writes through rs.w. Only the finished request's own goroutine
// calls this, its clock unlinked (the clocks' sweeper copies the cancel
// function it calls under the list's lock).
func (p *Proxy) release(rs *reqState, r *http.Request) {
	if rs.obs != nil ||
		r.Method != http.MethodGet && r.Method != http.MethodHead || r.ContentLength != 0 {
		return
	}
	if rs.w.lat != nil {
		rs.w.lat.stop()
	}
	*rs = reqState{}
	reqStates.Put(rs)
}

// proxyError answers when the upstream could not: 504 on a timeout, 502
// otherwise, with a short page and a log line.
func (p *Proxy) proxyError(w http.ResponseWriter, r *http.Request, err error) {
	rs := reqStateOf(r.Context())
	if rs != nil && rs.body != nil {
		rs.body.Close()
	}
	switch cause := context.Cause(r.Context()); {
	case errors.Is(cause, context.Canceled):
		// The client went away; nobody reads this answer.
		if rs != nil {
			rs.outcome = Canceled
		}
		w.WriteHeader(http.StatusBadGateway)
		return
	case cause != nil:
		err = cause
	}
	status, kind, msg := http.StatusBadGateway, "connect", "The site behind this address did not answer."
	var ne net.Error
	switch {
	case errors.Is(err, errHeaderTimeout), errors.Is(err, errHeadTimeout), errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		status, kind, msg = http.StatusGatewayTimeout, "timeout", "The site behind this address did not answer in time."
	case errors.Is(err, codec.ErrBadEncoding):
		kind, msg = "corrupt", "The site behind this address sent a response that could not be read."
	case rs != nil && rs.body != nil:
		kind, msg = "aborted", "The site behind this address sent a response that could not be read."
	}
	p.m.upstreamErrors.WithLabelValues(kind).Inc()
	if rs != nil {
		rs.outcome = UpstreamError
		if rs.st.staging {
			hset(w.Header(), "X-Robots-Tag", stagingRobots)
		}
	}
	p.log.Warn("upstream error", "path", r.URL.Path, "status", status, "kind", kind, "err", err)
	errorPage(w, status, msg)
}

// errorPage writes a short HTML page of headgate's own.
func errorPage(w http.ResponseWriter, status int, msg string) {
	h := w.Header()
	for _, k := range []string{"Content-Encoding", "Content-Length", "ETag", "Last-Modified", "Accept-Ranges", "Link"} {
		h.Del(k)
	}
	hset(h, "Content-Type", "text/html; charset=utf-8")
	hset(h, "Cache-Control", "no-store")
	hset(h, "X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	text := http.StatusText(status)
	fmt.Fprintf(w, "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>%d %s</title></head>\n<body><h1>%d %s</h1><p>%s</p></body></html>\n",
		status, text, status, text, html.EscapeString(msg))
}
