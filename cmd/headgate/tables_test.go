package main

import (
	"strings"
	"testing"
)

// TestExplainTableRows: explain names the table rows that applied, at
// their file:line, and a lookup that found no row.
func TestExplainTableRows(t *testing.T) {
	cfg := "../../rules/testdata/data/tables.toml"
	for path, want := range map[string][]string{
		"/p/A1":     {"table products", "products.csv:2  A1", "page_table", "seo.csv:2  /p/A1"},
		"/p/ZZ":     {`products.csv: no row for "ZZ"`},
		"/en/about": {"hreflang.csv:3  https://notes.de/ueber-uns", `Link: <https://notes.fr/a-propos>; rel="alternate"; hreflang="fr"`},
	} {
		code, out, errOut := runCmd(t, "", "explain", "-config", cfg, path)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", path, code, errOut)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q:\n%s", path, w, out)
			}
		}
	}
}

// TestCheckTables: check names each table it loaded, with its rows.
func TestCheckTables(t *testing.T) {
	code, out, errOut := runCmd(t, "", "check", "-config", "../../rules/testdata/data/tables.toml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, w := range []string{"table products: ../../rules/testdata/data/products.csv, 4 rows", "page_table: ../../rules/testdata/data/seo.csv, 6 rows", "hreflang_table: ../../rules/testdata/data/hreflang.csv, 6 rows"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}
