package audit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/headgate/headgate/internal/linkheader"
	"github.com/headgate/headgate/internal/robotsmeta"
	"github.com/headgate/headgate/rewrite"
)

const (
	maxRedirectHops = 10     // redirects followed from one link
	maxSitemapParts = 1000   // sitemap files an index may name
	maxSitemapURLs  = 100000 // sitemap URLs kept for the sitemap checks
	maxSitemapBytes = 64 << 20
	maxSkips        = 1000 // distinct skips listed; the rest are counted
)

// page is what the crawl keeps of one fetched URL once its document is
// gone.
type page struct {
	key       string
	status    int
	err       string
	location  *url.URL
	locKey    string // the redirect target's key, when it is the site's
	html      bool
	noindex   bool
	noindexIn string   // "robots meta", "X-Robots-Tag"
	canon     *url.URL // the canonical crawlers read; nil: none
	canonRaw  string   // a canonical that is no http(s) URL
	canonKey  string
	canonSite bool
	toFirst   bool // page N of a series whose canonical is page 1
	title     string
	desc      string
	alts      []pageAlt
	links     []int32
	outcome   string
	changes   []rewrite.Change
	textHash  uint64   // the body text's hash, when hasText
	hasText   bool     // the body has text
	robots    string   // "index, follow" and the like: meta and header together
	ldTypes   []string // JSON-LD @type values
	// In process, for the first maxHeadsKept pages headgate changes.
	upstreamHead, servedHead string
}

type pageAlt struct {
	lang string
	abs  string
	key  string
	site bool
}

// elsewhere reports whether the page names another address as canonical.
func (p *page) elsewhere() bool {
	return p.canon != nil && (!p.canonSite || p.canonKey != p.key)
}

// indexable reports whether the page competes in search results: a 200
// HTML page, not noindex, its own canonical.
func (p *page) indexable() bool {
	return p.status == http.StatusOK && p.html && !p.noindex && !p.elsewhere()
}

// answer says how a page answered, for a message.
func (p *page) answer() string {
	switch {
	case p.status == 0:
		return "does not answer (" + p.err + ")"
	case p.location != nil:
		return fmt.Sprintf("answers %d, a redirect to %s", p.status, norm(p.location))
	}
	return fmt.Sprintf("answers %d", p.status)
}

type job struct {
	id  int32
	key string
}

type result struct {
	id       int32
	page     *page
	links    []string // same-site link keys
	check    []string // canonical and alternate targets, crawled first
	skips    []Skip
	findings []Finding
}

// queue is a FIFO of URL ids.
type queue struct {
	ids  []int32
	head int
}

func (q *queue) push(id int32) { q.ids = append(q.ids, id) }
func (q *queue) len() int      { return len(q.ids) - q.head }
func (q *queue) peek() int32   { return q.ids[q.head] }
func (q *queue) pop() {
	q.head++
	if q.head > 1024 && q.head*2 > len(q.ids) {
		q.ids = append(q.ids[:0], q.ids[q.head:]...)
		q.head = 0
	}
}

// crawler owns the crawl's state; only its run loop touches it, workers
// get jobs and send results over channels.
type crawler struct {
	starts map[string]bool // the crawl's root (the home page): no page need link to it
	o      Options
	site   *site
	f      *fetcher

	ids      map[string]int32
	keys     []string
	state    []tier // where each URL waits (frontier.go)
	hops     []uint8
	pages    []*page // by id; nil until fetched
	prio     queue   // canonical and alternate targets
	normal   queue   // start URLs, sitemap URLs, redirect targets, links from pages that are not noindex
	low      queue   // links from noindex pages, or of a shape that gave only noindex pages
	lowLive  int     // entries of low still waiting there
	shapes   map[string]shapeStat
	maxKnown int
	unknown  int // URLs found after maxKnown, not crawled

	sitemap      map[int32]bool
	sitemapOrder []int32
	sitemapRead  bool // a <urlset> file answered 200 and parsed
	sitemapLost  bool // a sitemap file did not answer 200 or parse: some URLs are unknown
	robots       *robotsTxt
	robotsInfo   *RobotsInfo
	headsKept    int

	findings []Finding
	skips    []Skip
	skipSeen map[string]bool
	skipMore int

	dispatched, done, inflight int
	lastProgress               time.Time
}

