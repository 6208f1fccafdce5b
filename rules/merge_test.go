package rules

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// metas lists a head's meta tags as "key=content".
func metas(h *Head) []string {
	var out []string
	for _, m := range h.Meta {
		out = append(out, m.Key+"="+m.Content)
	}
	return out
}

func headers(h *Head) []string {
	var out []string
	for _, hv := range h.Headers {
		out = append(out, hv.Name+": "+hv.Value)
	}
	return out
}

func jsonLD(h *Head) []string {
	var out []string
	for _, b := range h.JSONLD {
		out = append(out, string(b))
	}
	return out
}

func str(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func alternates(h *Head) []string {
	var out []string
	for _, a := range h.Alternates {
		out = append(out, a.Hreflang+" "+a.Href)
	}
	return out
}

func drops(h *Head) []string {
	var out []string
	for _, d := range h.Dropped {
		out = append(out, fmt.Sprintf("%s %s %q %s", d.Rule, d.Field, d.Value, d.Reason))
	}
	return out
}

func sameList(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got: %q\nwant: %q", what, got, want)
	}
}

const layoutAndPage = `
[[rule]]
match = "/*"
robots = { index = true, follow = true, directives = ["max-snippet:50"] }
[rule.open_graph]
site_name = "Notes"
type = "website"
image = ["/covers/a.png", "/covers/b.png"]
[rule.twitter]
card = "summary"
site = "@notes"
[rule.headers]
x-a = "layout-a"
x-b = "layout-b"
[[rule.json_ld]]
"@context" = "https://schema.org"
"@type" = "Organization"
name = "Notes"

[[rule]]
match = "/notes/:id{[0-9]+}"
title = "Note {id}"
description = "About note {id}"
canonical = "self"
robots = { index = false }
[rule.open_graph]
type = "article"
image = { url = "/covers/{id}.png", width = 1200, alt = "Cover {id}" }
[rule.twitter]
card = "summary_large_image"
[rule.headers]
x-b = "page-b"
[[rule.json_ld]]
"@type" = "Article"
headline = "{title}"
"@id" = "{canonical}#article"
`

func TestMergeLayoutAndPage(t *testing.T) {
	cfg := mustParse(t, layoutAndPage)
	m := cfg.Resolve("/notes/42?utm_source=x")
	sameList(t, "patterns", m.Patterns(), []string{"/*", "/notes/:id{[0-9]+}"})
	h := m.Render(Page{Title: "Upstream", HasTitle: true})
	if str(h.Title) != "Note 42" || str(h.Description) != "About note 42" {
		t.Errorf("title %q, description %q", str(h.Title), str(h.Description))
	}
	if str(h.Canonical) != "https://notes.example/notes/42" {
		t.Errorf("canonical %q", str(h.Canonical))
	}
	// robots merges key by key; directives come from the layout.
	if str(h.Robots) != "noindex, follow, max-snippet:50" {
		t.Errorf("robots %q", str(h.Robots))
	}
	// open_graph and twitter merge key by key; the page's image array
	// replaces the layout's whole.
	sameList(t, "meta", metas(h), []string{
		"og:title=Note 42",
		"og:description=About note 42",
		"og:type=article",
		"og:url=https://notes.example/notes/42",
		"og:site_name=Notes",
		"og:image=https://notes.example/covers/42.png",
		"og:image:width=1200",
		"og:image:alt=Cover 42",
		"twitter:card=summary_large_image",
		"twitter:site=@notes",
		"twitter:title=Note 42",
		"twitter:description=About note 42",
		"twitter:url=https://notes.example/notes/42",
	})
	for _, mt := range h.Meta {
		wantAttr := "property"
		if strings.HasPrefix(mt.Key, "twitter:") {
			wantAttr = "name"
		}
		if mt.Attr != wantAttr {
			t.Errorf("%s has attr %q, want %q", mt.Key, mt.Attr, wantAttr)
		}
		if strings.HasPrefix(mt.Key, "og:image") && mt.Identity != "og:image" {
			t.Errorf("%s has identity %q, want og:image", mt.Key, mt.Identity)
		}
	}
	sameList(t, "headers", headers(h), []string{"x-a: layout-a", "x-b: page-b"})
	// json_ld accumulates, least specific first; keys are written sorted.
	sameList(t, "json_ld", jsonLD(h), []string{
		`{"@context":"https://schema.org","@type":"Organization","name":"Notes"}`,
		`{"@id":"https://notes.example/notes/42#article","@type":"Article","headline":"Note 42"}`,
	})
	if len(h.Dropped) != 0 {
		t.Errorf("dropped %v", drops(h))
	}

	// The layout alone: its two images, the upstream's title as og:title.
	h = cfg.Resolve("/other").Render(Page{Title: "Upstream", HasTitle: true})
	if h.Title != nil || h.Canonical != nil {
		t.Errorf("layout alone wrote title %q, canonical %q", str(h.Title), str(h.Canonical))
	}
	if str(h.Robots) != "index, follow, max-snippet:50" {
		t.Errorf("robots %q", str(h.Robots))
	}
	sameList(t, "layout meta", metas(h), []string{
		"og:title=Upstream",
		"og:type=website",
		"og:site_name=Notes",
		"og:image=https://notes.example/covers/a.png",
		"og:image=https://notes.example/covers/b.png",
		"twitter:card=summary",
		"twitter:site=@notes",
		"twitter:title=Upstream",
	})
}

