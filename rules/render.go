package rules

import (
	"net/url"
	"strings"

	"github.com/headgate/headgate/rules/pattern"
)

// render is Render's working state: the match, its merged fields, the head
// being built and the template variables. It lives on Render's stack; it
// holds no pointer to anything else on the stack, so that storing its
// values in the head moves nothing to the heap.
type render struct {
	m    *Match
	c    *Config
	f    *merged
	h    *Head
	base *url.URL
	v    vars
	// canon is the page's effective canonical (hasCanon: there is one):
	// under fill an upstream canonical stays, and og:url, the alternates
	// and {canonical} follow it.
	canon    string
	hasCanon bool
	hlOwn    string // the page's own language in its hreflang group
	hlOK     bool   // the page's canonical is in an hreflang table (§12.3)
}

// Render computes the head the rules write on this page, given what the
// upstream document holds. Values are rendered in this order, each seeing
// the ones before it: canonical, title, description, then everything else.
func (m *Match) Render(page Page) *Head {
	c := m.cfg
	f := &m.f
	r := render{m: m, c: c, f: f, base: c.base,
		h: &Head{Policy: f.policy, ReplaceJSONLD: f.replaceJSON, Meta: make([]Meta, 0, f.metaCap(len(c.Site.Locales)))},
		v: vars{
			pageMeta: page.Meta, pageCanon: page.Canonical, pageLang: page.Lang,
			locale:    m.Locale,
			path:      EscapePath(m.Path),
			baseURL:   c.Site.BaseURL,
			title:     boundText(page.Title),
			pageTitle: boundText(page.Title), pageDesc: boundText(page.Description), description: boundText(page.Description),
			data: m.data,
		},
	}
	if r.base == nil {
		r.base, _ = url.Parse(c.Site.BaseURL + "/")
	}
	r.canonical(&page)
	r.titleAndDescription(&page)
	r.robots()
	r.alternates(&page)
	if f.og {
		r.openGraph()
		r.ogImages()
		r.ogArticle()
	}
	if f.tw {
		r.twitter()
	}
	r.jsonLD()
	r.headers()
	r.h.Markdown = m.MarkdownURL()
	return r.h
}

// vars returns the template variables for a rule's values: its path
// parameters and lookups.
func (r *render) vars(mr *Matched) *vars {
	if mr != nil {
		r.v.params = mr.Params
	} else {
		r.v.params = nil
	}
	r.v.mr = mr
	return &r.v
}

// url renders a URL-valued field; false when nothing is written (a
// missing row, an empty template, or a URL the rules refuse, recorded in
// Dropped).
func (r *render) url(field string, rf ref) (string, bool) {
	if rf.t.data && rf.t.missing(r.vars(rf.m)) {
		return "", false // §12.1: no row or an empty cell writes nothing
	}
	s := rf.t.render(r.vars(rf.m), true)
	if s == "" && !rf.t.Static() {
		return "", false // a template that comes out empty writes nothing (§16.3)
	}
	s = pattern.RespellURLPath(s, r.c.Site.BaseURL)
	s = r.c.spellURLPath(s)
	if len(s) > MaxValueBytes {
		// §23: a URL is never cut (a cut URL names another page): dropped.
		r.h.Dropped = append(r.h.Dropped, Drop{Rule: rf.m.Rule.Match, Field: field, Value: clip(s), Reason: "too_long"})
		return "", false
	}
	abs, why := AbsURL(r.base, s)
	if why != "" {
		r.h.Dropped = append(r.h.Dropped, Drop{Rule: rf.m.Rule.Match, Field: field, Value: s, Reason: why})
		return "", false
	}
	return abs, true
}

// text renders a text field; "" when a lookup finds nothing (add then
// skips it).
func (r *render) text(rf ref) string {
	if rf.t.data && rf.t.missing(r.vars(rf.m)) {
		return ""
	}
	return boundText(rf.t.render(r.vars(rf.m), false))
}

// textOr is text, but a table lookup that finds no row or an empty cell
// (§12.1) is as if no rule set the field: def, the field's default (the
// page's title for og:title), is written.
func (r *render) textOr(rf ref, def string) string {
	if rf.t.data && rf.t.missing(r.vars(rf.m)) {
		return def
	}
	return boundText(rf.t.render(r.vars(rf.m), false))
}