func newCrawler(o Options) (*crawler, error) {
	s, err := siteFor(&o)
	if err != nil {
		return nil, err
	}
	if o.Compare != "" {
		if _, err := siteFor(&Options{Live: o.Compare}); err != nil {
			return nil, fmt.Errorf("audit: the compared site %q is not an http(s) URL", o.Compare)
		}
	}
	o.defaults()
	c := &crawler{
		o:        o,
		site:     s,
		ids:      map[string]int32{},
		sitemap:  map[int32]bool{},
		skipSeen: map[string]bool{},
		shapes:   map[string]shapeStat{},
		maxKnown: -1,
	}
	c.f = newFetcher(&c.o, s)
	return c, nil
}

// intern returns the id of a key, -1 past maxKnown.
func (c *crawler) intern(key string) int32 {
	if id, ok := c.ids[key]; ok {
		return id
	}
	if c.maxKnown >= 0 && len(c.keys) >= c.maxKnown {
		c.unknown++
		return -1
	}
	id := int32(len(c.keys))
	c.ids[key] = id
	c.keys = append(c.keys, key)
	c.state = append(c.state, tierNone)
	c.hops = append(c.hops, 0)
	c.pages = append(c.pages, nil)
	return id
}

func (c *crawler) skip(u, reason string) {
	k := u + "\x00" + reason
	if c.skipSeen[k] {
		return
	}
	if len(c.skips) >= maxSkips {
		c.skipMore++
		return
	}
	c.skipSeen[k] = true
	c.skips = append(c.skips, Skip{URL: u, Reason: reason})
}

// startKey turns a start URL (a path or an absolute URL) into a key.
func (c *crawler) startKey(s string) (string, bool) {
	u, kind := resolveRef(c.site.parse("/"), s)
	if kind != refOK {
		c.skip(s, "start URL is not an http(s) URL")
		return "", false
	}
	key, ok := c.site.keyOf(u)
	if !ok {
		c.skip(norm(u), "start URL on another site, not crawled")
	}
	return key, ok
}

func (c *crawler) run(ctx context.Context, start []string) (*Report, error) {
	var starts []string
	for _, s := range start {
		if k, ok := c.startKey(s); ok {
			starts = append(starts, k)
		}
	}
	if c.f.staging {
		if c.f.live {
			c.skip("", "site.mode is staging: X-Robots-Tag headers are not judged (headgate sends noindex, nofollow on every staging response)")
		} else {
			c.skip("", "site.mode is staging: pages are judged as production will serve them, without the staging X-Robots-Tag")
		}
	}
	sitemaps := c.readRobots(ctx)
	c.readSitemaps(ctx, sitemaps)
	c.maxKnown = len(c.keys) + max(4*c.o.MaxPages, 10000)

	c.starts = map[string]bool{}
	for _, k := range starts {
		c.enqueue(k, tierPinned, false, 0)
	}
	if c.f.live || len(starts) == 0 {
		root := "/"
		if c.site.livePath != "" {
			root = c.site.livePath
		}
		c.starts[root] = true
		c.enqueue(root, tierPinned, false, 0)
		for _, id := range c.sitemapOrder {
			c.enqueue(c.keys[id], tierPinned, false, 0)
		}
	}

	err := c.crawl(ctx)
	c.finish()
	if c.o.Compare != "" && err == nil {
		err = c.compare(ctx)
	}
	return c.report(), err
}

func (c *crawler) crawl(ctx context.Context) error {
	workers := newPool(ctx, c.o.Concurrency, c.visit)
	jobs, results := workers.jobs, workers.results
	defer func() {
		workers.stop()
		c.progress(true)
	}()
	for {
		var send chan job
		var next job
		var from *queue
		if ctx.Err() == nil && c.dispatched < c.o.MaxPages {
			if id, q := c.next(); q != nil {
				next, from, send = job{id, c.keys[id]}, q, jobs
			}
		}
		if send == nil && c.inflight == 0 {
			return ctx.Err()
		}
		select {
		case send <- next:
			c.sent(next.id, from)
			c.dispatched++
			c.inflight++
		case r := <-results:
			c.inflight--
			c.done++
			c.handle(r)
		case <-ctx.Done():
			// Stop dispatching; the loop drains the requests under way,
			// which end with ctx.
			if c.inflight == 0 {
				return ctx.Err()
			}
			r := <-results
			c.inflight--
			c.done++
			c.handle(r)
		}
		c.progress(false)
	}
}