func TestMergeRobots(t *testing.T) {
	tests := []struct{ layout, page, want string }{
		{"", "{ index = false }", "noindex"},
		{"", "{ index = false, follow = true }", "noindex, follow"},
		{"", "{ follow = false }", "nofollow"},
		{"", `{ directives = ["max-image-preview:large", "noarchive"] }`, "max-image-preview:large, noarchive"},
		{`{ index = true, directives = ["a"] }`, `{ directives = ["b"] }`, "index, b"},
		{`{ index = true, directives = ["a"] }`, `{ directives = [] }`, "index"},
		{`{ index = true, follow = true }`, `{ index = false }`, "noindex, follow"},
		{`{ index = false }`, `{}`, "noindex"},
		{"", "{}", "<nil>"},
	}
	for _, tc := range tests {
		toml := ""
		if tc.layout != "" {
			toml += "[[rule]]\nmatch = \"/*\"\nrobots = " + tc.layout + "\n"
		}
		toml += "[[rule]]\nmatch = \"/p\"\nrobots = " + tc.page + "\n"
		h := mustParse(t, toml).Resolve("/p").Render(Page{})
		if got := str(h.Robots); got != tc.want {
			t.Errorf("layout %s, page %s: robots %q, want %q", tc.layout, tc.page, got, tc.want)
		}
	}
}

func TestMergeFileOrder(t *testing.T) {
	// Two patterns of equal specificity (a constrained parameter each):
	// the later rule in the file wins. The same match twice is HG113
	// (§23: TestSameMatchRefused), so file order only ever decides between
	// different patterns.
	a := "[[rule]]\nmatch = \"/p/:a{[a-z]+}\"\ntitle = \"A\"\ndescription = \"from A\"\n"
	b := "[[rule]]\nmatch = \"/p/:b{[a-z0-9]+}\"\ntitle = \"B\"\n"
	h := mustParse(t, a+b).Resolve("/p/x").Render(Page{})
	if str(h.Title) != "B" || str(h.Description) != "from A" {
		t.Errorf("A then B: title %q, description %q; want B, from A", str(h.Title), str(h.Description))
	}
	h = mustParse(t, b+a).Resolve("/p/x").Render(Page{})
	if str(h.Title) != "A" {
		t.Errorf("B then A: title %q, want A", str(h.Title))
	}
}

