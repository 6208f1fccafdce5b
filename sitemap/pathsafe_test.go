package sitemap

import (
	"slices"
	"testing"
)

// Issue 34, MediaWiki: the <loc> was rules.Pattern.Fill of the title the
// pattern binds (/wiki/C++), while MediaWiki's sitemap and links, and so
// the page's canonical, spell it /wiki/C%2B%2B. With site.path_safe (§23)
// every <loc> is spelled as the app spells its paths, as "self" is.
func TestPathSafeLoc(t *testing.T) {
	cfg := loadConfig(t, `path_safe = ";@$!*(),/:"
[[rule]]
match = "/wiki/:page{.+}"
sitemap = true
sitemap_source = "upstream-sitemap:/s.xml"
sitemap_entries = [{ params = { page = "AT&T" } }, { params = { page = "Tea (drink)" } }]
`, nil)
	src := newSource(map[string]string{"/s.xml": `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>https://notes.example/wiki/C%2B%2B</loc></url>
<url><loc>https://notes.example/wiki/Category%3ADrinks</loc></url>
<url><loc>https://notes.example/wiki/Tea%2FHistory</loc></url>
<url><loc>https://notes.example/wiki/Z%C3%BCrich</loc></url>
</urlset>`})
	u := parseURLSet(t, generated(t, New(cfg, Options{Fetch: src.Fetch}))["/sitemap.xml"])
	want := []string{
		"https://notes.example/wiki/AT%26T",
		"https://notes.example/wiki/Tea%20(drink)",
		"https://notes.example/wiki/C%2B%2B",
		"https://notes.example/wiki/Category:Drinks",
		"https://notes.example/wiki/Tea/History",
		"https://notes.example/wiki/Z%C3%BCrich",
	}
	if got := locs(u); !slices.Equal(got, want) {
		t.Errorf("locs:\n got %q\nwant %q", got, want)
	}
	// Each <loc> is the canonical its page names.
	for _, loc := range want {
		path := loc[len(cfg.Site.BaseURL):]
		if self := cfg.Resolve(path).SelfURL(false); self != loc {
			t.Errorf("<loc> %s, but the page's self is %s", loc, self)
		}
	}
}
