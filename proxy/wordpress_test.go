package proxy_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/headgate/headgate/app"
	"github.com/headgate/headgate/internal/hgtest"
	"github.com/headgate/headgate/proxy"
	"github.com/headgate/headgate/rules"
)

// fakeWordPress answers as a WordPress with "Month and name" permalinks
// does, for the paths the cookbook's config cares about.
func fakeWordPress(t *testing.T) *httptest.Server {
	page := func(title, canonical, robots string) string {
		s := "<!DOCTYPE html>\n<html lang=\"de-DE\">\n<head>\n<meta charset=\"UTF-8\">\n" +
			"<meta name='robots' content='" + robots + "' />\n<title>" + title + " &#8211; Tiergarten Notes</title>\n"
		if canonical != "" {
			s += "<link rel=\"canonical\" href=\"" + canonical + "\" />\n"
		}
		return s + "<meta name=\"generator\" content=\"WordPress 6.4\" />\n</head>\n<body class=\"home\"><p>Hallo</p></body>\n</html>\n"
	}
	urlset := func(locs ...string) string {
		s := `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`
		for _, l := range locs {
			s += "<url><loc>" + l + "</loc><lastmod>2024-05-02T10:00:00+00:00</lastmod></url>"
		}
		return s + "</urlset>"
	}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		html := func(s string) {
			w.Header().Set("Content-Type", "text/html; charset=UTF-8")
			io.WriteString(w, s)
		}
		xml := func(s string) {
			w.Header().Set("Content-Type", "application/xml; charset=UTF-8")
			io.WriteString(w, s)
		}
		q := r.URL.Query()
		switch {
		case r.URL.Path == "/wp-admin/admin-ajax.php" && q.Get("action") == "rest-nonce":
			html("a1b2c3d4e5")
		case r.URL.Path == "/wp-admin/admin-ajax.php" && q.Get("action") == "ajax-tag-search":
			html("go\ngolang")
		case r.URL.Path == "/wp-admin/admin-ajax.php":
			html(`<li id="tag-3"><a href="/tag/go/">go</a></li>`)
		case r.URL.Path == "/wp-admin/edit.php":
			html(page("Beiträge", "", "noindex, nofollow"))
		case r.URL.Path == "/" && q.Get("s") != "":
			html(page("Suchergebnisse für „"+q.Get("s")+"“", "", "noindex, follow, max-image-preview:large"))
		case r.URL.Path == "/":
			html(page("Tiergarten Notes", "https://notes.example/", "max-image-preview:large"))
		case strings.HasPrefix(r.URL.EscapedPath(), "/2024/05/%e6%9d%b1%e4%ba%ac/") || strings.HasPrefix(r.URL.EscapedPath(), "/2024/05/%E6%9D%B1%E4%BA%AC/"):
			html(page("東京", "https://notes.example/2024/05/%e6%9d%b1%e4%ba%ac/", "max-image-preview:large"))
		case r.URL.Path == "/tag/go/":
			html(page("go", "", "max-image-preview:large"))
		case r.URL.Path == "/wp-sitemap.xml":
			xml(`<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` +
				`<sitemap><loc>https://notes.example/wp-sitemap-posts-post-1.xml</loc></sitemap>` +
				`<sitemap><loc>https://notes.example/wp-sitemap-taxonomies-post_tag-1.xml</loc></sitemap></sitemapindex>`)
		case r.URL.Path == "/wp-sitemap-posts-post-1.xml":
			xml(urlset("https://notes.example/2024/05/%e6%9d%b1%e4%ba%ac/"))
		case r.URL.Path == "/wp-sitemap-taxonomies-post_tag-1.xml":
			xml(urlset("https://notes.example/tag/go/"))
		case r.URL.Path == "/robots.txt":
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "User-agent: *\nDisallow: /wp-admin/\nAllow: /wp-admin/admin-ajax.php\n")
		default:
			http.NotFound(w, r)
		}
	}))
}

