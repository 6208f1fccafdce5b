package rules

import (
	"html"
	"net/url"
	"strings"
	"testing"

	"github.com/headgate/headgate/markdown"
)

func TestMarkdownPathForms(t *testing.T) {
	cfg := mustParse(t, `
[markdown]
enabled = true
match = ["/notes/*", "/docs/*", "/docs/"]

[[rule]]
match = "/notes/raw"
rewrite = false
`)
	md := cfg.Markdown
	if md == nil || md.Suffix != ".md" || md.MaxBytes != DefaultMarkdownMaxBytes || md.Converter == nil {
		t.Fatalf("defaults: %+v", md)
	}
	for _, tc := range []struct{ in, page string }{
		{"/notes/3.md", "/notes/3"},
		{"/docs/index.md", "/docs/"},
		{"/index.md", "/"},
		{"/docs/a.b.md", "/docs/a.b"},
		{"/.md", ""},
		{"/docs/.md", ""},
		{"/notes/3", ""},
		{"/notes/3.MD", ""},
	} {
		page, ok := md.PagePath(tc.in)
		if page != tc.page || ok != (tc.page != "") {
			t.Errorf("PagePath(%q) = %q, %v; want %q", tc.in, page, ok, tc.page)
		}
		if ok && md.FormPath(page) != tc.in {
			t.Errorf("FormPath(%q) = %q, want %q", page, md.FormPath(page), tc.in)
		}
	}
	for path, want := range map[string]string{
		"/notes/3":   "https://notes.example/notes/3.md",
		"/docs/":     "https://notes.example/docs/index.md",
		"/notes/raw": "", // rewrite = false: not a page
		"/elsewhere": "",
	} {
		if got := cfg.Resolve(path).MarkdownURL(); got != want {
			t.Errorf("MarkdownURL(%s) = %q, want %q", path, got, want)
		}
	}
	if got := cfg.Resolve("/notes/3").MarkdownLink(); got != `<https://notes.example/notes/3.md>; rel="alternate"; type="text/markdown"` {
		t.Errorf("MarkdownLink = %q", got)
	}
	if h := cfg.Resolve("/notes/3").Render(Page{}); h.Markdown != "https://notes.example/notes/3.md" || !h.Sets(IdentMarkdown) {
		t.Errorf("Render: Markdown %q", h.Markdown)
	}

	noSuffix := mustParse(t, "[markdown]\nenabled = true\nsuffix = \"\"\n")
	if _, ok := noSuffix.Markdown.PagePath("/a.md"); ok {
		t.Error("a path form without a suffix")
	}
	if got := noSuffix.Resolve("/a").MarkdownURL(); got != "https://notes.example/a" {
		t.Errorf("without a suffix the alternate is the page: %q", got)
	}
	if off := mustParse(t, "[markdown]\nenabled = false\n"); off.Markdown != nil || off.Resolve("/a").MarkdownURL() != "" {
		t.Error("enabled = false still has a Markdown version")
	}
}

// content_signal merges key by key, the more specific rule winning, and
// SetBy names the rule of each key.
func TestContentSignalMerge(t *testing.T) {
	cfg := mustParse(t, `
[[rule]]
match = "/notes/*"
content_signal = { search = "yes", ai_input = "no", ai_train = "no" }

[[rule]]
match = "/notes/open/*"
content_signal = { ai_input = "yes" }
`)
	m := cfg.Resolve("/notes/open/1")
	cs := m.ContentSignal()
	if cs == nil || cs.Line() != "search=yes, ai-input=yes, ai-train=no" || cs.ContentUsage() != "train-ai=n, search=y" {
		t.Fatalf("merged: %+v", cs)
	}
	if got := m.SetBy("content_signal", "ai_input"); got != "rule /notes/open/* (test.toml:11) sets it" {
		t.Errorf("SetBy ai_input = %q", got)
	}
	if got := m.SetBy("content_signal", "search"); got != "rule /notes/* (test.toml:7) sets it" {
		t.Errorf("SetBy search = %q", got)
	}
	if cfg.Resolve("/other").ContentSignal() != nil {
		t.Error("a signal where no rule sets one")
	}
	if got := (&ContentSignal{AIInput: "no"}).ContentUsage(); got != "" {
		t.Errorf("ai_input alone has no Content-Usage category: %q", got)
	}
}

