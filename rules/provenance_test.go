package rules

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// The fields the inspector asks SetBy about, as rewrite.Change's Identity
// and Key.
var setByKeys = [][2]string{
	{"title", ""}, {"description", ""}, {"canonical", ""}, {"robots", ""}, {"jsonld", ""},
	{"alternates", ""}, {"alternate", "de"}, {"hreflang", "en"},
	{"og:title", ""}, {"og:description", ""}, {"og:type", ""}, {"og:url", ""}, {"og:site_name", ""},
	{"og:locale", ""}, {"og:locale:alternate", ""}, {"og:image", "og:image:width"}, {"og:image", ""},
	{"article:author", ""}, {"twitter:card", ""}, {"twitter:site", ""}, {"twitter:creator", ""},
	{"twitter:title", ""}, {"twitter:description", ""}, {"twitter:url", ""}, {"twitter:image", ""},
	{"unknown", ""},
}

// TestSetByAsInspector holds SetBy to proxy/inspect_report.go's setBy on
// every field of every page of the data golden and the merge tests'
// localized config: the same strings, except where a page_table cell sets
// the field, which setBy ignored. testdata/setby.golden is what setBy
// (copied at a415c6f) said for each, a line per page and field: path,
// identity, key, answer, tab-separated. It is not regenerated: setBy is to
// go once the inspector calls SetBy.
func TestSetByAsInspector(t *testing.T) {
	type page struct {
		cfg  *Config
		path string
	}
	var pages []page
	data := loadTest(t, "testdata/data/tables.toml")
	for _, p := range []string{"/p/A1", "/p/B2", "/p/ZZ", "/about", "/caf%C3%A9", "/old", "/fill", "/en/about", "/", "/elsewhere"} {
		pages = append(pages, page{data, p})
	}
	loc := mustParse(t, localizedConfig)
	for _, p := range []string{"/de-at/about", "/about", "/x"} {
		pages = append(pages, page{loc, p})
	}
	src, err := os.ReadFile("testdata/setby.golden")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(string(src), "\n")
	rows, i := 0, 0
	for _, p := range pages {
		m := p.cfg.Resolve(p.path)
		for _, k := range setByKeys {
			got := m.SetBy(k[0], k[1])
			line := fmt.Sprintf("%s\t%s\t%s\t%s", p.path, k[0], k[1], got)
			switch {
			case i >= len(want):
				t.Fatalf("testdata/setby.golden ends before %s %v", p.path, k)
			case strings.HasPrefix(got, "row "):
				rows++ // a page_table cell: setBy did not look at rows
			case line != want[i]:
				t.Errorf("SetBy:  %q\nsetBy: %q", line, want[i])
			}
			i++
		}
	}
	if rows == 0 {
		t.Error("no page_table row set a field")
	}
}

func TestSetBy(t *testing.T) {
	data := loadTest(t, "testdata/data/tables.toml")
	loc := mustParse(t, localizedConfig)
	for _, tc := range []struct {
		name          string
		cfg           *Config
		path          string
		identity, key string
		want          string
	}{
		{"page_table cell", data, "/about", "title", "", "row 3 of seo.csv (tables.toml [[page_table]]) sets it"},
		{"page_table og_image", data, "/about", "og:image", "og:image:width", "row 3 of seo.csv (tables.toml [[page_table]]) sets it"},
		{"page_table robots", data, "/about", "robots", "", "row 3 of seo.csv (tables.toml [[page_table]]) sets it"},
		{"rule", data, "/p/B2", "title", "", "rule /p/:sku (tables.toml:27) sets it"},
		{"json_ld", data, "/p/B2", "jsonld", "", "the json_ld of rule /p/:sku (tables.toml:27)"},
		{"most specific rule", data, "/elsewhere", "description", "", "rule /* (tables.toml:19) sets it"},
		{"derived", data, "/elsewhere", "og:title", "", "derived from the title"},
		{"localized canonical", loc, "/de-at/about", "canonical", "", "rule /{locale}/about (test.toml:8) sets it"},
		{"empty cell: the rule", data, "/old", "description", "", "rule /* (tables.toml:19) sets it"},
		{"nothing", data, "/elsewhere", "unknown", "", ""},
	} {
		if got := tc.cfg.Resolve(tc.path).SetBy(tc.identity, tc.key); got != tc.want {
			t.Errorf("%s: %s %s/%s: SetBy = %q, want %q", tc.name, tc.path, tc.identity, tc.key, got, tc.want)
		}
	}
}
