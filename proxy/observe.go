package proxy

import (
	"context"
	"net/http"
	"slices"

	"github.com/headgate/headgate/rewrite"
	"github.com/headgate/headgate/rules"
)

// Observer receives the Record of one request, once, just before its
// response headers go out (or, when none go out, as the request ends).
type Observer func(*Record)

type observeKey struct{}

// Observe returns a context whose requests report to fn. It is the one
// place the proxy tells what it did: the audit's in-process mode (wired by
// cmd) and the inspector receive each response's Record from the request
// pipeline they drive, rather than deciding anything themselves.
func Observe(ctx context.Context, fn func(*Record)) context.Context {
	return context.WithValue(ctx, observeKey{}, Observer(fn))
}

// observeHook gathers the Record of an observed request on its way through
// the pipeline. Every call comes from the request's own goroutine.
type observeHook struct {
	fn    Observer
	limit int // bytes of Record.Upstream kept
	rec   Record
	told  bool
}

// newObserveHook is the request's hook when its context has an observer;
// nil (the hooks are no-ops) for every other request.
func newObserveHook(ctx context.Context, cfg *rules.Config) *observeHook {
	fn, _ := ctx.Value(observeKey{}).(Observer)
	if fn == nil {
		return nil
	}
	return &observeHook{fn: fn, limit: observedBytes(cfg)}
}

// observedBytes bounds Record.Upstream. The rewriter reads at most
// max_head_bytes plus 64 KiB and one read.
func observedBytes(cfg *rules.Config) int {
	max := cfg.Server.MaxHeadBytes
	if max <= 0 {
		max = rules.DefaultMaxHeadBytes
	}
	return max + 80<<10
}

// hookOf is the observe hook of the request whose (outbound) context is
// ctx; nil when nobody observes it.
func hookOf(ctx context.Context) *observeHook {
	if rs := reqStateOf(ctx); rs != nil {
		return rs.obs
	}
	return nil
}

// response records the upstream's status and headers, before the proxy
// changes them.
func (hk *observeHook) response(res *http.Response) {
	hk.rec.UpstreamStatus = res.StatusCode
	hk.rec.UpstreamHeader = res.Header.Clone()
}

// rewriteObserver is the rewrite.Options.Observe of a request: it keeps a
// copy of the bytes the rewriter read for hk (the slice is the rewriter's
// only during the call); nil when nobody observes the request. The result
// comes from rs.result, which is set after Prepare in every case (also when
// the rewriter recovered from a panic and did not call this).
func (rs *reqState) rewriteObserver(hk *observeHook) func([]byte, *rewrite.Result) {
	if hk == nil {
		return nil
	}
	return func(b []byte, _ *rewrite.Result) {
		if len(b) > hk.limit {
			b, hk.rec.UpstreamCut = b[:hk.limit], true
		}
		hk.rec.Upstream = append([]byte(nil), b...)
	}
}

// observed tells the request's observer, once.
func (rs *reqState) observed() {
	hk := rs.obs
	if hk == nil || hk.told {
		return
	}
	hk.told = true
	rec := hk.rec
	rec.Outcome, rec.Kind, rec.Skip = rs.outcome, rs.kind, rs.skip
	rec.UpstreamIdentity, rec.UpstreamAsset, rec.UpstreamKeep, rec.UpstreamWhole = rs.upIdentity, rs.upAsset, rs.upKeep, rs.upWhole
	rec.Match = rs.m
	rec.Bot, rec.BotRule, rec.BotDenied, rec.BotRobotsDisallowed = rs.bot, rs.botRule, rs.botDeny, rs.botRobots
	if rs.m != nil {
		rec.Experiment, rec.Group = rs.m.Experiment()
	}
	if rs.mdRec != nil {
		c := *rs.mdRec
		rec.Markdown = &c
	} else {
		rec.Markdown = markdownVersion(rs)
	}
	if rec.Outcome == "" {
		rec.Outcome = Passthrough
	}
	if rs.result != nil {
		res := *rs.result
		res.Changes = slices.Clone(res.Changes)
		rec.Result = &res
	}
	hk.fn(&rec)
}
