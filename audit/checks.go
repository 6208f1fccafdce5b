package audit

import (
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/headgate/headgate/internal/robotsmeta"
)

// Check IDs (SPEC §7).
const (
	CanonicalMissing           = "canonical-missing"
	CanonicalMultiple          = "canonical-multiple"
	CanonicalRelative          = "canonical-relative"
	CanonicalNot200            = "canonical-not-200"
	CanonicalChain             = "canonical-chain"
	CanonicalOutsideHead       = "canonical-outside-head"
	OGURLMismatch              = "og-url-mismatch"
	JSONLDIDMismatch           = "jsonld-id-mismatch"
	JSONLDInvalid              = "jsonld-invalid"
	HreflangNotReciprocal      = "hreflang-not-reciprocal"
	HreflangNoSelf             = "hreflang-no-self"
	HreflangNoXDefault         = "hreflang-no-x-default"
	HreflangOnNonCanonical     = "hreflang-on-non-canonical"
	SitemapNonCanonical        = "sitemap-non-canonical"
	SitemapNoindex             = "sitemap-noindex"
	SitemapNot200              = "sitemap-not-200"
	RobotsBlocksDuplicate      = "robots-blocks-duplicate"
	PaginationCanonicalToFirst = "pagination-canonical-to-first"
	LinkToNonCanonical         = "link-to-non-canonical"
	TitleMissing               = "title-missing"
	TitleDuplicate             = "title-duplicate"
	DescriptionMissing         = "description-missing"
	DescriptionDuplicate       = "description-duplicate"
	OGImageRelative            = "og-image-relative"

	// SPEC §15.
	RobotsBlocked             = "robots-blocked"
	RobotsTxtInvalid          = "robots-txt-invalid"
	RobotsConflict            = "robots-conflict"
	CanonicalToNoindex        = "canonical-to-noindex"
	CanonicalToBlocked        = "canonical-to-blocked"
	HreflangInvalidCode       = "hreflang-invalid-code"
	HreflangDuplicateCode     = "hreflang-duplicate-code"
	HreflangToNon200          = "hreflang-to-non-200"
	HreflangToNonCanonical    = "hreflang-to-non-canonical"
	HreflangToNoindex         = "hreflang-to-noindex"
	LinkBroken                = "link-broken"
	LinkToRedirect            = "link-to-redirect"
	RedirectChain             = "redirect-chain"
	DuplicateWithoutCanonical = "duplicate-without-canonical"
	SitemapMissing            = "sitemap-missing"
	SitemapOrphan             = "sitemap-orphan"
	TitleLength               = "title-length"
	DescriptionLength         = "description-length"
	JSONLDRequired            = "jsonld-required"
	MixedScheme               = "mixed-scheme"

	// -compare (SPEC §15): what a release changes, per page.
	DiffStatus      = "diff-status"
	DiffCanonical   = "diff-canonical"
	DiffRobots      = "diff-robots"
	DiffTitle       = "diff-title"
	DiffDescription = "diff-description"
	DiffAlternates  = "diff-alternates"
	DiffJSONLDTypes = "diff-jsonld-types"
)

// The ranges title-length and description-length hold pages to, in
// characters (docs/audit.md gives the sources).
const (
	TitleMin, TitleMax             = 30, 60
	DescriptionMin, DescriptionMax = 70, 160
)

// Check describes one check.
type Check struct {
	ID       string
	Severity string
	Finds    string // what it finds, in a few words
}

