package sitemap

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/headgate/headgate/rules"
)

// upstreamDoc is an upstream sitemap of n URLs, as a CMS writes one.
func upstreamDoc(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for i := range n {
		fmt.Fprintf(&b, "  <url>\n    <loc>https://notes.example/2024/%02d/note-%d/</loc>\n    <lastmod>2024-%02d-10T10:00:00Z</lastmod>\n  </url>\n", 1+i%12, i, 1+i%12)
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

const configUpstream = `
[server]
upstream = "http://127.0.0.1:3000"
[site]
base_url = "https://notes.example"
[[rule]]
match = "/:year{[0-9]{4}}/:month{[0-9]{2}}/:slug/"
sitemap = true
sitemap_source = "upstream-sitemap:/s.xml"
`

// BenchmarkUpstreamSitemap generates the sitemap of a rule whose source is
// an upstream sitemap of 10,000 URLs: the proxy's path through the XML
// reader, from fetch to written files.
func BenchmarkUpstreamSitemap(b *testing.B) {
	doc := upstreamDoc(10000)
	cfg, err := rules.Parse("bench.toml", []byte(configUpstream), nil)
	if err != nil {
		b.Fatal(err)
	}
	s := New(cfg, Options{
		Fetch: func(ctx context.Context, path string) (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(doc)), nil
		},
		SourceTimeout: time.Minute,
	})
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.generate(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUpstreamSitemapScan reads the same document with the XML
// reader alone.
func BenchmarkUpstreamSitemapScan(b *testing.B) {
	doc := upstreamDoc(10000)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		if _, err := scanSitemapXML(bytes.NewReader(doc), func(root, loc, lastmod string) { n++ }); err != nil || n != 10000 {
			b.Fatal(n, err)
		}
	}
}
