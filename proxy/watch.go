package proxy

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/headgate/headgate/rules"
	"github.com/headgate/headgate/rules/watchconf"
	"github.com/headgate/headgate/watch"
)

// Change alerts (SPEC §20.2). The Proxy owns one *watch.Watcher, so that
// what it remembers of each page survives reloads. A reload that leaves
// [watch] as it was, or switches only `enabled`, keeps it; one that changes
// any other key (match, signals, confirm, max_pages, the webhook) builds a
// new Watcher from empty memory — the keys decide its shards, its mask and
// its sender, and a page remembered under other signals would raise false
// changes — and closes the old one, whose webhook sends what it holds.
// The watcher's metric families are registered through a swappable
// collector (watchMetrics), so that a rebuild does not collide with the
// families of the one before on the registry.
//
// Per request, in finish — after the response went out, never on the path
// to the first byte — a GET forwarded to the upstream is observed: with
// the head facts when the rewriter read the head (rewriterRan, also on a
// plan-cache hit), with the status alone otherwise (watch compares it only
// for a page it remembers). When the upstream could not answer (refused,
// timed out, a head that could not be read), the status is headgate's own
// 502 or 504 that went out in its place (watchStatus, from the record's
// outcome upstream_error): to a crawler the page is down either way. The
// upstream's X-Robots-Tag values are taken in decideResponse before
// headgate's headers replace them.

// watchState is the Proxy's watcher and the config it was built from
// (Enabled cleared).
type watchState struct {
	w   *watch.Watcher
	cfg watchconf.Config
}

// swapWatch builds or keeps the watcher for cfg and sets st.watch when
// [watch] is on. Called under swapMu.
func (p *Proxy) swapWatch(st *state, cfg *rules.Config) error {
	if !cfg.Watch.Enabled {
		return nil // the watcher, if any, is kept for a later reload
	}
	part := cfg.Watch
	part.Enabled = false
	if ws := p.watch; ws != nil && reflect.DeepEqual(ws.cfg, part) {
		st.watch = ws.w
		return nil
	}
	var pats []*rules.Pattern
	for _, s := range part.Match {
		pat, err := rules.ParsePattern(s)
		if err != nil {
			return fmt.Errorf("[watch] match %q: %w", s, err)
		}
		pats = append(pats, pat)
	}
	coll := &collectorList{}
	w, err := watch.New(watch.Options{
		Config:      part,
		Match:       matchAny(part.Match, pats),
		BaseURL:     cfg.Site.BaseURL,
		Registerer:  coll,
		Logger:      p.log,
		Client:      p.opts.WebhookClient,
		WebhookTick: p.opts.WebhookTick,
	})
	if err != nil {
		return fmt.Errorf("[watch]: %w", err)
	}
	p.watchMetrics.set(coll.cs)
	if old := p.watch; old != nil {
		go closeWatcher(old.w, p) // its last batch, off the reload's path
	}
	p.watch = &watchState{w: w, cfg: part}
	st.watch = w
	return nil
}

// matchAny is the watched-path test of [watch] match; nil (every path)
// for the default ["/*"] spares a pattern per response.
func matchAny(src []string, pats []*rules.Pattern) func(string) bool {
	if len(src) == 1 && src[0] == "/*" {
		return nil
	}
	return func(path string) bool {
		for _, p := range pats {
			if _, ok := p.Bind(path); ok {
				return true
			}
		}
		return false
	}
}

// watchCloseWait bounds the webhook's last flush at shutdown and rebuild.
const watchCloseWait = 5 * time.Second

func closeWatcher(w *watch.Watcher, p *Proxy) {
	ctx, cancel := context.WithTimeout(context.Background(), watchCloseWait)
	defer cancel()
	if err := w.Close(ctx); err != nil {
		p.log.Warn("watch: the webhook's last events were not all sent", "err", err)
	}
}