func TestSpecificity(t *testing.T) {
	rule := func(p string) string {
		title := strings.NewReplacer("{", "{{", "}", "}}").Replace(p) // the pattern as a literal title
		return fmt.Sprintf("[[rule]]\nmatch = %s\ntitle = %s\n", tomlString(p), tomlString(title))
	}
	tests := []struct {
		name  string
		rules []string // in file order
		path  string
		want  []string // merge order
	}{
		{"kinds", []string{"/s/1", "/s/:x{[0-9]+}", "/s/:x", "/s/*"}, "/s/1",
			[]string{"/s/*", "/s/:x", "/s/:x{[0-9]+}", "/s/1"}},
		{"kinds reversed", []string{"/s/*", "/s/:x", "/s/:x{[0-9]+}", "/s/1"}, "/s/1",
			[]string{"/s/*", "/s/:x", "/s/:x{[0-9]+}", "/s/1"}},
		{"first segment decides", []string{"/:a/b/c", "/a/*"}, "/a/b/c",
			[]string{"/:a/b/c", "/a/*"}},
		{"deeper wildcard", []string{"/a/b/*", "/a/*", "/*"}, "/a/b/c",
			[]string{"/*", "/a/*", "/a/b/*"}},
		{"then longer", []string{"/f/:p{.+}/raw", "/f/:p{.+}"}, "/f/x/raw",
			[]string{"/f/:p{.+}", "/f/:p{.+}/raw"}},
		{"then longer reversed", []string{"/f/:p{.+}", "/f/:p{.+}/raw"}, "/f/x/raw",
			[]string{"/f/:p{.+}", "/f/:p{.+}/raw"}},
		{"page after its layout", []string{"/blog", "/blog/*"}, "/blog",
			[]string{"/blog/*", "/blog"}},
		{"home after the site layout", []string{"/", "/*"}, "/",
			[]string{"/*", "/"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			for _, r := range tc.rules {
				b.WriteString(rule(r))
			}
			m := mustParse(t, b.String()).Resolve(tc.path)
			sameList(t, "merge order", m.Patterns(), tc.want)
			if got := str(m.Render(Page{}).Title); got != tc.want[len(tc.want)-1] {
				t.Errorf("title %q, want the most specific rule's %q", got, tc.want[len(tc.want)-1])
			}
		})
	}
}

func TestMergeDeny(t *testing.T) {
	cfg := mustParse(t, `
[[rule]]
match = "/internal/*"
deny = true
[[rule]]
match = "/internal/status"
title = "Status"
deny = false
`)
	if m := cfg.Resolve("/internal/status"); !m.Deny || len(m.Matched) != 2 {
		t.Errorf("/internal/status: Deny %v with %v; want denied by the layout", m.Deny, m.Patterns())
	}
	if m := cfg.Resolve("/status"); m.Deny {
		t.Error("/status is denied")
	}
}

const localizedConfig = `
locales = ["en", "de", "de-AT"]
[[rule]]
match = "/about"
localized = true
title = "About ({locale})"
keep_query = ["page"]
[rule.open_graph]
site_name = "Notes"
`

func TestLocalized(t *testing.T) {
	cfg := mustParse(t, localizedConfig)
	for _, path := range []string{"/de-at/about", "/DE-AT/about", "/de-AT/about?utm=1"} {
		m := cfg.Resolve(path)
		if m.Locale != "de-AT" {
			t.Fatalf("%s: locale %q, want the configured spelling de-AT", path, m.Locale)
		}
		sameList(t, path+" patterns", m.Patterns(), []string{"/{locale}/about"})
		h := m.Render(Page{})
		if str(h.Title) != "About (de-AT)" {
			t.Errorf("%s: title %q", path, str(h.Title))
		}
		if str(h.Canonical) != "https://notes.example/de-AT/about" {
			t.Errorf("%s: canonical %q", path, str(h.Canonical))
		}
		sameList(t, path+" alternates", alternates(h), []string{
			"en https://notes.example/en/about",
			"de https://notes.example/de/about",
			"de-AT https://notes.example/de-AT/about",
			"x-default https://notes.example/about",
		})
		sameList(t, path+" meta", metas(h), []string{
			"og:title=About (de-AT)",
			"og:url=https://notes.example/de-AT/about",
			"og:site_name=Notes",
			"og:locale=de_AT",
			"og:locale:alternate=en",
			"og:locale:alternate=de",
		})
	}
	for _, path := range []string{"/about", "/fr/about", "/de-at/about/", "/de-at", "/de-at-x/about"} {
		if m := cfg.Resolve(path); m.Any() || m.Locale != "" {
			t.Errorf("%s matched %v (locale %q), want nothing", path, m.Patterns(), m.Locale)
		}
	}
	// keep_query holds for the default canonical of a localized page too.
	h := cfg.Resolve("/de/about?utm=1&page=2").Render(Page{})
	if str(h.Canonical) != "https://notes.example/de/about?page=2" {
		t.Errorf("canonical %q, want …/de/about?page=2", str(h.Canonical))
	}
	if len(h.Alternates) != 4 {
		t.Errorf("alternates %q, want 4", alternates(h))
	}
}