var checks = []Check{
	{CanonicalMissing, Warning, "no canonical"},
	{CanonicalMultiple, Error, "more than one canonical, or a Link header and a tag that disagree"},
	{CanonicalRelative, Error, "a relative canonical"},
	{CanonicalNot200, Error, "the canonical target answers a redirect, 4xx or 5xx"},
	{CanonicalChain, Warning, "the canonical target names yet another canonical"},
	{CanonicalOutsideHead, Error, "a canonical in the body"},
	{OGURLMismatch, Warning, "og:url (or twitter:url) differs from the canonical"},
	{JSONLDIDMismatch, Warning, "a JSON-LD node's url/@id names another page than the canonical"},
	{JSONLDInvalid, Error, "an ld+json block that is not JSON, or has no @type/@graph"},
	{HreflangNotReciprocal, Error, "A names B as an alternate, B does not name A"},
	{HreflangNoSelf, Warning, "a page's alternates do not include itself"},
	{HreflangNoXDefault, Warning, "alternates without x-default"},
	{HreflangOnNonCanonical, Error, "alternates on a page whose canonical is another address"},
	{SitemapNonCanonical, Error, "a sitemap URL whose page names another canonical"},
	{SitemapNoindex, Error, "a sitemap URL that is noindex"},
	{SitemapNot200, Error, "a sitemap URL that does not answer 200"},
	{RobotsBlocksDuplicate, Warning, "robots.txt disallows a URL whose canonical points elsewhere"},
	{PaginationCanonicalToFirst, Warning, "page N of a series names page 1 as canonical"},
	{LinkToNonCanonical, Warning, "an internal link points to a URL that canonicalizes elsewhere"},
	{TitleMissing, Error, "no title"},
	{TitleDuplicate, Warning, "the same title as another page"},
	{DescriptionMissing, Warning, "no meta description"},
	{DescriptionDuplicate, Warning, "the same meta description as another page"},
	{OGImageRelative, Error, "an og:image that is not absolute"},

	{RobotsBlocked, Warning, "a linked or sitemap URL that robots.txt disallows for * or Googlebot"},
	{RobotsTxtInvalid, Error, "robots.txt not 200 text/plain, over 500 KiB, or a line that does not parse"},
	{RobotsConflict, Warning, "robots meta and X-Robots-Tag disagree, or several robots metas"},
	{CanonicalToNoindex, Error, "the canonical target is noindex"},
	{CanonicalToBlocked, Error, "robots.txt disallows the canonical target"},
	{HreflangInvalidCode, Error, "an hreflang that is not ISO 639-1 [+ ISO 3166-1 region] nor x-default"},
	{HreflangDuplicateCode, Error, "two alternates of a page with the same code"},
	{HreflangToNon200, Error, "an alternate target that redirects or errors"},
	{HreflangToNonCanonical, Error, "an alternate target that names another canonical"},
	{HreflangToNoindex, Error, "an alternate target that is noindex"},
	{LinkBroken, Error, "an internal link to a 4xx or 5xx, or to a redirect to one"},
	{LinkToRedirect, Warning, "an internal link to a redirecting URL"},
	{RedirectChain, Warning, "a linked, canonical, alternate or sitemap URL that takes more than one hop to a 200"},
	{DuplicateWithoutCanonical, Warning, "pages with the same body text, neither naming the other as canonical"},
	{SitemapMissing, Warning, "an indexable page that is not in the sitemap"},
	{SitemapOrphan, Warning, "a sitemap URL that no crawled page links to"},
	{TitleLength, Warning, "a title shorter than 30 or longer than 60 characters"},
	{DescriptionLength, Warning, "a meta description shorter than 70 or longer than 160 characters"},
	{JSONLDRequired, Warning, "a JSON-LD node that lacks a property its rich result requires"},
	{MixedScheme, Warning, "an http:// canonical, og:url, alternate or internal link on an https site"},

	{DiffStatus, Warning, "-compare: the page answers another status than production"},
	{DiffCanonical, Warning, "-compare: another canonical than production"},
	{DiffRobots, Warning, "-compare: other robots directives than production"},
	{DiffTitle, Warning, "-compare: another title than production"},
	{DiffDescription, Warning, "-compare: another meta description than production"},
	{DiffAlternates, Warning, "-compare: other hreflang alternates than production"},
	{DiffJSONLDTypes, Warning, "-compare: other JSON-LD types than production"},
}

// Checks lists every check in the order of SPEC §7, then §15.
func Checks() []Check { return append([]Check(nil), checks...) }

func severity(id string) string {
	for _, c := range checks {
		if c.ID == id {
			return c.Severity
		}
	}
	return Error
}

