package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dumpHead writes what Render decided, one line per tag, for goldens that
// a person reads.
func dumpHead(h *Head, rows []DataRow) string {
	var b strings.Builder
	opt := func(k string, v *string) {
		if v != nil {
			fmt.Fprintf(&b, "%s: %q\n", k, *v)
		}
	}
	fmt.Fprintf(&b, "policy: %s\n", h.Policy)
	opt("title", h.Title)
	opt("description", h.Description)
	opt("robots", h.Robots)
	opt("canonical", h.Canonical)
	for _, a := range h.Alternates {
		fmt.Fprintf(&b, "alternate: %s %s\n", a.Hreflang, a.Href)
	}
	if h.HreflangTable {
		b.WriteString("alternates from the hreflang table\n")
	}
	for _, m := range h.Meta {
		fmt.Fprintf(&b, "meta %s=%q content=%q\n", m.Attr, m.Key, m.Content)
	}
	for _, j := range h.JSONLD {
		fmt.Fprintf(&b, "json-ld %s\n", j)
	}
	for _, hv := range h.Headers {
		fmt.Fprintf(&b, "header %s: %q\n", hv.Name, hv.Value)
	}
	for _, d := range h.Dropped {
		fmt.Fprintf(&b, "dropped %s of %s: %q (%s)\n", d.Field, d.Rule, d.Value, d.Reason)
	}
	for _, r := range rows {
		kind := r.Kind
		if r.Table != "" {
			kind += " " + r.Table
		}
		if r.Found {
			fmt.Fprintf(&b, "row %s %s:%d key=%q\n", kind, filepath.Base(r.File), r.Line, r.Key)
		} else {
			fmt.Fprintf(&b, "row %s %s: no row key=%q\n", kind, filepath.Base(r.File), r.Key)
		}
	}
	return b.String()
}

func loadTest(t testing.TB, file string) *Config {
	t.Helper()
	cfg, err := Load(file)
	if err != nil {
		t.Fatalf("Load(%s): %v", file, err)
	}
	return cfg
}

// TestDataGolden renders the pages of testdata/data/tables.toml against an
// empty upstream head (and one with a title and canonical) and compares
// with testdata/data/tables.golden: lookups, a missing row, empty cells,
// hostile cells, page_table rows winning over every rule, hreflang groups.
func TestDataGolden(t *testing.T) {
	cfg := loadTest(t, "testdata/data/tables.toml")
	paths := []string{
		"/p/A1", "/p/B2", "/p/C3", "/p/D4", "/p/ZZ",
		"/about", "/caf%C3%A9", "/old", "/bad-canonical", "/fill",
		"/en/about", "/", "/elsewhere",
	}
	var b strings.Builder
	for _, p := range paths {
		for _, page := range []Page{{}, {Title: "Upstream title", HasTitle: true, Description: "Upstream desc", HasDescription: true, Canonical: "https://notes.example/upstream"}} {
			m := cfg.Resolve(p)
			fmt.Fprintf(&b, "=== %s (upstream head: %q, any=%v)\n", p, page.Title, m.Any())
			h := m.Render(page)
			b.WriteString(dumpHead(h, m.DataRows(h)))
		}
	}
	golden(t, "testdata/data/tables.golden", b.String())
}

func golden(t *testing.T, file, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run with -update, then read the file)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs:\n got:\n%s", file, got)
	}
}

// On a localized page, a canonical from a lookup that finds no row or an
// empty cell is as if no rule set it (§12.1): the page gets the localized
// default of §4.7, its own address and an alternate per locale, not
// nothing.
func TestLocalizedCanonicalFromAMissingCell(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pages.csv"), []byte("slug,canon\na,/en/docs/other\nb,\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "headgate.toml")
	if err := os.WriteFile(file, []byte(`[server]
upstream = "http://127.0.0.1:3000"
[site]
base_url = "https://notes.example"
locales = ["en", "de"]
[[table]]
name = "pages"
file = "pages.csv"
key = "slug"
[[rule]]
match = "/docs/:slug"
localized = true
lookup = { pages = "{slug}" }
canonical = "{pages.canon}"
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := loadTest(t, file)
	for path, want := range map[string]struct {
		canonical string
		alts      int
	}{
		"/en/docs/b":  {"https://notes.example/en/docs/b", 3},  // an empty cell
		"/de/docs/zz": {"https://notes.example/de/docs/zz", 3}, // no row
		"/en/docs/a":  {"https://notes.example/en/docs/other", 0},
	} {
		h := cfg.Resolve(path).Render(Page{})
		if got := str(h.Canonical); got != want.canonical || len(h.Alternates) != want.alts {
			t.Errorf("%s: canonical %q, %d alternates %v; want %q and %d", path, got, len(h.Alternates), h.Alternates, want.canonical, want.alts)
		}
	}
}
