package audit

import (
	"fmt"
	"iter"
	"net/http"
	"sort"
	"strings"
)

// get returns the crawled page of a key, or nil.
func (r *crossRun) get(key string) *page {
	if id, ok := r.c.ids[key]; ok {
		return r.c.pages[id]
	}
	return nil
}

// ok returns the pages that answered 200, in the crawl's order.
func (r *crossRun) ok() iter.Seq[*page] {
	return func(yield func(*page) bool) {
		for _, p := range r.c.pages {
			if p != nil && p.status == http.StatusOK && !yield(p) {
				return
			}
		}
	}
}

// blocked reports whether robots.txt keeps crawlers out of a key, and by
// which rule. A verdict per URL, asked once: pages link the same URLs,
// and a robots.txt may hold thousands of rules.
func (r *crossRun) blocked(key string) (bool, string) {
	if r.c.robots == nil {
		return false, ""
	}
	if why, ok := r.verdicts[key]; ok {
		return why != "", why
	}
	why := ""
	if b, agent, rule := r.c.robots.blocksFor(key); b {
		why = fmt.Sprintf("robots.txt %q for %s", rule.String(), agent)
	}
	r.verdicts[key] = why
	return why != "", why
}

// links calls fn for each link of each 200 HTML page, in order, with the
// link's key and crawled page (nil: not crawled). report files a finding
// of the running check on the page for the link: past maxPerPage of them
// on one page, one more says there are more, and the rest are dropped.
func (r *crossRun) links(fn func(p *page, key string, t *page, report func(detail string))) {
	for p := range r.ok() {
		if !p.html {
			continue
		}
		n := 0
		report := func(detail string) {
			switch n++; {
			case n <= maxPerPage:
				r.add(p.key, detail)
			case n == maxPerPage+1:
				r.add(p.key, fmt.Sprintf("and more links (only the first %d are listed)", maxPerPage))
			}
		}
		for _, id := range p.links {
			fn(p, r.c.keys[id], r.c.pages[id], report)
		}
	}
}

// canonicalTarget returns the crawled target of a page's canonical on the
// site that is another page, or nil.
func (r *crossRun) canonicalTarget(p *page) (*page, bool) {
	if p.canon == nil || !p.canonSite || p.canonKey == p.key {
		return nil, false
	}
	return r.get(p.canonKey), true
}

func canonicalNot200(r *crossRun) {
	for p := range r.ok() {
		if t, _ := r.canonicalTarget(p); t != nil && t.status != http.StatusOK {
			r.add(p.key, fmt.Sprintf("canonical %s %s", norm(p.canon), t.answer()))
		}
	}
}

func canonicalChain(r *crossRun) {
	for p := range r.ok() {
		if t, _ := r.canonicalTarget(p); t != nil && t.status == http.StatusOK && t.canon != nil && (!t.canonSite || t.canonKey != t.key) {
			r.add(p.key, fmt.Sprintf("canonical %s names another canonical: %s", norm(p.canon), norm(t.canon)))
		}
	}
}

func canonicalToNoindex(r *crossRun) {
	for p := range r.ok() {
		if t, _ := r.canonicalTarget(p); t != nil && t.status == http.StatusOK && t.noindex {
			r.add(p.key, fmt.Sprintf("canonical %s is noindex (%s)", norm(p.canon), t.noindexIn))
		}
	}
}

func canonicalToBlocked(r *crossRun) {
	for p := range r.ok() {
		if _, other := r.canonicalTarget(p); other {
			if b, why := r.blocked(p.canonKey); b {
				r.add(p.key, fmt.Sprintf("canonical %s is disallowed by %s: crawlers cannot read it", norm(p.canon), why))
			}
		}
	}
}

// alternates calls fn for each alternate of a 200 page that is another
// crawled page of the site, with that page.
func (r *crossRun) alternates(fn func(p *page, a pageAlt, t *page)) {
	for p := range r.ok() {
		for _, a := range p.alts {
			if !a.site || a.key == p.key {
				continue
			}
			if t := r.get(a.key); t != nil {
				fn(p, a, t)
			}
		}
	}
}