func TestLocalizedOptions(t *testing.T) {
	// A canonical that names another page: no alternates.
	h := mustParse(t, `
locales = ["en", "de"]
[[rule]]
match = "/about"
localized = true
canonical = "/about"
`).Resolve("/de/about").Render(Page{})
	if str(h.Canonical) != "https://notes.example/about" || len(h.Alternates) != 0 {
		t.Errorf("canonical %q, alternates %q; want /about and none", str(h.Canonical), alternates(h))
	}
	// x_default = false: no x-default.
	h = mustParse(t, `
locales = ["en", "de"]
x_default = false
[[rule]]
match = "/about"
localized = true
`).Resolve("/en/about").Render(Page{})
	sameList(t, "alternates", alternates(h), []string{"en https://notes.example/en/about", "de https://notes.example/de/about"})
	// A localized layout matches a locale's home; x-default is the site's.
	h = mustParse(t, `
locales = ["en", "de"]
[[rule]]
match = "/*"
localized = true
`).Resolve("/de").Render(Page{})
	if str(h.Canonical) != "https://notes.example/de" {
		t.Errorf("canonical %q", str(h.Canonical))
	}
	sameList(t, "home alternates", alternates(h), []string{"en https://notes.example/en", "de https://notes.example/de", "x-default https://notes.example/"})
}

func TestKeepQuery(t *testing.T) {
	cfg := mustParse(t, `
[[rule]]
match = "/notes/"
canonical = "self"
keep_query = ["page", "q"]
[[rule]]
match = "/plain"
canonical = "self"
`)
	tests := []struct{ target, want string }{
		{"/notes/", "https://notes.example/notes/"},
		{"/notes/?utm_source=x&page=2&q=a%20b&page=3", "https://notes.example/notes/?page=2&q=a+b&page=3"},
		{"/notes/?pa%67e=1", "https://notes.example/notes/?page=1"},
		{"/notes/?q=%3C%26%3E", "https://notes.example/notes/?q=%3C%26%3E"},
		{"/notes/?utm=1", "https://notes.example/notes/"},
		{"/notes/?page=%zz&q=1", "https://notes.example/notes/?q=1"},
		{"/plain?page=2", "https://notes.example/plain"},
	}
	for _, tc := range tests {
		if got := str(cfg.Resolve(tc.target).Render(Page{}).Canonical); got != tc.want {
			t.Errorf("%s: canonical %q, want %q", tc.target, got, tc.want)
		}
	}
}

func TestPolicyFill(t *testing.T) {
	cfg := mustParse(t, `
[[rule]]
match = "/*"
policy = "fill"
[[rule]]
match = "/f"
title = "Rule title"
description = "Rule description"
[rule.open_graph]
type = "website"
[[rule]]
match = "/o"
title = "Rule title"
policy = "override"
`)
	m := cfg.Resolve("/f")
	if m.Policy() != Fill {
		t.Fatalf("policy %q, want fill from the layout", m.Policy())
	}
	h := m.Render(Page{Title: "Upstream", HasTitle: true})
	if h.Policy != Fill || h.Title != nil {
		t.Errorf("policy %q, title %q; want fill and the upstream's title kept", h.Policy, str(h.Title))
	}
	if str(h.Description) != "Rule description" {
		t.Errorf("description %q: the upstream has none, so fill writes it", str(h.Description))
	}
	sameList(t, "meta", metas(h), []string{"og:title=Upstream", "og:description=Rule description", "og:type=website"})
	if h := m.Render(Page{}); str(h.Title) != "Rule title" {
		t.Errorf("no upstream title: title %q, want the rule's", str(h.Title))
	}
	if m := cfg.Resolve("/o"); m.Policy() != Override || str(m.Render(Page{Title: "Up", HasTitle: true}).Title) != "Rule title" {
		t.Errorf("a page's override does not beat its layout's fill")
	}
}

