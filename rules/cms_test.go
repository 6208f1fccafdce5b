package rules

import (
	"strings"
	"testing"
)

const queryRules = `
[[rule]]
match = "/"
description = "Home"
canonical = "self"

[[rule]]
match = "/"
query = { s = ":q" }
robots = { index = false, follow = true }
canonical = "/search/{q}/"
description = "Results for {q}"

[[rule]]
match = "/"
query = { s = ":q", paged = ":n{[0-9]+}" }
title = "Results for {q}, page {n}"

[[rule]]
match = "/"
query = { p = ":id{[0-9]+}" }
canonical = "/?p={id}"

[[rule]]
match = "/"
query = { feed = "rss2" }
description = "The feed"
`

func TestQueryRules(t *testing.T) {
	cfg := mustParse(t, queryRules)
	cases := []struct {
		target             string
		patterns           string
		canonical, robots  string
		description, title string
	}{
		{"/", "/", "https://notes.example/", "<nil>", "Home", "<nil>"},
		{"/?s=M%C3%BCll", "/ /?s=:q", "https://notes.example/search/M%C3%BCll/", "noindex, follow", "Results for Müll", "<nil>"},
		{"/?s=two+words", "/ /?s=:q", "https://notes.example/search/two%20words/", "noindex, follow", "Results for two words", "<nil>"},
		{"/?paged=2&s=go", "/ /?s=:q /?paged=:n{[0-9]+}&s=:q", "https://notes.example/search/go/", "noindex, follow", "Results for go", "Results for go, page 2"},
		{"/?s=go&paged=x", "/ /?s=:q", "https://notes.example/search/go/", "noindex, follow", "Results for go", "<nil>"},
		{"/?s=", "/", "https://notes.example/", "<nil>", "Home", "<nil>"},                                         // :name needs a value
		{"/?S=go", "/", "https://notes.example/", "<nil>", "Home", "<nil>"},                                       // keys are case-sensitive
		{"/?s=a&s=b", "/ /?s=:q", "https://notes.example/search/b/", "noindex, follow", "Results for b", "<nil>"}, // the last, as PHP reads it
		{"/?s=a&s=%0a", "/", "https://notes.example/", "<nil>", "Home", "<nil>"},
		{"/?p=123", "/ /?p=:id{[0-9]+}", "https://notes.example/?p=123", "<nil>", "Home", "<nil>"},
		{"/?p=12a", "/", "https://notes.example/", "<nil>", "Home", "<nil>"},
		{"/?feed=rss2", "/ /?feed=rss2", "https://notes.example/", "<nil>", "The feed", "<nil>"},
		{"/?feed=atom", "/", "https://notes.example/", "<nil>", "Home", "<nil>"},
		// Bad input: CR, LF, NUL, bad escapes and bad UTF-8 match nothing.
		{"/?s=a%0D%0ASet-Cookie:x", "/", "https://notes.example/", "<nil>", "Home", "<nil>"},
		{"/?s=a%00b", "/", "https://notes.example/", "<nil>", "Home", "<nil>"},
		{"/?s=%zz", "/", "https://notes.example/", "<nil>", "Home", "<nil>"},
		{"/?s=%ff%fe", "/", "https://notes.example/", "<nil>", "Home", "<nil>"},
		// A value that would climb out of the path: no spelling of a ".."
		// segment stays one (a browser reads /search/%2E%2E/ as /, the
		// WHATWG URL Standard; TestConfigURLDotSegment), so the canonical
		// is dropped, not written as another page's address.
		{"/?s=..", "/ /?s=:q", "<nil>", "noindex, follow", "Results for ..", "<nil>"},
		{"/?s=%3Cscript%3E%22", "/ /?s=:q", "https://notes.example/search/%3Cscript%3E%22/", "noindex, follow", `Results for <script>"`, "<nil>"},
	}
	for _, c := range cases {
		m := cfg.Resolve(c.target)
		if got := strings.Join(m.Patterns(), " "); got != c.patterns {
			t.Errorf("%s: patterns %q, want %q", c.target, got, c.patterns)
		}
		h := m.Render(Page{})
		if str(h.Canonical) != c.canonical || str(h.Robots) != c.robots || str(h.Description) != c.description || str(h.Title) != c.title {
			t.Errorf("%s: canonical %q robots %q description %q title %q,\nwant %q %q %q %q", c.target,
				str(h.Canonical), str(h.Robots), str(h.Description), str(h.Title), c.canonical, c.robots, c.description, c.title)
		}
	}
}

