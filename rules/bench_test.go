package rules

import (
	"fmt"
	"strings"
	"testing"
)

// benchConfig is a site of 1,000 rules, in the proportions of a real one:
// a site layout, section layouts, many literal pages, numbered items per
// section, user pages, localized pages and a denied area.
func benchConfig(tb testing.TB) *Config {
	var b strings.Builder
	b.WriteString(`locales = ["en", "de", "de-AT", "fr"]
title_template = "%s · Notes"
[[rule]]
match = "/*"
robots = { index = true, follow = true }
open_graph = { site_name = "Notes", type = "website" }
twitter = { card = "summary_large_image", site = "@notes" }
json_ld = [{ "@type" = "Organization", name = "Notes", url = "{base_url}/" }]
[[rule]]
match = "/internal/*"
deny = true
`)
	n := 2
	add := func(format string, args ...any) {
		fmt.Fprintf(&b, format, args...)
		n++
	}
	for s := 0; s < 20; s++ { // section layouts: 20
		add("[[rule]]\nmatch = \"/s%d/*\"\nopen_graph = { type = \"article\" }\n", s)
	}
	for s := 0; s < 150; s++ { // numbered items: 150
		add("[[rule]]\nmatch = \"/s%d/:id{[0-9]+}\"\ntitle = \"Item {id}\"\ncanonical = \"self\"\nopen_graph = { image = \"/covers/%d/{id}.png\" }\n", s, s)
	}
	for s := 0; s < 30; s++ { // user pages: 30
		add("[[rule]]\nmatch = \"/u%d/:name\"\ntitle = \"{name}\"\n", s)
	}
	for i := 0; i < 100; i++ { // localized pages: 100
		add("[[rule]]\nmatch = \"/about%d\"\nlocalized = true\ntitle = \"About %d\"\n", i, i)
	}
	for n < 1000 { // literal pages: the rest
		add("[[rule]]\nmatch = \"/s%d/page-%d\"\ntitle = \"Page %d\"\ndescription = \"Page %d of the site\"\ncanonical = \"self\"\n", n%20, n, n, n)
	}
	cfg := mustParse(tb, b.String())
	if len(cfg.Rules) != 1000 {
		tb.Fatalf("%d rules, want 1000", len(cfg.Rules))
	}
	return cfg
}

// benchTargets are paths of each kind, with the rules each matches.
var benchTargets = []struct {
	name, target string
	matches      int
}{
	{"literal", "/s7/page-707", 3},           // /*, /s7/*, /s7/page-707
	{"param", "/s7/12345?utm_source=x", 3},   // /*, /s7/*, /s7/:id{[0-9]+}
	{"plain-param", "/u3/ada", 2},            // /*, /u3/:name
	{"localized", "/de-AT/about42", 2},       // /*, /{locale}/about42
	{"layout-only", "/s7/unknown/deep/x", 2}, // /*, /s7/*
	{"unmatched", "/nowhere/at/all", 1},      // /*
	{"denied", "/internal/x%2Fy", 2},         // /*, /internal/*
}

func BenchmarkResolve(b *testing.B) {
	cfg := benchConfig(b)
	for _, bt := range benchTargets {
		b.Run(bt.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				cfg.Resolve(bt.target)
			}
		})
	}
}

func BenchmarkRender(b *testing.B) {
	cfg := benchConfig(b)
	m := cfg.Resolve("/s7/12345")
	b.ReportAllocs()
	for b.Loop() {
		m.Render(Page{Title: "Upstream", HasTitle: true})
	}
}

// maxResolveAllocs is the allocation budget of one Resolve (match and merge).
const maxResolveAllocs = 10

func TestResolveAllocs(t *testing.T) {
	cfg := benchConfig(t)
	for _, bt := range benchTargets {
		m := cfg.Resolve(bt.target)
		if len(m.Matched) != bt.matches {
			t.Errorf("%s: matched %v, want %d rules", bt.name, m.Patterns(), bt.matches)
		}
		allocs := testing.AllocsPerRun(200, func() { cfg.Resolve(bt.target) })
		if allocs > maxResolveAllocs {
			t.Errorf("%s: Resolve(%q) makes %.0f allocations, want at most %d", bt.name, bt.target, allocs, maxResolveAllocs)
		}
	}
}