func TestTitleTemplate(t *testing.T) {
	tests := []struct {
		tmpl, title string
		page        Page
		want, og    string
	}{
		{"%s · Notes", "Note {id}", Page{}, "Note 7 · Notes", "Note 7"},
		{"%s · Notes", "{title} (archived)", Page{Title: "Up", HasTitle: true}, "Up (archived) · Notes", "Up (archived)"},
		{"%s · Notes", "{page.title}", Page{Title: "Up", HasTitle: true}, "Up · Notes", "Up"},
		{"100%% %s", "X", Page{}, "100% X", "X"},
		{"%s", "50% off", Page{}, "50% off", "50% off"},
		{"%% %s %%", "X", Page{}, "% X %", "X"},
	}
	for _, tc := range tests {
		cfg := mustParse(t, fmt.Sprintf("title_template = %s\n[[rule]]\nmatch = \"/n/:id\"\ntitle = %s\nopen_graph = {}\n",
			tomlString(tc.tmpl), tomlString(tc.title)))
		h := cfg.Resolve("/n/7").Render(tc.page)
		if str(h.Title) != tc.want {
			t.Errorf("%q with %q: title %q, want %q", tc.tmpl, tc.title, str(h.Title), tc.want)
		}
		if got := metas(h); len(got) == 0 || got[0] != "og:title="+tc.og {
			t.Errorf("%q with %q: meta %q, want og:title=%s first", tc.tmpl, tc.title, got, tc.og)
		}
	}
}

func TestTemplates(t *testing.T) {
	cfg := mustParse(t, `
locales = ["en", "de-AT"]
[[rule]]
match = "/t/:id"
localized = true
title = "T{id}"
description = "D{id} of {title}"
canonical = "self"
[rule.headers]
x-vars = "{{id}}={id} locale={locale} path={path} base={base_url} canonical={canonical} title={title} description={description} page={page.title}|{page.description}"
[[rule.json_ld]]
"@type" = "WebPage"
name = "{title}"
about = { "@id" = "{canonical}#{{x}}", description = "{description}" }
keywords = ["{id}", "{page.title}"]
`)
	page := Page{Title: "PT", HasTitle: true, Description: "PD", HasDescription: true}
	h := cfg.Resolve("/de-at/t/7?q=1").Render(page)
	sameList(t, "headers", headers(h), []string{
		"x-vars: {id}=7 locale=de-AT path=/de-at/t/7 base=https://notes.example canonical=https://notes.example/de-AT/t/7 title=T7 description=D7 of T7 page=PT|PD",
	})
	sameList(t, "json_ld", jsonLD(h), []string{
		`{"@type":"WebPage","about":{"@id":"https://notes.example/de-AT/t/7#{x}","description":"D7 of T7"},"keywords":["7","PT"],"name":"T7"}`,
	})

	// Values are rendered in order: canonical, then title, then description.
	cfg = mustParse(t, `
[[rule]]
match = "/o"
canonical = "/c/{title}"
title = "Rule"
description = "{title}!"
`)
	h = cfg.Resolve("/o").Render(Page{Title: "Up Title", HasTitle: true})
	if str(h.Canonical) != "https://notes.example/c/Up%20Title" {
		t.Errorf("canonical %q: {title} there is the upstream's", str(h.Canonical))
	}
	if str(h.Description) != "Rule!" {
		t.Errorf("description %q: {title} there is the rule's", str(h.Description))
	}
}

