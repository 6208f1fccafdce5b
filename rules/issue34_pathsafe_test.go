package rules

import (
	"errors"
	"strings"
	"testing"
)

// Issue 34, MediaWiki: /wiki/C++ and /wiki/C%2B%2B are one page (the app
// decodes its path whole) and MediaWiki links to the second, but "self"
// kept each request's spelling and the sitemap wrote /wiki/C++: one
// article, two canonicals. site.path_safe (§23) names the app's spelling;
// every address headgate builds from a path is spelled so.
func TestPathSafeOneCanonical(t *testing.T) {
	cfg := mustParse(t, `path_safe = ";@$!*(),/:"
[[rule]]
match = "/wiki/:page{.+}"
canonical = "self"

[[rule]]
match = "/w/index.php"
query = { title = ":page" }
canonical = "/wiki/{page}"

[[rule]]
match = "/kept/*"
canonical = "upstream-or-self"
`)
	const want = "https://notes.example/wiki/C%2B%2B"
	for _, uri := range []string{"/wiki/C++", "/wiki/C%2B%2B", "/wiki/C%2b%2b", "/w/index.php?title=C%2B%2B", "/w/index.php?title=C++"} {
		got := str(cfg.Resolve(uri).Render(Page{}).Canonical)
		if uri == "/w/index.php?title=C++" {
			// a raw + in a query is a space: another title
			if got != "https://notes.example/wiki/C%20%20" {
				t.Errorf("%s: canonical %q, want /wiki/C%%20%%20", uri, got)
			}
			continue
		}
		if got != want {
			t.Errorf("%s: canonical %q, want %q", uri, got, want)
		}
	}
	for path, want := range map[string]string{
		"/wiki/Category%3ADrinks":   "https://notes.example/wiki/Category:Drinks",
		"/wiki/Tea%2FHistory":       "https://notes.example/wiki/Tea/History",
		"/wiki/AT&T":                "https://notes.example/wiki/AT%26T",
		"/wiki/Z%c3%bcrich":         "https://notes.example/wiki/Z%C3%BCrich",
		"/wiki/Tea_%28drink%29":     "https://notes.example/wiki/Tea_(drink)",
		"/wiki/It's":                "https://notes.example/wiki/It%27s",
		"/wiki/Main_Page":           "https://notes.example/wiki/Main_Page",
		"/wiki/Help:Contents/Intro": "https://notes.example/wiki/Help:Contents/Intro",
	} {
		if got := cfg.Resolve(path).SelfURL(false); got != want {
			t.Errorf("%s: self %q, want %q", path, got, want)
		}
	}
	// A kept upstream canonical is spelled so too, so it equals the <loc>.
	h := cfg.Resolve("/kept/a").Render(Page{Canonical: "https://notes.example/kept/C++"})
	if got := str(h.Canonical); got != "https://notes.example/kept/C%2B%2B" {
		t.Errorf("kept upstream canonical %q, want https://notes.example/kept/C%%2B%%2B", got)
	}

	// Unset: §16.4's spelling, as before (the escape kept as it arrives).
	plain := mustParse(t, "[[rule]]\nmatch = \"/wiki/:page{.+}\"\ncanonical = \"self\"\n")
	for path, want := range map[string]string{"/wiki/C++": "https://notes.example/wiki/C++", "/wiki/C%2b%2b": "https://notes.example/wiki/C%2B%2B"} {
		if got := str(plain.Resolve(path).Render(Page{}).Canonical); got != want {
			t.Errorf("without path_safe, %s: canonical %q, want %q", path, got, want)
		}
	}
}

func TestPathSafeRefused(t *testing.T) {
	for _, chars := range []string{"?", "#", "%", " ", "[]", "\xc3\xbc"} {
		_, err := Parse("headgate.toml", []byte(header+"path_safe = "+tomlString(chars)+"\n"), nil)
		var ps Problems
		if !errors.As(err, &ps) || len(ps) != 1 || ps[0].Code != "HG106" || !strings.Contains(err.Error(), "site.path_safe") {
			t.Errorf("path_safe = %q: want one HG106 on site.path_safe, got %v", chars, err)
		}
	}
	if _, err := Parse("headgate.toml", []byte(header+"path_safe = 7\n"), nil); err == nil {
		t.Error("path_safe = 7 loads")
	}
}

// BenchmarkSelfURLPathSafe: a request's self address with site.path_safe
// beside the same config without it (§16.4's spelling), on a wiki path
// already in MediaWiki's spelling and on one to respell.
func BenchmarkSelfURLPathSafe(b *testing.B) {
	rule := "[[rule]]\nmatch = \"/wiki/:page{.+}\"\ncanonical = \"self\"\n"
	cfgs := []struct {
		name string
		cfg  *Config
	}{
		{"rfc3986", mustParse(b, rule)},
		{"path_safe", mustParse(b, "path_safe = \";@$!*(),/:\"\n"+rule)},
	}
	for _, path := range []struct{ name, path string }{
		{"spelled", "/wiki/Category:Drinks"},
		{"respell", "/wiki/C%2b%2b_(programming_language)"},
	} {
		for _, c := range cfgs {
			m := c.cfg.Resolve(path.path)
			b.Run(path.name+"/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					m.SelfURL(false)
				}
			})
		}
	}
}

