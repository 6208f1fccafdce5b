package proxy

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/headgate/headgate/internal/hgtest"
	"github.com/headgate/headgate/internal/linkheader"
	"github.com/headgate/headgate/rules"
	"github.com/headgate/headgate/sitemap"
)

// The shared table of "one site, three domains": every instance reads the
// same file.
const sharedHreflang = `group,hreflang,url
about,en,https://notes.example/en/about
about,de,https://notes.de/ueber-uns
about,fr,https://notes.fr/a-propos
about,x-default,https://notes.example/en/about
guide,en,https://notes.example/guide.pdf
guide,de,https://notes.de/anleitung.pdf
`

// instanceConfig is one instance's config: its own base_url and the pages
// it serves, the shared table.
func instanceConfig(t *testing.T, dir, base, upstream string, pages ...string) *rules.Config {
	t.Helper()
	src := `[server]
upstream = "` + upstream + `"
[site]
base_url = "` + base + `"
[[hreflang_table]]
file = "hreflang.csv"
[[rule]]
match = "/*"
[rule.open_graph]
site_name = "Notes"
`
	for _, p := range pages {
		src += "[[rule]]\nmatch = \"" + p + "\"\ncanonical = \"self\"\nsitemap = true\n"
	}
	name := filepath.Join(dir, strings.TrimPrefix(base, "https://")+".toml")
	cfg, err := rules.Parse(name, []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// legacyUpstream serves HTML pages and PDFs that carry their own, stale
// language links, which the table's rows must replace.
func legacyUpstream(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, ".pdf") {
		w.Header().Set("Content-Type", "application/pdf")
		w.Header().Add("Link", `</es.pdf>; rel="alternate"; hreflang="es", </style.css>; rel="preload"`)
		io.WriteString(w, "%PDF-1.4\n")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	io.WriteString(w, `<!DOCTYPE html><html><head><title>Legacy</title>
<link rel="alternate" hreflang="es" href="/es/stale">
</head><body>page</body></html>`)
}

var (
	htmlAlt    = regexp.MustCompile(`<link rel="alternate" hreflang="([^"]+)" href="([^"]+)">`)
	ogLocale   = regexp.MustCompile(`<meta property="og:locale(:alternate)?" content="([^"]+)">`)
	sitemapURL = regexp.MustCompile(`(?s)<url>\s*<loc>([^<]+)</loc>(.*?)</url>`)
	xhtmlLink  = regexp.MustCompile(`<xhtml:link rel="alternate" hreflang="([^"]+)" href="([^"]+)"/>`)
	headerLink = regexp.MustCompile(`^<([^>]+)>; rel="alternate"; hreflang="([^"]+)"$`)
)

// TestHreflangThreeOutputs: for every member of a group on every instance,
// the head's alternates, the sitemap's xhtml:links and (for a PDF) the Link
// headers are exactly the group's rows in table order, and the instances
// in front of two domains agree: the set is reciprocal by construction.
func TestHreflangThreeOutputs(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hreflang.csv"), []byte(sharedHreflang), 0o644); err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(http.HandlerFunc(legacyUpstream))
	defer up.Close()
	instances := map[string]*httptest.Server{}
	for base, pages := range map[string][]string{
		"https://notes.example": {"/en/about"},
		"https://notes.de":      {"/ueber-uns"},
	} {
		instances[base] = sitemapFront(t, instanceConfig(t, dir, base, up.URL, pages...))
	}
	groups := map[string][]string{
		"about": {"en https://notes.example/en/about", "de https://notes.de/ueber-uns", "fr https://notes.fr/a-propos", "x-default https://notes.example/en/about"},
		"guide": {"en https://notes.example/guide.pdf", "de https://notes.de/anleitung.pdf"},
	}
	get := func(front *httptest.Server, path string) (*http.Response, string) {
		t.Helper()
		return hgtest.Fetch(t, front.URL+path)
	}
	sitemaps := map[string]map[string][]string{} // base → loc → links
	for base, front := range instances {
		_, body := get(front, "/sitemap.xml")
		if !strings.Contains(body, `xmlns:xhtml="http://www.w3.org/1999/xhtml"`) {
			t.Errorf("%s: the sitemap holds links but does not declare xmlns:xhtml:\n%s", base, body)
		}
		sitemaps[base] = map[string][]string{}
		for _, m := range sitemapURL.FindAllStringSubmatch(body, -1) {
			var links []string
			for _, l := range xhtmlLink.FindAllStringSubmatch(m[2], -1) {
				links = append(links, l[1]+" "+l[2])
			}
			sitemaps[base][m[1]] = links
		}
	}
	checked := 0
	for _, rows := range groups {
		for _, row := range rows {
			lang, u, _ := strings.Cut(row, " ")
			if lang == "x-default" {
				continue
			}
			base := u[:strings.Index(u[len("https://"):], "/")+len("https://")]
			front, ok := instances[base]
			if !ok {
				continue // notes.fr runs elsewhere
			}
			path := u[len(base):]
			res, body := get(front, path)
			if strings.HasSuffix(path, ".pdf") {
				var got []string
				for _, link := range linkheader.Parse(res.Header.Values("Link")) {
					if l := link.Raw; headerLink.MatchString(l) {
						m := headerLink.FindStringSubmatch(l)
						got = append(got, m[2]+" "+m[1])
					} else if strings.Contains(l, "hreflang") {
						t.Errorf("%s: upstream link kept: %s", u, l)
					}
				}
				same(t, u+" Link headers", got, rows)
				if !strings.Contains(strings.Join(res.Header.Values("Link"), ","), "</style.css>") {
					t.Errorf("%s: the upstream's other links were not kept: %q", u, res.Header.Values("Link"))
				}
			} else {
				var got []string
				for _, m := range htmlAlt.FindAllStringSubmatch(body, -1) {
					got = append(got, m[1]+" "+m[2])
				}
				same(t, u+" head", got, rows)
				if strings.Contains(body, "/es/stale") {
					t.Errorf("%s: the upstream's own alternate stayed", u)
				}
				var locales []string
				for _, m := range ogLocale.FindAllStringSubmatch(body, -1) {
					locales = append(locales, m[1]+" "+m[2])
				}
				wantLoc := []string{" " + lang}
				for _, r := range rows {
					if l, _, _ := strings.Cut(r, " "); l != lang && l != "x-default" {
						wantLoc = append(wantLoc, ":alternate "+l)
					}
				}
				same(t, u+" og:locale", locales, wantLoc)
				links, listed := sitemaps[base][u]
				if !listed {
					t.Errorf("%s: not in %s's sitemap", u, base)
				}
				same(t, u+" sitemap", links, rows)
			}
			checked++
		}
	}
	if checked != 4 {
		t.Errorf("checked %d members, want 4", checked)
	}
}

func same(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

// TestPageTableProxy: a page_table row is the most specific layer on every
// kind of response — an HTML head, a PDF's headers, the sitemap (a row
// that makes a listed page noindex keeps it out) — and a rule's lookup
// fills a head from a table.
func TestPageTableProxy(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"seo.csv": "path,title,robots,canonical\n" +
			"/guide.pdf,,\"noindex, follow\",/guide\n" +
			"/hidden,,noindex,\n" +
			"/about,About (sheet),,\n",
		"products.csv": "sku,name\nA1,\"Blue mug, large\"\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	up := httptest.NewServer(http.HandlerFunc(legacyUpstream))
	defer up.Close()
	cfg, err := rules.Parse(filepath.Join(dir, "headgate.toml"), []byte(`[server]
upstream = "`+up.URL+`"
[site]
base_url = "https://notes.example"
[[page_table]]
file = "seo.csv"
[[table]]
name = "products"
file = "products.csv"
key = "sku"
[[rule]]
match = "/about"
title = "About (rule)"
sitemap = true
[[rule]]
match = "/hidden"
sitemap = true
[[rule]]
match = "/p/:sku"
lookup = { products = "{sku}" }
title = "{products.name}"
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	front := sitemapFront(t, cfg)
	get := func(path string) (*http.Response, string) {
		t.Helper()
		return hgtest.Fetch(t, front.URL+path)
	}
	if _, body := get("/about"); !strings.Contains(body, "<title>About (sheet)</title>") {
		t.Errorf("/about: the row did not win over the rule:\n%s", body)
	}
	if _, body := get("/p/A1"); !strings.Contains(body, "<title>Blue mug, large</title>") {
		t.Errorf("/p/A1: no title from the table:\n%s", body)
	}
	if _, body := get("/p/none"); !strings.Contains(body, "<title>Legacy</title>") {
		t.Errorf("/p/none: a missing row must leave the upstream's title:\n%s", body)
	}
	res, _ := get("/guide.pdf")
	if got := res.Header.Get("X-Robots-Tag"); got != "noindex, follow" {
		t.Errorf("/guide.pdf: X-Robots-Tag %q", got)
	}
	if links := strings.Join(res.Header.Values("Link"), ", "); !strings.Contains(links, `<https://notes.example/guide>; rel="canonical"`) {
		t.Errorf("/guide.pdf: Link %q", links)
	}
	_, sm := get("/sitemap.xml")
	if !strings.Contains(sm, "<loc>https://notes.example/about</loc>") || strings.Contains(sm, "/hidden") {
		t.Errorf("sitemap: /about listed, /hidden (noindex by its row) left out:\n%s", sm)
	}
}

// sitemapFront serves cfg's proxy, with the sitemap package's handler,
// until the test ends.
func sitemapFront(t *testing.T, cfg *rules.Config) *httptest.Server {
	t.Helper()
	p, err := New(cfg, Options{
		Logger: slog.New(slog.DiscardHandler),
		Sitemap: func(cfg *rules.Config, fetch func(ctx context.Context, path string) (io.ReadCloser, error)) SitemapHandler {
			return sitemap.New(cfg, sitemap.Options{Fetch: fetch})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(p)
	t.Cleanup(front.Close)
	return front
}