func TestInheritAndRewrite(t *testing.T) {
	cfg := mustParse(t, `
[[rule]]
match = "/*"
description = "Layout"
[rule.open_graph]
site_name = "Notes"

[[rule]]
match = "/wp-admin/*"
rewrite = false

[[rule]]
match = "/wp-admin/edit.php"
rewrite = true

[[rule]]
match = "/private/*"
deny = true

[[rule]]
match = "/landing"
inherit = false
title = "Landing"

[[rule]]
match = "/private/x"
inherit = false
title = "X"
`)
	if m := cfg.Resolve("/wp-admin/admin-ajax.php?action=rest-nonce"); m.Rewrite() {
		t.Error("/wp-admin/admin-ajax.php: rewrite = false not applied")
	}
	if m := cfg.Resolve("/wp-admin/edit.php"); !m.Rewrite() {
		t.Error("/wp-admin/edit.php: a more specific rewrite = true does not win")
	}
	if m := cfg.Resolve("/2024/05/x/"); !m.Rewrite() {
		t.Error("a page is not rewritten")
	}
	m := cfg.Resolve("/landing")
	h := m.Render(Page{})
	if str(h.Description) != "<nil>" || len(h.Meta) != 0 || str(h.Title) != "Landing" {
		t.Errorf("inherit = false: description %q, metas %v, title %q", str(h.Description), metas(h), str(h.Title))
	}
	if len(m.Ignored) != 1 || m.Ignored[0].Rule.Match != "/*" {
		t.Errorf("Ignored = %v", m.Ignored)
	}
	if m := cfg.Resolve("/private/x"); !m.Deny {
		t.Error("inherit = false lifted a less specific deny")
	}
}

func TestUpstreamOrSelf(t *testing.T) {
	cfg := mustParse(t, `
[[rule]]
match = "/*"
canonical = "upstream-or-self"

[[rule]]
match = "/:slug/"
sitemap = true
sitemap_entries = [{ params = { slug = "a" } }]
`)
	cases := []struct{ path, upstream, want string }{
		{"/%e6%9d%b1/", "https://notes.example/%e6%9d%b1/", "https://notes.example/%E6%9D%B1/"},
		{"/%E6%9D%B1/", "https://notes.example/%e6%9d%b1/", "https://notes.example/%E6%9D%B1/"},
		{"/%e6%9d%b1/", "", "https://notes.example/%E6%9D%B1/"},
		{"/2024/05/TWELVE-TIPS/", "https://notes.example/2024/05/twelve-tips/", "https://notes.example/2024/05/twelve-tips/"},
		{"/a/", "https://NOTES.example:443/%7Euser/%41", "https://notes.example/~user/A"},
		{"/a/", "https://other.example/a/", "https://notes.example/a/"}, // another origin: self
		{"/a/", "http://notes.example/a/", "https://notes.example/a/"},  // another scheme: self
		{"/?p=1", "https://notes.example/?p=1", "https://notes.example/?p=1"},
		{"/?p=1", "https://notes.example/?s=caf%c3%a9", "https://notes.example/?s=caf%C3%A9"},
		// Spelled as the sitemap's <loc> (Fill) spells the segment (§17):
		// sub-delimiters raw, "/" and "%" in a segment still encoded.
		{"/a/", "https://notes.example/wiki/Tea_%28drink%29", "https://notes.example/wiki/Tea_(drink)"},
		{"/a/", "https://notes.example/a%2fb/%25/%22", "https://notes.example/a%2Fb/%25/%22"},
		// Dot segments resolved as a client would, encoded ones too (a
		// browser's URL parser reads "%2e%2E" as "..").
		{"/a/", "https://notes.example/a/./b/../c", "https://notes.example/a/c"},
		{"/a/", "https://notes.example/a/b/..", "https://notes.example/a/"},
		{"/a/", "https://notes.example/../x", "https://notes.example/x"},
		{"/a/", "https://notes.example/%2e%2E/x", "https://notes.example/x"},
		{"/a/", "https://notes.example/a/b/.%2E/%2e/c", "https://notes.example/a/c"},
		{"/a/", "https://notes.example/a/%2E%2E%2E/c", "https://notes.example/a/.../c"},
	}
	for _, c := range cases {
		h := cfg.Resolve(c.path).Render(Page{Canonical: c.upstream})
		if str(h.Canonical) != c.want || !h.ForceCanonical {
			t.Errorf("%s (upstream %q): canonical %q, want %q", c.path, c.upstream, str(h.Canonical), c.want)
		}
	}
}

func TestRespellPath(t *testing.T) {
	for in, want := range map[string]string{
		"/":                        "/",
		"/a/b":                     "/a/b",
		"/%e6%9d%b1":               "/%E6%9D%B1",
		"/%E6%9D%B1":               "/%E6%9D%B1",
		"/%41%7e%2D%5f%2e":         "/A~-_.",
		"/%2e%2e/x":                "/%2E%2E/x",
		"/%2e/x":                   "/%2E/x",
		"/a%2eb":                   "/a.b",
		"/a%2fb":                   "/a%2Fb",
		"/%":                       "/%",
		"/%zz%e6":                  "/%zz%E6",
		"/caf%c3%a9/%c3%a9t%c3%a9": "/caf%C3%A9/%C3%A9t%C3%A9",
	} {
		if got := RespellPath(in); got != want {
			t.Errorf("RespellPath(%q) = %q, want %q", in, got, want)
		}
	}
	if got := EscapePath("/%e6 x"); got != "/%E6%20x" {
		t.Errorf("EscapePath = %q", got)
	}
}