func TestURLValues(t *testing.T) {
	cfg := mustParse(t, `
[[rule]]
match = "/n/:slug"
canonical = "/n/{slug}"
[rule.open_graph]
image = "/covers/{slug}.png"
url = "/share?n={slug}&x=1"
[[rule]]
match = "/f/:p{.+}"
canonical = "/f/{p}"
[[rule]]
match = "/t/:x"
canonical = "/t/{title}"
`)
	tests := []struct{ target, canonical, image, ogURL string }{
		{"/n/a%20b%3Fc%23d", "https://notes.example/n/a%20b%3Fc%23d", "https://notes.example/covers/a%20b%3Fc%23d.png", "https://notes.example/share?n=a+b%3Fc%23d&x=1"},
		{"/n/x%26admin%3D1", "https://notes.example/n/x&admin=1", "https://notes.example/covers/x&admin=1.png", "https://notes.example/share?n=x%26admin%3D1&x=1"},
		{"/n/%3Cb%3E%22", "https://notes.example/n/%3Cb%3E%22", "https://notes.example/covers/%3Cb%3E%22.png", "https://notes.example/share?n=%3Cb%3E%22&x=1"},
		{"/n/caf%C3%A9", "https://notes.example/n/caf%C3%A9", "https://notes.example/covers/caf%C3%A9.png", "https://notes.example/share?n=caf%C3%A9&x=1"},
		// a value that spans segments is written as segments
		{"/f/a/b%20c", "https://notes.example/f/a/b%20c", "", ""},
		{"/f/a%2Fb", "https://notes.example/f/a/b", "", ""},
		// a dot segment in a spanning value: no spelling keeps it a segment
		// (a browser reads /f/a/%2E%2E/%2E%2E/x as /x), so the canonical is
		// dropped (CheckPath refuses the path anyway)
		{"/f/a%2F..%2F..%2Fx", "<nil>", "", ""},
		// text that is not a parameter is encoded whole
		{"/t/1", "https://notes.example/t/A%2FB%20test", "", ""},
	}
	for _, tc := range tests {
		h := cfg.Resolve(tc.target).Render(Page{Title: "A/B test", HasTitle: true})
		if str(h.Canonical) != tc.canonical {
			t.Errorf("%s: canonical %q, want %q", tc.target, str(h.Canonical), tc.canonical)
		}
		var image, ogURL string
		for _, mt := range h.Meta {
			switch mt.Key {
			case "og:image":
				image = mt.Content
			case "og:url":
				ogURL = mt.Content
			}
		}
		if image != tc.image || ogURL != tc.ogURL {
			t.Errorf("%s: og:image %q, og:url %q; want %q, %q", tc.target, image, ogURL, tc.image, tc.ogURL)
		}
	}
}

func TestDroppedURLs(t *testing.T) {
	cfg := mustParse(t, `
[[rule]]
match = "/d/:v"
canonical = "{v}"
[rule.open_graph]
image = ["{v}", "/ok.png"]
[rule.twitter]
image = "{v}"
[[rule]]
match = "/s/:p{.+}"
canonical = "{p}"
`)
	h := cfg.Resolve("/d/javascript:alert(1)").Render(Page{})
	if h.Canonical != nil {
		t.Errorf("canonical %q written", *h.Canonical)
	}
	sameList(t, "dropped", drops(h), []string{
		`/d/:v canonical "javascript:alert(1)" scheme`,
		`/d/:v open_graph.image "javascript:alert(1)" scheme`,
		`/d/:v twitter.image "javascript:alert(1)" scheme`,
	})
	sameList(t, "meta", metas(h), []string{"og:image=https://notes.example/ok.png"})

	h = cfg.Resolve("/s///evil.example/x").Render(Page{})
	sameList(t, "dropped", drops(h), []string{`/s/:p{.+} canonical "//evil.example/x" other_host`})
	h = cfg.Resolve("/s/data:text%2Fhtml,x").Render(Page{})
	sameList(t, "dropped", drops(h), []string{`/s/:p{.+} canonical "data:text/html,x" scheme`})
}