// closeWatch flushes the watcher's webhook at shutdown, until ctx ends.
func (p *Proxy) closeWatch(ctx context.Context) error {
	p.swapMu.Lock()
	ws := p.watch
	p.swapMu.Unlock()
	if ws == nil {
		return nil
	}
	return ws.w.Close(ctx)
}

// observeWatch tells the watcher of one finished request (from finish).
func (rs *reqState) observeWatch(r *http.Request) {
	w := rs.st.watch
	if w == nil || r.Method != http.MethodGet {
		return
	}
	status := rs.watchStatus()
	if status == 0 {
		return
	}
	resp := watch.Response{Status: status, RobotsHeader: rs.upRobots}
	if rs.rewriterRan {
		resp.Head = &rs.rrv.Result().Upstream
	}
	w.Observe(rs.pagePath(r), r.URL.RawQuery, resp)
}

// pagePath is the path [watch] keys a page by: as it arrived,
// percent-encoded, never decoded (the Match's Path), like insight's
// (requestPath, insight.go), so that [watch] match,
// an event's URL, the inspector's target (EventsFor) and /crawlers' top
// paths spell one page alike: /caf%C3%A9, not /café in one place and the
// other elsewhere, and /a%2Fb apart from /a/b. Markdown's suffix form
// (/page.md) is the page it names (/page): the upstream answered that.
func (rs *reqState) pagePath(r *http.Request) string {
	if rs.m != nil {
		return rs.m.Path
	}
	return requestPath(r)
}

// watchStatus is the page's status as the request's record says it went
// out: the upstream's; on the outcome upstream_error, the status headgate
// answered in its place (proxyError's 502 or 504: the upstream refused,
// timed out or sent a head that could not be read), so that a page whose
// upstream goes down is a status change like one that answers 500 itself.
// A response cut short after its header went out keeps the status it was
// sent with, and so does a Markdown answer that failed after the page's
// head was read (the HTML would have streamed). 0 when no page was answered: the client went away first
// (canceled), or headgate answered without asking the upstream.
func (rs *reqState) watchStatus() int {
	if rs.outcome == UpstreamError && rs.w.status >= 500 && !rs.mdHeadRead {
		return rs.w.status
	}
	return rs.upstream
}

// changesHandler serves /changes from the current watcher; 404 while
// [watch] has never been on.
func (p *Proxy) changesHandler(w http.ResponseWriter, r *http.Request) {
	if wt := p.watcher(); wt != nil {
		wt.Handler().ServeHTTP(w, r)
		return
	}
	http.Error(w, "change alerts are off: set [watch] enabled = true", http.StatusNotFound)
}

// watcher is the current config's watcher; nil when [watch] is off.
func (p *Proxy) watcher() *watch.Watcher {
	if st := p.state.Load(); st != nil {
		return st.watch
	}
	return nil
}

// collectorList is the Registerer a watcher is built with: it keeps the
// collectors for watchMetrics instead of registering them.
type collectorList struct{ cs []prometheus.Collector }

func (l *collectorList) Register(c prometheus.Collector) error {
	l.cs = append(l.cs, c)
	return nil
}

func (l *collectorList) MustRegister(cs ...prometheus.Collector) { l.cs = append(l.cs, cs...) }

func (l *collectorList) Unregister(c prometheus.Collector) bool { return false }

// watchMetrics is registered once per Proxy and collects the current
// watcher's families. It is an unchecked collector (Describe sends
// nothing): the families change with a rebuild.
type watchMetrics struct {
	mu sync.Mutex
	cs []prometheus.Collector
}

func (m *watchMetrics) set(cs []prometheus.Collector) {
	m.mu.Lock()
	m.cs = cs
	m.mu.Unlock()
}

func (m *watchMetrics) Describe(chan<- *prometheus.Desc) {}

func (m *watchMetrics) Collect(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	cs := m.cs
	m.mu.Unlock()
	for _, c := range cs {
		c.Collect(ch)
	}
}
