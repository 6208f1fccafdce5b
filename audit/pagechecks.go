package audit

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/headgate/headgate/internal/robotsmeta"
)

// maxPerPage bounds the findings of one check on one page that name a
// target (links, robots rules): the rest are counted in one more finding.
const maxPerPage = 20

// pageFacts fills in what a page's checks and the cross-page checks read
// of it: noindex, the canonical crawlers read, the JSON-LD types and the
// nodes' missing properties, the alternates, the title and description,
// the body text's hash, the robots directives, whether it is page N of a
// series canonical to page 1; and what to crawl next for them.
func (c *crawler) pageFacts(p *page, f *facts, linkCanon, xRobots []string, res *result) {
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
	switch {
	case len(f.headCanon) > 0:
		c.setCanonical(p, f.base, f.headCanon[0])
	case len(linkCanon) > 0:
		c.setCanonical(p, f.page, linkCanon[0])
	}
	if p.canon != nil && p.elsewhere() && p.canonSite {
		res.check = append(res.check, p.canonKey)
	}
	c.jsonldFacts(p, f, res)
	c.altFacts(p, f, res)

	p.title = f.title
	for _, d := range f.descs {
		if d != "" {
			p.desc = d
			break
		}
	}
	if f.text.n > 0 {
		p.textHash, p.hasText = f.text.h, true
	}
	// For -compare: what the page asks, meta and header together (the
	// most restrictive wins).
	mi, mf := robotsDirectives(f.robots, false)
	hi, hf := robotsDirectives(xRobots, true)
	p.robots = directiveWord(min(mi, hi), "index", "noindex") + ", " + directiveWord(min(mf, hf), "follow", "nofollow")
	if p.canon != nil && p.canonSite {
		if n, firsts := pagination(f.page); n > 1 && contains(firsts, p.canonKey) {
			p.toFirst = true
		}
	}
}

// jsonldFacts records the page's JSON-LD types, notes what a block's walk
// left out, and works out what each valid block's nodes lack. Nodes that
// share an @id are one node across the page's blocks (a headgate json_ld
// block beside the upstream's, say).
func (c *crawler) jsonldFacts(p *page, f *facts, res *result) {
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
	for i := range f.jsonld {
		b := &f.jsonld[i]
		if b.err != "" {
			continue
		}
		if pageIDs != nil {
			b.missing = ldMissingWith(b.nodes, pageIDs)
		}
		for _, t := range b.types {
			if len(p.ldTypes) < maxLDTypes && !contains(p.ldTypes, t) {
				p.ldTypes = append(p.ldTypes, t)
			}
		}
		if b.note != "" {
			res.skips = append(res.skips, Skip{URL: c.site.url(p.key), Reason: fmt.Sprintf("ld+json block %d: %s", i+1, b.note)})
		}
	}
}

// altFacts records the page's alternates that are URLs, and asks for the
// crawl of those on the site.
func (c *crawler) altFacts(p *page, f *facts, res *result) {
	for _, a := range f.alts {
		u, kind := resolveRef(f.base, a.href)
		if kind != refOK {
			continue
		}
		pa := pageAlt{lang: a.lang, abs: norm(u)}
		pa.key, pa.site = c.site.keyOf(u)
		if !pa.site {
			res.skips = append(res.skips, Skip{URL: pa.abs, Reason: "hreflang alternate on another site, not checked"})
		} else if pa.key != p.key {
			res.check = append(res.check, pa.key)
		}
		p.alts = append(p.alts, pa)
	}
}

func canonicalRelative(r *pageRun) {
	for _, raws := range [][]string{r.f.headCanon, r.f.bodyCanon} {
		for _, raw := range raws {
			if d := relativeCanonical(raw, ""); d != "" {
				r.add(d)
			}
		}
	}
	for _, raw := range r.linkCanon {
		if d := relativeCanonical(raw, "Link header "); d != "" {
			r.add(d)
		}
	}
}