func TestHeaderValues(t *testing.T) {
	cfg := mustParse(t, `
[[rule]]
match = "/h/:v"
[rule.headers]
x-v = "v={v}"
x-static = "ok"
`)
	tests := []struct {
		target  string
		headers []string
		dropped []string
	}{
		{"/h/plain", []string{"x-static: ok", "x-v: v=plain"}, nil},
		{"/h/a%09b", []string{"x-static: ok", "x-v: v=a\tb"}, nil},
		{"/h/a%0D%0ASet-Cookie:%20x=1", []string{"x-static: ok"}, []string{`/h/:v headers.x-v "v=a\r\nSet-Cookie: x=1" header_value`}},
		{"/h/a%0Ab", []string{"x-static: ok"}, []string{`/h/:v headers.x-v "v=a\nb" header_value`}},
		{"/h/a%00", []string{"x-static: ok"}, []string{`/h/:v headers.x-v "v=a\x00" header_value`}},
		{"/h/a%01", []string{"x-static: ok"}, []string{`/h/:v headers.x-v "v=a\x01" header_value`}},
	}
	for _, tc := range tests {
		h := cfg.Resolve(tc.target).Render(Page{})
		sameList(t, tc.target+" headers", headers(h), tc.headers)
		sameList(t, tc.target+" dropped", drops(h), tc.dropped)
	}
}

func TestSocialDefaults(t *testing.T) {
	cfg := mustParse(t, `
[[rule]]
match = "/both"
title = "T"
description = "D"
canonical = "self"
open_graph = { title = "OG title" }
twitter = { card = "summary" }
[[rule]]
match = "/neither"
title = "T"
canonical = "self"
`)
	h := cfg.Resolve("/both").Render(Page{})
	// twitter defaults to the page's title, not to open_graph's.
	sameList(t, "meta", metas(h), []string{
		"og:title=OG title", "og:description=D", "og:url=https://notes.example/both",
		"twitter:card=summary", "twitter:title=T", "twitter:description=D", "twitter:url=https://notes.example/both",
	})
	if h := cfg.Resolve("/neither").Render(Page{}); len(h.Meta) != 0 {
		t.Errorf("no open_graph, no twitter: meta %q", metas(h))
	}
	cfg = mustParse(t, "og_url_from_canonical = false\n[[rule]]\nmatch = \"/x\"\ncanonical = \"self\"\nopen_graph = {}\ntwitter = {}\n")
	if h := cfg.Resolve("/x").Render(Page{}); len(h.Meta) != 0 {
		t.Errorf("og_url_from_canonical = false: meta %q", metas(h))
	}
}

func TestJSONLDEscaping(t *testing.T) {
	cfg := mustParse(t, `
[[rule]]
match = "/j/:v{.+}"
[[rule.json_ld]]
"@type" = "Thing"
name = "{v}"
n = 3
ok = true
`)
	h := cfg.Resolve("/j/%3C%2Fscript%3E%3Cscript%3E%26%E2%80%A8").Render(Page{})
	want := `{"@type":"Thing","n":3,"name":"\u003c/script\u003e\u003cscript\u003e\u0026\u2028","ok":true}`
	sameList(t, "json_ld", jsonLD(h), []string{want})
	var back map[string]any
	if err := json.Unmarshal(h.JSONLD[0], &back); err != nil || back["name"] != "</script><script>&\u2028" {
		t.Errorf("parses back to %v (%v)", back, err)
	}
}

func TestEmptyValuesWriteNothing(t *testing.T) {
	cfg, err := Parse("t.toml", []byte(`
[server]
upstream = "http://127.0.0.1:3000"
[site]
base_url = "https://a.example"
[[rule]]
match = "/*"
title = "{page.title}"
description = "{page.description}"
[rule.open_graph]
site_name = "{page.title}"
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	h := cfg.Resolve("/x").Render(Page{})
	if h.Title != nil || h.Description != nil {
		t.Errorf("empty templates wrote title %q, description %q", str(h.Title), str(h.Description))
	}
	for _, m := range h.Meta {
		if m.Content == "" {
			t.Errorf("empty %s written", m.Key)
		}
	}
	h = cfg.Resolve("/x").Render(Page{Title: "T", HasTitle: true, Description: "D", HasDescription: true})
	if str(h.Title) != "T" || str(h.Description) != "D" {
		t.Errorf("title %q, description %q; want T and D", str(h.Title), str(h.Description))
	}
}