// visit fetches one URL and reads what the checks need. It runs in a
// worker and touches no crawler state but the read-only site and options.
func (c *crawler) visit(ctx context.Context, j job) *result {
	ctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	began := time.Now()
	u := c.site.url(j.key)
	p := &page{key: j.key}
	res := &result{id: j.id, page: p}
	resp, err := c.f.fetch(ctx, j.key)
	if err != nil {
		p.err = errText(err)
		res.skips = append(res.skips, Skip{URL: u, Reason: "no answer: " + p.err})
		c.o.Logger.Debug("audit: fetch failed", "url", u, "error", err)
		return res
	}
	defer resp.body.Close()
	p.status, p.outcome, p.changes = resp.status, resp.outcome, resp.changes
	if resp.status >= 300 && resp.status < 400 && resp.location != nil {
		p.location = resp.location
		if k, ok := c.site.keyOf(resp.location); ok {
			p.locKey = k
		} else {
			res.skips = append(res.skips, Skip{URL: norm(resp.location), Reason: "redirect to another site, not followed"})
		}
	} else if resp.status >= 300 && resp.status < 400 {
		// A Location no browser follows (file:, ftp:, javascript:, one
		// that does not parse) still gets its reason in the report.
		if loc := strings.TrimSpace(resp.header.Get("Location")); loc != "" {
			_, kind := resolveRef(c.site.parse(j.key), loc)
			why := "not a URL"
			if kind == refScheme {
				why = "not an http(s) URL"
			}
			res.skips = append(res.skips, Skip{URL: u, Reason: fmt.Sprintf("redirect to %q, %s: not followed", clip(loc, 200), why)})
		}
	}
	if robotsmeta.HeaderNoindex(resp.xRobots) {
		p.noindex, p.noindexIn = true, "X-Robots-Tag"
	}
	var linkCanon []string
	for _, l := range linkheader.Parse(resp.header.Values("Link")) {
		if l.Has("canonical") {
			linkCanon = append(linkCanon, l.Target)
		}
	}
	ct := resp.header.Get("Content-Type")
	switch {
	case p.status != http.StatusOK:
	case !isHTML(ct):
		c.headerChecks(p, linkCanon, res)
	default:
		p.html = true
		f := extract(resp.body, ct, c.site.parse(j.key), c.site, c.o.MaxBytes)
		for _, n := range f.notes {
			res.skips = append(res.skips, Skip{URL: u, Reason: n})
		}
		res.skips = append(res.skips, f.skips...)
		res.links = f.links
		wasNoindex := p.noindex
		c.pageChecks(p, f, linkCanon, resp.xRobots, res)
		if p.noindex && !wasNoindex {
			p.noindexIn = "robots meta"
		}
		if resp.upTap != nil {
			p.upstreamHead, p.servedHead = resp.upTap.head(), resp.outTap.head()
		}
	}
	c.o.Logger.Debug("audit: fetched", "url", u, "status", p.status, "outcome", p.outcome, "duration", time.Since(began))
	return res
}

func errText(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return err.Error()
}

// handle takes a worker's result into the crawl's state.
func (c *crawler) handle(r *result) {
	p := r.page
	c.pages[r.id] = p
	c.learn(p)
	if p.upstreamHead != "" || p.servedHead != "" {
		if len(p.changes) > 0 && c.headsKept < maxHeadsKept {
			c.headsKept++
		} else {
			if len(p.changes) > 0 && c.headsKept == maxHeadsKept {
				c.headsKept++
				c.skip("", fmt.Sprintf("the heads of more than %d changed pages are not kept for the report", maxHeadsKept))
			}
			p.upstreamHead, p.servedHead = "", ""
		}
	}
	c.findings = append(c.findings, r.findings...)
	for _, s := range r.skips {
		c.skip(s.URL, s.Reason)
	}
	for _, k := range r.check {
		c.enqueue(k, tierPinned, true, 0)
	}
	if p.locKey != "" {
		if h := c.hops[r.id]; h < maxRedirectHops {
			c.enqueue(p.locKey, tierPinned, false, h+1)
		} else {
			c.skip(c.site.url(p.key), fmt.Sprintf("more than %d redirects in a row: not followed further", maxRedirectHops))
		}
	}
	if len(r.links) > 0 {
		// Links on a noindex page wait in low (frontier.go).
		t := tierLink
		if p.noindex {
			t = tierLow
		}
		p.links = make([]int32, 0, len(r.links))
		for _, k := range r.links {
			id := c.intern(k)
			if id < 0 {
				continue
			}
			p.links = append(p.links, id)
			c.enqueue(k, t, false, 0)
		}
	}
}