func canonicalMultiple(r *pageRun) {
	f, linkCanon := r.f, r.linkCanon
	if len(f.headCanon) > 1 {
		r.add(fmt.Sprintf("%d canonicals in the head: %s", len(f.headCanon), quoteList(f.headCanon)))
	}
	if d := distinct(f.page, linkCanon); len(d) > 1 {
		r.add(fmt.Sprintf("the Link header names %d canonicals: %s", len(d), strings.Join(d, ", ")))
	}
	if len(f.headCanon) > 0 && len(linkCanon) > 0 {
		h, _ := resolveRef(f.base, f.headCanon[0])
		l, _ := resolveRef(f.page, linkCanon[0])
		if h == nil || l == nil || norm(h) != norm(l) {
			r.add(fmt.Sprintf("the Link header names %q, the head names %q", linkCanon[0], f.headCanon[0]))
		}
	}
}

func canonicalOutsideHead(r *pageRun) {
	for _, raw := range r.f.bodyCanon {
		r.add(fmt.Sprintf("canonical %q is in the body: the head ended at %s, before it", clip(raw, 200), r.f.headEnd))
	}
}

// canonicalMissing: a noindex page (robots or googlebot meta, X-Robots-Tag)
// needs no canonical: it asks to be left out of the index, so there is no
// original to name (a wiki's edit and history views).
func canonicalMissing(r *pageRun) {
	if r.p.noindex {
		return
	}
	if len(r.f.headCanon)+len(r.f.bodyCanon)+len(r.linkCanon) == 0 && !r.f.headCut {
		r.add("no canonical link in the head and no Link header")
	}
}

// canonicalNotHTTP is canonical-not-200 of a canonical no crawler can
// fetch; crossChecks asks the others' targets.
func canonicalNotHTTP(r *pageRun) {
	if r.p.canonRaw != "" {
		r.add(fmt.Sprintf("canonical %q is not an http(s) URL: crawlers cannot fetch it", clip(r.p.canonRaw, 200)))
	}
}

func ogURLMismatch(r *pageRun) {
	if r.p.canon == nil {
		return
	}
	canon := norm(r.p.canon)
	for _, m := range r.f.social {
		u, kind := resolveRef(r.f.base, m.value)
		if kind != refOK || norm(u) != canon {
			r.add(fmt.Sprintf("%s %q differs from the canonical %s", m.key, clip(m.value, 200), canon))
		}
	}
}

func ogImageRelative(r *pageRun) {
	for _, m := range r.f.images {
		if !isAbsolute(m.value) {
			r.add(fmt.Sprintf("%s %q is not absolute", m.key, clip(m.value, 200)))
		}
	}
}

func jsonldInvalid(r *pageRun) {
	for i, b := range r.f.jsonld {
		if b.err != "" {
			r.add(fmt.Sprintf("ld+json block %d %s", i+1, b.err))
		}
	}
}

// jsonldRequired reports what a valid block's nodes lack, as jsonldFacts
// worked it out.
func jsonldRequired(r *pageRun) {
	for i, b := range r.f.jsonld {
		if b.err != "" {
			continue
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
				r.add(fmt.Sprintf("ld+json block %d: and more nodes lack required properties", i+1))
				break
			}
			r.add(fmt.Sprintf("ld+json block %d: %s", i+1, s))
		}
	}
}

func jsonldIDMismatch(r *pageRun) {
	p := r.p
	if p.canon == nil {
		return
	}
	seen := map[string]bool{}
	for _, b := range r.f.jsonld {
		if b.err != "" {
			continue
		}
		for _, ref := range b.refs {
			u, kind := resolveRef(r.f.base, ref.value)
			// A blank node ("_:b0") or a non-http IRI ("urn:uuid:…")
			// names no page: only an http(s) address can name another.
			if kind != refOK || norm(u) == norm(p.canon) || seen[ref.prop+ref.value] {
				continue
			}
			seen[ref.prop+ref.value] = true
			r.add(fmt.Sprintf("%s %s %q names another page than the canonical %s", ref.typ, ref.prop, clip(ref.value, 200), norm(p.canon)))
		}
	}
}