func hreflangNotReciprocal(r *crossRun) {
	r.alternates(func(p *page, a pageAlt, t *page) {
		if strings.EqualFold(a.lang, "x-default") || t.status != http.StatusOK || t.elsewhere() || t.noindex {
			return // hreflang-to-non-200, -to-non-canonical, -to-noindex
		}
		for _, b := range t.alts {
			if b.site && b.key == p.key {
				return
			}
		}
		r.add(p.key, fmt.Sprintf("names %s (hreflang=%s) as an alternate; %s does not name it back", a.abs, a.lang, a.abs))
	})
}

func hreflangToNon200(r *crossRun) {
	r.alternates(func(p *page, a pageAlt, t *page) {
		// A redirect, an error, or no answer at all (status 0: a timeout,
		// a refused connection), as canonical-not-200 says; an x-default
		// may redirect by language.
		if t.status != http.StatusOK && !(strings.EqualFold(a.lang, "x-default") && t.location != nil) {
			r.add(p.key, fmt.Sprintf("alternate %s (hreflang=%s) %s", a.abs, a.lang, t.answer()))
		}
	})
}

func hreflangToNonCanonical(r *crossRun) {
	r.alternates(func(p *page, a pageAlt, t *page) {
		if t.status == http.StatusOK && t.elsewhere() {
			r.add(p.key, fmt.Sprintf("alternate %s (hreflang=%s) names another canonical: %s", a.abs, a.lang, norm(t.canon)))
		}
	})
}

func hreflangToNoindex(r *crossRun) {
	r.alternates(func(p *page, a pageAlt, t *page) {
		if t.status == http.StatusOK && !t.elsewhere() && t.noindex {
			r.add(p.key, fmt.Sprintf("alternate %s (hreflang=%s) is noindex (%s)", a.abs, a.lang, t.noindexIn))
		}
	})
}

// robotsBlocksDuplicate: robots.txt hides the canonical of a duplicate.
func robotsBlocksDuplicate(r *crossRun) {
	if r.c.robots == nil {
		return
	}
	for p := range r.ok() {
		if !p.elsewhere() {
			continue
		}
		if blocked, agent, rule := r.c.robots.blocksFor(p.key); blocked {
			r.add(p.key, fmt.Sprintf("robots.txt %q for %s keeps crawlers out, so they never read its canonical %s", rule.String(), agent, norm(p.canon)))
		}
	}
}

func linkToNonCanonical(r *crossRun) {
	r.links(func(p *page, key string, t *page, _ func(string)) {
		if t != nil && t.status == http.StatusOK && t.elsewhere() && !t.toFirst {
			r.add(p.key, fmt.Sprintf("links to %s, whose canonical is %s", r.c.site.url(key), norm(t.canon)))
		}
	})
}

func robotsBlocked(r *crossRun) {
	r.links(func(_ *page, key string, _ *page, report func(string)) {
		if b, why := r.blocked(key); b {
			report(fmt.Sprintf("links to %s, disallowed by %s", r.c.site.url(key), why))
		}
	})
	for _, id := range r.c.sitemapOrder {
		key := r.c.keys[id]
		if b, why := r.blocked(key); b {
			r.add(key, "listed in the sitemap; disallowed by "+why)
		}
	}
}

// linkBroken reports links to a 4xx or 5xx, and to a redirect that ends at
// one, as SEO crawlers report it ("redirect to 4xx").
func linkBroken(r *crossRun) {
	c := r.c
	r.links(func(_ *page, key string, t *page, report func(string)) {
		switch {
		case t == nil:
		case t.status >= 400:
			report(fmt.Sprintf("links to %s, which answers %d", c.site.url(key), t.status))
		case t.status >= 300 && t.locKey != "":
			if ci := c.chain(t); !ci.loop && ci.final != nil && ci.final.status >= 400 {
				report(fmt.Sprintf("links to %s, which redirects to an answer %d: %s", c.site.url(key), ci.final.status, c.chainText(ci)))
			}
		}
	})
}

