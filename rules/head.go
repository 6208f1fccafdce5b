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
	// OGLocaleFromGroup: og:locale is the page's language in its hreflang
	// group (no rule sets it). og:locale:alternate always is, on a page of
	// a group: under fill, where the upstream's own alternates stay, the
	// rewriter writes neither, so that the page says one set of languages.
	OGLocaleFromGroup bool

	hreflangKey string // the canonical the hreflang group was found by

	// ForceCanonical: the canonical replaces the upstream's under fill
	// too (canonical = "upstream-or-self" re-spells the upstream's, §16.4).
	ForceCanonical bool

	// Markdown is the absolute URL of the page's Markdown version (§19.1,
	// §24: the path form when markdown.suffix is set, else the page's
	// path), written as <link rel="alternate" type="text/markdown">; ""
	// when the page has none.
	Markdown string

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
	// IdentMarkdown: <link rel="alternate" type="text/markdown"> (§19.1).
	IdentMarkdown = "markdown"
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
	case IdentMarkdown:
		return h.Markdown != ""
	}
	for _, m := range h.Meta {
		if m.Identity == identity {
			return true
		}
	}
	return false
}

// SelfURL is the page's own address: the base URL's origin, the request
// path (the locale in its configured spelling) in the site's spelling
// (site.path_safe, else §16.4's), and the keep_query keys.
func (m *Match) SelfURL(withQuery bool) string {
	if m.Locale == "" && (!withQuery || len(m.f.keepQuery) == 0 || m.Query == "") {
		return m.cfg.Site.BaseURL + m.cfg.SpellPath(EscapePath(m.Path)) // the common case, in one allocation
	}
	var b strings.Builder
	b.WriteString(m.cfg.Site.BaseURL)
	if m.Locale != "" {
		b.WriteByte('/')
		b.WriteString(m.Locale)
		b.WriteString(m.cfg.SpellPath(EscapePath(m.rest)))
	} else {
		b.WriteString(m.cfg.SpellPath(EscapePath(m.Path)))
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

// ogLocale is a BCP 47 tag in Open Graph form, language_TERRITORY: the
// language in lower case, the region in upper case (de-AT → de_AT,
// EN-gb → en_GB); a script is left out when a region follows
// (zh-Hant-TW → zh_TW: Open Graph locales have none), kept in title case
// otherwise (zh-hant → zh_Hant).
func ogLocale(l string) string {
	parts := strings.Split(l, "-")
	if len(parts) == 1 {
		return strings.ToLower(l)
	}
	out := []string{strings.ToLower(parts[0])}
	for i, p := range parts[1:] {
		switch {
		case len(p) == 4 && i+2 < len(parts) && isRegion(parts[i+2]):
			// a script before a region: left out
		case len(p) == 4:
			out = append(out, strings.ToUpper(p[:1])+strings.ToLower(p[1:]))
		case isRegion(p):
			out = append(out, strings.ToUpper(p))
		default:
			out = append(out, p)
		}
	}
	return strings.Join(out, "_")
}

// isRegion reports whether a subtag is a region: two letters or three
// digits.
func isRegion(p string) bool {
	if len(p) == 2 {
		return p[0]|0x20 >= 'a' && p[0]|0x20 <= 'z' && p[1]|0x20 >= 'a' && p[1]|0x20 <= 'z'
	}
	return len(p) == 3 && p[0] >= '0' && p[0] <= '9' && p[1] >= '0' && p[1] <= '9' && p[2] >= '0' && p[2] <= '9'
}

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
	for _, r := range c.treeRules() {
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
