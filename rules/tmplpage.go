package rules

import "strings"

// The page variables of SPEC §16.3: {page.meta.NAME}, {page.canonical},
// {page.lang} and {page.og.image}. The rewriter reads the values from the
// upstream head (Page.Meta, Page.Lang, Page.Canonical); the config tells it
// which meta names to read (Config.PageMetaNames).

// PageMeta is the content of the upstream head's first <meta> whose name
// or property is Name (lower-case), decoded from the document's charset.
type PageMeta struct {
	Name, Content string
}

// maxMetaName bounds a meta name a template may name.
const maxMetaName = 64

// pageVarName reports whether name is one of the page variables of §16.3.
func pageVarName(name string) bool {
	switch name {
	case "page.canonical", "page.lang", "page.og.image":
		return true
	}
	n, ok := strings.CutPrefix(name, "page.meta.")
	return ok && validMetaName(n)
}

// validMetaName accepts the names and properties pages use: letters,
// digits and - _ : . (og:image, article:published_time, twitter:label1).
func validMetaName(n string) bool {
	if n == "" || len(n) > maxMetaName {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(isAlnum(c) || c == '-' || c == '_' || c == ':' || c == '.') {
			return false
		}
	}
	return true
}

// metaOf maps a page variable to the meta name it reads, lower-case.
func metaOf(name string) (string, bool) {
	if name == "page.og.image" {
		return "og:image", true
	}
	n, ok := strings.CutPrefix(name, "page.meta.")
	if !ok {
		return "", false
	}
	return strings.ToLower(n), true
}

// urlMeta lists the meta names whose content is a URL: in a URL field
// their value is written as a URL, not encoded as text.
var urlMeta = map[string]bool{
	"og:image": true, "og:image:url": true, "og:image:secure_url": true, "og:url": true,
	"og:video": true, "og:audio": true, "twitter:image": true, "twitter:image:src": true,
}

// URLMeta reports whether the content of the meta named name (lower-case)
// is a URL: the rewriter makes it absolute against the page's address when
// it reads it, as a card reader would, so that {page.og.image} is the URL
// the page means wherever it is written (a JSON-LD image included).
func URLMeta(name string) bool { return urlMeta[name] }

// pageLookup returns the value of a page variable.
func (v *vars) pageLookup(name string) (string, varKind) {
	switch name {
	case "page.canonical":
		return v.pageCanon, urlVar
	case "page.lang":
		return v.pageLang, textVar
	}
	key, ok := metaOf(name)
	if !ok {
		return "", textVar
	}
	kind := textVar
	if urlMeta[key] {
		kind = urlVar
	}
	for _, m := range v.pageMeta {
		if m.Name == key {
			if kind == urlVar && len(m.Content) > MaxValueBytes {
				return "", kind // §23: a URL too long is dropped, never cut
			}
			return boundText(m.Content), kind
		}
	}
	return "", kind
}

// notePageVars records the meta names and page values a template reads,
// so that the rewriter collects them from the upstream head.
func (l *loader) notePageVars(t *Template) {
	for _, name := range t.Vars() {
		if name == "page.lang" {
			l.cfg.pageLang = true
		}
		key, ok := metaOf(name)
		if !ok {
			continue
		}
		known := false
		for _, k := range l.cfg.pageMeta {
			known = known || k == key
		}
		if !known {
			l.cfg.pageMeta = append(l.cfg.pageMeta, key)
		}
	}
}

// PageMetaNames lists the meta names (lower-case) the config's templates
// read with {page.meta.NAME} or {page.og.image}: the rewriter collects
// their first content from the upstream head.
func (c *Config) PageMetaNames() []string { return c.pageMeta }

// WantsLang reports whether some template reads {page.lang}.
func (c *Config) WantsLang() bool { return c.pageLang }
