package proxy

import (
	"context"

	"github.com/headgate/headgate/rewrite"
)

// Observer receives what the proxy did with one request, once, just before
// its response headers go out: the outcome (the label of
// headgate_requests_total), the decoded upstream bytes the rewriter read
// (the head and what came with it; nil when no HTML was read; a copy, the
// observer's to keep) and the rewrite's result (nil when none ran).
type Observer func(outcome string, upstream []byte, res *rewrite.Result)

type observeKey struct{}

// Observe returns a context whose requests report to fn. It is how the
// audit's in-process mode (wired by cmd) receives each response's change
// record from the one request pipeline it drives, rather than deciding
// anything itself.
func Observe(ctx context.Context, fn func(outcome string, upstream []byte, res *rewrite.Result)) context.Context {
	return context.WithValue(ctx, observeKey{}, Observer(fn))
}

func observerOf(ctx context.Context) Observer {
	fn, _ := ctx.Value(observeKey{}).(Observer)
	return fn
}

// maxObservedBytes bounds the upstream bytes copied for an observer.
const maxObservedBytes = 256 << 10

// rewriteObserver is the rewrite.Options.Observe of a request: the
// inspector's hook and the request's observer, each when there is one.
func (rs *reqState) rewriteObserver(hk *inspectHook) func([]byte, *rewrite.Result) {
	if hk == nil && rs.obs == nil {
		return nil
	}
	return func(b []byte, res *rewrite.Result) {
		if hk != nil {
			hk.observe(b, res)
		}
		if rs.obs != nil {
			rs.upHead = append([]byte(nil), b[:min(len(b), maxObservedBytes)]...)
		}
	}
}

// observed tells the request's observer, once.
func (rs *reqState) observed() {
	if rs.obs == nil || rs.reported {
		return
	}
	rs.reported = true
	outcome := rs.outcome
	if outcome == "" {
		outcome = outPassthrough
	}
	rs.obs(outcome, rs.upHead, rs.result)
}