func linkToRedirect(r *crossRun) {
	r.links(func(_ *page, key string, t *page, report func(string)) {
		if t != nil && t.status >= 300 && t.status < 400 {
			report(fmt.Sprintf("links to %s, which %s", r.c.site.url(key), t.answer()))
		}
	})
}

// redirectChain reports a canonical, alternate, link or sitemap URL that
// takes more than one hop to a 200.
func redirectChain(r *crossRun) {
	c := r.c
	for p := range r.ok() {
		if _, other := r.canonicalTarget(p); other {
			if d := c.redirectProblem(r.get(p.canonKey)); d != "" {
				r.add(p.key, "canonical "+norm(p.canon)+" takes "+d)
			}
		}
		for _, a := range p.alts {
			if !a.site || a.key == p.key {
				continue
			}
			if d := c.redirectProblem(r.get(a.key)); d != "" {
				r.add(p.key, fmt.Sprintf("alternate %s (hreflang=%s) takes %s", a.abs, a.lang, d))
			}
		}
	}
	r.links(func(_ *page, key string, t *page, report func(string)) {
		if t != nil && t.status >= 300 && t.status < 400 {
			if d := c.redirectProblem(t); d != "" {
				report("links to " + c.site.url(key) + ", which takes " + d)
			}
		}
	})
	for _, id := range c.sitemapOrder {
		if p := c.pages[id]; p != nil {
			if d := c.redirectProblem(p); d != "" {
				r.add(c.keys[id], "listed in the sitemap; it takes "+d)
			}
		}
	}
}

// sitemapPages calls fn for each crawled page the sitemap lists.
func (r *crossRun) sitemapPages(fn func(p *page)) {
	for _, id := range r.c.sitemapOrder {
		if p := r.c.pages[id]; p != nil {
			fn(p)
		}
	}
}

func sitemapNot200(r *crossRun) {
	r.sitemapPages(func(p *page) {
		if p.status != http.StatusOK {
			r.add(p.key, "listed in the sitemap; it "+p.answer())
		}
	})
}

func sitemapNonCanonical(r *crossRun) {
	r.sitemapPages(func(p *page) {
		if p.status == http.StatusOK && p.elsewhere() {
			r.add(p.key, "listed in the sitemap; its canonical is "+norm(p.canon))
		}
	})
}

func sitemapNoindex(r *crossRun) {
	r.sitemapPages(func(p *page) {
		if p.status == http.StatusOK && !p.elsewhere() && p.noindex {
			r.add(p.key, "listed in the sitemap; it is noindex ("+p.noindexIn+")")
		}
	})
}

func sitemapOrphan(r *crossRun) {
	c := r.c
	if !c.crawlComplete() {
		if len(c.sitemapOrder) > 0 {
			c.skip("", "the crawl did not reach every URL it found: sitemap-orphan is not checked")
		}
		return
	}
	linked := make([]bool, len(c.keys))
	for p := range r.ok() {
		for _, id := range p.links {
			linked[id] = true
		}
	}
	for _, id := range c.sitemapOrder {
		key := c.keys[id]
		if p := c.pages[id]; p != nil && p.indexable() && !linked[id] && !c.starts[key] {
			r.add(key, "listed in the sitemap; no crawled page links to it")
		}
	}
}

func sitemapMissing(r *crossRun) {
	c := r.c
	if !c.sitemapRead || c.sitemapLost {
		// Only when every sitemap file read: a page of a file that failed
		// may well be listed.
		return
	}
	inSitemap := make([]bool, len(c.keys))
	for _, id := range c.sitemapOrder {
		inSitemap[id] = true
	}
	for id, p := range c.pages {
		if p != nil && p.indexable() && !inSitemap[id] {
			r.add(p.key, "an indexable page whose canonical names no other address (it names itself, or there is none); the sitemap does not list it")
		}
	}
}

