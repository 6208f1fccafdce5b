package sitemap_test

import (
	"context"
	"fmt"
	"os"

	"github.com/headgate/headgate/rules"
	"github.com/headgate/headgate/sitemap"
)

func ExampleSitemap_WriteTo() {
	cfg, err := rules.Parse("headgate.toml", []byte(`
[server]
upstream = "http://127.0.0.1:3000"
[site]
base_url = "https://notes.example"

[[rule]]
match = "/"
sitemap = true

[[rule]]
match = "/notes/:id{[0-9]+}"
sitemap = true
sitemap_entries = [
  { params = { id = "1" }, lastmod = "2026-01-02T10:00:00Z" },
  { params = { id = "two" } },   # refused by the constraint: left out, logged
  { params = { id = "3" }, lastmod = "2026-01-05" },
]
`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	s := sitemap.New(cfg, sitemap.Options{})
	if err := s.WriteTo(context.Background(), os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// <?xml version="1.0" encoding="UTF-8"?>
	// <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
	// <url>
	//   <loc>https://notes.example/</loc>
	// </url>
	// <url>
	//   <loc>https://notes.example/notes/1</loc>
	//   <lastmod>2026-01-02</lastmod>
	// </url>
	// <url>
	//   <loc>https://notes.example/notes/3</loc>
	//   <lastmod>2026-01-05</lastmod>
	// </url>
	// </urlset>
}

func ExampleSitemap_ServeHTTP() {
	cfg, err := rules.Parse("headgate.toml", []byte(`
[server]
upstream = "http://127.0.0.1:3000"
[site]
base_url = "https://notes.example"
[[rule]]
match = "/about"
sitemap = true
`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	s := sitemap.New(cfg, sitemap.Options{})
	for _, path := range []string{"/robots.txt", "/sitemap.xml", "/about"} {
		fmt.Println(path, s.Handles(path))
	}
	// Output:
	// /robots.txt true
	// /sitemap.xml true
	// /about false
}
