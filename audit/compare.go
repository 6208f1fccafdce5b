package audit

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/headgate/headgate/rules"
)

// compare fetches every crawled path from Options.Compare (production)
// and reports what differs (SPEC §15, diff-* findings): the status, and
// for pages that answer 200 HTML on both sides the canonical, the robots
// directives, the title, the description, the alternates and the JSON-LD
// types. Only a few facts of each production page are kept, as in the
// crawl.
func (c *crawler) compare(ctx context.Context) error {
	po := c.o
	po.Live, po.Compare, po.Handler, po.Observe, po.Progress = c.o.Compare, "", nil, nil, nil
	po.Upstream = ""
	if c.o.Config != nil {
		cfg := *c.o.Config
		cfg.Site.Mode = rules.ModeProduction // production's own headers are what it serves
		po.Config = &cfg
	}
	pc, err := newCrawler(po)
	if err != nil {
		return fmt.Errorf("audit: -compare: %w", err)
	}
	var ids []int32
	for id, p := range c.pages {
		if p != nil {
			ids = append(ids, int32(id))
		}
	}
	sort.Slice(ids, func(i, j int) bool { return c.keys[ids[i]] < c.keys[ids[j]] })

	workers := newPool(ctx, c.o.Concurrency, pc.visit)
	go func() {
		defer workers.stop()
		for _, id := range ids {
			select {
			case workers.jobs <- job{id, c.keys[id]}:
			case <-ctx.Done():
				return
			}
		}
	}()
	for r := range workers.results {
		c.diff(pc, c.pages[r.id], r.page)
	}
	return ctx.Err()
}

// diff reports what differs between the page here (p) and production's
// (q, fetched by pc).
func (c *crawler) diff(pc *crawler, p, q *page) {
	add := func(check, detail string) {
		c.findings = append(c.findings, Finding{Check: check, Severity: severity(check), URL: c.site.url(p.key), Detail: detail})
	}
	if q.status == 0 {
		c.skip(pc.site.url(q.key), "-compare: production does not answer ("+q.err+")")
		return
	}
	if p.status == 0 {
		return // no answer here: Skipped says so
	}
	if p.status != q.status {
		add(DiffStatus, fmt.Sprintf("here %s; production %s", c.statusText(p), pc.statusText(q)))
		return
	}
	if p.status != http.StatusOK || !p.html || !q.html {
		return
	}
	for _, k := range checks {
		if k.diff == nil {
			continue
		}
		if here, prod := k.diff.text(c, p), k.diff.text(pc, q); here != prod {
			add(k.ID, fmt.Sprintf("%s here %s; production %s", k.diff.what, here, prod))
		}
	}
}

func (c *crawler) statusText(p *page) string {
	s := fmt.Sprint(p.status)
	if p.location != nil {
		if p.locKey != "" {
			s += " → " + p.locKey
		} else {
			s += " → " + norm(p.location)
		}
	}
	return s
}

// canonText is a canonical as both sides can compare it: the path when it
// is on the crawled site, else the URL.
func (c *crawler) canonText(p *page) string {
	switch {
	case p.canon == nil && p.canonRaw != "":
		return fmt.Sprintf("%q", clip(p.canonRaw, 200))
	case p.canon == nil:
		return "none"
	case p.canonSite:
		return p.canonKey
	}
	return norm(p.canon)
}

func (c *crawler) altsText(p *page) string {
	if len(p.alts) == 0 {
		return "none"
	}
	var s []string
	for _, a := range p.alts {
		t := a.abs
		if a.site {
			t = a.key
		}
		s = append(s, strings.ToLower(a.lang)+" "+t)
	}
	sort.Strings(s)
	return "[" + strings.Join(s, ", ") + "]"
}

func typesText(ts []string) string {
	if len(ts) == 0 {
		return "none"
	}
	s := append([]string(nil), ts...)
	sort.Strings(s)
	return "[" + strings.Join(s, ", ") + "]"
}