// pageChecks runs the checks that need only the page itself, and fills
// in what the cross-page checks need. It runs in a worker.
func (c *crawler) pageChecks(p *page, f *facts, linkCanon []string, res *result) {
	add := func(check, detail string) {
		res.findings = append(res.findings, Finding{Check: check, Severity: severity(check), URL: c.site.url(p.key), Detail: detail})
	}

	// Robots.
	for _, r := range f.robots {
		if robotsmeta.Noindex(r) {
			p.noindex = true
		}
	}
	for _, r := range f.googlebot {
		if robotsmeta.Noindex(r) {
			p.noindex = true // Googlebot does not index it: for a Google-oriented audit, noindex
		}
	}

	// Canonicals: the first one in the head is what crawlers read, else
	// the Link header's.
	for _, raw := range f.headCanon {
		relativeCanonical(raw, "", add)
	}
	for _, raw := range f.bodyCanon {
		relativeCanonical(raw, "", add)
	}
	for _, raw := range linkCanon {
		relativeCanonical(raw, "Link header ", add)
	}
	switch {
	case len(f.headCanon) > 0:
		c.setCanonical(p, f.base, f.headCanon[0])
	case len(linkCanon) > 0:
		c.setCanonical(p, f.page, linkCanon[0])
	}
	if len(f.headCanon) > 1 {
		add(CanonicalMultiple, fmt.Sprintf("%d canonicals in the head: %s", len(f.headCanon), quoteList(f.headCanon)))
	}
	if d := distinct(f.page, linkCanon); len(d) > 1 {
		add(CanonicalMultiple, fmt.Sprintf("the Link header names %d canonicals: %s", len(d), strings.Join(d, ", ")))
	}
	if len(f.headCanon) > 0 && len(linkCanon) > 0 {
		h, _ := resolveRef(f.base, f.headCanon[0])
		l, _ := resolveRef(f.page, linkCanon[0])
		if h == nil || l == nil || norm(h) != norm(l) {
			add(CanonicalMultiple, fmt.Sprintf("the Link header names %q, the head names %q", linkCanon[0], f.headCanon[0]))
		}
	}
	for _, raw := range f.bodyCanon {
		add(CanonicalOutsideHead, fmt.Sprintf("canonical %q is in the body: the head ended at %s, before it", clip(raw, 200), f.headEnd))
	}
	if len(f.headCanon)+len(f.bodyCanon)+len(linkCanon) == 0 && !f.headCut {
		add(CanonicalMissing, "no canonical link in the head and no Link header")
	}
	if p.canonRaw != "" {
		add(CanonicalNot200, fmt.Sprintf("canonical %q is not an http(s) URL: crawlers cannot fetch it", clip(p.canonRaw, 200)))
	}
	if p.canon != nil && p.elsewhere() && p.canonSite {
		res.check = append(res.check, p.canonKey)
	}

	// Social tags.
	if p.canon != nil {
		canon := norm(p.canon)
		for _, m := range f.social {
			u, kind := resolveRef(f.base, m.value)
			if kind != refOK || norm(u) != canon {
				add(OGURLMismatch, fmt.Sprintf("%s %q differs from the canonical %s", m.key, clip(m.value, 200), canon))
			}
		}
	}
	for _, m := range f.images {
		if !isAbsolute(m.value) {
			add(OGImageRelative, fmt.Sprintf("%s %q is not absolute", m.key, clip(m.value, 200)))
		}
	}

	// JSON-LD. Nodes that share an @id are one node across the page's
	// blocks (a headgate json_ld block beside the upstream's, say).
	var pageIDs map[string]map[string]bool
	if len(f.jsonld) > 1 {
		pageIDs = map[string]map[string]bool{}
		for _, b := range f.jsonld {
			for id, props := range b.ids {
				m := pageIDs[id]
				if m == nil {
					m = map[string]bool{}
					pageIDs[id] = m
				}
				for p := range props {
					m[p] = true
				}
			}
		}
	}
	seen := map[string]bool{}
	for i, b := range f.jsonld {
		if b.err != "" {
			add(JSONLDInvalid, fmt.Sprintf("ld+json block %d %s", i+1, b.err))
			continue
		}
		if pageIDs != nil {
			b.missing = ldMissingWith(b.nodes, pageIDs)
		}
		c.jsonldFacts(p, i, b, add, res)
		if p.canon == nil {
			continue
		}
		for _, r := range b.refs {
			u, kind := resolveRef(f.base, r.value)
			// A blank node ("_:b0") or a non-http IRI ("urn:uuid:…")
			// names no page: only an http(s) address can name another.
			if kind != refOK || norm(u) == norm(p.canon) || seen[r.prop+r.value] {
				continue
			}
			seen[r.prop+r.value] = true
			add(JSONLDIDMismatch, fmt.Sprintf("%s %s %q names another page than the canonical %s", r.typ, r.prop, clip(r.value, 200), norm(p.canon)))
		}
	}

	// Alternates.
	if len(f.alts) > 0 {
		self, xdefault := false, false
		var langs []string
		codes := map[string]string{}
		for _, a := range f.alts {
			langs = append(langs, a.lang)
			if why := hreflangProblem(a.lang); why != "" {
				add(HreflangInvalidCode, fmt.Sprintf("hreflang %q (to %s) %s", clip(a.lang, 60), clip(a.href, 200), why))
			}
			lc := strings.ToLower(a.lang)
			if prev, dup := codes[lc]; dup {
				add(HreflangDuplicateCode, fmt.Sprintf("hreflang %q names %s and %s", clip(a.lang, 60), clip(prev, 200), clip(a.href, 200)))
			} else {
				codes[lc] = a.href
			}
			if strings.EqualFold(a.lang, "x-default") {
				xdefault = true
			}
			u, kind := resolveRef(f.base, a.href)
			if kind != refOK {
				continue
			}
			pa := pageAlt{lang: a.lang, abs: norm(u)}
			pa.key, pa.site = c.site.keyOf(u)
			if pa.site && pa.key == p.key {
				self = true
			}
			if !pa.site {
				res.skips = append(res.skips, Skip{URL: pa.abs, Reason: "hreflang alternate on another site, not checked"})
			} else if pa.key != p.key {
				res.check = append(res.check, pa.key)
			}
			p.alts = append(p.alts, pa)
		}
		if !self {
			add(HreflangNoSelf, fmt.Sprintf("alternates (%s): none is the page itself", strings.Join(langs, ", ")))
		}
		if !xdefault {
			add(HreflangNoXDefault, fmt.Sprintf("alternates (%s) without x-default", strings.Join(langs, ", ")))
		}
		if p.elsewhere() {
			add(HreflangOnNonCanonical, fmt.Sprintf("alternates (%s) on a page whose canonical is %s", strings.Join(langs, ", "), norm(p.canon)))
		}
	}

	// Title and description.
	p.title = f.title
	for _, d := range f.descs {
		if d != "" {
			p.desc = d
			break
		}
	}
	switch {
	case !f.hasTitle && f.headCut:
		// Absent as far as the head was read: not reported (the page's
		// note says where reading stopped).
	case !f.hasTitle:
		add(TitleMissing, "no <title>")
	case f.title == "":
		add(TitleMissing, "the <title> is empty")
	}
	if p.indexable() {
		switch {
		case len(f.descs) == 0 && f.headCut:
		case len(f.descs) == 0:
			add(DescriptionMissing, "no meta description")
		case p.desc == "":
			add(DescriptionMissing, "the meta description is empty")
		}
	}

	c.lengthChecks(p, f, add)
	c.mixedScheme(p, f, linkCanon, add)
	if f.text.n > 0 {
		p.textHash, p.hasText = f.text.h, true
	}

	// Pagination.
	if p.canon != nil && p.canonSite {
		if n, firsts := pagination(f.page); n > 1 {
			for _, k := range firsts {
				if k == p.canonKey {
					p.toFirst = true
					add(PaginationCanonicalToFirst, fmt.Sprintf("page %d of a series names page 1 (%s) as its canonical", n, norm(p.canon)))
					break
				}
			}
		}
	}
}

