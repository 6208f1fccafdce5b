package rules

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// parseDir writes files into a temporary directory, loads its
// headgate.toml and returns the report with the directory spelled DIR.
func parseDir(t *testing.T, files map[string]string) (*Config, string) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := Load(filepath.Join(dir, "headgate.toml"))
	if err == nil {
		return cfg, ""
	}
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("Load: %v", err)
	}
	if cfg != nil {
		t.Fatal("a config with problems was returned: a half-loaded table could serve")
	}
	return nil, strings.ReplaceAll(ps.Error(), dir+string(filepath.Separator), "DIR/")
}

const tablesHead = `[server]
upstream = "http://127.0.0.1:3000"
[site]
base_url = "https://notes.example"
`

const productsTable = tablesHead + `
[[table]]
name = "products"
file = "p.csv"
key = "sku"

[[rule]]
match = "/p/:sku"
lookup = { products = "{sku}" }
title = "{products.name}"
`

// TestBadTables: every table that is wrong is refused whole, with the
// problem at the row's file:line (or the config key's line).
func TestBadTables(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{{
		name:  "ragged row",
		files: map[string]string{"headgate.toml": productsTable, "p.csv": "sku,name\nA,one\nB,two,extra\n"},
		want:  "HG177 DIR/p.csv:3: table[0]: this row has a different number of fields from the header row (2)",
	}, {
		// Every bad row is reported in one run, also after a row the
		// reader could not split (§3.1).
		name:  "every bad row",
		files: map[string]string{"headgate.toml": productsTable, "p.csv": "sku,name\nA,one\nB,two,extra\nC,\"x\"y\nD,\xff\nA,dup\n"},
		want: "HG177 DIR/p.csv:3: table[0]: this row has a different number of fields from the header row (2)\n" +
			"HG177 DIR/p.csv:4: table[0]: a quote is out of place: quote a field that holds a comma, a quote or a line break, and double the quotes inside it\n" +
			"HG177 DIR/p.csv:5: table[0]: column \"name\" is not valid UTF-8\n" +
			"HG177 DIR/p.csv:6: table[0]: duplicate key \"A\" (first on line 2)",
	}, {
		name:  "duplicate keys",
		files: map[string]string{"headgate.toml": productsTable, "p.csv": "sku,name\nA,one\nB,two\nA,three\n"},
		want:  `HG177 DIR/p.csv:4: table[0]: duplicate key "A" (first on line 2)`,
	}, {
		name:  "empty key",
		files: map[string]string{"headgate.toml": productsTable, "p.csv": "sku,name\nA,one\n,two\n"},
		want:  "HG177 DIR/p.csv:3: table[0]: the key cell (sku) is empty",
	}, {
		name:  "invalid UTF-8",
		files: map[string]string{"headgate.toml": productsTable, "p.csv": "sku,name\nA,one\nB,caf\xe9\n"},
		want:  `HG177 DIR/p.csv:3: table[0]: column "name" is not valid UTF-8`,
	}, {
		name:  "stray quote",
		files: map[string]string{"headgate.toml": productsTable, "p.csv": "sku,name\nA,on\"e\n"},
		want:  "HG177 DIR/p.csv:2: table[0]: a quote is out of place: quote a field that holds a comma, a quote or a line break, and double the quotes inside it",
	}, {
		name:  "missing file",
		files: map[string]string{"headgate.toml": productsTable},
		want:  "HG177 DIR/headgate.toml:8: table[0].file: DIR/p.csv: cannot be read: no such file or directory",
	}, {
		name:  "key not a column",
		files: map[string]string{"headgate.toml": strings.Replace(productsTable, `key = "sku"`, `key = "id"`, 1), "p.csv": "sku,name\nA,one\n"},
		want:  `HG177 DIR/headgate.toml:9: table[0].key: "id" is not a column of DIR/p.csv (columns: sku, name)`,
	}, {
		name:  "unknown column in a template",
		files: map[string]string{"headgate.toml": strings.Replace(productsTable, "{products.name}", "{products.nmae}", 1), "p.csv": "sku,name\nA,one\n"},
		want:  `HG121 DIR/headgate.toml:14: rule[0].title: {products.nmae}: DIR/p.csv has no column "nmae" (did you mean {products.name}?)`,
	}, {
		name:  "template without lookup",
		files: map[string]string{"headgate.toml": strings.Replace(productsTable, `lookup = { products = "{sku}" }`, "", 1), "p.csv": "sku,name\nA,one\n"},
		want:  `HG121 DIR/headgate.toml:14: rule[0].title: {products.name} names table products, but the rule has no lookup = { products = "…" }`,
	}, {
		name:  "lookup of an unknown table",
		files: map[string]string{"headgate.toml": strings.Replace(productsTable, `lookup = { products =`, `lookup = { prodcts =`, 1), "p.csv": "sku,name\nA,one\n"},
		want:  "HG121 DIR/headgate.toml:13: rule[0].lookup.prodcts: no [[table]] is named \"prodcts\" (did you mean products?)\nHG121 DIR/headgate.toml:14: rule[0].title: {products.name} names table products, but the rule has no lookup = { products = \"…\" }",
	}, {
		name: "page table: unknown column, no path",
		files: map[string]string{"headgate.toml": tablesHead + "[[page_table]]\nfile = \"seo.csv\"\n",
			"seo.csv": "url,titel\n/a,x\n"},
		want: `HG176 DIR/seo.csv:1: page_table[0]: column "url" is not a page_table column (path, title, description, canonical, robots, og_title, og_description, og_image, og_type, twitter_title, twitter_description, twitter_image, policy)
HG176 DIR/seo.csv:1: page_table[0]: column "titel" is not a page_table column (path, title, description, canonical, robots, og_title, og_description, og_image, og_type, twitter_title, twitter_description, twitter_image, policy) (did you mean title?)`,
	}, {
		name: "page table: duplicate paths, compared as request paths",
		files: map[string]string{"headgate.toml": tablesHead + "[[page_table]]\nfile = \"seo.csv\"\n",
			"seo.csv": "path,title\n/caf%c3%a9,x\n/b,y\n/caf%C3%A9,z\n"},
		want: `HG176 DIR/seo.csv:4: page_table[0]: duplicate path "/caf%C3%A9" (first on line 2)`,
	}, {
		name: "page table: bad cells",
		files: map[string]string{"headgate.toml": tablesHead + "[[page_table]]\nfile = \"seo.csv\"\n",
			"seo.csv": "path,robots,policy\n/a,\"noindex, <script>\",\nb,,\n/c,,merge\n/d/../e,,\n/f?x=1,,\n"},
		want: `HG176 DIR/seo.csv:2: page_table[0]: robots "noindex, <script>": a directive holds a character robots directives never hold
HG176 DIR/seo.csv:3: page_table[0]: path "b" is not a request path (a path starting with /, percent-encoded, without query or dot segments)
HG176 DIR/seo.csv:4: page_table[0]: policy "merge" is neither "override" nor "fill"
HG176 DIR/seo.csv:5: page_table[0]: path "/d/../e" is not a request path (a path starting with /, percent-encoded, without query or dot segments)
HG176 DIR/seo.csv:6: page_table[0]: path "/f?x=1" is not a request path (a path starting with /, percent-encoded, without query or dot segments)`,
	}, {
		name: "hreflang table",
		files: map[string]string{"headgate.toml": tablesHead + "[[hreflang_table]]\nfile = \"h.csv\"\n",
			"h.csv": `group,hreflang,url
a,en,https://notes.example/en
a,en-UK,https://notes.example/uk
a,english,https://notes.example/x
a,de,/de
a,EN,https://notes.example/en2
a,fr,javascript:alert(1)
b,en,https://notes.example/b
c,en,https://notes.example/c1
c,de,https://notes.example/en
d,iw,https://notes.example/d1
d,de-DD,https://notes.example/d2
`},
		want: `HG175 DIR/h.csv:3: hreflang_table[0]: hreflang "en-UK": "UK" is not an ISO 3166-1 region (the United Kingdom is GB)
HG175 DIR/h.csv:4: hreflang_table[0]: hreflang "english": not an ISO 639-1 language (two letters) with an optional script and ISO 3166-1 region, nor x-default
HG175 DIR/h.csv:5: hreflang_table[0]: url "/de": not an absolute http(s) URL
HG175 DIR/h.csv:6: hreflang_table[0]: group "a" has hreflang "EN" twice (first on line 2)
HG175 DIR/h.csv:7: hreflang_table[0]: url "javascript:alert(1)": not an absolute http(s) URL
HG175 DIR/h.csv:10: hreflang_table[0]: url "https://notes.example/en" is in group "a" and in group "c" (line 2): a page has one set of language versions
HG175 DIR/h.csv:11: hreflang_table[0]: hreflang "iw": "iw" is not an ISO 639-1 language
HG175 DIR/h.csv:12: hreflang_table[0]: hreflang "de-DD": "DD" is not an ISO 3166-1 alpha-2 region`,
	}, {
		name: "hreflang table: groups",
		files: map[string]string{"headgate.toml": tablesHead + "[[hreflang_table]]\nfile = \"h.csv\"\n",
			"h.csv": `group,hreflang,url
a,en,https://notes.example/en
a,de,https://notes.de/
b,en,https://notes.example/b
c,en,https://Notes.Example/c
c,de,https://notes.example/en
c,x-default,https://notes.example/c
`},
		want: `HG175 DIR/h.csv:4: hreflang_table[0]: group "b" has one row: a language version needs another to be one
HG175 DIR/h.csv:6: hreflang_table[0]: url "https://notes.example/en" is in group "a" and in group "c" (line 2): a page has one set of language versions`,
	}, {
		name:  "unknown format",
		files: map[string]string{"headgate.toml": strings.Replace(productsTable, "p.csv", "p.xlsx", 1), "p.xlsx": "PK"},
		want:  "HG177 DIR/headgate.toml:8: table[0].file: DIR/p.xlsx: unknown format: name it .csv (with a header row) or .jsonl (JSON Lines)",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, got := parseDir(t, tc.files)
			if got != tc.want {
				t.Errorf("report:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// TestTableTooLarge: a 2 GB file (sparse: no bytes written) is refused
// from its size, at once, before any of it is read.
func TestTableTooLarge(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "p.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(2 << 30); err != nil {
		t.Skipf("no sparse files here: %v", err)
	}
	f.Close()
	if err := os.WriteFile(filepath.Join(dir, "headgate.toml"), []byte(productsTable), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cfg, err := Load(filepath.Join(dir, "headgate.toml"))
	if cfg != nil || err == nil {
		t.Fatal("a 2 GB table was loaded")
	}
	if !strings.Contains(err.Error(), "HG177") || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("report: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("refusing took %v: the file was read", d)
	}
}

// TestTablesParse: what a spreadsheet exports — a BOM, CRLF, quoted
// commas, quotes and line breaks — and JSON Lines, load as written.
func TestTablesParse(t *testing.T) {
	cfg, report := parseDir(t, map[string]string{
		"headgate.toml": productsTable + `
[[table]]
name = "j"
file = "j.jsonl"
key = "id"
`,
		"p.csv":   "\xef\xbb\xbfsku,name\r\nA,\"one, two\"\r\nB,\"say \"\"hi\"\"\r\nthere\"\r\n",
		"j.jsonl": `{"id":"x","v":"1"}` + "\n" + `{"id":"y","v":"2"}` + "\n",
	})
	if report != "" {
		t.Fatal(report)
	}
	for path, want := range map[string]string{"/p/A": "one, two", "/p/B": "say \"hi\"\nthere"} {
		h := cfg.Resolve(path).Render(Page{})
		if h.Title == nil || *h.Title != want {
			t.Errorf("%s: title %v, want %q", path, h.Title, want)
		}
	}
	j := cfg.data.table("j")
	if r := j.Find("y"); r < 0 || j.Cell(r, j.Column("v")) != "2" {
		t.Errorf("JSON Lines row y: %d", r)
	}
	if len(cfg.Files) != 2 {
		t.Errorf("Files = %v, want both tables", cfg.Files)
	}
}

// TestHostileCells: a cell with CR/LF never reaches a header; a URL cell
// that fails §4.6 is dropped; markup in text stays text (the rewriter
// escapes it: see rewrite's TestTableEscaping).
func TestHostileCells(t *testing.T) {
	cfg, report := parseDir(t, map[string]string{
		"headgate.toml": productsTable + `canonical = "{products.url}"
[rule.headers]
x-name = "{products.name}"
`,
		"p.csv": "sku,name,url\nA,\"evil\r\nSet-Cookie: x=1\",\"/ok\r\n\"\nB,fine,javascript:alert(1)\nC,fine,\" /p/C\"\nD,fine,/p/D\n",
	})
	if report != "" {
		t.Fatal(report)
	}
	for _, tc := range []struct{ path, header, canonical string }{
		{"/p/A", "", ""},
		{"/p/B", "fine", ""},
		{"/p/C", "fine", ""},
		{"/p/D", "fine", "https://notes.example/p/D"},
	} {
		h := cfg.Resolve(tc.path).Render(Page{})
		got := ""
		for _, hv := range h.Headers {
			got = hv.Value
		}
		if got != tc.header {
			t.Errorf("%s: header %q, want %q", tc.path, got, tc.header)
		}
		c := ""
		if h.Canonical != nil {
			c = *h.Canonical
		}
		if c != tc.canonical {
			t.Errorf("%s: canonical %q, want %q (dropped: %v)", tc.path, c, tc.canonical, h.Dropped)
		}
		if tc.canonical == "" && len(h.Dropped) == 0 {
			t.Errorf("%s: nothing recorded as dropped", tc.path)
		}
	}
}

func TestNormURL(t *testing.T) {
	for _, tc := range []struct{ in, want, why string }{
		{"https://notes.example/en/about", "https://notes.example/en/about", ""},
		{"HTTPS://Notes.Example", "https://notes.example/", ""},
		{"https://notes.example?x=1", "https://notes.example/?x=1", ""},
		{"https://notes.de/%c3%bcber-uns", "https://notes.de/%C3%BCber-uns", ""},
		{"https://notes.de/über uns", "https://notes.de/%C3%BCber%20uns", ""},
		{"https://notes.de/a\"<b>", "https://notes.de/a%22%3Cb%3E", ""},
		{"https://notes.example:443/k", "https://notes.example/k", ""},
		{"http://notes.example:80/k", "http://notes.example/k", ""},
		{"https://notes.example:8443/k", "https://notes.example:8443/k", ""},
		{"https://notes.example/%6Dm", "https://notes.example/mm", ""},
		{"https://notes.example/%7euser?q=%7e", "https://notes.example/~user?q=%7E", ""},
		{"https://notes.example/n#top", "", "holds a fragment (#…): a language version is a page's address, which has none"},
		{"/en/about", "", "not an absolute http(s) URL"},
		{"javascript:alert(1)", "", "not an absolute http(s) URL"},
		{"https://notes.example/a\r\nb", "", "it holds a control character"},
		{"https://user@notes.example/", "", "not an absolute http(s) URL with a host (and no user info)"},
	} {
		got, why := normURL(tc.in)
		if got != tc.want || why != tc.why {
			t.Errorf("normURL(%q) = %q, %q; want %q, %q", tc.in, got, why, tc.want, tc.why)
		}
	}
	if n := testing.AllocsPerRun(100, func() { normURL("https://notes.example/en/about") }); n != 0 {
		t.Errorf("a URL spelled as headgate spells it allocates %v times", n)
	}
}

// TestTablesJSONLines: page and hreflang tables read from JSON Lines the
// same as from CSV, line numbers included.
func TestTablesJSONLines(t *testing.T) {
	cfg, report := parseDir(t, map[string]string{
		"headgate.toml": tablesHead + "[[page_table]]\nfile = \"seo.jsonl\"\n[[hreflang_table]]\nfile = \"h.jsonl\"\n",
		"seo.jsonl":     `{"path":"/a","title":"A \"quoted\" title","robots":""}` + "\n\n" + `{"path":"/b","title":"","robots":"noindex"}` + "\n",
		"h.jsonl":       `{"group":"g","hreflang":"en","url":"https://notes.example/a"}` + "\n" + `{"group":"g","hreflang":"de","url":"https://notes.de/a"}` + "\n",
	})
	if report != "" {
		t.Fatal(report)
	}
	m := cfg.Resolve("/a")
	h := m.Render(Page{})
	if h.Title == nil || *h.Title != `A "quoted" title` || len(h.Alternates) != 2 {
		t.Errorf("/a: %s", dumpHead(h, m.DataRows(h)))
	}
	m = cfg.Resolve("/b")
	h = m.Render(Page{})
	if h.Title != nil || h.Robots == nil || *h.Robots != "noindex" {
		t.Errorf("/b: %s", dumpHead(h, m.DataRows(h)))
	}
	if rows := m.DataRows(h); len(rows) != 1 || rows[0].Line != 3 {
		t.Errorf("/b: rows %+v, want line 3 of seo.jsonl", rows)
	}
}

// A default filter on a table lookup says what an empty cell or a missing
// row writes: the field is written with it, not left out (§12.1, §16.3).
func TestTableDefaultFilter(t *testing.T) {
	cfg, problems := parseDir(t, map[string]string{
		"headgate.toml": productsTable + `description = "{products.summary|default:\"No summary yet\"}"` + "\n",
		"p.csv":         "sku,name,summary\nA,one,\nB,two,Two's summary\n",
	})
	if cfg == nil {
		t.Fatal(problems)
	}
	for path, want := range map[string]string{"/p/A": "No summary yet", "/p/B": "Two's summary", "/p/ZZ": "No summary yet"} {
		if got := str(cfg.Resolve(path).Render(Page{}).Description); got != want {
			t.Errorf("%s: description %q, want %q", path, got, want)
		}
	}
}

// A page_table path written as a spreadsheet shows it (/über, not
// /%C3%BCber) matches the request, which arrives percent-encoded.
func TestPageTableRawUTF8Path(t *testing.T) {
	cfg, problems := parseDir(t, map[string]string{
		"headgate.toml": tablesHead + "[[page_table]]\nfile = \"pages.csv\"\n[[rule]]\nmatch = \"/*\"\n",
		"pages.csv":     "path,title\n/über,Über uns\n/caf%c3%a9,Café\n",
	})
	if cfg == nil {
		t.Fatal(problems)
	}
	for path, want := range map[string]string{"/%C3%BCber": "Über uns", "/%c3%bcber": "Über uns", "/caf%C3%A9": "Café"} {
		if got := str(cfg.Resolve(path).Render(Page{}).Title); got != want {
			t.Errorf("%s: title %q, want %q", path, got, want)
		}
	}
}
