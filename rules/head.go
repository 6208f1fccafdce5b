package rules

import (
	"net/url"
	"strconv"
	"strings"
)

// Page is what the upstream document says of itself, read from its head by
// the rewriter (decoded from its charset).
type Page struct {
	Title          string
	HasTitle       bool
	Description    string
	HasDescription bool
	Canonical      string // the upstream's canonical, made absolute; "" when none

	// What templates may read besides (§16.3, rules/tmplpage.go): the
	// first content of each <meta> name or property the config's
	// templates name, and <html lang>.
	Meta []PageMeta
	Lang string
}

// Head is what the rules write on one page: concrete values, not yet
// escaped for any document. A nil pointer or an empty slice is "not set".
type Head struct {
	Policy        Policy
	Title         *string // the text of <title>, title_template applied
	Description   *string
	Robots        *string
	Canonical     *string // absolute
	Alternates    []Alternate
	Meta          []Meta   // og:*, article:* and twitter:* in the order they are written
	JSONLD        [][]byte // serialized, with < > & U+2028 U+2029 escaped
	ReplaceJSONLD bool
	Headers       []HeaderValue
	Dropped       []Drop // values the URL rules or header rules refused

	// HreflangTable: Alternates come from an hreflang table (§12.3), and
	// a non-HTML response carries them as Link headers.
	HreflangTable bool

	hreflangKey string // the canonical the hreflang group was found by

	// ForceCanonical: the canonical replaces the upstream's under fill
	// too (canonical = "upstream-or-self" re-spells the upstream's, §16.4).
	ForceCanonical bool

	// Where Title, Description, Robots and Canonical point, so that the
	// head is one allocation, not five.
	title, description, robots, canonical string
}

// Alternate is one hreflang link.
type Alternate struct {
	Hreflang, Href string
}

// Meta is one <meta> tag. Attr is "property" (og:, article:) or "name"
// (twitter:); Identity is the identity it replaces (§4.3).
type Meta struct {
	Identity, Attr, Key, Content string
}

// HeaderValue is a rendered response header.
type HeaderValue struct {
	Name, Value string
}

// Drop records a value that was not written, and why.
type Drop struct {
	Rule   string // the pattern of the rule that set it
	Field  string // "canonical", "open_graph.image", "headers.x-foo"
	Value  string
	Reason string // one of the Drop* reasons, or "header_value"
}

// Identities the rewriter knows besides meta keys.
const (
	IdentTitle       = "title"
	IdentDescription = "description"
	IdentRobots      = "robots"
	IdentCanonical   = "canonical"
	IdentAlternates  = "alternates"
	IdentJSONLD      = "jsonld"
)

// Sets reports whether the head writes (or, for JSON-LD, replaces) the
// identity.
func (h *Head) Sets(identity string) bool {
	switch identity {
	case IdentTitle:
		return h.Title != nil
	case IdentDescription:
		return h.Description != nil
	case IdentRobots:
		return h.Robots != nil
	case IdentCanonical:
		return h.Canonical != nil
	case IdentAlternates:
		return len(h.Alternates) > 0
	case IdentJSONLD:
		return h.ReplaceJSONLD
	}
	for _, m := range h.Meta {
		if m.Identity == identity {
			return true
		}
	}
	return false
}

// SelfURL is the page's own address: the base URL's origin, the request
// path (the locale in its configured spelling), and the keep_query keys.
func (m *Match) SelfURL(withQuery bool) string {
	if m.Locale == "" && (!withQuery || len(m.f.keepQuery) == 0 || m.Query == "") {
		return m.cfg.Site.BaseURL + EscapePath(m.Path) // the common case, in one allocation
	}
	var b strings.Builder
	b.WriteString(m.cfg.Site.BaseURL)
	if m.Locale != "" {
		b.WriteByte('/')
		b.WriteString(m.Locale)
		b.WriteString(EscapePath(m.rest))
	} else {
		b.WriteString(EscapePath(m.Path))
	}
	if withQuery && len(m.f.keepQuery) > 0 && m.Query != "" {
		sep := byte('?')
		for _, kv := range strings.Split(m.Query, "&") {
			k, v, _ := strings.Cut(kv, "=")
			dk, err := url.QueryUnescape(k)
			if err != nil {
				continue
			}
			for _, keep := range m.f.keepQuery {
				if dk == keep {
					dv, err := url.QueryUnescape(v)
					if err != nil {
						break
					}
					b.WriteByte(sep)
					sep = '&'
					b.WriteString(url.QueryEscape(dk))
					b.WriteByte('=')
					b.WriteString(url.QueryEscape(dv))
					break
				}
			}
		}
	}
	return b.String()
}