// headerChecks checks the canonical Link header of a response that is not
// HTML (a PDF): the only canonical it can have.
func (c *crawler) headerChecks(p *page, linkCanon []string, res *result) {
	if len(linkCanon) == 0 {
		return
	}
	add := func(check, detail string) {
		res.findings = append(res.findings, Finding{Check: check, Severity: severity(check), URL: c.site.url(p.key), Detail: detail})
	}
	base := c.site.parse(p.key)
	for _, raw := range linkCanon {
		relativeCanonical(raw, "Link header ", add)
	}
	if d := distinct(base, linkCanon); len(d) > 1 {
		add(CanonicalMultiple, fmt.Sprintf("the Link header names %d canonicals: %s", len(d), strings.Join(d, ", ")))
	}
	c.setCanonical(p, base, linkCanon[0])
	if p.canonRaw != "" {
		add(CanonicalNot200, fmt.Sprintf("Link header canonical %q is not an http(s) URL: crawlers cannot fetch it", clip(p.canonRaw, 200)))
	}
	if p.elsewhere() && p.canonSite {
		res.check = append(res.check, p.canonKey)
	}
}

func relativeCanonical(raw, where string, add func(string, string)) {
	if isAbsolute(raw) {
		return
	}
	if _, kind := resolveRef(&url.URL{Scheme: "https", Host: "x", Path: "/"}, raw); kind == refScheme || kind == refBad {
		return // not a relative URL: canonical-not-200 reports it
	}
	if strings.TrimSpace(raw) == "" {
		add(CanonicalRelative, where+"canonical href is empty")
		return
	}
	add(CanonicalRelative, fmt.Sprintf("%scanonical %q is relative", where, clip(raw, 200)))
}