func (c *crawler) progress(final bool) {
	if c.o.Progress == nil {
		return
	}
	now := time.Now()
	if !final && now.Sub(c.lastProgress) < 100*time.Millisecond {
		return
	}
	c.lastProgress = now
	known := c.done + c.inflight + min(c.waiting(), c.o.MaxPages-c.dispatched)
	fmt.Fprintf(c.o.Progress, "\rpages %d/%d queued, %d findings", c.done, known, len(c.findings))
	if final {
		fmt.Fprintln(c.o.Progress)
	}
}

// finish notes redirect loops and what the page limit left out, then runs
// the cross-page checks.
func (c *crawler) finish() {
	for id, p := range c.pages {
		if p == nil || p.locKey == "" {
			continue
		}
		// Follow the chain; report a loop once, on its smallest key.
		chain := []string{p.key}
		cur := p
		for range maxRedirectHops + 1 {
			nid, ok := c.ids[cur.locKey]
			if !ok || c.pages[nid] == nil {
				break
			}
			cur = c.pages[nid]
			if int(nid) == id {
				if smallest(chain) == p.key {
					urls := make([]string, 0, len(chain)+1)
					for _, k := range chain {
						urls = append(urls, c.site.url(k))
					}
					urls = append(urls, c.site.url(p.key))
					c.skip(c.site.url(p.key), "redirect loop: "+strings.Join(urls, " → "))
				}
				break
			}
			if cur.locKey == "" {
				break
			}
			chain = append(chain, cur.key)
		}
	}
	if left := c.waiting() + c.unknown; left > 0 && c.dispatched >= c.o.MaxPages {
		c.skip("", fmt.Sprintf("max pages (%d) reached: %d more URLs not crawled", c.o.MaxPages, left))
	}
	c.crossChecks()
}

func smallest(ss []string) string {
	m := ss[0]
	for _, s := range ss[1:] {
		if s < m {
			m = s
		}
	}
	return m
}

func (c *crawler) report() *Report {
	r := &Report{Findings: c.findings, Skipped: c.skips}
	if c.skipMore > 0 {
		r.Skipped = append(r.Skipped, Skip{Reason: fmt.Sprintf("%d more skipped URLs not listed", c.skipMore)})
	}
	for _, p := range c.pages {
		if p == nil {
			continue
		}
		pg := Page{URL: c.site.url(p.key), Status: p.status, Outcome: p.outcome, Changes: p.changes}
		if p.location != nil {
			pg.Location = p.location.String()
		}
		if p.canon != nil {
			pg.Canonical = p.canon.String()
		}
		if p.location != nil && p.locKey != "" {
			for _, k := range c.chain(p).keys[1:] {
				pg.Redirects = append(pg.Redirects, c.site.url(k))
			}
		} else if p.location != nil {
			pg.Redirects = []string{norm(p.location)}
		}
		if p.hasText {
			pg.BodyHash = hexHash(p.textHash)
		}
		pg.UpstreamHead, pg.ServedHead = p.upstreamHead, p.servedHead
		r.Pages = append(r.Pages, pg)
	}
	r.Robots = c.robotsInfo
	r.sort()
	return r
}

func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Check != b.Check {
			return a.Check < b.Check
		}
		if a.URL != b.URL {
			return a.URL < b.URL
		}
		return a.Detail < b.Detail
	})
}

func (r *Report) sort() {
	sortFindings(r.Findings)
	sort.SliceStable(r.Pages, func(i, j int) bool { return r.Pages[i].URL < r.Pages[j].URL })
	sort.SliceStable(r.Skipped, func(i, j int) bool {
		a, b := r.Skipped[i], r.Skipped[j]
		if a.URL != b.URL {
			return a.URL < b.URL
		}
		return a.Reason < b.Reason
	})
}
