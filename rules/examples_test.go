package rules

import (
	"os"
	"strings"
	"testing"
)

// docs/examples/wordpress.toml, the cookbook's WordPress config, loads as
// it is and does what the cookbook says each rule is for.
func TestWordPressExample(t *testing.T) {
	cfg, err := Load("../docs/examples/wordpress.toml")
	if err != nil {
		t.Fatalf("docs/examples/wordpress.toml: %v", err)
	}
	for _, p := range []string{"/wp-admin/", "/wp-admin/admin-ajax.php?action=rest-nonce", "/wp-admin/post.php?post=1&action=edit",
		"/wp-login.php", "/wp-json/wp/v2/posts", "/xmlrpc.php", "/wp-cron.php?doing_wp_cron"} {
		m := cfg.Resolve(p)
		if m.Rewrite() {
			t.Errorf("%s is rewritten", p)
		}
		if h := m.Render(Page{}); h.Canonical != nil || h.Robots != nil || len(h.Headers) > 0 {
			t.Errorf("%s gets the layout's headers: canonical %s robots %s", p, str(h.Canonical), str(h.Robots))
		}
	}
	if h := cfg.Resolve("/wp-content/uploads/2024/05/a.jpg").Render(Page{}); h.Canonical != nil {
		t.Errorf("an upload gets a canonical: %s", str(h.Canonical))
	}
	cases := []struct{ target, robots, canonical string }{
		{"/?s=M%C3%BCll", "noindex, follow", "https://notes.example/search/M%C3%BCll/"},
		{"/search/M%C3%BCll/", "noindex, follow", "https://notes.example/search/M%C3%BCll/"},
		{"/tag/go/", "noindex, follow", "https://notes.example/tag/go/"},
		{"/tag/go/page/2/", "noindex, follow", "https://notes.example/tag/go/page/2/"},
		{"/2024/05/x/?preview=true", "noindex, nofollow", "https://notes.example/2024/05/x/"},
		{"/2024/05/%e6%9d%b1/", "<nil>", "https://notes.example/2024/05/%E6%9D%B1/"},
		{"/category/news/", "<nil>", "https://notes.example/category/news/"},
		{"/", "<nil>", "https://notes.example/"},
	}
	for _, c := range cases {
		m := cfg.Resolve(c.target)
		if !m.Rewrite() {
			t.Errorf("%s is not rewritten", c.target)
		}
		h := m.Render(Page{Title: "Café culture – Tiergarten Notes", HasTitle: true})
		if str(h.Robots) != c.robots || str(h.Canonical) != c.canonical {
			t.Errorf("%s: robots %s canonical %s, want %s %s", c.target, str(h.Robots), str(h.Canonical), c.robots, c.canonical)
		}
		if c.target != "/?s=M%C3%BCll" && str(h.Description) != "Café culture" {
			t.Errorf("%s: description %q", c.target, str(h.Description))
		}
	}
	// A post: its article JSON-LD, with the properties WordPress gives.
	h := cfg.Resolve("/2024/05/cafe/").Render(Page{Title: "Café culture – Tiergarten Notes", HasTitle: true,
		Meta: []PageMeta{{"article:published_time", "2024-05-01T22:00:00-02:00"}}})
	if js := strings.Join(jsonLD(h), "\n"); !strings.Contains(js, `"@type":"BlogPosting"`) || !strings.Contains(js, `"datePublished":"2024-05-02"`) || strings.Contains(js, "dateModified") {
		t.Errorf("post JSON-LD:\n%s", js)
	}
	n := 0
	for _, r := range cfg.Rules {
		if r.Sitemap {
			n++
			if r.SitemapSource != "upstream-sitemap:/wp-sitemap.xml" {
				t.Errorf("%s: sitemap_source %q", r.Match, r.SitemapSource)
			}
		}
	}
	if n != 3 || cfg.Robots.Mode != "append" {
		t.Errorf("%d sitemap rules, robots.mode %q", n, cfg.Robots.Mode)
	}
}

// The cookbook shows the example file as it is.
func TestWordPressExampleInCookbook(t *testing.T) {
	file, err := os.ReadFile("../docs/examples/wordpress.toml")
	if err != nil {
		t.Fatal(err)
	}
	book, err := os.ReadFile("../docs/cookbook.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(book), "```toml\n"+string(file)+"```\n") {
		t.Error("docs/cookbook.md does not show docs/examples/wordpress.toml as it is")
	}
}