// setCanonical records the canonical crawlers read.
func (c *crawler) setCanonical(p *page, base *url.URL, raw string) {
	u, kind := resolveRef(base, raw)
	if kind != refOK {
		if kind != refEmpty {
			p.canonRaw = raw
		} else {
			p.canon = base // href="" is the document itself
			p.canonKey, p.canonSite = c.site.keyOf(base)
		}
		return
	}
	p.canon = u
	p.canonKey, p.canonSite = c.site.keyOf(u)
}

func distinct(base *url.URL, raws []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range raws {
		s := r
		if u, kind := resolveRef(base, r); kind == refOK {
			s = norm(u)
		}
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func quoteList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(clip(s, 200))
	}
	return strings.Join(q, ", ")
}

// pageParams are query keys that number the pages of a series.
var pageParams = map[string]bool{"page": true, "p": true, "pg": true, "paged": true, "pagenum": true, "pageno": true, "page_number": true}

var pagePath = regexp.MustCompile(`^(.*)/page/([0-9]+)/?$`)

// pagination returns N when u is page N of a series (?page=N, /page/N),
// and the keys page 1 of that series goes by.
func pagination(u *url.URL) (int, []string) {
	if m := pagePath.FindStringSubmatch(u.EscapedPath()); m != nil {
		n, err := strconv.Atoi(m[2])
		if err != nil || n < 2 {
			return 0, nil
		}
		q := ""
		if u.RawQuery != "" {
			q = "?" + u.RawQuery
		}
		prefix := m[1]
		return n, []string{orSlash(prefix) + q, prefix + "/" + q, prefix + "/page/1" + q, prefix + "/page/1/" + q}
	}
	if u.RawQuery == "" {
		return 0, nil
	}
	parts := strings.Split(u.RawQuery, "&")
	for i, kv := range parts {
		k, v, _ := strings.Cut(kv, "=")
		if !pageParams[strings.ToLower(k)] {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 2 {
			return 0, nil
		}
		rest := append(append([]string(nil), parts[:i]...), parts[i+1:]...)
		one := append(append(append([]string(nil), parts[:i]...), k+"=1"), parts[i+1:]...)
		p := u.EscapedPath()
		firsts := []string{p + "?" + strings.Join(one, "&")}
		if len(rest) == 0 {
			firsts = append(firsts, orSlash(p))
		} else {
			firsts = append(firsts, p+"?"+strings.Join(rest, "&"))
		}
		return n, firsts
	}
	return 0, nil
}

func orSlash(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

// crossChecks runs the checks between pages, once the crawl is done.
func (c *crawler) crossChecks() {
	add := func(check string, key string, detail string) {
		c.findings = append(c.findings, Finding{Check: check, Severity: severity(check), URL: c.site.url(key), Detail: detail})
	}
	get := func(key string) *page {
		if id, ok := c.ids[key]; ok {
			return c.pages[id]
		}
		return nil
	}

	for _, p := range c.pages {
		if p == nil || p.status != 200 {
			continue
		}
		// The canonical target.
		if p.canon != nil && p.canonSite && p.canonKey != p.key {
			if t := get(p.canonKey); t != nil {
				switch {
				case t.status != 200:
					add(CanonicalNot200, p.key, fmt.Sprintf("canonical %s %s", norm(p.canon), t.answer()))
				case t.canon != nil && (!t.canonSite || t.canonKey != t.key):
					add(CanonicalChain, p.key, fmt.Sprintf("canonical %s names another canonical: %s", norm(p.canon), norm(t.canon)))
				}
			}
		}
		// Alternates name each other.
		for _, a := range p.alts {
			if !a.site || a.key == p.key || strings.EqualFold(a.lang, "x-default") {
				continue
			}
			t := get(a.key)
			if t == nil {
				continue
			}
			if t.status != 200 || t.elsewhere() || t.noindex {
				continue // hreflang-to-non-200, -to-non-canonical, -to-noindex
			}
			back := false
			for _, b := range t.alts {
				if b.site && b.key == p.key {
					back = true
					break
				}
			}
			if !back {
				add(HreflangNotReciprocal, p.key, fmt.Sprintf("names %s (hreflang=%s) as an alternate; %s does not name it back", a.abs, a.lang, a.abs))
			}
		}
		// robots.txt hides the canonical of a duplicate.
		if c.robots != nil && p.elsewhere() {
			if blocked, agent, rule := c.robots.blocksFor(p.key); blocked {
				add(RobotsBlocksDuplicate, p.key, fmt.Sprintf("robots.txt %q for %s keeps crawlers out, so they never read its canonical %s", rule.String(), agent, norm(p.canon)))
			}
		}
		// Links to duplicates.
		if p.html {
			for _, id := range p.links {
				t := c.pages[id]
				if t == nil || t.status != 200 || !t.elsewhere() || t.toFirst {
					continue
				}
				add(LinkToNonCanonical, p.key, fmt.Sprintf("links to %s, whose canonical is %s", c.site.url(t.key), norm(t.canon)))
			}
		}
	}

	// Sitemap URLs.
	for _, id := range c.sitemapOrder {
		p := c.pages[id]
		if p == nil {
			continue
		}
		switch {
		case p.status != 200:
			add(SitemapNot200, p.key, "listed in the sitemap; it "+p.answer())
		case p.elsewhere():
			add(SitemapNonCanonical, p.key, "listed in the sitemap; its canonical is "+norm(p.canon))
		case p.noindex:
			add(SitemapNoindex, p.key, "listed in the sitemap; it is noindex ("+p.noindexIn+")")
		}
	}

	c.duplicates(TitleDuplicate, "title", func(p *page) string { return p.title })
	c.duplicates(DescriptionDuplicate, "meta description", func(p *page) string { return p.desc })
}

// duplicates reports, on every indexable page, the other indexable pages
// that have the same text, but for its translations: pages that name each
// other as hreflang alternates may share a title (a brand, a product name).
func (c *crawler) duplicates(check, what string, text func(*page) string) {
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
		for _, k := range keys {
			var others []string
			for _, o := range keys {
				if o != k && !c.translations(k, o) {
					others = append(others, c.site.url(o))
				}
			}
			if len(others) == 0 {
				continue
			}
			more := ""
			if len(others) > 3 {
				more = fmt.Sprintf(" and %d more", len(others)-3)
				others = others[:3]
			}
			c.findings = append(c.findings, Finding{Check: check, Severity: severity(check), URL: c.site.url(k),
				Detail: fmt.Sprintf("%s %q is also the %s of %s%s", what, clip(t, 120), what, strings.Join(others, ", "), more)})
		}
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
