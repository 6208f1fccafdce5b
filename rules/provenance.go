package rules

import (
	"fmt"
	"path/filepath"
	"strings"
)

// SetBy names, for people, what set a head field of m's page: identity and
// key are a rewrite.Change's (key "" stands for identity). It reads the
// layers the merge recorded — the matched rules in merge order and the
// page_table row over them — and says:
//
//   - "experiment NAME (variant) sets it": the page is in the variant
//     group of experiment NAME, whose [experiment.variant] sets the
//     field: the most specific layer of all (§21).
//   - "row N of FILE (CONFIG [[page_table]]) sets it": a non-empty cell of
//     the page's page_table row, the most specific layer (§12.2); N is the
//     row's line in FILE, as DataRow.Line.
//   - "rule PATTERN (CONFIG:LINE) sets it": the most specific matching rule
//     that sets the field explicitly (rules merge field by field, the later
//     winning); a localized rule counts as setting canonical.
//   - "the json_ld of rule P (CONFIG:LINE) and Q (CONFIG:LINE)": JSON-LD
//     blocks add up across rules, so every rule that has some is named.
//   - "derived from the title", "derived from the description",
//     "derived from the canonical (site.og_url_from_canonical)",
//     "derived from the page's locale": an og: or twitter: field no rule
//     sets, written from another.
//   - "a localized rule: an alternate per locale": an alternate or hreflang
//     link no rule names.
//   - "" when it can not tell.
//
// CONFIG and FILE are base names. The strings are the inspector's (they
// were proxy's setBy, which repeated this merge).
func (m *Match) SetBy(identity, key string) string {
	if key == "" {
		key = identity
	}
	if m.variant && key != "jsonld" && ruleSets(m.exp.Variant, identity, key) {
		return "experiment " + m.exp.Name + " (variant) sets it"
	}
	if s := m.pageRowSets(key); s != "" {
		return s
	}
	file := ""
	if m.cfg != nil {
		file = filepath.Base(m.cfg.File)
	}
	if key == "jsonld" {
		var from []string
		for i, mr := range m.Matched {
			if len(mr.Rule.JSONLD) > 0 && mr.Rule.exp != nil {
				from = append(from, fmt.Sprintf("experiment %s (variant) (%s:%d)", mr.Rule.exp.Name, file, mr.Rule.Line))
			} else if len(mr.Rule.JSONLD) > 0 {
				from = append(from, fmt.Sprintf("%s (%s:%d)", m.Patterns()[i], file, mr.Rule.Line))
			}
		}
		if len(from) > 0 {
			return "the json_ld of rule " + strings.Join(from, " and ")
		}
	}
	for i := len(m.Matched) - 1; i >= 0; i-- {
		if r := m.Matched[i].Rule; ruleSets(r, identity, key) {
			return fmt.Sprintf("rule %s (%s:%d) sets it", m.Patterns()[i], file, r.Line)
		}
	}
	switch key {
	case "og:title", "twitter:title":
		return "derived from the title"
	case "og:description", "twitter:description":
		return "derived from the description"
	case "og:url", "twitter:url":
		return "derived from the canonical (site.og_url_from_canonical)"
	case "og:locale", "og:locale:alternate":
		return "derived from the page's locale"
	}
	if identity == "alternates" || identity == "alternate" || strings.HasPrefix(identity, "hreflang") {
		return "a localized rule: an alternate per locale"
	}
	return ""
}

// pageRowSets is SetBy's answer when the page's page_table row has a
// non-empty cell for key, else "".
func (m *Match) pageRowSets(key string) string {
	if m.data == nil || m.data.page == nil {
		return ""
	}
	// A head key names its page_table column with "_" for ":" (og:title
	// is og_title); every og:image or twitter:image property comes from
	// the one image column.
	name := key
	for _, img := range []string{"og:image", "twitter:image"} {
		if strings.HasPrefix(key, img) {
			name = img
		}
	}
	name = strings.Replace(name, ":", "_", 1)
	col := -1
	for f, c := range pageColumns {
		if c == name && f != pgPolicy {
			col = f
		}
	}
	pt, row := m.data.page, m.data.pageRow
	if col < 0 || pt.col[col] < 0 || pt.t.Cell(row, pt.col[col]) == "" {
		return ""
	}
	cfg := ""
	if m.cfg != nil {
		cfg = filepath.Base(m.cfg.File)
	}
	return fmt.Sprintf("row %d of %s (%s [[page_table]]) sets it", pt.t.Line(row), filepath.Base(pt.t.File), cfg)
}

// ruleSets reports whether rule r sets the head field named by identity
// and key explicitly.
func ruleSets(r *Rule, identity, key string) bool {
	og, tw := r.OpenGraph, r.Twitter
	switch {
	case key == "title":
		return r.Title != nil
	case key == "description":
		return r.Description != nil
	case key == "canonical":
		return r.Canonical != nil || r.Localized
	case key == "robots":
		return r.Robots != nil
	case identity == "content_signal":
		return signalSets(r, key)
	case identity == "alternates" || identity == "alternate":
		return r.Localized
	case key == "jsonld":
		return len(r.JSONLD) > 0
	case strings.HasPrefix(key, "og:image"):
		return og != nil && og.Image != nil
	case strings.HasPrefix(key, "article:"):
		return og != nil && og.Article != nil
	case strings.HasPrefix(key, "twitter:image"):
		return tw != nil && tw.Image != nil
	}
	if og != nil {
		switch key {
		case "og:title":
			return og.Title != nil
		case "og:description":
			return og.Description != nil
		case "og:type":
			return og.Type != nil
		case "og:url":
			return og.URL != nil
		case "og:site_name":
			return og.SiteName != nil
		case "og:locale":
			return og.Locale != nil
		}
	}
	if tw != nil {
		switch key {
		case "twitter:card":
			return tw.Card != nil
		case "twitter:site":
			return tw.Site != nil
		case "twitter:creator":
			return tw.Creator != nil
		case "twitter:title":
			return tw.Title != nil
		case "twitter:description":
			return tw.Description != nil
		case "twitter:url":
			return tw.URL != nil
		}
	}
	return false
}
