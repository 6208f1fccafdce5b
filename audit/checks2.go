package audit

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/headgate/headgate/internal/robotsmeta"
)

// maxPerPage bounds the findings of one check on one page that name a
// target (links, robots rules): the rest are counted in one more finding.
const maxPerPage = 20

// jsonldFacts records a valid block's types and reports what its nodes
// lack (jsonld-required). It runs in a worker.
func (c *crawler) jsonldFacts(p *page, i int, b ldBlock, add func(string, string), res *result) {
	for _, t := range b.types {
		if len(p.ldTypes) < maxLDTypes && !contains(p.ldTypes, t) {
			p.ldTypes = append(p.ldTypes, t)
		}
	}
	if b.note != "" {
		res.skips = append(res.skips, Skip{URL: c.site.url(p.key), Reason: fmt.Sprintf("ld+json block %d: %s", i+1, b.note)})
	}
	seen := map[string]bool{}
	n := 0
	for _, m := range b.missing {
		s := m.String()
		if seen[s] {
			continue
		}
		seen[s] = true
		if n++; n > maxPerPage {
			add(JSONLDRequired, fmt.Sprintf("ld+json block %d: and more nodes lack required properties", i+1))
			break
		}
		add(JSONLDRequired, fmt.Sprintf("ld+json block %d: %s", i+1, s))
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// lengthChecks holds the title and description of an indexable page to
// the ranges of docs/audit.md.
func (c *crawler) lengthChecks(p *page, f *facts, add func(string, string)) {
	if !p.indexable() {
		return
	}
	// A head not read to its end may hold a title cut short: its length
	// is known when its end tag was read; cut, it is at least what was
	// read, too long already or not known.
	if f.hasTitle && f.title != "" {
		n := utf8.RuneCountInString(f.title)
		switch {
		case !f.headCut || f.titleEnd:
			if n < TitleMin || n > TitleMax {
				add(TitleLength, fmt.Sprintf("the title is %d characters long (%d–%d read well in results): %q", n, TitleMin, TitleMax, clip(f.title, 120)))
			}
		case n > TitleMax:
			add(TitleLength, fmt.Sprintf("the title is at least %d characters long, as far as the page was read (%d–%d read well in results): %q", n, TitleMin, TitleMax, clip(f.title, 120)))
		}
	}
	if p.desc != "" {
		if n := utf8.RuneCountInString(p.desc); n < DescriptionMin || n > DescriptionMax {
			add(DescriptionLength, fmt.Sprintf("the meta description is %d characters long (%d–%d read well in results): %q", n, DescriptionMin, DescriptionMax, clip(p.desc, 120)))
		}
	}
}

// mixedScheme reports http:// URLs a page names on an https site.
func (c *crawler) mixedScheme(p *page, f *facts, linkCanon []string, add func(string, string)) {
	if !c.site.https() {
		return
	}
	// The site's own hosts over http: a relative URL resolved against an
	// http crawl origin (a staging copy on loopback) is not one.
	isHTTP := func(raw string) bool {
		u, kind := resolveRef(f.base, raw)
		return kind == refOK && c.site.httpsTwin(u)
	}
	canons := append(append([]string(nil), f.headCanon...), linkCanon...)
	for _, raw := range canons {
		if isHTTP(raw) {
			add(MixedScheme, fmt.Sprintf("canonical %q is http:// on an https site", clip(raw, 200)))
			break
		}
	}
	for _, m := range f.social {
		if isHTTP(m.value) {
			add(MixedScheme, fmt.Sprintf("%s %q is http:// on an https site", m.key, clip(m.value, 200)))
		}
	}
	for _, a := range f.alts {
		if isHTTP(a.href) {
			add(MixedScheme, fmt.Sprintf("alternate (hreflang=%s) %q is http:// on an https site", clip(a.lang, 40), clip(a.href, 200)))
		}
	}
	for _, l := range f.httpLinks {
		add(MixedScheme, "links to "+l+": http:// on an https site")
	}
}

// robotsDirectives reads index and follow from robots values: +1 said
// (index, follow, all), -1 forbidden (noindex, nofollow, none), 0 unsaid.
func robotsDirectives(values []string, header bool) (index, follow int) {
	for _, v := range values {
		if header {
			if crawler, rest := robotsmeta.ForCrawler(v); crawler != "" {
				if crawler != "googlebot" {
					continue // for one other crawler: not what the meta says to all
				}
				v = rest
			}
		}
		for _, d := range strings.Split(v, ",") {
			switch strings.ToLower(strings.TrimSpace(d)) {
			case "noindex":
				index = -1
			case "index":
				if index == 0 {
					index = 1
				}
			case "nofollow":
				follow = -1
			case "follow":
				if follow == 0 {
					follow = 1
				}
			case "none":
				index, follow = -1, -1
			case "all":
				if index == 0 {
					index = 1
				}
				if follow == 0 {
					follow = 1
				}
			}
		}
	}
	return index, follow
}

// robotsChecks reports robots-conflict and records the page's robots
// directives for -compare. It runs in a worker.
func (c *crawler) robotsChecks(p *page, metas, header []string, res *result) {
	add := func(detail string) {
		res.findings = append(res.findings, Finding{Check: RobotsConflict, Severity: severity(RobotsConflict), URL: c.site.url(p.key), Detail: detail})
	}
	if len(metas) > 1 {
		add(fmt.Sprintf("%d robots metas: %s (crawlers apply the most restrictive of them)", len(metas), quoteList(metas)))
	}
	mi, mf := robotsDirectives(metas, false)
	hi, hf := robotsDirectives(header, true)
	word := func(v int, yes, no string) string {
		if v < 0 {
			return no
		}
		return yes
	}
	if len(metas) > 0 && len(header) > 0 {
		if mi != 0 && hi != 0 && mi != hi {
			add(fmt.Sprintf("the robots meta says %s, X-Robots-Tag says %s (%s vs %s)", word(mi, "index", "noindex"), word(hi, "index", "noindex"), quoteList(metas), quoteList(header)))
		}
		if mf != 0 && hf != 0 && mf != hf {
			add(fmt.Sprintf("the robots meta says %s, X-Robots-Tag says %s (%s vs %s)", word(mf, "follow", "nofollow"), word(hf, "follow", "nofollow"), quoteList(metas), quoteList(header)))
		}
	}
	// For -compare: what the page asks, meta and header together (the
	// most restrictive wins).
	idx, fol := min(mi, hi), min(mf, hf)
	p.robots = word(idx, "index", "noindex") + ", " + word(fol, "follow", "nofollow")
}

// chainInfo is where a redirect leads.
type chainInfo struct {
	hops  int
	final *page // the first page that does not redirect; nil: not reached
	loop  bool
	cut   bool // the crawl stopped following
	keys  []string
}

// chain follows a redirect through the crawled pages, at most
// maxRedirectHops+1 hops.
func (c *crawler) chain(p *page) chainInfo {
	ci := chainInfo{keys: []string{p.key}}
	seen := map[string]bool{p.key: true}
	cur := p
	for cur.location != nil {
		if cur.locKey == "" {
			return ci // leaves the site
		}
		ci.hops++
		ci.keys = append(ci.keys, cur.locKey)
		if seen[cur.locKey] {
			ci.loop = true
			return ci
		}
		seen[cur.locKey] = true
		id, ok := c.ids[cur.locKey]
		if !ok || c.pages[id] == nil || ci.hops > maxRedirectHops {
			ci.cut = true
			return ci
		}
		cur = c.pages[id]
	}
	ci.final = cur
	return ci
}

func (c *crawler) chainText(ci chainInfo) string {
	urls := make([]string, 0, len(ci.keys))
	for i, k := range ci.keys {
		if i == 12 {
			urls = append(urls, "…")
			break
		}
		urls = append(urls, c.site.url(k))
	}
	return strings.Join(urls, " → ")
}

// redirectProblem returns a redirect-chain detail for target t, "" when it
// reaches a 200 in one hop or is no redirect.
func (c *crawler) redirectProblem(t *page) string {
	if t == nil || t.location == nil || t.locKey == "" {
		return ""
	}
	ci := c.chain(t)
	switch {
	case ci.loop:
		return "a redirect loop: " + c.chainText(ci)
	case ci.cut && ci.hops > maxRedirectHops:
		return fmt.Sprintf("more than %d redirects: %s", maxRedirectHops, c.chainText(ci))
	case ci.final != nil && ci.final.status == http.StatusOK && ci.hops > 1:
		return fmt.Sprintf("%d hops to a 200: %s", ci.hops, c.chainText(ci))
	}
	return ""
}

// newCrossChecks runs the cross-page checks of SPEC §15.
func (c *crawler) newCrossChecks() {
	add := func(check string, key string, detail string) {
		c.findings = append(c.findings, Finding{Check: check, Severity: severity(check), URL: c.site.url(key), Detail: detail})
	}
	get := func(key string) *page {
		if id, ok := c.ids[key]; ok {
			return c.pages[id]
		}
		return nil
	}
	// A verdict per URL, asked once: pages link the same URLs, and a
	// robots.txt may hold thousands of rules.
	verdicts := map[string]string{} // key → "" allowed, else why
	blocked := func(key string) (bool, string) {
		if c.robots == nil {
			return false, ""
		}
		if why, ok := verdicts[key]; ok {
			return why != "", why
		}
		why := ""
		if b, agent, rule := c.robots.blocksFor(key); b {
			why = fmt.Sprintf("robots.txt %q for %s", rule.String(), agent)
		}
		verdicts[key] = why
		return why != "", why
	}
	linked := make([]bool, len(c.keys))
	for _, p := range c.pages {
		if p == nil || p.status != http.StatusOK {
			continue
		}
		for _, id := range p.links {
			linked[id] = true
		}
		// The canonical target.
		if p.canon != nil && p.canonSite && p.canonKey != p.key {
			target := norm(p.canon)
			if t := get(p.canonKey); t != nil && t.status == http.StatusOK && t.noindex {
				add(CanonicalToNoindex, p.key, fmt.Sprintf("canonical %s is noindex (%s)", target, t.noindexIn))
			}
			if b, why := blocked(p.canonKey); b {
				add(CanonicalToBlocked, p.key, fmt.Sprintf("canonical %s is disallowed by %s: crawlers cannot read it", target, why))
			}
			if d := c.redirectProblem(get(p.canonKey)); d != "" {
				add(RedirectChain, p.key, "canonical "+target+" takes "+d)
			}
		}
		// Alternate targets.
		for _, a := range p.alts {
			if !a.site || a.key == p.key {
				continue
			}
			t := get(a.key)
			if t == nil {
				continue
			}
			xdefault := strings.EqualFold(a.lang, "x-default")
			switch {
			case t.status != http.StatusOK:
				// A redirect, an error, or no answer at all (status 0: a
				// timeout, a refused connection), as canonical-not-200 says.
				if !(xdefault && t.location != nil) {
					add(HreflangToNon200, p.key, fmt.Sprintf("alternate %s (hreflang=%s) %s", a.abs, a.lang, t.answer()))
				}
			case t.elsewhere():
				add(HreflangToNonCanonical, p.key, fmt.Sprintf("alternate %s (hreflang=%s) names another canonical: %s", a.abs, a.lang, norm(t.canon)))
			case t.noindex:
				add(HreflangToNoindex, p.key, fmt.Sprintf("alternate %s (hreflang=%s) is noindex (%s)", a.abs, a.lang, t.noindexIn))
			}
			if d := c.redirectProblem(t); d != "" {
				add(RedirectChain, p.key, fmt.Sprintf("alternate %s (hreflang=%s) takes %s", a.abs, a.lang, d))
			}
		}
		if !p.html {
			continue
		}
		// Links.
		counts := map[string]int{}
		limit := func(check string) bool {
			counts[check]++
			if counts[check] == maxPerPage+1 {
				add(check, p.key, fmt.Sprintf("and more links (only the first %d are listed)", maxPerPage))
			}
			return counts[check] <= maxPerPage
		}
		for _, id := range p.links {
			key := c.keys[id]
			if b, why := blocked(key); b && limit(RobotsBlocked) {
				add(RobotsBlocked, p.key, fmt.Sprintf("links to %s, disallowed by %s", c.site.url(key), why))
			}
			t := c.pages[id]
			if t == nil {
				continue
			}
			switch {
			case t.status >= 400:
				if limit(LinkBroken) {
					add(LinkBroken, p.key, fmt.Sprintf("links to %s, which answers %d", c.site.url(key), t.status))
				}
			case t.status >= 300 && t.status < 400:
				if limit(LinkToRedirect) {
					add(LinkToRedirect, p.key, fmt.Sprintf("links to %s, which %s", c.site.url(key), t.answer()))
				}
				if d := c.redirectProblem(t); d != "" && limit(RedirectChain) {
					add(RedirectChain, p.key, "links to "+c.site.url(key)+", which takes "+d)
				}
				// A redirect that ends at a 4xx or 5xx is a broken link
				// too, as SEO crawlers report it ("redirect to 4xx").
				if t.locKey != "" {
					if ci := c.chain(t); !ci.loop && ci.final != nil && ci.final.status >= 400 && limit(LinkBroken) {
						add(LinkBroken, p.key, fmt.Sprintf("links to %s, which redirects to an answer %d: %s", c.site.url(key), ci.final.status, c.chainText(ci)))
					}
				}
			}
		}
	}

	// Sitemap URLs.
	inSitemap := make([]bool, len(c.keys))
	for _, id := range c.sitemapOrder {
		inSitemap[id] = true
		key := c.keys[id]
		if b, why := blocked(key); b {
			add(RobotsBlocked, key, "listed in the sitemap; disallowed by "+why)
		}
		p := c.pages[id]
		if p == nil {
			continue
		}
		if d := c.redirectProblem(p); d != "" {
			add(RedirectChain, key, "listed in the sitemap; it takes "+d)
		}
		if p.indexable() && !linked[id] && !c.starts[key] && c.crawlComplete() {
			add(SitemapOrphan, key, "listed in the sitemap; no crawled page links to it")
		}
	}
	if c.sitemapRead && !c.sitemapLost {
		// Only when every sitemap file read: a page of a file that failed
		// may well be listed.
		for id, p := range c.pages {
			if p != nil && p.indexable() && !inSitemap[id] {
				add(SitemapMissing, p.key, "an indexable page whose canonical names no other address (it names itself, or there is none); the sitemap does not list it")
			}
		}
	}
	if !c.crawlComplete() && len(c.sitemapOrder) > 0 {
		c.skip("", "the crawl did not reach every URL it found: sitemap-orphan is not checked")
	}
	c.bodyDuplicates()
}

// crawlComplete reports whether every URL found was crawled.
func (c *crawler) crawlComplete() bool {
	return c.prio.len()+c.normal.len()+c.unknown == 0
}

// bodyDuplicates reports indexable pages with the same body text
// (duplicate-without-canonical): 8 bytes per page, grouped once.
func (c *crawler) bodyDuplicates() {
	groups := map[uint64][]int32{}
	for id, p := range c.pages {
		if p != nil && p.hasText && p.indexable() {
			groups[p.textHash] = append(groups[p.textHash], int32(id))
		}
	}
	hashes := make([]uint64, 0)
	for h, ids := range groups {
		if len(ids) > 1 {
			hashes = append(hashes, h)
		}
	}
	sort.Slice(hashes, func(i, j int) bool { return hashes[i] < hashes[j] })
	for _, h := range hashes {
		ids := groups[h]
		for _, id := range ids {
			k := c.keys[id]
			var others []string
			for _, o := range ids {
				if o != id && !c.translations(k, c.keys[o]) {
					others = append(others, c.site.url(c.keys[o]))
				}
			}
			if len(others) == 0 {
				continue
			}
			sort.Strings(others)
			more := ""
			if len(others) > 3 {
				more = fmt.Sprintf(" and %d more", len(others)-3)
				others = others[:3]
			}
			c.findings = append(c.findings, Finding{Check: DuplicateWithoutCanonical, Severity: severity(DuplicateWithoutCanonical), URL: c.site.url(k),
				Detail: fmt.Sprintf("the same body text as %s%s, and neither names the other as canonical", strings.Join(others, ", "), more)})
		}
	}
}

// hexHash spells a body hash for the report.
func hexHash(h uint64) string { return fmt.Sprintf("%016x", h) }
