package rules

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// Issue 34 item 4: one huge cell made every response that used it tens of
// megabytes. A cell over tables.max_cell_bytes (default 8 KiB; a redirect
// row's to 2 KiB) now refuses its table at load, with the table's code and
// the cell's file:line (§23).
func TestHugeCellRefusedAtLoad(t *testing.T) {
	huge := strings.Repeat("x", 10<<20)   // the attack run's 10 MiB
	long := strings.Repeat("word ", 2000) // 10,000 bytes: over 8 KiB
	cases := []struct {
		name, toml string
		files      map[string]string
		code, at   string
	}{
		{"table, 10 MiB", "[[table]]\nname = \"p\"\nfile = \"p.csv\"\nkey = \"sku\"\n",
			map[string]string{"p.csv": "sku,name\nA1,ok\nB2," + huge + "\n"}, "HG177", "p.csv:3"},
		{"table, 10,000 bytes", "[[table]]\nname = \"p\"\nfile = \"p.csv\"\nkey = \"sku\"\n",
			map[string]string{"p.csv": "sku,name\nA1," + long + "\n"}, "HG177", "p.csv:2"},
		{"page_table", "[[page_table]]\nfile = \"seo.csv\"\n",
			map[string]string{"seo.csv": "path,title\n/a,A\n/b," + huge + "\n"}, "HG176", "seo.csv:3"},
		{"hreflang_table", "[[hreflang_table]]\nfile = \"h.csv\"\n",
			map[string]string{"h.csv": "group,hreflang,url\ng,en,https://notes.example/a\ng,de,https://notes.example/" + huge + "\n"}, "HG175", "h.csv:3"},
		{"redirect_table, 10 MiB", "[[redirect_table]]\nfile = \"r.csv\"\n",
			map[string]string{"r.csv": "from,to\n/a,/b\n/c,/" + huge + "\n"}, "HG180", "r.csv:3"},
		{"redirect_table, to of 3 KiB", "[[redirect_table]]\nfile = \"r.csv\"\n",
			map[string]string{"r.csv": "from,to\n/c,/" + strings.Repeat("y", 3<<10) + "\n"}, "HG180", "r.csv:2"},
		{"a lower bound", "[tables]\nmax_cell_bytes = 64\n[[table]]\nname = \"p\"\nfile = \"p.csv\"\nkey = \"sku\"\n",
			map[string]string{"p.csv": "sku,name\nA1," + strings.Repeat("z", 65) + "\n"}, "HG177", "p.csv:2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := redirConfig(t, c.toml, c.files)
			var ps Problems
			if !errors.As(err, &ps) {
				t.Fatalf("loaded, want %s at %s (err %v)", c.code, c.at, err)
			}
			found := false
			for _, p := range ps {
				s := p.String()
				if len(s) > 400 {
					t.Errorf("a problem quotes the cell: %d bytes", len(s))
				}
				if p.Code == c.code && strings.Contains(s, c.at+":") {
					found = true
				}
			}
			if !found {
				t.Errorf("want %s at %s, got:\n%v", c.code, c.at, err)
			}
		})
	}
	// Within the bound, a long cell loads.
	if _, err := redirConfig(t, "[[table]]\nname = \"p\"\nfile = \"p.csv\"\nkey = \"sku\"\n",
		map[string]string{"p.csv": "sku,name\nA1," + strings.Repeat("w ", 4000) + "\n"}); err != nil {
		t.Errorf("an 8,000-byte cell: %v", err)
	}
}

// A value rendered into one tag or header is cut at 4 KiB at a word
// boundary with "…"; a URL longer is dropped; {page.title} and
// {page.meta.*} are bounded the same way (§23).
func TestRenderedValuesBounded(t *testing.T) {
	cell := strings.Repeat("mot ", 1500) // 6,000 bytes: a cell within 8 KiB
	cfg := mustRedirConfig(t, `
[[table]]
name = "p"
file = "p.csv"
key = "sku"

[[rule]]
match = "/p/:sku"
lookup = { p = "{sku}" }
title = "{p.name}"
description = "{page.meta.keywords}"
headers = { "X-Title" = "{page.title}" }
[rule.open_graph]
image = "https://notes.example/{p.name}"
`, map[string]string{"p.csv": "sku,name\nA1," + cell + "\n"})
	m := cfg.Resolve("/p/A1")
	page := Page{Title: strings.Repeat("é", 50000), HasTitle: true,
		Meta: []PageMeta{{Name: "keywords", Content: strings.Repeat("k ", 60000)}}}
	h := m.Render(page)
	check := func(what, v string) {
		t.Helper()
		if len(v) > MaxValueBytes || !utf8.ValidString(v) || !strings.HasSuffix(v, "…") {
			t.Errorf("%s: %d bytes, valid %v, ends %q", what, len(v), utf8.ValidString(v), v[max(0, len(v)-8):])
		}
	}
	if h.Title == nil || h.Description == nil {
		t.Fatalf("title %v description %v", h.Title, h.Description)
	}
	check("title", *h.Title)
	if strings.HasSuffix(strings.TrimSuffix(*h.Title, "…"), " ") || !strings.HasSuffix(strings.TrimSuffix(*h.Title, "…"), "mot") {
		t.Errorf("title not cut at a word: …%q", (*h.Title)[len(*h.Title)-12:])
	}
	check("description", *h.Description)
	var xt string
	for _, hv := range h.Headers {
		if strings.EqualFold(hv.Name, "X-Title") {
			xt = hv.Value
		}
	}
	check("header from {page.title}", xt)
	for _, mt := range h.Meta {
		if mt.Key == "og:image" {
			t.Errorf("og:image of %d bytes written, want it dropped", len(mt.Content))
		}
	}
	dropped := false
	for _, d := range h.Dropped {
		dropped = dropped || d.Field == "open_graph.image" || strings.Contains(d.Field, "image")
	}
	if !dropped {
		t.Errorf("the long og:image is not recorded as dropped: %+v", h.Dropped)
	}
}
