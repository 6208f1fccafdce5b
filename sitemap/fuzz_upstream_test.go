package sitemap

import (
	"context"
	"io"
	"net/url"
	"strings"
	"testing"

	"github.com/headgate/headgate/rules"
)

// FuzzUpstreamSitemap feeds bytes to an upstream-sitemap: source, as the
// top document and as a child of an index: no panic, no hang, and every
// <loc> written is on base_url's origin, a path the rule's pattern
// matches, spelled as Fill spells it.
func FuzzUpstreamSitemap(f *testing.F) {
	for _, s := range []string{
		`<urlset><url><loc>https://notes.example/2024/05/a/</loc><lastmod>2024-05-01 10:00:00</lastmod></url></urlset>`,
		`<sitemapindex><sitemap><loc>https://notes.example/child.xml</loc></sitemap></sitemapindex>`,
		`<urlset><url><loc>https://evil.example/2024/05/a/</loc></url><url><loc>http://127.0.0.1:3000/2024/05/%e6/</loc></url></urlset>`,
		`<urlset><url><loc><![CDATA[https://notes.example/2024/05/a&b/]]></loc></url></urlset>`,
		`<urlset><url><loc>https://notes.example/2024/05/%2e%2e/</loc></url><url><loc>https://notes.example/2024/05/a%2Fb/</loc></url></urlset>`,
		`<urlset><url><loc>javascript:alert(1)</loc></url><url><loc>//evil.example/2024/05/x/</loc></url></urlset>`,
		"\x1f\x8b\x08\x00",
		`<!DOCTYPE x [<!ENTITY a "aaaa">]><urlset><url><loc>&a;</loc></url></urlset>`,
		`<urlset><url><url><loc>https://notes.example/2024/05/n/</loc></url></url></urlset>`,
	} {
		f.Add(s)
	}
	cfg, err := rules.Parse("fuzz.toml", []byte(header+`
[[rule]]
match = "/:year{[0-9]{4}}/:month{[0-9]{2}}/:slug/"
sitemap = true
sitemap_source = "upstream-sitemap:/s.xml"
`), nil)
	if err != nil {
		f.Fatal(err)
	}
	pattern := cfg.Rules[0].Pattern
	f.Fuzz(func(t *testing.T, doc string) {
		for _, asChild := range []bool{false, true} {
			bodies := map[string]string{"/s.xml": doc}
			if asChild {
				bodies = map[string]string{"/s.xml": `<sitemapindex><sitemap><loc>/child.xml</loc></sitemap></sitemapindex>`, "/child.xml": doc}
			}
			src := newSource(bodies)
			s := New(cfg, Options{Fetch: src.Fetch})
			res, err := s.generate(context.Background())
			if err != nil {
				continue
			}
			zr, err := res.main.open()
			if err != nil {
				t.Fatal(err)
			}
			out, _ := io.ReadAll(zr)
			zr.Close()
			u := parseURLSet(t, string(out))
			for _, x := range u.URLs {
				loc, err := url.Parse(x.Loc)
				if err != nil || loc.Scheme != "https" || loc.Host != "notes.example" || loc.RawQuery != "" || loc.Fragment != "" {
					t.Fatalf("wrong <loc> %q", x.Loc)
				}
				params, ok := pattern.Bind(loc.EscapedPath())
				if !ok {
					t.Fatalf("<loc> %q: the pattern does not match it", x.Loc)
				}
				if again, err := pattern.Fill(params); err != nil || "https://notes.example"+again != x.Loc {
					t.Fatalf("<loc> %q is not spelled as Fill spells it (%q, %v)", x.Loc, again, err)
				}
			}
		}
		// The scanner alone: whatever it hands on is bounded.
		scanSitemapXML(strings.NewReader(doc), func(root, loc, lastmod string) {
			if len(loc) > maxLocText || len(lastmod) > 64 {
				t.Fatalf("unbounded value: %d, %d bytes", len(loc), len(lastmod))
			}
		})
	})
}
