package sitemap

import (
	"context"
	"encoding/xml"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/flate"
)

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

const plainConfig = `
[[rule]]
match = "/"
sitemap = true

[[rule]]
match = "/notes/"
sitemap = true
sitemap_source = "file:notes.jsonl"

[[rule]]
match = "/notes/:id{[0-9]+}"
canonical = "self"
sitemap = true
sitemap_source = "file:notes.jsonl"

[[rule]]
match = "/tags/:tag"
sitemap = true
sitemap_entries = [
  { params = { tag = "go" }, lastmod = "2026-02-01" },
  { params = { tag = "r&d" } },
  { params = { tag = "c++ & <tips>" }, lastmod = "2026-02-03T23:30:00-05:00" },
  { params = { tag = "café" } },
]

[[rule]]
match = "/internal/*"
deny = true
`

const plainNotes = `{"params":{"id":"1"},"lastmod":"2026-01-02T10:00:00Z"}
{"params":{"id":"2"},"lastmod":"2026-01-05"}
{"params":{"id":"3"}}
{"params":{"id":"12"},"lastmod":"2026-01-04T01:00:00+02:00"}
`

func TestGoldenPlain(t *testing.T) {
	cfg := loadConfig(t, plainConfig, map[string]string{"notes.jsonl": plainNotes})
	files := generated(t, New(cfg, Options{}))
	if len(files) != 1 {
		t.Fatalf("got %d files, want 1", len(files))
	}
	doc := files["/sitemap.xml"]
	golden(t, "plain.xml", doc)
	u := parseURLSet(t, doc)
	want := []string{
		"https://notes.example/",
		"https://notes.example/notes/",
		"https://notes.example/notes/1",
		"https://notes.example/notes/2",
		"https://notes.example/notes/3",
		"https://notes.example/notes/12",
		"https://notes.example/tags/go",
		"https://notes.example/tags/r&d",
		"https://notes.example/tags/c++%20&%20%3Ctips%3E",
		"https://notes.example/tags/caf%C3%A9",
	}
	if got := locs(u); !slices.Equal(got, want) {
		t.Errorf("locs:\n got %q\nwant %q", got, want)
	}
	// The parameterless /notes/ takes the latest date of the source.
	if got := u.URLs[1].Lastmod; got != "2026-01-05" {
		t.Errorf("/notes/ lastmod = %q, want 2026-01-05", got)
	}
	// Values read back to what the entries said, escaping undone.
	for i, wantTag := range []string{"go", "r&d", "c++ & <tips>", "café"} {
		loc, err := url.Parse(u.URLs[6+i].Loc)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimPrefix(loc.Path, "/tags/"); got != wantTag {
			t.Errorf("tag %d reads back as %q, want %q", i, got, wantTag)
		}
	}
	if !strings.Contains(doc, "<loc>https://notes.example/tags/r&amp;d</loc>") {
		t.Error("& is not escaped as &amp;")
	}
}

// Keys before the first table go into [site] (the header ends there).
const localizedConfig = `
locales = ["en", "de", "de-AT"]
x_default = true

[[rule]]
match = "/about"
localized = true
sitemap = true

[[rule]]
match = "/guides/:slug"
localized = true
sitemap = true
sitemap_entries = [
  { params = { slug = "start" }, lastmod = "2026-01-10" },
  { params = { slug = "über & mehr" } },
]

[[rule]]
match = "/contact"
sitemap = true
`

func TestGoldenLocalized(t *testing.T) {
	cfg := loadConfig(t, localizedConfig, nil)
	files := generated(t, New(cfg, Options{}))
	doc := files["/sitemap.xml"]
	golden(t, "localized.xml", doc)
	u := parseURLSet(t, doc)
	// 1 + 2 entries in 3 locales, and /contact.
	if len(u.URLs) != 10 {
		t.Fatalf("got %d URLs, want 10", len(u.URLs))
	}
	for _, x := range u.URLs[:9] {
		var got []string
		for _, l := range x.Links {
			if l.Rel != "alternate" {
				t.Errorf("rel = %q", l.Rel)
			}
			got = append(got, l.Hreflang+" "+l.Href)
		}
		page := strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(x.Loc, "https://notes.example/en"), "https://notes.example/de-AT"), "https://notes.example/de")
		want := []string{
			"en https://notes.example/en" + page,
			"de https://notes.example/de" + page,
			"de-AT https://notes.example/de-AT" + page,
			"x-default https://notes.example" + page,
		}
		if !slices.Equal(got, want) {
			t.Errorf("links of %s:\n got %q\nwant %q", x.Loc, got, want)
		}
	}
	if len(u.URLs[9].Links) != 0 {
		t.Errorf("/contact (not localized) has links: %v", u.URLs[9].Links)
	}
	if got := u.URLs[3].Loc; got != "https://notes.example/en/guides/start" || u.URLs[3].Lastmod != "2026-01-10" {
		t.Errorf("URL 4 = %s %s", got, u.URLs[3].Lastmod)
	}
}