func hreflangInvalidCode(r *pageRun) {
	for _, a := range r.f.alts {
		if why := hreflangProblem(a.lang); why != "" {
			r.add(fmt.Sprintf("hreflang %q (to %s) %s", clip(a.lang, 60), clip(a.href, 200), why))
		}
	}
}

func hreflangDuplicateCode(r *pageRun) {
	codes := map[string]string{}
	for _, a := range r.f.alts {
		lc := strings.ToLower(a.lang)
		if prev, dup := codes[lc]; dup {
			r.add(fmt.Sprintf("hreflang %q names %s and %s", clip(a.lang, 60), clip(prev, 200), clip(a.href, 200)))
		} else {
			codes[lc] = a.href
		}
	}
}

// altLangs lists the codes of a page's alternates, as written.
func altLangs(f *facts) string {
	langs := make([]string, len(f.alts))
	for i, a := range f.alts {
		langs[i] = a.lang
	}
	return strings.Join(langs, ", ")
}

func hreflangNoSelf(r *pageRun) {
	if len(r.f.alts) == 0 {
		return
	}
	for _, a := range r.p.alts {
		if a.site && a.key == r.p.key {
			return
		}
	}
	r.add(fmt.Sprintf("alternates (%s): none is the page itself", altLangs(r.f)))
}

func hreflangNoXDefault(r *pageRun) {
	if len(r.f.alts) == 0 {
		return
	}
	for _, a := range r.f.alts {
		if strings.EqualFold(a.lang, "x-default") {
			return
		}
	}
	r.add(fmt.Sprintf("alternates (%s) without x-default", altLangs(r.f)))
}

func hreflangOnNonCanonical(r *pageRun) {
	if len(r.f.alts) > 0 && r.p.elsewhere() {
		r.add(fmt.Sprintf("alternates (%s) on a page whose canonical is %s", altLangs(r.f), norm(r.p.canon)))
	}
}

func titleMissing(r *pageRun) {
	switch f := r.f; {
	case !f.hasTitle && f.headCut:
		// Absent as far as the head was read: not reported (the page's
		// note says where reading stopped).
	case !f.hasTitle:
		r.add("no <title>")
	case f.title == "":
		r.add("the <title> is empty")
	}
}

func descriptionMissing(r *pageRun) {
	if !r.p.indexable() {
		return
	}
	switch {
	case len(r.f.descs) == 0 && r.f.headCut:
	case len(r.f.descs) == 0:
		r.add("no meta description")
	case r.p.desc == "":
		r.add("the meta description is empty")
	}
}

// titleLength holds the title of an indexable page to the range of
// docs/audit.md.
func titleLength(r *pageRun) {
	f := r.f
	if !r.p.indexable() || !f.hasTitle || f.title == "" {
		return
	}
	// A head not read to its end may hold a title cut short: its length
	// is known when its end tag was read; cut, it is at least what was
	// read, too long already or not known.
	n := utf8.RuneCountInString(f.title)
	switch {
	case !f.headCut || f.titleEnd:
		if n < TitleMin || n > TitleMax {
			r.add(fmt.Sprintf("the title is %d characters long (%d–%d read well in results): %q", n, TitleMin, TitleMax, clip(f.title, 120)))
		}
	case n > TitleMax:
		r.add(fmt.Sprintf("the title is at least %d characters long, as far as the page was read (%d–%d read well in results): %q", n, TitleMin, TitleMax, clip(f.title, 120)))
	}
}