// add appends a meta tag, unless its content is empty: an empty value says
// nothing, and an empty tag would say less.
func (r *render) add(ident, attr, key, content string) {
	if strings.TrimSpace(content) == "" {
		return
	}
	r.h.Meta = append(r.h.Meta, Meta{Identity: ident, Attr: attr, Key: key, Content: content})
}

// prop and name add a meta tag that is its own identity (og:*, article:*
// by property; twitter:* by name).
func (r *render) prop(key, content string) { r.add(key, "property", key, content) }
func (r *render) name(key, content string) { r.add(key, "name", key, content) }

// canonical renders the canonical and the page's effective one.
func (r *render) canonical(page *Page) {
	m, f, h := r.m, r.f, r.h
	switch {
	case f.canonical.set() && f.canonical.t.Raw == UpstreamOrSelf:
		if h.canonical = r.c.upstreamCanonical(page.Canonical); h.canonical == "" {
			h.canonical = m.SelfURL(true)
		}
		h.Canonical, h.ForceCanonical = &h.canonical, true
	case f.canonical.set() && f.canonical.t.Raw == "self":
		h.canonical = m.SelfURL(true)
		h.Canonical = &h.canonical
	case f.canonical.set() && !(f.canonical.t.data && f.canonical.t.missing(r.vars(f.canonical.m))):
		// (A table lookup that finds no row or an empty cell is as if no
		// rule set it, §12.1: a localized page falls to its default.)
		if s, ok := r.url("canonical", f.canonical); ok {
			h.canonical = s
			h.Canonical = &h.canonical
		}
	case f.localized:
		// §4.7: the page's own address, without a query except keep_query.
		h.canonical = m.SelfURL(true)
		h.Canonical = &h.canonical
	}
	if h.Canonical != nil {
		r.canon, r.hasCanon = *h.Canonical, true
	}
	if f.policy == Fill && page.Canonical != "" && !h.ForceCanonical {
		h.Canonical = nil
		r.canon, r.hasCanon = page.Canonical, true
	}
	r.v.canonical = page.Canonical
	if r.hasCanon {
		r.v.canonical = r.canon
	}
}

// titleAndDescription renders both; under fill the upstream's stay where
// present. A template that renders to nothing ("{page.description}" on a
// page without one) writes nothing, rather than an empty tag.
func (r *render) titleAndDescription(page *Page) {
	f, h := r.f, r.h
	write := func(has bool) bool { return f.policy == Override || !has }
	if f.title.set() && write(page.HasTitle) && !(f.title.t.data && f.title.t.missing(r.vars(f.title.m))) {
		if t := boundText(f.title.t.render(r.vars(f.title.m), false)); strings.TrimSpace(t) != "" {
			h.title = boundText(applyTitleTemplate(r.c.Site.TitleTemplate, t))
			h.Title = &h.title
			r.v.title = t
		}
	}
	if f.description.set() && write(page.HasDescription) && !(f.description.t.data && f.description.t.missing(r.vars(f.description.m))) {
		if d := boundText(f.description.t.render(r.vars(f.description.m), false)); strings.TrimSpace(d) != "" {
			h.description = d
			h.Description = &h.description
			r.v.description = d
		}
	}
}

// robots joins the robots words and directives.
func (r *render) robots() {
	f := r.f
	if !f.robotsSet {
		return
	}
	var arr [128]byte
	b := arr[:0]
	word := func(w string) {
		if len(b) > 0 {
			b = append(b, ", "...)
		}
		b = append(b, w...)
	}
	if f.robotsIndex != nil {
		word(pickWord(*f.robotsIndex, "index", "noindex"))
	}
	if f.robotsFollow != nil {
		word(pickWord(*f.robotsFollow, "follow", "nofollow"))
	}
	for _, d := range f.directives {
		word(d)
	}
	if len(b) > 0 {
		r.h.robots = string(b)
		r.h.Robots = &r.h.robots
	}
}