func TestSelfCanonicalOneSpelling(t *testing.T) {
	cfg := mustParse(t, "[[rule]]\nmatch = \"/*\"\ncanonical = \"self\"\n")
	a := str(cfg.Resolve("/%e6%9d%b1/").Render(Page{}).Canonical)
	b := str(cfg.Resolve("/%E6%9D%B1/").Render(Page{}).Canonical)
	if a != b || a != "https://notes.example/%E6%9D%B1/" {
		t.Errorf("two spellings of one path: %q and %q", a, b)
	}
}

func TestPatternBind(t *testing.T) {
	cases := []struct{ pattern, path, want string }{
		{"/:year{[0-9]{4}}/:month{[0-9]{2}}/:slug/", "/2024/05/caf%c3%a9/", "/2024/05/caf%C3%A9/"},
		{"/:year{[0-9]{4}}/:month{[0-9]{2}}/:slug/", "/2024/05/cafe", ""},
		{"/:year{[0-9]{4}}/:month{[0-9]{2}}/:slug/", "/category/news/", ""},
		{"/category/:slug/", "/category/news/", "/category/news/"},
		{"/:page/", "/about/", "/about/"},
		{"/:page/", "/about/team/", ""},
		{"/*", "/a/b/", "/a/b/"},
		{"/*", "/", "/"},
		{"/docs/:rest{.+}", "/docs/a/b", "/docs/a/b"},
		{"/:slug/", "/a%2Fb/", ""},
		{"/:slug/", "/%2e%2e/", ""},
		{"/:slug/", "/%zz/", ""},
	}
	for _, c := range cases {
		p, err := ParsePattern(c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		params, ok := p.Bind(c.path)
		got := ""
		if ok {
			if got, err = p.Fill(params); err != nil {
				t.Errorf("%s %s: Fill(%v): %v", c.pattern, c.path, params, err)
			}
		}
		if got != c.want {
			t.Errorf("%s: Bind(%q) then Fill = %q, want %q", c.pattern, c.path, got, c.want)
		}
	}
}

func TestCMSRuleProblems(t *testing.T) {
	_, err := Parse("t.toml", []byte(header+`
[[rule]]
match = "/"
query = { s = ":q" }
sitemap = true

[[rule]]
match = "/:slug/"
sitemap = true
canonical = "upstream-or-self"
sitemap_source = "upstream-sitemap:/wp-sitemap.xml"

[[rule]]
match = "/x"
rewrite = "no"
inherit = 0
`), nil)
	got := ""
	if err != nil {
		got = err.Error()
	}
	for _, want := range []string{
		"HG141 t.toml:10: rule[0].sitemap: a sitemap lists addresses without a query",
		"HG141 t.toml:21: rule[2].inherit: must be a boolean",
		"HG141 t.toml:20: rule[2].rewrite: must be a boolean",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems:\n%s\nwant %q", got, want)
		}
	}
	if strings.Contains(got, "HG112") || strings.Contains(got, "HG114") {
		t.Errorf("upstream-or-self or upstream-sitemap: refused:\n%s", got)
	}
}

// A deny with query conditions also denies the %2F-decoded form (§2.2).
func TestQueryDenyForms(t *testing.T) {
	cfg := mustParse(t, `
[[rule]]
match = "/admin/:x"
query = { debug = "1" }
deny = true
`)
	for target, want := range map[string]bool{"/admin/a?debug=1": true, "/admin%2Fa?debug=1": true, "/admin/a": false, "/admin%2Fa?debug=0": false} {
		if got := cfg.Resolve(target).Deny; got != want {
			t.Errorf("%s: deny %v, want %v", target, got, want)
		}
	}
}

// A sitemap <loc> (Fill), a templated path and a "self" canonical spell
// sub-delimiters as a browser sends them: /wiki/Tea_(drink) one way.
func TestOneSpellingSubDelims(t *testing.T) {
	cfg := mustParse(t, `
[[rule]]
match = "/wiki/:page{.+}"
canonical = "self"

[[rule]]
match = "/wiki/:page{.+}"
query = { oldid = ":rev" }
canonical = "/wiki/{page}"
`)
	self := str(cfg.Resolve("/wiki/Tea_(drink)").Render(Page{}).Canonical)
	tmpl := str(cfg.Resolve("/wiki/Tea_(drink)?oldid=4").Render(Page{}).Canonical)
	p := cfg.Rules[0].Pattern
	params, _ := p.Bind("/wiki/Tea_%28drink%29")
	loc, err := p.Fill(params)
	if err != nil {
		t.Fatal(err)
	}
	want := "https://notes.example/wiki/Tea_(drink)"
	if self != want || tmpl != want || "https://notes.example"+loc != want {
		t.Errorf("self %s, template %s, sitemap %s; want %s", self, tmpl, loc, want)
	}
	// What a segment can not hold raw is still encoded.
	if got, _ := p.Fill(map[string]string{"page": "a b?c#d\"<é"}); got != "/wiki/a%20b%3Fc%23d%22%3C%C3%A9" {
		t.Errorf("Fill = %s", got)
	}
}