// Issue 34, the config's own URLs: net/url kept /search/%2E%2E/ as a
// segment named "..", and headgate wrote it, but a browser (the WHATWG
// URL Standard) reads %2E%2E as ".." and the address as /. Such a URL is
// now dropped (dot_segment), as every URL that would be read as another.
func TestConfigURLDotSegment(t *testing.T) {
	for _, written := range []string{"https://notes.example/search/%2E%2E/", "https://notes.example/a/.%2e/x", "https://notes.example/a/%2e/x"} {
		if read, err := ResolveURL("https://notes.example/", written); err != nil || read == written {
			t.Fatalf("the WHATWG parser reads %s as %s (%v): the premise is wrong", written, read, err)
		}
	}
	cfg := mustParse(t, `
[[rule]]
match = "/s/:q"
canonical = "/search/{q}/"
`)
	h := cfg.Resolve("/s/..").Render(Page{})
	if h.Canonical != nil {
		t.Errorf("canonical %q written for the value \"..\"", *h.Canonical)
	}
	reasons := map[string]string{}
	for _, d := range h.Dropped {
		reasons[d.Field] = d.Reason
	}
	if reasons["canonical"] != DropDotSegment {
		t.Errorf("dropped %v, want the canonical dropped as %s", h.Dropped, DropDotSegment)
	}
	// Written in the config itself: refused at load, saying why.
	_, err := Parse("headgate.toml", []byte(header+"[[rule]]\nmatch = \"/x\"\n[rule.open_graph]\nimage = \"https://cdn.example/a/%2e%2E/b.png\"\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "HG150") || !strings.Contains(err.Error(), "encoded dot segment") {
		t.Errorf("an og:image with %%2e%%2E in the config: %v, want HG150 naming the encoded dot segment", err)
	}
	// Not dot segments: "...", "%2E%2E%2E", "a%2Eb", a query value.
	for _, ok := range []string{"/a/%2E%2E%2E/c", "/a.%2eb", "/x?q=%2E%2E", "/a/.../c"} {
		if ValidURL("https://notes.example", ok) != "" {
			t.Errorf("%s is dropped: %s", ok, ValidURL("https://notes.example", ok))
		}
	}
}

// With site.path_safe, a [[redirect]]'s target on the site is spelled as
// its page's canonical: the recipe's /w/index.php/C++ led to /wiki/C++,
// an address whose canonical is /wiki/C%2B%2B; and a rule that maps a
// page to itself in another spelling is no redirect.
func TestPathSafeRedirect(t *testing.T) {
	redirects := `
[[redirect]]
from = "/w/index.php/:page{.+}"
to = "/wiki/{page}"

[[redirect]]
from = "/wiki/:page{.+}"
to = "/wiki/{page}"

[[redirect]]
from = "/old"
to = "https://other.example/a++"
`
	safe := mustParse(t, "path_safe = \";@$!*(),/:\"\n"+redirects)
	plain := mustParse(t, redirects)
	for _, c := range []struct{ target, safe, plain string }{
		{"/w/index.php/C++", "https://notes.example/wiki/C%2B%2B", "https://notes.example/wiki/C++"},
		{"/w/index.php/C%2B%2B?action=edit", "https://notes.example/wiki/C%2B%2B?action=edit", "https://notes.example/wiki/C++?action=edit"},
		{"/w/index.php/Category%3ADrinks", "https://notes.example/wiki/Category:Drinks", "https://notes.example/wiki/Category:Drinks"},
		{"/wiki/C%2B%2B", "", "https://notes.example/wiki/C++"},
		{"/wiki/C++", "https://notes.example/wiki/C%2B%2B", ""},
		{"/wiki/Tea", "", ""},
		{"/old", "https://other.example/a++", "https://other.example/a++"}, // another origin: as written
	} {
		for _, v := range []struct {
			name string
			cfg  *Config
			want string
		}{{"path_safe", safe, c.safe}, {"unset", plain, c.plain}} {
			rd, err := v.cfg.Redirect(RedirectRequest{Method: "GET", Host: "notes.example", HTTPS: true, Target: c.target})
			got := ""
			if rd != nil {
				got = rd.Location
			}
			if err != nil || got != v.want {
				t.Errorf("%s, %s: Location %q (%v), want %q", v.name, c.target, got, err, v.want)
			}
		}
	}
}

// With site.path_safe, an hreflang table's URL on the site is spelled as
// the page's self, so /wiki/C++ finds the group a row wrote as /wiki/C++.
func TestPathSafeHreflangTable(t *testing.T) {
	cfg, err := redirConfig(t, "path_safe = \";@$!*(),/:\"\n[[rule]]\nmatch = \"/*\"\ncanonical = \"self\"\n[[hreflang_table]]\nfile = \"h.csv\"\n",
		map[string]string{"h.csv": "group,hreflang,url\ng,en,https://notes.example/wiki/C++\ng,de,https://notes.de/wiki/C++\n"})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/wiki/C++", "/wiki/C%2B%2B"} {
		h := cfg.Resolve(path).Render(Page{})
		got := map[string]string{}
		for _, a := range h.Alternates {
			got[a.Hreflang] = a.Href
		}
		if got["en"] != "https://notes.example/wiki/C%2B%2B" || got["de"] != "https://notes.de/wiki/C++" {
			t.Errorf("%s: alternates %v, want en https://notes.example/wiki/C%%2B%%2B (its canonical) and de as written", path, h.Alternates)
		}
	}
}

// The Markdown version's Link names the page as its self does.
func TestPathSafeMarkdownLink(t *testing.T) {
	cfg := mustParse(t, "path_safe = \";@$!*(),/:\"\n[markdown]\nenabled = true\nmatch = [\"/wiki/*\"]\n")
	want := `<https://notes.example/wiki/C%2B%2B.md>; rel="alternate"; type="text/markdown"`
	for _, path := range []string{"/wiki/C++", "/wiki/C%2b%2b"} {
		if got := cfg.Resolve(path).MarkdownLink(); got != want {
			t.Errorf("%s: %s, want %s", path, got, want)
		}
	}
}