// Render computes the head the rules write on this page, given what the
// upstream document holds. Values are rendered in this order, each seeing
// the ones before it: canonical, title, description, then everything else.
func (m *Match) Render(page Page) *Head {
	c := m.cfg
	f := &m.f
	h := &Head{Policy: f.policy, ReplaceJSONLD: f.replaceJSON, Meta: make([]Meta, 0, f.metaCap(len(c.Site.Locales)))}
	base := c.base
	if base == nil {
		base, _ = url.Parse(c.Site.BaseURL + "/")
	}
	v := vars{
		pageMeta: page.Meta, pageCanon: page.Canonical, pageLang: page.Lang,
		locale:    m.Locale,
		path:      EscapePath(m.Path),
		baseURL:   c.Site.BaseURL,
		title:     page.Title,
		pageTitle: page.Title, pageDesc: page.Description, description: page.Description,
		data: m.data,
	}
	withParams := func(mr *Matched) *vars {
		if mr != nil {
			v.params = mr.Params
		} else {
			v.params = nil
		}
		v.mr = mr
		return &v
	}
	urlOf := func(field string, r ref) (string, bool) {
		if r.t.data && r.t.missing(withParams(r.m)) {
			return "", false // §12.1: no row or an empty cell writes nothing
		}
		s := r.t.render(withParams(r.m), true)
		if s == "" && !r.t.Static() {
			return "", false // a template that comes out empty writes nothing (§16.3)
		}
		s = respellURLPath(s, c.Site.BaseURL)
		abs, why := AbsURL(base, s)
		if why != "" {
			h.Dropped = append(h.Dropped, Drop{Rule: r.m.Rule.Match, Field: field, Value: s, Reason: why})
			return "", false
		}
		return abs, true
	}

	// canonical
	if f.canonical.set() {
		if f.canonical.t.Raw == UpstreamOrSelf {
			if h.canonical = c.upstreamCanonical(page.Canonical); h.canonical == "" {
				h.canonical = m.SelfURL(true)
			}
			h.Canonical, h.ForceCanonical = &h.canonical, true
		} else if f.canonical.t.Raw == "self" {
			h.canonical = m.SelfURL(true)
			h.Canonical = &h.canonical
		} else if s, ok := urlOf("canonical", f.canonical); ok {
			h.canonical = s
			h.Canonical = &h.canonical
		}
	} else if f.localized {
		// §4.7: the page's own address, without a query except keep_query.
		h.canonical = m.SelfURL(true)
		h.Canonical = &h.canonical
	}
	// canon is the page's effective canonical: under fill, an upstream
	// canonical stays, and og:url, the alternates and {canonical} follow it.
	canon := h.Canonical
	if f.policy == Fill && page.Canonical != "" && !h.ForceCanonical {
		h.Canonical = nil
		c := page.Canonical
		canon = &c
	}
	v.canonical = page.Canonical
	if canon != nil {
		v.canonical = *canon
	}

	// title and description: under fill the upstream's stay where present.
	// A template that renders to nothing ("{page.description}" on a page
	// without one) writes nothing, rather than an empty tag.
	write := func(has bool) bool { return f.policy == Override || !has }
	if f.title.set() && write(page.HasTitle) && !(f.title.t.data && f.title.t.missing(withParams(f.title.m))) {
		if t := f.title.t.render(withParams(f.title.m), false); strings.TrimSpace(t) != "" {
			h.title = applyTitleTemplate(c.Site.TitleTemplate, t)
			h.Title = &h.title
			v.title = t
		}
	}
	if f.description.set() && write(page.HasDescription) && !(f.description.t.data && f.description.t.missing(withParams(f.description.m))) {
		if d := f.description.t.render(withParams(f.description.m), false); strings.TrimSpace(d) != "" {
			h.description = d
			h.Description = &h.description
			v.description = d
		}
	}

	if f.robotsSet {
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
			h.robots = string(b)
			h.Robots = &h.robots
		}
	}

	if f.localized && m.Locale != "" && canon != nil && stripQuery(*canon) == m.SelfURL(false) {
		for _, l := range c.Site.Locales {
			h.Alternates = append(h.Alternates, Alternate{l, c.Site.BaseURL + "/" + l + EscapePath(m.rest)})
		}
		if c.Site.XDefault {
			rest := m.rest
			if rest == "" { // the locale's home, /de: the unprefixed one is /
				rest = "/"
			}
			h.Alternates = append(h.Alternates, Alternate{"x-default", c.Site.BaseURL + EscapePath(rest)})
		}
	}
	// §12.3: a page whose canonical is in an hreflang table gets its
	// group's rows instead.
	hlOwn, hlOK := "", false
	if c.data != nil && len(c.data.hreflang) > 0 {
		key := page.Canonical
		if canon != nil {
			key = *canon
		}
		if key == "" {
			key = m.SelfURL(false)
		}
		var alts []Alternate
		if alts, hlOwn, hlOK = m.hreflangRender(key); hlOK {
			h.Alternates, h.HreflangTable, h.hreflangKey = alts, true, key
		}
	}

	text := func(r ref) string {
		if r.t.data && r.t.missing(withParams(r.m)) {
			return "" // not written: add skips empty values
		}
		return r.t.render(withParams(r.m), false)
	}
	add := func(ident, attr, key, content string) {
		if strings.TrimSpace(content) == "" {
			return // an empty value says nothing; an empty tag would say less
		}
		h.Meta = append(h.Meta, Meta{Identity: ident, Attr: attr, Key: key, Content: content})
	}
	// Every key Render writes through prop and name is its own identity;
	// the image's other keys are added under the image's.
	prop := func(key, content string) { add(key, "property", key, content) }

	if f.og {
		if f.ogTitle.set() {
			prop("og:title", text(f.ogTitle))
		} else if v.title != "" {
			prop("og:title", v.title)
		}
		if f.ogDesc.set() {
			prop("og:description", text(f.ogDesc))
		} else if v.description != "" {
			prop("og:description", v.description)
		}
		if f.ogType.set() {
			prop("og:type", text(f.ogType))
		}
		if f.ogURL.set() {
			if u, ok := urlOf("open_graph.url", f.ogURL); ok {
				prop("og:url", u)
			}
		} else if c.Site.OGURLFromCanonical && canon != nil {
			prop("og:url", *canon)
		}
		if f.ogSiteName.set() {
			prop("og:site_name", text(f.ogSiteName))
		}
		if f.ogLocale.set() {
			prop("og:locale", text(f.ogLocale))
		} else if hlOK {
			if hlOwn != "" {
				prop("og:locale", ogLocale(hlOwn))
			}
		} else if f.localized && m.Locale != "" {
			prop("og:locale", ogLocale(m.Locale))
		}
		if hlOK {
			// The group's other languages, never x-default (§17).
			for _, a := range h.Alternates {
				if !strings.EqualFold(a.Hreflang, hlOwn) && !strings.EqualFold(a.Hreflang, "x-default") {
					prop("og:locale:alternate", ogLocale(a.Hreflang))
				}
			}
		} else if f.localized && m.Locale != "" {
			for _, l := range c.Site.Locales {
				if l != m.Locale {
					prop("og:locale:alternate", ogLocale(l))
				}
			}
		}
		for _, img := range f.ogImage {
			u, ok := urlOf("open_graph.image", ref{img.URL, f.ogImageM})
			if !ok {
				continue
			}
			prop("og:image", u)
			if img.SecureURL != nil {
				if su, ok := urlOf("open_graph.image.secure_url", ref{img.SecureURL, f.ogImageM}); ok {
					add("og:image", "property", "og:image:secure_url", su)
				}
			}
			if img.Type != nil {
				add("og:image", "property", "og:image:type", text(ref{img.Type, f.ogImageM}))
			}
			if img.Width > 0 {
				add("og:image", "property", "og:image:width", dimension(img.width, img.Width))
			}
			if img.Height > 0 {
				add("og:image", "property", "og:image:height", dimension(img.height, img.Height))
			}
			if img.Alt != nil {
				add("og:image", "property", "og:image:alt", text(ref{img.Alt, f.ogImageM}))
			}
		}
		if a := f.ogArticle; a != nil {
			am := f.ogArticleM
			one := func(key string, t *Template) {
				if t != nil {
					prop(key, text(ref{t, am}))
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
	}

	if f.tw {
		name := func(key, content string) { add(key, "name", key, content) }
		if f.twCard.set() {
			name("twitter:card", text(f.twCard))
		}
		if f.twSite.set() {
			name("twitter:site", text(f.twSite))
		}
		if f.twCreator.set() {
			name("twitter:creator", text(f.twCreator))
		}
		if f.twTitle.set() {
			name("twitter:title", text(f.twTitle))
		} else if v.title != "" {
			name("twitter:title", v.title)
		}
		if f.twDesc.set() {
			name("twitter:description", text(f.twDesc))
		} else if v.description != "" {
			name("twitter:description", v.description)
		}
		if f.twURL.set() {
			if u, ok := urlOf("twitter.url", f.twURL); ok {
				name("twitter:url", u)
			}
		} else if c.Site.OGURLFromCanonical && canon != nil {
			name("twitter:url", *canon)
		}
		for _, img := range f.twImage {
			u, ok := urlOf("twitter.image", ref{img.URL, f.twImageM})
			if !ok {
				continue
			}
			name("twitter:image", u)
			if img.Alt != nil {
				add("twitter:image", "name", "twitter:image:alt", text(ref{img.Alt, f.twImageM}))
			}
		}
	}

	nj := 0
	for i := range m.Matched {
		nj += len(m.Matched[i].Rule.JSONLD)
	}
	if nj > 0 {
		h.JSONLD = make([][]byte, 0, nj)
	}
	for i := range m.Matched {
		mr := &m.Matched[i]
		for j := range mr.Rule.JSONLD {
			if mr.Rule.jsonStatic[j] != nil {
				h.JSONLD = append(h.JSONLD, mr.Rule.jsonStatic[j])
				continue
			}
			h.JSONLD = append(h.JSONLD, appendJSONValue(make([]byte, 0, mr.Rule.jsonSize[j]), mr.Rule.jsonCompiled[j], withParams(mr)))
		}
	}

	for i := range m.Matched {
		mr := &m.Matched[i]
		for _, hd := range mr.Rule.Headers {
			if hd.Value.data && hd.Value.missing(withParams(mr)) {
				continue
			}
			val := hd.Value.render(withParams(mr), false)
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
	return h
}

// dimension is an image width or height as written: s when the config
// loader wrote n out already.
func dimension(s string, n int) string {
	if s == "" {
		return strconv.Itoa(n)
	}
	return s
}

func pickWord(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}

func stripQuery(s string) string {
	if i := strings.IndexByte(s, '?'); i >= 0 {
		return s[:i]
	}
	return s
}

func ogLocale(l string) string { return strings.ReplaceAll(l, "-", "_") }

// metaCap bounds the number of meta tags Render writes, so that its slice
// is allocated once and small.
func (f *merged) metaCap(locales int) int {
	n := 0
	if f.og {
		n += 7 + len(f.ogImage)*6
		if f.localized {
			n += locales
		}
		if a := f.ogArticle; a != nil {
			n += 4 + len(a.Authors) + len(a.Tags)
		}
	}
	if f.tw {
		n += 6 + len(f.twImage)*2
	}
	return n
}

// applyTitleTemplate puts t where the template says %s; "%%" is a percent.
func applyTitleTemplate(tmpl, t string) string {
	if tmpl == "" || tmpl == "%s" {
		return t
	}
	if i := strings.Index(tmpl, "%s"); i >= 0 && strings.IndexByte(tmpl[:i], '%') < 0 && strings.IndexByte(tmpl[i+2:], '%') < 0 {
		return tmpl[:i] + t + tmpl[i+2:] // one allocation
	}
	var b strings.Builder
	b.Grow(len(tmpl) + len(t))
	for i := 0; i < len(tmpl); i++ {
		if tmpl[i] == '%' && i+1 < len(tmpl) {
			switch tmpl[i+1] {
			case 's':
				b.WriteString(t)
				i++
				continue
			case '%':
				b.WriteByte('%')
				i++
				continue
			}
		}
		b.WriteByte(tmpl[i])
	}
	return b.String()
}

// precompute serializes the JSON-LD blocks whose templates name no variable
// but {base_url}, once, instead of on every request.
func (c *Config) precompute() {
	v := &vars{baseURL: c.Site.BaseURL}
	for _, r := range c.Rules {
		if og := r.OpenGraph; og != nil {
			for i := range og.Image {
				og.Image[i].width, og.Image[i].height = strconv.Itoa(og.Image[i].Width), strconv.Itoa(og.Image[i].Height)
			}
		}
		r.jsonStatic = make([][]byte, len(r.JSONLD))
		r.jsonCompiled = make([]any, len(r.JSONLD))
		r.jsonSize = make([]int, len(r.JSONLD))
		for i, block := range r.JSONLD {
			r.jsonCompiled[i] = compileJSON(block)
			// Sized from the block with its variables empty, and room
			// for their values: one allocation on most pages.
			r.jsonSize[i] = len(appendJSONValue(nil, r.jsonCompiled[i], &vars{})) + 256
			if staticJSON(block) {
				r.jsonStatic[i] = appendJSONValue(nil, r.jsonCompiled[i], v)
			}
		}
	}
}

func staticJSON(node any) bool {
	switch n := node.(type) {
	case *Template:
		return n.Static()
	case map[string]any:
		for _, x := range n {
			if !staticJSON(x) {
				return false
			}
		}
	case []any:
		for _, x := range n {
			if !staticJSON(x) {
				return false
			}
		}
	}
	return true
}