func titleDuplicate(r *crossRun) {
	r.duplicates("title", func(p *page) string { return p.title })
}

func descriptionDuplicate(r *crossRun) {
	r.duplicates("meta description", func(p *page) string { return p.desc })
}

// duplicates reports, on every indexable page, the other indexable pages
// that have the same text, but for its translations: pages that name each
// other as hreflang alternates may share a title (a brand, a product name).
func (r *crossRun) duplicates(what string, text func(*page) string) {
	c := r.c
	groups := map[string][]string{}
	for _, p := range c.pages {
		if p == nil || !p.indexable() {
			continue
		}
		if t := text(p); t != "" {
			groups[t] = append(groups[t], p.key)
		}
	}
	for t, keys := range groups {
		if len(keys) < 2 {
			continue
		}
		sort.Strings(keys)
		c.alike(keys, func(k string, others []string, n int) {
			more := ""
			if n > len(others) {
				more = fmt.Sprintf(" and %d more", n-len(others))
			}
			r.add(k, fmt.Sprintf("%s %q is also the %s of %s%s", what, clip(t, 120), what, strings.Join(others, ", "), more))
		})
	}
}

// alike calls fn for each key of a group of pages that share a text
// (sorted keys), with the URLs of the first three others that are not its
// translations and how many such others there are. It is linear in the
// group's size: 20,000 pages with one title made a loop over every pair
// run for minutes after the crawl, SIGTERM included (issue 34).
func (c *crawler) alike(keys []string, fn func(k string, others []string, n int)) {
	// The translations within the group, each pair both ways: pages name
	// a few alternates, so this is small.
	in := make(map[string]bool, len(keys))
	for _, k := range keys {
		in[k] = true
	}
	trans := map[string]map[string]bool{}
	pair := func(a, b string) {
		if trans[a] == nil {
			trans[a] = map[string]bool{}
		}
		trans[a][b] = true
	}
	for _, k := range keys {
		id, ok := c.ids[k]
		if !ok || c.pages[id] == nil {
			continue
		}
		for _, x := range c.pages[id].alts {
			if x.site && x.key != k && in[x.key] {
				pair(k, x.key)
				pair(x.key, k)
			}
		}
	}
	var buf [3]string
	for _, k := range keys {
		n := len(keys) - 1 - len(trans[k])
		if n <= 0 {
			continue
		}
		others := buf[:0]
		for _, o := range keys {
			if len(others) == len(buf) {
				break
			}
			if o != k && !trans[k][o] {
				others = append(others, c.site.url(o))
			}
		}
		fn(k, others, n)
	}
}

// translations reports whether the pages of two keys name one another as
// hreflang alternates.
func (c *crawler) translations(a, b string) bool {
	names := func(from, to string) bool {
		id, ok := c.ids[from]
		if !ok || c.pages[id] == nil {
			return false
		}
		for _, x := range c.pages[id].alts {
			if x.site && x.key == to {
				return true
			}
		}
		return false
	}
	return names(a, b) || names(b, a)
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

// crawlComplete reports whether every URL found was crawled.
func (c *crawler) crawlComplete() bool {
	return c.waiting()+c.unknown == 0
}

// duplicateWithoutCanonical reports indexable pages with the same body
// text: 8 bytes per page, grouped once.
func duplicateWithoutCanonical(r *crossRun) {
	c := r.c
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
		keys := make([]string, len(ids))
		for i, id := range ids {
			keys[i] = c.keys[id]
		}
		sort.Strings(keys)
		c.alike(keys, func(k string, others []string, n int) {
			more := ""
			if n > len(others) {
				more = fmt.Sprintf(" and %d more", n-len(others))
			}
			r.add(k, fmt.Sprintf("the same body text as %s%s, and neither names the other as canonical", strings.Join(others, ", "), more))
		})
	}
}

// hexHash spells a body hash for the report.
func hexHash(h uint64) string { return fmt.Sprintf("%016x", h) }
