package proxy

import (
	"net/http"
	"strings"
	"time"

	"github.com/headgate/headgate/bots"
	"github.com/headgate/headgate/insight"
	"github.com/headgate/headgate/rules"
)

// Crawl insight (SPEC §20.1). The Proxy owns one *insight.Tracker for its
// whole life: its families are registered once, in New, and its 24-hour
// window survives reloads. Its crawler list is the directory merged with
// the config's [[bots.crawler]] and categories, set again at every Swap
// (swapInsight): a crawler a reload adds is counted under its own name
// from then on, one it drops as "other". The bot label stays bounded:
// the tracker keeps at most insight.MaxCrawlers names over its life.
//
// Per request, in finish, once the access log line is written: with
// [bots] on, every request is observed (the identity, the path, the status
// and bytes sent, the robots verdict the record carries, the Referer, the
// split-test group); with [bots] off, only a request with a Referer, for
// headgate_referrals_total — a referral needs no identity, only the
// Referer's host.

// The tracker starts with no crawlers (only Other): each tracked crawler
// holds its top-path windows, about 2.5 MiB for the directory's 40, live
// for the process's life, which raised the collector's heap goal and peak
// RSS (issue 40). Swap gives it the list once [bots] is on; with [bots]
// off nothing is identified, so no crawler is ever observed.
func newTracker(p *Proxy) (*insight.Tracker, error) {
	return insight.New(insight.Options{Registerer: p.reg, Crawlers: []bots.Crawler{}, Logger: p.log})
}

// swapInsight points the tracker at cfg's crawler list (from Swap, under
// swapMu, once the config is accepted). A config with [bots] off leaves
// the list as it was: nothing is identified to be counted against it, and
// windows a reload turned off keep their counts for /crawlers.
func (p *Proxy) swapInsight(cfg *rules.Config) {
	if !cfg.Bots.Enabled {
		return
	}
	list := bots.Merge(bots.Directory(), cfg.Bots.Crawler, cfg.Bots.Categories)
	if left := p.insight.SetCrawlers(list); len(left) > 0 {
		p.log.Warn("insight: more crawler names than it tracks; these count as other", "max", insight.MaxCrawlers, "names", left)
	}
}

// observeInsight tells the tracker of one finished request (from finish).
func (p *Proxy) observeInsight(rs *reqState, r *http.Request, start time.Time) {
	ref := r.Header["Referer"]
	if rs.st.bots == nil && len(ref) == 0 {
		return
	}
	ev := insight.Request{
		Identity: rs.bot,
		Path:     requestPath(r),
		Status:   rs.w.status,
		Bytes:    rs.w.bytes,
		Time:     start,
	}
	if len(ref) > 0 {
		ev.Referer = ref[0]
	}
	if rs.st.bots != nil && rs.bot.Known() {
		ev.RobotsViolation = rs.botRobots
		if rs.m != nil {
			_, ev.Group = rs.m.Experiment()
		}
	}
	p.insight.Observe(ev)
}

// requestPath is the path insight counts: the request's as it arrived,
// percent-encoded, never decoded (requestTarget's, without the query), as
// [watch] keys a page (pagePath, watch.go).
func requestPath(r *http.Request) string {
	path, _, _ := strings.Cut(requestTarget(r), "?")
	return path
}