// The cookbook's WordPress config in front of a WordPress-like upstream:
// the admin's answers are what WordPress sent, the public pages are
// rewritten, and the sitemap comes from /wp-sitemap.xml in one spelling.
func TestWordPressExampleThroughProxy(t *testing.T) {
	wp := fakeWordPress(t)
	defer wp.Close()
	src, err := os.ReadFile("../docs/examples/wordpress.toml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := rules.Parse("../docs/examples/wordpress.toml", src, func(k string) (string, bool) {
		if k == "HEADGATE_UPSTREAM" {
			return wp.URL, true
		}
		return "", false
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := proxy.New(cfg, proxy.Options{Sitemap: app.Sitemaps(nil, nil)})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(p)
	defer front.Close()
	get := func(path string) (*http.Response, string) {
		t.Helper()
		return hgtest.Fetch(t, front.URL+path)
	}
	direct := func(path string) string {
		t.Helper()
		_, b := hgtest.Fetch(t, wp.URL+path)
		return b
	}
	// The admin: exactly what WordPress answers, without headgate's headers.
	for _, path := range []string{"/wp-admin/admin-ajax.php?action=rest-nonce", "/wp-admin/admin-ajax.php?action=ajax-tag-search&tax=post_tag&q=go",
		"/wp-admin/admin-ajax.php?action=add-tag", "/wp-admin/edit.php"} {
		res, got := get(path)
		if want := direct(path); got != want {
			t.Errorf("%s: got %q, WordPress answers %q", path, got, want)
		}
		if res.Header.Get("Link") != "" || res.Header.Get("X-Robots-Tag") != "" {
			t.Errorf("%s: headers Link %q, X-Robots-Tag %q", path, res.Header.Get("Link"), res.Header.Get("X-Robots-Tag"))
		}
	}
	// A post, asked for in either spelling: one canonical, the sitemap's.
	for _, path := range []string{"/2024/05/%e6%9d%b1%e4%ba%ac/", "/2024/05/%E6%9D%B1%E4%BA%AC/"} {
		_, body := get(path)
		if !strings.Contains(body, `<link rel="canonical" href="https://notes.example/2024/05/%E6%9D%B1%E4%BA%AC/">`) || strings.Count(body, `rel="canonical"`) != 1 {
			t.Errorf("%s: canonical:\n%s", path, body)
		}
		if !strings.Contains(body, `<meta name="description" content="東京">`) || !strings.Contains(body, `"@type":"BlogPosting"`) {
			t.Errorf("%s: description or JSON-LD missing:\n%s", path, body)
		}
	}
	// Search results: noindex, their own canonical.
	_, body := get("/?s=M%C3%BCll")
	if !strings.Contains(body, `<meta name="robots" content="noindex, follow">`) || !strings.Contains(body, `<link rel="canonical" href="https://notes.example/search/M%C3%BCll/">`) ||
		strings.Contains(body, "max-image-preview") {
		t.Errorf("search results:\n%s", body)
	}
	_, body = get("/tag/go/")
	if !strings.Contains(body, `<meta name="robots" content="noindex, follow">`) || !strings.Contains(body, `<link rel="canonical" href="https://notes.example/tag/go/">`) {
		t.Errorf("tag archive:\n%s", body)
	}
	// The sitemap: every post once, in one spelling; it answers 200.
	res, sm := get("/sitemap.xml")
	if res.StatusCode != 200 {
		t.Fatalf("/sitemap.xml: %d %s", res.StatusCode, sm)
	}
	if strings.Count(sm, "<loc>") != 2 || !strings.Contains(sm, "<loc>https://notes.example/</loc>") || !strings.Contains(sm, "<loc>https://notes.example/2024/05/%E6%9D%B1%E4%BA%AC/</loc>") || !strings.Contains(sm, "<lastmod>2024-05-02</lastmod>") {
		t.Errorf("sitemap:\n%s", sm)
	}
	if res, _ := get("/2024/05/%E6%9D%B1%E4%BA%AC/"); res.StatusCode != 200 {
		t.Errorf("the sitemap's URL answers %d", res.StatusCode)
	}
	_, robots := get("/robots.txt")
	if !strings.Contains(robots, "Sitemap: https://notes.example/sitemap.xml") || !strings.Contains(robots, "Disallow: /wp-admin/") {
		t.Errorf("robots.txt:\n%s", robots)
	}
}