func TestNoXDefault(t *testing.T) {
	cfg := loadConfig(t, strings.Replace(localizedConfig, "x_default = true", "x_default = false", 1), nil)
	u := parseURLSet(t, generated(t, New(cfg, Options{}))["/sitemap.xml"])
	for _, x := range u.URLs[:9] {
		if len(x.Links) != 3 {
			t.Errorf("%s has %d links, want 3 (no x-default)", x.Loc, len(x.Links))
		}
	}
}

const indexConfig = `
locales = ["en", "de"]

[sitemap]
max_urls_per_file = 3

[[rule]]
match = "/"
sitemap = true

[[rule]]
match = "/notes/:id"
sitemap = true
sitemap_entries = [
  { params = { id = "1" }, lastmod = "2026-01-01" },
  { params = { id = "2" }, lastmod = "2026-01-03" },
]

[[rule]]
match = "/about/:part"
localized = true
sitemap = true
sitemap_entries = [
  { params = { part = "team" }, lastmod = "2026-02-01" },
  { params = { part = "history" } },
  { params = { part = "press" }, lastmod = "2026-01-15" },
]
`

func TestGoldenIndex(t *testing.T) {
	cfg := loadConfig(t, indexConfig, nil)
	files := generated(t, New(cfg, Options{}))
	// 3 plain URLs fill file 1; each localized entry (2 URLs) does not fit
	// beside another, so files 2, 3, 4 hold one entry each.
	if len(files) != 5 {
		t.Fatalf("got %d files, want the index and 4 parts: %v", len(files), keys(files))
	}
	golden(t, "index.xml", files["/sitemap.xml"])
	var idx xmlIndex
	if err := xml.Unmarshal([]byte(files["/sitemap.xml"]), &idx); err != nil {
		t.Fatal(err)
	}
	checkTokens(t, files["/sitemap.xml"])
	wantLastmod := []string{"2026-01-03", "2026-02-01", "", "2026-01-15"}
	if len(idx.Sitemaps) != 4 {
		t.Fatalf("index names %d files", len(idx.Sitemaps))
	}
	for i, sm := range idx.Sitemaps {
		if want := fmt.Sprintf("https://notes.example/sitemap-%d.xml", i+1); sm.Loc != want {
			t.Errorf("index entry %d = %s, want %s", i, sm.Loc, want)
		}
		if sm.Lastmod != wantLastmod[i] {
			t.Errorf("index entry %d lastmod = %q, want %q", i, sm.Lastmod, wantLastmod[i])
		}
	}
	for i := 1; i <= 4; i++ {
		name := fmt.Sprintf("/sitemap-%d.xml", i)
		golden(t, fmt.Sprintf("index-%d.xml", i), files[name])
		u := parseURLSet(t, files[name]) // also: xmlns:xhtml exactly when links
		if n := len(u.URLs); n > 3 || (i > 1 && n != 2) {
			t.Errorf("%s holds %d URLs", name, n)
		}
	}
	if strings.Contains(files["/sitemap-1.xml"], "xmlns:xhtml") {
		t.Error("sitemap-1.xml holds no link but declares xmlns:xhtml")
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestAppendEscaped(t *testing.T) {
	in := `a&b<c>d"e'f` + "é"
	got := string(appendEscaped([]byte("x"), in))
	if want := "xa&amp;b&lt;c&gt;d&quot;e&apos;fé"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	// Read back as text and as an attribute value.
	var v struct {
		A    string `xml:"a,attr"`
		Text string `xml:",chardata"`
	}
	doc := `<x a="` + string(appendEscaped(nil, in)) + `">` + string(appendEscaped(nil, in)) + `</x>`
	if err := xml.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatal(err)
	}
	if v.A != in || v.Text != in {
		t.Errorf("read back %q and %q, want %q", v.A, v.Text, in)
	}
}

func TestLastmod(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"2026-01-02", "2026-01-02"},
		{"2026-01-02T10:00:00Z", "2026-01-02"},
		{"2026-01-02T23:30:00-05:00", "2026-01-03"},
		{"2026-01-02T00:30:00+01:00", "2026-01-01"},
		{"2026-01-02T10:00:00.123456Z", "2026-01-02"},
		{"2024-02-29", "2024-02-29"},
		// §16.5: WordPress' form, and RFC 3339 without an offset, as UTC.
		{"2026-01-02 23:30:00", "2026-01-02"},
		{"2026-01-02T10:00:00", "2026-01-02"},
		{"2026-01-02T10:00:00.5", "2026-01-02"},
		// RFC 3339 §5.6: "t" and "z" may be lower-case.
		{"2026-01-02t23:30:00z", "2026-01-02"},
		{"2026-01-02t23:30:00-05:00", "2026-01-03"},
	} {
		got, ok := parseLastmod(tc.in)
		if !ok || got != tc.want {
			t.Errorf("parseLastmod(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
	for _, bad := range []string{
		"2026-13-01", "2026-02-30", "2025-02-29", "yesterday", "2026-01-02 25:00:00", "2026-01-02 10:00",
		"2026-1-2", "02/01/2026", "2026-01-02T10:00", "0000-01-01", "0001-01-01T00:30:00+01:00",
		"2026-01-02T10:00:00Z<x>", "1767348000",
	} {
		if got, ok := parseLastmod(bad); ok {
			t.Errorf("parseLastmod(%q) = %q, accepted", bad, got)
		}
	}
}

func TestCRC32Combine(t *testing.T) {
	a, b := []byte(strings.Repeat("prefix ", 9)), []byte(strings.Repeat("the body of a file\n", 1000))
	for _, n := range []int{0, 1, 7, 100, len(b)} {
		want := crc32IEEE(append(slices.Clone(a), b[:n]...))
		if got := crc32Combine(crc32IEEE(a), crc32IEEE(b[:n]), int64(n)); got != want {
			t.Errorf("len %d: got %08x, want %08x", n, got, want)
		}
	}
}

func TestSplicedGzip(t *testing.T) {
	// Every prefix, with and without a body, decompresses with its own CRC
	// checked, also by a decoder other than the one that wrote it.
	fw, _ := flate.NewWriter(nil, compressionLevel)
	s := New(loadConfig(t, "", nil), Options{})
	for which := range 2 {
		for _, body := range []string{"", "<url>\n  <loc>https://a.example/</loc>\n</url>\n"} {
			p := newPart(fw, s.urlsetPre)
			p.write([]byte(body))
			f := p.finish(urlsetClose, which)
			want := s.urlsetPre[which].text + body + urlsetClose
			if got := unzip(t, f); got != want {
				t.Errorf("got %q, want %q", got, want)
			}
			if got := stdGunzip(t, f); got != want {
				t.Errorf("compress/gzip reads %q, want %q", got, want)
			}
		}
	}
}

func TestSizeLimits(t *testing.T) {
	t.Run("per file, entries kept whole", func(t *testing.T) {
		cfg := loadConfig(t, `
locales = ["en", "de", "fr"]
[sitemap]
max_urls_per_file = 4
[[rule]]
match = "/a/:x"
localized = true
sitemap = true
sitemap_entries = [{ params = { x = "1" } }, { params = { x = "2" } }, { params = { x = "3" } }]
`, nil)
		files := generated(t, New(cfg, Options{}))
		if len(files) != 4 {
			t.Fatalf("got %v, want an index and 3 files of one entry (3 URLs) each", keys(files))
		}
		for i := 1; i <= 3; i++ {
			u := parseURLSet(t, files[fmt.Sprintf("/sitemap-%d.xml", i)])
			for _, x := range u.URLs {
				if !strings.HasSuffix(x.Loc, fmt.Sprintf("/a/%d", i)) {
					t.Errorf("file %d holds %s", i, x.Loc)
				}
			}
		}
	})
	t.Run("an entry larger than a file is spread", func(t *testing.T) {
		cfg := loadConfig(t, `
locales = ["en", "de", "fr"]
[sitemap]
max_urls_per_file = 2
[[rule]]
match = "/a"
localized = true
sitemap = true
`, nil)
		files := generated(t, New(cfg, Options{}))
		if len(files) != 3 {
			t.Fatalf("got %v, want an index and 2 files", keys(files))
		}
		n := len(parseURLSet(t, files["/sitemap-1.xml"]).URLs) + len(parseURLSet(t, files["/sitemap-2.xml"]).URLs)
		if n != 3 {
			t.Errorf("got %d URLs, want 3", n)
		}
	})
	t.Run("bytes", func(t *testing.T) {
		var entries []string
		for i := range 40 {
			entries = append(entries, fmt.Sprintf(`{ params = { x = "%d%s" } }`, i, strings.Repeat("y", 100)))
		}
		cfg := loadConfig(t, `
[[rule]]
match = "/a/:x"
sitemap = true
sitemap_entries = [`+strings.Join(entries, ", ")+`]
`, nil)
		s := New(cfg, Options{})
		s.maxBytes = 2000
		files := generated(t, s)
		if len(files) < 4 {
			t.Fatalf("got %d files, want several", len(files))
		}
		total := 0
		for name, doc := range files {
			if len(doc) >= 2000 {
				t.Errorf("%s is %d bytes, the limit is 2000 exclusive", name, len(doc))
			}
			if name != "/sitemap.xml" {
				total += len(parseURLSet(t, doc).URLs)
			}
		}
		if total != 40 {
			t.Errorf("got %d URLs, want 40", total)
		}
	})
	t.Run("max_urls", func(t *testing.T) {
		lg, log := newLogs()
		cfg := loadConfig(t, `
locales = ["en", "de"]
[sitemap]
max_urls = 6
[[rule]]
match = "/"
sitemap = true
[[rule]]
match = "/a/:x"
localized = true
sitemap = true
sitemap_entries = [{ params = { x = "1" } }, { params = { x = "2" } }, { params = { x = "3" } }, { params = { x = "4" } }]
[[rule]]
match = "/b"
sitemap = true
`, nil)
		u := parseURLSet(t, generated(t, New(cfg, Options{Logger: log}))["/sitemap.xml"])
		// "/" and two entries (5 URLs); the third entry would cut at 6:
		// it and everything after it are left out, /b included.
		if len(u.URLs) != 5 {
			t.Errorf("got %d URLs, want 5: %v", len(u.URLs), locs(u))
		}
		recs := lg.records(t, "sitemap: limit reached; the rest is left out")
		if len(recs) != 1 || recs[0]["urls_left_out"] != float64(5) || recs[0]["files"] != float64(1) {
			t.Errorf("want one warning with 5 URLs left out; log:\n%s", lg)
		}
	})
}

func TestEmpty(t *testing.T) {
	cfg := loadConfig(t, `
[[rule]]
match = "/n/:id"
sitemap = true
sitemap_source = "file:empty.jsonl"
`, map[string]string{"empty.jsonl": "\n\n"})
	doc := generated(t, New(cfg, Options{}))["/sitemap.xml"]
	want := `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n</urlset>\n"
	if doc != want {
		t.Errorf("got %q, want %q", doc, want)
	}
}

func TestLeftOutByRules(t *testing.T) {
	lg, log := newLogs()
	cfg := loadConfig(t, `
locales = ["en", "de"]

[[rule]]
match = "/notes/:id"
sitemap = true
sitemap_entries = [
  { params = { id = "1" } },
  { params = { id = "secret" } },
  { params = { id = "draft" } },
  { params = { id = "old" } },
  { params = { id = "a%2Fb" } },
]

[[rule]]
match = "/notes/secret"
deny = true

[[rule]]
match = "/notes/draft"
robots = { index = false }

[[rule]]
match = "/notes/old"
canonical = "/notes/1"

[[rule]]
match = "/docs/:p"
localized = true
sitemap = true
sitemap_entries = [{ params = { p = "x" } }, { params = { p = "y" } }]

[[rule]]
match = "/de/docs/y"
deny = true

[[rule]]
match = "/docs/x"
deny = true
`, nil)
	u := parseURLSet(t, generated(t, New(cfg, Options{Logger: log}))["/sitemap.xml"])
	want := []string{
		"https://notes.example/notes/1",
		"https://notes.example/notes/a%252Fb",
		"https://notes.example/en/docs/x",
		"https://notes.example/de/docs/x",
		"https://notes.example/en/docs/y",
	}
	if got := locs(u); !slices.Equal(got, want) {
		t.Fatalf("locs:\n got %q\nwant %q", got, want)
	}
	// /docs/x is denied: its x-default is not named. /de/docs/y is denied:
	// /en/docs/y names only itself and the x-default.
	if got := len(u.URLs[2].Links); got != 2 {
		t.Errorf("/en/docs/x has %d links, want 2 (en, de; no x-default)", got)
	}
	if got := u.URLs[4].Links; len(got) != 2 || got[0].Hreflang != "en" || got[1].Hreflang != "x-default" {
		t.Errorf("/en/docs/y links = %v, want en and x-default", got)
	}
	if got := reasons(lg.leftOut(t, "/notes/:id")); !mapsEqual(got, map[string]int{"denied": 1, "noindex": 1, "canonical": 1}) {
		t.Errorf("reasons = %v", got)
	}
	if got := reasons(lg.leftOut(t, "/docs/:p")); !mapsEqual(got, map[string]int{"denied": 1}) {
		t.Errorf("reasons = %v", got)
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestPrefixFilter(t *testing.T) {
	// Without a deny or noindex rule nothing is resolved; with one whose
	// pattern has a literal prefix, only addresses under it are.
	cfg := loadConfig(t, `
[[rule]]
match = "/n/:id"
sitemap = true
sitemap_entries = [{ params = { id = "1" } }]
`, nil)
	if s := New(cfg, Options{}); s.resolve {
		t.Error("resolves without any rule that can leave an address out")
	}
	for _, tc := range []struct {
		match  string
		prefix string // "" : every address
	}{
		{"/internal/*", "/internal"},
		{"/a//b/:x", "/a/b"},
		{"/caf%C3%A9/x", "/café/x"},
		{"/:x/admin", ""},
		{"/*", ""},
	} {
		cfg := loadConfig(t, `
[[rule]]
match = "/n/:id"
sitemap = true
sitemap_entries = [{ params = { id = "1" } }]
[[rule]]
match = "`+tc.match+`"
deny = true
`, nil)
		s := New(cfg, Options{})
		if tc.prefix == "" && s.prefixes != nil || tc.prefix != "" && !slices.Equal(s.prefixes, []string{tc.prefix}) {
			t.Errorf("%s: prefixes %q, want %q", tc.match, s.prefixes, tc.prefix)
		}
	}
	for _, tc := range []struct {
		path, prefix string
		want         bool
	}{
		{"/internal", "/internal", true},
		{"/internal/x", "/internal", true},
		{"/internalx", "/internal", false},
		{"/a/", "/a/", true},
		{"/b", "/a", false},
	} {
		if got := mayMatch(tc.path, tc.prefix); got != tc.want {
			t.Errorf("mayMatch(%q, %q) = %v", tc.path, tc.prefix, got)
		}
	}
}

func TestDenyFormsThroughFilter(t *testing.T) {
	// A value that makes an empty segment still meets the deny rule, in the
	// collapsed form rules.Resolve also matches deny rules against.
	cfg := loadConfig(t, `
[[rule]]
match = "/files/:p{.+}"
sitemap = true
sitemap_entries = [
  { params = { p = "internal/x" } },
  { params = { p = "/internal/x" } },
  { params = { p = "ok/x" } },
]
[[rule]]
match = "/files/internal/*"
deny = true
`, nil)
	u := parseURLSet(t, generated(t, New(cfg, Options{}))["/sitemap.xml"])
	if got := locs(u); !slices.Equal(got, []string{"https://notes.example/files/ok/x"}) {
		t.Errorf("locs = %q", got)
	}
}

func TestWriteFilesAndWriteTo(t *testing.T) {
	cfg := loadConfig(t, indexConfig, nil)
	s := New(cfg, Options{})
	dir := t.TempDir()
	if err := s.WriteFiles(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"sitemap-1.xml", "sitemap-2.xml", "sitemap-3.xml", "sitemap-4.xml", "sitemap.xml"}; !slices.Equal(names, want) {
		t.Fatalf("files %q, want %q", names, want)
	}
	want := generated(t, s)
	for _, n := range names {
		b, _ := os.ReadFile(filepath.Join(dir, n))
		if string(b) != want["/"+n] {
			t.Errorf("%s differs from the served file", n)
		}
		if st, _ := os.Stat(filepath.Join(dir, n)); st.Mode().Perm() != 0o644 {
			t.Errorf("%s mode %v", n, st.Mode())
		}
	}
	var b strings.Builder
	if err := s.WriteTo(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	if b.String() != want["/sitemap.xml"] {
		t.Error("WriteTo did not write the index")
	}
	off := New(loadConfig(t, "[[rule]]\nmatch = \"/\"\n", nil), Options{})
	if err := off.WriteTo(context.Background(), &b); err == nil {
		t.Error("WriteTo without sitemap rules: no error")
	}
}
