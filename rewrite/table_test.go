package rewrite

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headgate/headgate/rules"
)

const tablePage = `<!DOCTYPE html><html><head><meta charset="utf-8">
<title>Legacy</title>
<meta name="description" content="Legacy description">
</head><body><p>body</p></body></html>
`

// tableConfig writes a products table of n rows and a config whose
// /p/:sku rule either looks the row up (lookup) or writes fixed values.
func tableConfig(t testing.TB, n int, lookup bool) *rules.Config {
	t.Helper()
	dir := t.TempDir()
	var csv strings.Builder
	csv.WriteString("sku,name,summary,image\n")
	for i := range n {
		fmt.Fprintf(&csv, "s%d,Name %d,Summary %d,/img/%d.png\n", i, i, i, i)
	}
	csv.WriteString(`hostile,"Evil ""><script>alert(1)</script>","</script><!--",javascript:alert(1)` + "\n")
	if err := os.WriteFile(filepath.Join(dir, "p.csv"), []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r := `title = "Fixed name"
description = "Fixed summary"
[rule.open_graph]
image = "/img/fixed.png"
[[rule.json_ld]]
"@type" = "Product"
name = "Fixed name"
`
	if lookup {
		r = `lookup = { products = "{sku}" }
title = "{products.name}"
description = "{products.summary}"
[rule.open_graph]
image = "{products.image}"
[[rule.json_ld]]
"@type" = "Product"
name = "{products.name}"
`
	}
	src := `[server]
upstream = "http://127.0.0.1:3000"
[site]
base_url = "https://notes.example"
[[table]]
name = "products"
file = "p.csv"
key = "sku"
[[rule]]
match = "/p/:sku"
` + r
	cfg, err := rules.Parse(filepath.Join(dir, "headgate.toml"), []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestTableEscaping: markup in a table cell is text wherever it goes —
// the title, attributes, JSON-LD — and a javascript: cell is not written.
func TestTableEscaping(t *testing.T) {
	cfg := tableConfig(t, 3, true)
	r := NewReader(strings.NewReader(tablePage), Options{Match: cfg.Resolve("/p/hostile"), ContentType: "text/html; charset=utf-8", CorrectUpstream: true})
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	head := string(out[:bytes.Index(out, []byte("</head>"))])
	for _, bad := range []string{"<script>alert", "</script><!--", "javascript:"} {
		if strings.Contains(head, bad) {
			t.Errorf("head holds %q:\n%s", bad, head)
		}
	}
	for _, want := range []string{
		`<title>Evil &#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;</title>`,
		`<meta name="description" content="&lt;/script&gt;&lt;!--">`,
		`"name":"Evil \"\u003e\u003cscript\u003ealert(1)\u003c/script\u003e"`,
	} {
		if !strings.Contains(head, want) {
			t.Errorf("head lacks %s:\n%s", want, head)
		}
	}
	if n := strings.Count(head, "<script"); n != 1 {
		t.Errorf("%d script elements, want the one JSON-LD block:\n%s", n, head)
	}
}

// BenchmarkTablePage is the rewriter's cost for one page whose rule looks
// its values up in a table of 100,000 rows, against the same rule with
// fixed values.
//
//	go test ./rewrite -run '^$' -bench TablePage -benchtime 20000x
func BenchmarkTablePage(b *testing.B) {
	page := []byte(tablePage)
	buf := make([]byte, 32<<10)
	for _, lookup := range []bool{false, true} {
		cfg := tableConfig(b, 100_000, lookup)
		name := "fixed"
		if lookup {
			name = "lookup"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(page)))
			for i := range b.N {
				m := cfg.Resolve("/p/s" + fmt.Sprint(i%100_000))
				if err := rewriteDrain(page, Options{Match: m, ContentType: "text/html; charset=utf-8", CorrectUpstream: true}, buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
