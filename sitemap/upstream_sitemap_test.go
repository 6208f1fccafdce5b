package sitemap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/headgate/headgate/internal/sitemapxml"
)

// A WordPress-like site: /wp-sitemap.xml is an index of its own sitemaps,
// with slugs in WordPress' lower-case percent-encoding and its dates.
func wpSitemaps() map[string]string {
	urlset := func(locs ...string) string {
		var b strings.Builder
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<?xml-stylesheet type="text/xsl" href="https://notes.example/wp-sitemap.xsl" ?>` + "\n")
		b.WriteString(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
		for _, l := range locs {
			loc, lastmod, _ := strings.Cut(l, " ")
			b.WriteString("<url><loc>" + loc + "</loc>")
			if lastmod != "" {
				b.WriteString("<lastmod>" + lastmod + "</lastmod>")
			}
			b.WriteString("</url>\n")
		}
		b.WriteString("</urlset>\n")
		return b.String()
	}
	return map[string]string{
		"/wp-sitemap.xml": `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<sitemap><loc>https://notes.example/wp-sitemap-posts-post-1.xml</loc></sitemap>
<sitemap><loc>https://notes.example/wp-sitemap-posts-page-1.xml</loc></sitemap>
<sitemap><loc>http://127.0.0.1:3000/wp-sitemap-taxonomies-category-1.xml</loc></sitemap>
<sitemap><loc>https://notes.example/wp-sitemap-taxonomies-post_tag-1.xml</loc></sitemap>
<sitemap><loc>https://evil.example/wp-sitemap-users-1.xml</loc></sitemap>
</sitemapindex>`,
		"/wp-sitemap-posts-post-1.xml": urlset(
			"https://notes.example/2024/05/twelve-tips/ 2024-05-02T10:00:00+00:00",
			"https://notes.example/2024/05/%e6%9d%b1%e4%ba%ac/ 2024-05-03 08:00:00",
			"https://notes.example/2024/06/caf%C3%A9-culture/ not-a-date",
			"https://evil.example/2024/06/phish/",
			"https://notes.example/2024/06/with?query=1",
			"http://notes.example/2024/06/other-scheme/",
		),
		"/wp-sitemap-posts-page-1.xml":          urlset("https://notes.example/about/", "https://notes.example/about/team/"),
		"/wp-sitemap-taxonomies-category-1.xml": urlset("https://notes.example/category/news/", "http://127.0.0.1:3000/category/go/"),
		"/wp-sitemap-taxonomies-post_tag-1.xml": urlset("https://notes.example/tag/go/"),
	}
}

const wpRules = `
[[rule]]
match = "/:year{[0-9]{4}}/:month{[0-9]{2}}/:slug/"
sitemap = true
sitemap_source = "upstream-sitemap:/wp-sitemap.xml"

[[rule]]
match = "/:page/"
sitemap = true
sitemap_source = "upstream-sitemap:/wp-sitemap.xml"

[[rule]]
match = "/category/:slug/"
sitemap = true
sitemap_source = "upstream-sitemap:/wp-sitemap.xml"

[[rule]]
match = "/tag/*"
robots = { index = false, follow = true }
`

func TestUpstreamSitemap(t *testing.T) {
	lg, log := newLogs()
	cfg := loadConfig(t, wpRules, nil)
	src := newSource(wpSitemaps())
	u := parseURLSet(t, generated(t, New(cfg, Options{Fetch: src.Fetch, Logger: log}))["/sitemap.xml"])
	var got []string
	for _, x := range u.URLs {
		got = append(got, x.Loc+" "+x.Lastmod)
	}
	want := []string{
		"https://notes.example/2024/05/twelve-tips/ 2024-05-02",
		"https://notes.example/2024/05/%E6%9D%B1%E4%BA%AC/ 2024-05-03",
		"https://notes.example/2024/06/caf%C3%A9-culture/ ", // the date dropped, not the URL
		"https://notes.example/about/ ",
		"https://notes.example/category/news/ ",
		"https://notes.example/category/go/ ", // named on the upstream's origin, written on base_url's
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("sitemap:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := src.count("/wp-sitemap-users-1.xml"); n != 0 {
		t.Errorf("a child on another host was fetched %d times", n)
	}
	rec := lg.leftOut(t, "/:year{[0-9]{4}}/:month{[0-9]{2}}/:slug/")
	if r := reasons(rec); r[reasonOtherHost] != 3 || r[reasonBadLastmod] != 1 || r[reasonBadLoc] != 1 {
		t.Errorf("reasons = %v", r)
	}
	if strings.Contains(lg.String(), "level=ERROR") || strings.Contains(lg.String(), `"level":"ERROR"`) {
		t.Errorf("an error was logged:\n%s", lg)
	}
}

// JSON Lines sources may name a loc instead of params (§16.5).
func TestLocLines(t *testing.T) {
	lg, log := newLogs()
	cfg := loadConfig(t, `
[[rule]]
match = "/notes/:id{[0-9]+}"
sitemap = true
sitemap_source = "file:s.jsonl"
`, map[string]string{"s.jsonl": `{"loc": "/notes/1", "lastmod": "2026-01-02 10:00:00"}
{"loc": "https://notes.example/notes/2"}
{"loc": "http://127.0.0.1:3000/notes/3", "lastmod": "2026-01-02T10:00:00"}
{"loc": "https://evil.example/notes/4"}
{"loc": "/other/5"}
{"loc": "javascript:alert(1)"}
{"params": {"id": "6"}}
`})
	u := parseURLSet(t, generated(t, New(cfg, Options{Logger: log}))["/sitemap.xml"])
	want := "https://notes.example/notes/1 https://notes.example/notes/2 https://notes.example/notes/3 https://notes.example/notes/6"
	if got := strings.Join(locs(u), " "); got != want {
		t.Errorf("locs = %s, want %s", got, want)
	}
	if u.URLs[0].Lastmod != "2026-01-02" || u.URLs[2].Lastmod != "2026-01-02" {
		t.Errorf("lastmods %q %q", u.URLs[0].Lastmod, u.URLs[2].Lastmod)
	}
	if r := reasons(lg.leftOut(t, "/notes/:id{[0-9]+}")); r[reasonOtherHost] != 1 || r[reasonLocNoMatch] != 1 || r[reasonBadLoc] != 1 {
		t.Errorf("reasons = %v", r)
	}
}

// A source that yields lines but no entry is an error in the log, and
// WriteTo (headgate sitemap) says so (§16.5).
func TestEmptyResultIsNotSilent(t *testing.T) {
	lg, log := newLogs()
	cfg := loadConfig(t, `
[[rule]]
match = "/:year{[0-9]{4}}/:slug/"
sitemap = true
sitemap_source = "upstream-sitemap:/wp-sitemap.xml"

[[rule]]
match = "/about"
sitemap = true
`, nil)
	src := newSource(wpSitemaps())
	var out bytes.Buffer
	err := New(cfg, Options{Fetch: src.Fetch, Logger: log}).WriteTo(context.Background(), &out)
	var ee *EmptyError
	if !errors.As(err, &ee) || len(ee.Rules) != 1 || ee.Rules[0] != "/:year{[0-9]{4}}/:slug/" {
		t.Fatalf("WriteTo: %v, want an EmptyError for the rule", err)
	}
	if !strings.Contains(out.String(), "https://notes.example/about") {
		t.Errorf("the sitemap was not written:\n%s", out.String())
	}
	if n := len(lg.records(t, "sitemap: the source yielded lines but no entry: the rule lists nothing")); n != 1 {
		t.Errorf("%d error records:\n%s", n, lg)
	}
}

// Bad input: not XML, an index of a thousand indexes, other hosts, 100 MB
// — bounded, logged, never a wrong <loc>.
func TestUpstreamSitemapHostile(t *testing.T) {
	rule := `
[[rule]]
match = "/:year{[0-9]{4}}/:month{[0-9]{2}}/:slug/"
sitemap = true
sitemap_source = "upstream-sitemap:/s.xml"
`
	t.Run("not XML", func(t *testing.T) {
		for _, body := range []string{"<!DOCTYPE html><html><body>Not found</body></html>", `{"a":1}`, "", "\x00\x01\x02", "<feed><entry/></feed>"} {
			cfg := loadConfig(t, rule, nil)
			_, err := New(cfg, Options{Fetch: newSource(map[string]string{"/s.xml": body}).Fetch}).generate(context.Background())
			if err == nil {
				t.Errorf("%q: the generation did not fail", body)
			}
		}
	})
	t.Run("index of a thousand indexes", func(t *testing.T) {
		bodies := map[string]string{}
		var idx strings.Builder
		idx.WriteString(`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
		for i := range 1000 {
			p := fmt.Sprintf("/i%d.xml", i)
			fmt.Fprintf(&idx, "<sitemap><loc>https://notes.example%s</loc></sitemap>", p)
			bodies[p] = `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>https://notes.example/deeper.xml</loc></sitemap></sitemapindex>`
		}
		idx.WriteString("</sitemapindex>")
		bodies["/s.xml"] = idx.String()
		bodies["/deeper.xml"] = `<urlset><url><loc>https://notes.example/2024/01/deep/</loc></url></urlset>`
		lg, log := newLogs()
		src := newSource(bodies)
		cfg := loadConfig(t, rule, nil)
		u := parseURLSet(t, generated(t, New(cfg, Options{Fetch: src.Fetch, Logger: log}))["/sitemap.xml"])
		if len(u.URLs) != 0 || src.count("/deeper.xml") != 0 {
			t.Errorf("followed an index two levels: %d URLs, /deeper.xml fetched %d times", len(u.URLs), src.count("/deeper.xml"))
		}
		if r := reasons(lg.leftOut(t, "/:year{[0-9]{4}}/:month{[0-9]{2}}/:slug/")); r[reasonNestedIndex] != 1000 {
			t.Errorf("reasons = %v", r)
		}
	})
	t.Run("100 MB", func(t *testing.T) {
		var fetched atomic.Int64
		fetch := func(ctx context.Context, path string) (io.ReadCloser, error) {
			head := `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://notes.example/2024/01/first/</loc></url>`
			rep := "<url><loc>https://evil.example/2024/01/x/</loc></url>\n"
			r := io.MultiReader(strings.NewReader(head), counted{&endless{line: []byte(rep), n: 100 << 20}, &fetched})
			return io.NopCloser(r), nil
		}
		lg, log := newLogs()
		cfg := loadConfig(t, rule, nil)
		// The bound on bytes is what this checks, not the time to reach it:
		// on a loaded machine lexing 50 MB can outlast the 30 s default.
		res, err := New(cfg, Options{Fetch: fetch, Logger: log, SourceTimeout: 10 * time.Minute}).generate(context.Background())
		if err == nil || !errors.Is(err, sitemapxml.ErrTooLarge) {
			t.Fatalf("generate: %v, want a too-large error", err)
		}
		_ = res
		if n := fetched.Load(); n > maxUpstreamBytes+1<<20 {
			t.Errorf("read %d bytes of a 100 MB sitemap", n)
		}
		_ = lg
	})
	t.Run("a huge loc", func(t *testing.T) {
		body := `<urlset><url><loc>https://notes.example/2024/01/` + strings.Repeat("a", 200<<10) + `/</loc></url><url><loc>https://notes.example/2024/01/ok/</loc></url></urlset>`
		cfg := loadConfig(t, rule, nil)
		_, err := New(cfg, Options{Fetch: newSource(map[string]string{"/s.xml": body}).Fetch}).generate(context.Background())
		if !errors.Is(err, sitemapxml.ErrTooLarge) {
			t.Errorf("generate: %v, want a too-large error", err)
		}
	})
	t.Run("entities and CDATA", func(t *testing.T) {
		body := `<urlset><url><loc><![CDATA[https://notes.example/2024/01/a-b/]]></loc></url>` +
			`<url><loc>https://notes.example/2024/01/x&amp;y/</loc></url>` +
			`<url><loc>https://notes.example/2024/01/%3Cscript%3E/</loc></url></urlset>`
		cfg := loadConfig(t, rule, nil)
		u := parseURLSet(t, generated(t, New(cfg, Options{Fetch: newSource(map[string]string{"/s.xml": body}).Fetch}))["/sitemap.xml"])
		want := "https://notes.example/2024/01/a-b/ https://notes.example/2024/01/x&y/ https://notes.example/2024/01/%3Cscript%3E/"
		if got := strings.Join(locs(u), " "); got != want {
			t.Errorf("locs = %s, want %s", got, want)
		}
	})
}

// counted counts the bytes read through it.
type counted struct {
	r    io.Reader
	read *atomic.Int64
}

func (c counted) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.read.Add(int64(n))
	return n, err
}
