package rules

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// The fields the inspector asks SetBy about, as rewrite.Change's Identity
// and Key.
var setByKeys = [][2]string{
	{"title", ""}, {"description", ""}, {"canonical", ""}, {"robots", ""}, {"jsonld", ""},
	{"alternates", ""}, {"alternate", "de"}, {"hreflang", "en"},
	{"og:title", ""}, {"og:description", ""}, {"og:type", ""}, {"og:url", ""}, {"og:site_name", ""},
	{"og:locale", ""}, {"og:locale:alternate", ""}, {"og:image", "og:image:width"}, {"og:image", ""},
	{"article:author", ""}, {"twitter:card", ""}, {"twitter:site", ""}, {"twitter:creator", ""},
	{"twitter:title", ""}, {"twitter:description", ""}, {"twitter:url", ""}, {"twitter:image", ""},
	{"unknown", ""},
}

// TestSetByAsInspector holds SetBy to proxy/inspect_report.go's setBy (at
// a415c6f, copied below as oldSetBy) on every field of every page of the
// data golden and the merge tests' localized config: the same strings,
// except where a page_table cell sets the field, which setBy ignored.
func TestSetByAsInspector(t *testing.T) {
	type page struct {
		cfg  *Config
		path string
	}
	var pages []page
	data := loadTest(t, "testdata/data/tables.toml")
	for _, p := range []string{"/p/A1", "/p/B2", "/p/ZZ", "/about", "/caf%C3%A9", "/old", "/fill", "/en/about", "/", "/elsewhere"} {
		pages = append(pages, page{data, p})
	}
	loc := mustParse(t, localizedConfig)
	for _, p := range []string{"/de-at/about", "/about", "/x"} {
		pages = append(pages, page{loc, p})
	}
	rows := 0
	for _, p := range pages {
		m := p.cfg.Resolve(p.path)
		for _, k := range setByKeys {
			got := m.SetBy(k[0], k[1])
			if strings.HasPrefix(got, "row ") {
				rows++
				continue
			}
			if want := oldSetBy(p.cfg, m, k[0], k[1]); got != want {
				t.Errorf("%s %v: SetBy = %q, setBy said %q", p.path, k, got, want)
			}
		}
	}
	if rows == 0 {
		t.Error("no page_table row set a field")
	}
}

func TestSetBy(t *testing.T) {
	data := loadTest(t, "testdata/data/tables.toml")
	loc := mustParse(t, localizedConfig)
	for _, tc := range []struct {
		name          string
		cfg           *Config
		path          string
		identity, key string
		want          string
	}{
		{"page_table cell", data, "/about", "title", "", "row 3 of seo.csv (tables.toml [[page_table]]) sets it"},
		{"page_table og_image", data, "/about", "og:image", "og:image:width", "row 3 of seo.csv (tables.toml [[page_table]]) sets it"},
		{"page_table robots", data, "/about", "robots", "", "row 3 of seo.csv (tables.toml [[page_table]]) sets it"},
		{"rule", data, "/p/B2", "title", "", "rule /p/:sku (tables.toml:27) sets it"},
		{"json_ld", data, "/p/B2", "jsonld", "", "the json_ld of rule /p/:sku (tables.toml:27)"},
		{"most specific rule", data, "/elsewhere", "description", "", "rule /* (tables.toml:19) sets it"},
		{"derived", data, "/elsewhere", "og:title", "", "derived from the title"},
		{"localized canonical", loc, "/de-at/about", "canonical", "", "rule /{locale}/about (test.toml:8) sets it"},
		{"empty cell: the rule", data, "/old", "description", "", "rule /* (tables.toml:19) sets it"},
		{"nothing", data, "/elsewhere", "unknown", "", ""},
	} {
		if got := tc.cfg.Resolve(tc.path).SetBy(tc.identity, tc.key); got != tc.want {
			t.Errorf("%s: %s %s/%s: SetBy = %q, want %q", tc.name, tc.path, tc.identity, tc.key, got, tc.want)
		}
	}
}

// oldSetBy is proxy/inspect_report.go's setBy, with a Change's Identity
// and Key as arguments: the oracle of TestSetByAsInspector.
func oldSetBy(cfg *Config, m *Match, identity, key string) string {
	if key == "" {
		key = identity
	}
	if key == "jsonld" {
		var from []string
		for i, mr := range m.Matched {
			if len(mr.Rule.JSONLD) > 0 {
				from = append(from, fmt.Sprintf("%s (%s:%d)", m.Patterns()[i], filepath.Base(cfg.File), mr.Rule.Line))
			}
		}
		if len(from) > 0 {
			return "the json_ld of rule " + strings.Join(from, " and ")
		}
	}
	for i := len(m.Matched) - 1; i >= 0; i-- {
		if r := m.Matched[i].Rule; oldSets(r, identity, key) {
			return fmt.Sprintf("rule %s (%s:%d) sets it", m.Patterns()[i], filepath.Base(cfg.File), r.Line)
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

func oldSets(r *Rule, identity, key string) bool {
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