// alternates writes a localized page's hreflang links, or, when the page's
// canonical is in an hreflang table, its group's rows instead (§12.3).
func (r *render) alternates(page *Page) {
	m, c, h := r.m, r.c, r.h
	if r.f.localized && m.Locale != "" && r.hasCanon && stripQuery(r.canon) == m.SelfURL(false) {
		for _, l := range c.Site.Locales {
			h.Alternates = append(h.Alternates, Alternate{l, c.Site.BaseURL + "/" + l + c.SpellPath(EscapePath(m.rest))})
		}
		if c.Site.XDefault {
			rest := m.rest
			if rest == "" { // the locale's home, /de: the unprefixed one is /
				rest = "/"
			}
			h.Alternates = append(h.Alternates, Alternate{"x-default", c.Site.BaseURL + c.SpellPath(EscapePath(rest))})
		}
	}
	if c.data == nil || len(c.data.hreflang) == 0 {
		return
	}
	key := page.Canonical
	if r.hasCanon {
		key = r.canon
	}
	if key == "" {
		key = m.SelfURL(false)
	}
	var alts []Alternate
	if alts, r.hlOwn, r.hlOK = m.hreflangRender(key); r.hlOK {
		h.Alternates, h.HreflangTable, h.hreflangKey = alts, true, key
	}
}

// openGraph writes og:title to og:locale:alternate.
func (r *render) openGraph() {
	m, c, f := r.m, r.c, r.f
	if f.ogTitle.set() {
		r.prop("og:title", r.textOr(f.ogTitle, r.v.title))
	} else if r.v.title != "" {
		r.prop("og:title", r.v.title)
	}
	if f.ogDesc.set() {
		r.prop("og:description", r.textOr(f.ogDesc, r.v.description))
	} else if r.v.description != "" {
		r.prop("og:description", r.v.description)
	}
	if f.ogType.set() {
		r.prop("og:type", r.text(f.ogType))
	}
	if f.ogURL.set() {
		if u, ok := r.url("open_graph.url", f.ogURL); ok {
			r.prop("og:url", u)
		}
	} else if c.Site.OGURLFromCanonical && r.hasCanon {
		r.prop("og:url", r.canon)
	}
	if f.ogSiteName.set() {
		r.prop("og:site_name", r.text(f.ogSiteName))
	}
	switch {
	case f.ogLocale.set():
		r.prop("og:locale", r.text(f.ogLocale))
	case r.hlOK:
		if r.hlOwn != "" {
			r.prop("og:locale", ogLocale(r.hlOwn))
			r.h.OGLocaleFromGroup = true
		}
	case f.localized && m.Locale != "":
		r.prop("og:locale", ogLocale(m.Locale))
	}
	if r.hlOK {
		// The group's other languages, never x-default (§17).
		for _, a := range r.h.Alternates {
			if !strings.EqualFold(a.Hreflang, r.hlOwn) && !strings.EqualFold(a.Hreflang, "x-default") {
				r.prop("og:locale:alternate", ogLocale(a.Hreflang))
			}
		}
	} else if f.localized && m.Locale != "" {
		for _, l := range c.Site.Locales {
			if l != m.Locale {
				r.prop("og:locale:alternate", ogLocale(l))
			}
		}
	}
}

// ogImages writes each og:image with its own keys, under the image's
// identity.
func (r *render) ogImages() {
	f := r.f
	for _, img := range f.ogImage {
		u, ok := r.url("open_graph.image", ref{img.URL, f.ogImageM})
		if !ok {
			continue
		}
		r.prop("og:image", u)
		if img.SecureURL != nil {
			if su, ok := r.url("open_graph.image.secure_url", ref{img.SecureURL, f.ogImageM}); ok {
				r.add("og:image", "property", "og:image:secure_url", su)
			}
		}
		if img.Type != nil {
			r.add("og:image", "property", "og:image:type", r.text(ref{img.Type, f.ogImageM}))
		}
		if img.Width > 0 {
			r.add("og:image", "property", "og:image:width", dimension(img.width, img.Width))
		}
		if img.Height > 0 {
			r.add("og:image", "property", "og:image:height", dimension(img.height, img.Height))
		}
		if img.Alt != nil {
			r.add("og:image", "property", "og:image:alt", r.text(ref{img.Alt, f.ogImageM}))
		}
	}
}