// TestPooledMarkdownLink: the proxy's Link value comes from a pooled Match,
// reused from one path to the next: each gives its own path's MarkdownLink,
// as a fresh Resolve does, never the one before's.
func TestPooledMarkdownLink(t *testing.T) {
	cfg := mustParse(t, `
[markdown]
enabled = true
match = ["/notes/*", "/docs/", "/a b"]

[[rule]]
match = "/notes/raw"
rewrite = false
`)
	for range 2 {
		for _, path := range []string{"/notes/3", "/docs/", "/a%20b", "/notes/raw", "/other", "/notes/4"} {
			m := cfg.PooledMatch()
			cfg.ResolveInto(m, path)
			if got, want := m.MarkdownLink(), cfg.Resolve(path).MarkdownLink(); got != want {
				t.Errorf("%s: pooled Match's MarkdownLink %q, Resolve's %q", path, got, want)
			}
			m.Release()
		}
	}
}

// TestContentSignalLines: the lines made once are those Line and
// ContentUsage make, and asking for them allocates nothing.
func TestContentSignalLines(t *testing.T) {
	vals := []string{"", "yes", "no"}
	for _, s := range vals {
		for _, in := range vals {
			for _, tr := range vals {
				c := &ContentSignal{Search: s, AIInput: in, AITrain: tr}
				if c.Line() != c.line() || c.ContentUsage() != c.contentUsage() {
					t.Errorf("%+v: %q %q, want %q %q", *c, c.Line(), c.ContentUsage(), c.line(), c.contentUsage())
				}
			}
		}
	}
	c := &ContentSignal{Search: "yes", AIInput: "yes", AITrain: "no"}
	if c.Line() != "search=yes, ai-input=yes, ai-train=no" || c.ContentUsage() != "train-ai=n, search=y" {
		t.Errorf("Line %q, ContentUsage %q", c.Line(), c.ContentUsage())
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = c.Line(), c.ContentUsage() }); n != 0 {
		t.Errorf("%.0f allocations, want 0", n)
	}
	if odd := (&ContentSignal{Search: "maybe"}); odd.Line() != "search=maybe" {
		t.Errorf("an unchecked value: Line %q", odd.Line())
	}
}

// TestMarkdownLinkURLs: the Markdown's link and image URLs resolve on the
// page's URL as a browser resolves them (SPEC §19.1, §23: WHATWG) and
// follow §4.6 (another host, another scheme: dropped, text kept).
func TestMarkdownLinkURLs(t *testing.T) {
	cfg := mustParse(t, "[markdown]\nenabled = true\n")
	for _, c := range []*Config{cfg, cfg.WithMarkdown(), oneRule(t, "/x").WithMarkdown()} {
		page, _ := url.Parse("https://notes.example/notes/links.md")
		conv := c.Markdown.Converter.WithBase(page)
		for _, tc := range []struct{ href, want string }{
			{":foo", "[t](https://notes.example/notes/:foo)"},
			{"::23", "[t](https://notes.example/notes/::23)"},
			{"[61:24:74]:98", "[t](https://notes.example/notes/[61:24:74]:98)"},
			{"a/b?c=d#e", "[t](https://notes.example/notes/a/b?c=d#e)"},
			{"../up", "[t](https://notes.example/up)"},
			{"/%2e%2e/x", "[t](https://notes.example/x)"},
			{"https://other.example/ok", "[t](https://other.example/ok)"},
			{`/\evil.example/c`, "t"},
			{"//other.example/b", "t"},
			{"mailto:a@b", "t"},
			{"javascript:x", "t"},
			{"https:other.example/", "t"},
		} {
			var b strings.Builder
			if _, err := conv.Convert(&b, strings.NewReader(`<p><a href="`+html.EscapeString(tc.href)+`">t</a>`), markdown.Front{}); err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(b.String()); got != tc.want {
				t.Errorf("%s: %q, want %q", tc.href, got, tc.want)
			}
		}
	}
}

// TestMarkdownFragmentHrefAgrees: the "#…" shortcut of the Markdown
// resolver gives what AbsUpstreamURL (WHATWG) gives.
func TestMarkdownFragmentHrefAgrees(t *testing.T) {
	site, _ := url.Parse("https://notes.example/")
	resolve := markdownResolver(site)
	pages := []string{"https://notes.example/notes/a", "https://NOTES.example:443/a/../b?q=1#old", "https://notes.example", "https://notes.example/%7e/x?y#z", "https://notes.example/a/b", "http://other.example/x"}
	refs := []string{"#", "#top", "#a#b", "#Foo_(bar)", "#%41", "#ä", "#a b", "#x'y", "#cite_note-1"}
	for range 2 { // the second round reads the cached page hrefs
		for _, ps := range pages {
			page, _ := url.Parse(ps)
			for _, ref := range refs {
				got, ok := resolve(page, ref)
				want, why := AbsUpstreamURL(page, ref)
				if why == "" && page.Host != site.Host {
					why = ValidURL("https://notes.example", want)
				}
				if got != want && why == "" || ok != (why == "") {
					t.Errorf("%s %s: %q %v, want %q (%s)", ps, ref, got, ok, want, why)
				}
			}
		}
	}
}
