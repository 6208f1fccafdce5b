package rules

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// FuzzTables: a table file of any bytes, as a page table, an hreflang
// table or a lookup table, never makes Load panic; a refusal is a list of
// well-formed problems; a table that loads resolves and renders every one
// of its own rows.
func FuzzTables(f *testing.F) {
	for _, name := range []string{"seo.csv", "hreflang.csv", "products.csv"} {
		if b, err := os.ReadFile(filepath.Join("testdata/data", name)); err == nil {
			for kind := range uint8(3) {
				f.Add(kind, b)
			}
		}
	}
	f.Add(uint8(2), []byte("key,v\r\n\"a,\"\"b\"\"\r\nc\",\"<script>\"\r\n"))
	f.Add(uint8(0), []byte("\xef\xbb\xbfpath,title,robots\n/a,\"x\ny\",\"noindex, follow\"\n/%e2%82%ac,€,\n"))
	f.Add(uint8(1), []byte("group,hreflang,url\ng,en,https://notes.example/a\ng,x-default,https://NOTES.example/a\ng,de-AT,https://notes.de/%c3%bc\n"))
	configs := [3]string{
		tablesHead + "[[page_table]]\nfile = \"t.csv\"\n[[rule]]\nmatch = \"/*\"\n[rule.open_graph]\nsite_name = \"N\"\n",
		tablesHead + "[[hreflang_table]]\nfile = \"t.csv\"\n[[rule]]\nmatch = \"/*\"\n[rule.open_graph]\nsite_name = \"N\"\n",
		tablesHead + "[[table]]\nname = \"t\"\nfile = \"t.csv\"\nkey = \"key\"\n[[rule]]\nmatch = \"/k/:key\"\nlookup = { t = \"{key}\" }\ntitle = \"{t.v}\"\ncanonical = \"{t.v}\"\n",
	}
	lineRE := regexp.MustCompile(`^HG[0-9]{3} [^ :]+(:[0-9]+)?: `)
	dir := f.TempDir() // one per worker process: its inputs run one at a time
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, "t.csv"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		cfgFile := filepath.Join(dir, "headgate.toml")
		if err := os.WriteFile(cfgFile, []byte(configs[kind%3]), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(cfgFile)
		if err != nil {
			var ps Problems
			if !errors.As(err, &ps) || len(ps) == 0 {
				t.Fatalf("Load failed with %T %v, want Problems", err, err)
			}
			for _, p := range ps {
				if !lineRE.MatchString(p.String()) || p.Message == "" {
					t.Fatalf("malformed problem %q", p.String())
				}
			}
			return
		}
		page := Page{Title: "T", HasTitle: true, Canonical: "https://notes.example/x"}
		d := cfg.data
		for _, pt := range d.pages {
			for row := range pt.t.Rows() {
				m := cfg.Resolve(pt.t.Cell(row, 0))
				if m.data == nil || m.data.page == nil {
					t.Fatalf("row %d: path %q does not find its row", row, pt.t.Cell(row, 0))
				}
				m.Render(page)
				m.Render(Page{})
			}
		}
		for _, ht := range d.hreflang {
			for row := range ht.t.Rows() {
				u := ht.t.Cell(row, hlURL)
				if cfg.Alternates(u) == nil {
					t.Fatalf("row %d: url %q is in no group", row, u)
				}
				if path, ok := strings.CutPrefix(u, cfg.Site.BaseURL); ok && CheckPath(path) == nil {
					m := cfg.Resolve(path)
					m.Render(Page{})
				}
			}
		}
		for _, dt := range d.tables {
			for row := range dt.Rows() {
				if dt.Find(dt.Cell(row, dt.Key)) != row {
					t.Fatalf("row %d: key %q does not find its row", row, dt.Cell(row, dt.Key))
				}
				m := cfg.Resolve("/k/" + EscapePath(dt.Cell(row, dt.Key)))
				m.Render(page)
			}
		}
	})
}