// descriptionLength holds the description of an indexable page to the
// range of docs/audit.md.
func descriptionLength(r *pageRun) {
	if !r.p.indexable() || r.p.desc == "" {
		return
	}
	if n := utf8.RuneCountInString(r.p.desc); n < DescriptionMin || n > DescriptionMax {
		r.add(fmt.Sprintf("the meta description is %d characters long (%d–%d read well in results): %q", n, DescriptionMin, DescriptionMax, clip(r.p.desc, 120)))
	}
}

// mixedScheme reports http:// URLs a page names on an https site.
func mixedScheme(r *pageRun) {
	c, f := r.c, r.f
	if !c.site.https() {
		return
	}
	// The site's own hosts over http: a relative URL resolved against an
	// http crawl origin (a staging copy on loopback) is not one.
	isHTTP := func(raw string) bool {
		u, kind := resolveRef(f.base, raw)
		return kind == refOK && c.site.httpsTwin(u)
	}
	canons := append(append([]string(nil), f.headCanon...), r.linkCanon...)
	for _, raw := range canons {
		if isHTTP(raw) {
			r.add(fmt.Sprintf("canonical %q is http:// on an https site", clip(raw, 200)))
			break
		}
	}
	for _, m := range f.social {
		if isHTTP(m.value) {
			r.add(fmt.Sprintf("%s %q is http:// on an https site", m.key, clip(m.value, 200)))
		}
	}
	for _, a := range f.alts {
		if isHTTP(a.href) {
			r.add(fmt.Sprintf("alternate (hreflang=%s) %q is http:// on an https site", clip(a.lang, 40), clip(a.href, 200)))
		}
	}
	for _, l := range f.httpLinks {
		r.add("links to " + l + ": http:// on an https site")
	}
}

func paginationToFirst(r *pageRun) {
	if r.p.toFirst {
		n, _ := pagination(r.f.page)
		r.add(fmt.Sprintf("page %d of a series names page 1 (%s) as its canonical", n, norm(r.p.canon)))
	}
}

// robotsConflict reports robots metas that disagree with each other or
// with X-Robots-Tag.
func robotsConflict(r *pageRun) {
	metas, header := r.f.robots, r.xRobots
	if len(metas) > 1 {
		r.add(fmt.Sprintf("%d robots metas: %s (crawlers apply the most restrictive of them)", len(metas), quoteList(metas)))
	}
	if len(metas) == 0 || len(header) == 0 {
		return
	}
	mi, mf := robotsDirectives(metas, false)
	hi, hf := robotsDirectives(header, true)
	if mi != 0 && hi != 0 && mi != hi {
		r.add(fmt.Sprintf("the robots meta says %s, X-Robots-Tag says %s (%s vs %s)", directiveWord(mi, "index", "noindex"), directiveWord(hi, "index", "noindex"), quoteList(metas), quoteList(header)))
	}
	if mf != 0 && hf != 0 && mf != hf {
		r.add(fmt.Sprintf("the robots meta says %s, X-Robots-Tag says %s (%s vs %s)", directiveWord(mf, "follow", "nofollow"), directiveWord(hf, "follow", "nofollow"), quoteList(metas), quoteList(header)))
	}
}

// directiveWord spells a robotsDirectives value: no when forbidden, else yes.
func directiveWord(v int, yes, no string) string {
	if v < 0 {
		return no
	}
	return yes
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
		if d := relativeCanonical(raw, "Link header "); d != "" {
			add(CanonicalRelative, d)
		}
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

// relativeCanonical returns what is wrong with a canonical that is
// relative, or "".
func relativeCanonical(raw, where string) string {
	if isAbsolute(raw) {
		return ""
	}
	if _, kind := resolveRef(&url.URL{Scheme: "https", Host: "x", Path: "/"}, raw); kind == refScheme || kind == refBad {
		return "" // not a relative URL: canonical-not-200 reports it
	}
	if strings.TrimSpace(raw) == "" {
		return where + "canonical href is empty"
	}
	return fmt.Sprintf("%scanonical %q is relative", where, clip(raw, 200))
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

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
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