// ogArticle writes the article:* keys.
func (r *render) ogArticle() {
	a, am := r.f.ogArticle, r.f.ogArticleM
	if a == nil {
		return
	}
	one := func(key string, t *Template) {
		if t != nil {
			r.prop(key, r.text(ref{t, am}))
		}
	}
	one("article:published_time", a.PublishedTime)
	one("article:modified_time", a.ModifiedTime)
	one("article:expiration_time", a.ExpirationTime)
	for _, t := range a.Authors {
		one("article:author", t)
	}
	one("article:section", a.Section)
	for _, t := range a.Tags {
		one("article:tag", t)
	}
}

// twitter writes the twitter:* keys.
func (r *render) twitter() {
	c, f := r.c, r.f
	if f.twCard.set() {
		r.name("twitter:card", r.text(f.twCard))
	}
	if f.twSite.set() {
		r.name("twitter:site", r.text(f.twSite))
	}
	if f.twCreator.set() {
		r.name("twitter:creator", r.text(f.twCreator))
	}
	if f.twTitle.set() {
		r.name("twitter:title", r.textOr(f.twTitle, r.v.title))
	} else if r.v.title != "" {
		r.name("twitter:title", r.v.title)
	}
	if f.twDesc.set() {
		r.name("twitter:description", r.textOr(f.twDesc, r.v.description))
	} else if r.v.description != "" {
		r.name("twitter:description", r.v.description)
	}
	if f.twURL.set() {
		if u, ok := r.url("twitter.url", f.twURL); ok {
			r.name("twitter:url", u)
		}
	} else if c.Site.OGURLFromCanonical && r.hasCanon {
		r.name("twitter:url", r.canon)
	}
	for _, img := range f.twImage {
		u, ok := r.url("twitter.image", ref{img.URL, f.twImageM})
		if !ok {
			continue
		}
		r.name("twitter:image", u)
		if img.Alt != nil {
			r.add("twitter:image", "name", "twitter:image:alt", r.text(ref{img.Alt, f.twImageM}))
		}
	}
}

// jsonLD writes every matched rule's JSON-LD: static blocks as compiled at
// load, the others rendered into a buffer of their expected size.
func (r *render) jsonLD() {
	m, h := r.m, r.h
	nj := 0
	for i := range m.Matched {
		nj += len(m.Matched[i].Rule.JSONLD)
	}
	if nj == 0 {
		return
	}
	h.JSONLD = make([][]byte, 0, nj)
	for i := range m.Matched {
		mr := &m.Matched[i]
		for j := range mr.Rule.JSONLD {
			if mr.Rule.jsonStatic[j] != nil {
				h.JSONLD = append(h.JSONLD, mr.Rule.jsonStatic[j])
				continue
			}
			h.JSONLD = append(h.JSONLD, appendJSONValue(make([]byte, 0, mr.Rule.jsonSize[j]), mr.Rule.jsonCompiled[j], r.vars(mr)))
		}
	}
}

// headers renders the rule headers (§4.9); a later rule's value replaces
// an earlier one's of the same name.
func (r *render) headers() {
	m, h := r.m, r.h
	for i := range m.Matched {
		mr := &m.Matched[i]
		for _, hd := range mr.Rule.Headers {
			if hd.Value.data && hd.Value.missing(r.vars(mr)) {
				continue
			}
			val := boundText(hd.Value.render(r.vars(mr), false))
			if val == "" && !hd.Value.Static() {
				continue // a value that comes out empty is not written (§16.3)
			}
			if badHeaderValue(val) {
				h.Dropped = append(h.Dropped, Drop{Rule: mr.Rule.Match, Field: "headers." + hd.Name, Value: val, Reason: "header_value"})
				continue
			}
			replaced := false
			for j := range h.Headers {
				if h.Headers[j].Name == hd.Name {
					h.Headers[j].Value, replaced = val, true
				}
			}
			if !replaced {
				h.Headers = append(h.Headers, HeaderValue{hd.Name, val})
			}
		}
	}
}
