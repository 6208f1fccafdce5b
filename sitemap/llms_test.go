package sitemap

import (
	"bytes"
	stdgzip "compress/gzip"
	"context"
	"encoding/xml"
	"io"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/headgate/headgate/internal/heappeak"
	"github.com/headgate/headgate/rules"
)

// llmsConfig lists notes (titles and ids with Markdown-significant
// characters and a line break), docs, a localized page and a page with no
// title, in three sections; Notes holds at most 4 links.
const llmsConfig = `
locales = ["en", "de"]
title_template = "%s · Notes"
[[rule]]
match = "/"
title = "Home"
description = "Where it starts."
sitemap = true
[[rule]]
match = "/notes/:id"
title = "Note {id}"
description = "About *{id}* in [brackets]"
sitemap = true
sitemap_source = "file:notes.jsonl"
[[rule]]
match = "/docs/:slug"
title = "Doc (v2) {slug}"
sitemap = true
sitemap_entries = [{ params = { slug = "intro" } }, { params = { slug = "a_b" } }]
[[rule]]
match = "/about"
localized = true
title = "About"
sitemap = true
[[rule]]
match = "/plain"
sitemap = true
[llms_txt]
title = "Notes"
summary = """A tiny notes app.
Two lines of summary."""
[[llms_txt.section]]
name = "Notes"
match = "/notes/*"
max_links = 4
[[llms_txt.section]]
name = "Docs"
match = "/docs/*"
[[llms_txt.section]]
name = "Empty"
match = "/nothing/*"
[[llms_txt.section]]
name = "Optional"
match = "/*"
`

const llmsNotes = `{"params": {"id": "1"}, "lastmod": "2026-01-02"}
{"params": {"id": "line\nbreak"}}
{"params": {"id": "[x](y)"}}
{"params": {"id": "a_b*c"}}
{"params": {"id": "5"}}
`

func llmsSitemap(t *testing.T) *Sitemap {
	t.Helper()
	cfg := loadConfig(t, llmsConfig, map[string]string{"notes.jsonl": llmsNotes})
	return New(cfg, Options{})
}

func TestLLMSTxtGolden(t *testing.T) {
	s := llmsSitemap(t)
	w := get(s, "GET", "/llms.txt")
	if w.Code != 200 {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	if ct := w.Header().Get("Content-Type"); ct != "text/markdown; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if w.Header().Get("Set-Cookie") != "" || w.Header().Get("Cache-Control") != "public, max-age=300" {
		t.Errorf("headers %v", w.Header())
	}
	golden(t, "llms.txt", w.Body.String())

	gz := get(s, "GET", "/llms.txt", "Accept-Encoding", "gzip")
	if gz.Header().Get("Content-Encoding") != "gzip" || gunzip(t, gz.Body.Bytes()) != w.Body.String() {
		t.Errorf("gzip answer differs")
	}
	if nm := get(s, "GET", "/llms.txt", "If-None-Match", w.Header().Get("ETag")); nm.Code != 304 {
		t.Errorf("If-None-Match: %d", nm.Code)
	}
}

// linkRE reads one llms.txt link line: the title (escaped), the URL
// (with \( and \)), the description.
var linkRE = regexp.MustCompile(`^- \[((?:\\.|[^\\\]])*)\]\(((?:\\.|[^\\)])*)\)(?:: (.*))?$`)

// TestLLMSTxtLinksAreSitemapURLs checks that each section's links are the
// sitemap's URLs under its pattern (not under an earlier section's), in
// sitemap order, up to max_links.
func TestLLMSTxtLinksAreSitemapURLs(t *testing.T) {
	s := llmsSitemap(t)
	var sm strings.Builder
	if err := s.WriteTo(context.Background(), &sm); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		URLs []struct {
			Loc string `xml:"loc"`
		} `xml:"url"`
	}
	if err := xml.Unmarshal([]byte(sm.String()), &doc); err != nil {
		t.Fatal(err)
	}
	cfg := s.cfg.LLMSTxt
	want := make([][]string, len(cfg.Sections))
	for _, u := range doc.URLs {
		path := strings.TrimPrefix(u.Loc, s.cfg.Site.BaseURL)
		if i := cfg.Section(path); i >= 0 && len(want[i]) < cfg.Sections[i].MaxLinks {
			want[i] = append(want[i], u.Loc)
		}
	}
	got := make([][]string, len(cfg.Sections))
	cur := -1
	body := get(s, "GET", "/llms.txt").Body.String()
	for _, line := range strings.Split(body, "\n") {
		if name, ok := strings.CutPrefix(line, "## "); ok {
			cur = -1
			for i, sec := range cfg.Sections {
				if sec.Name == name {
					cur = i
				}
			}
			continue
		}
		if !strings.HasPrefix(line, "- ") {
			continue
		}
		m := linkRE.FindStringSubmatch(line)
		if m == nil || cur < 0 {
			t.Fatalf("not a link line in a section: %q", line)
		}
		got[cur] = append(got[cur], unescapeMarkdown(m[2]))
	}
	for i := range cfg.Sections {
		if strings.Join(got[i], "\n") != strings.Join(want[i], "\n") {
			t.Errorf("section %q: links\n%s\nwant the sitemap's\n%s", cfg.Sections[i].Name, strings.Join(got[i], "\n"), strings.Join(want[i], "\n"))
		}
	}
	if len(want[0]) != 4 || len(want[3]) == 0 {
		t.Errorf("the fixture should fill Notes (4) and Optional: %v", want)
	}
}

func unescapeMarkdown(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func TestLLMSTxtEscaping(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"[a](b)", `\[a\]\(b\)`},
		{"*bold* _em_", `\*bold\* \_em\_`},
		{"line\nbreak\r\nend", "line break  end"},
		{`back\slash`, `back\\slash`},
		{"`code` <b>", "\\`code\\` \\<b\\>"},
		{"Tom &amp; Jerry! ~old~", `Tom \&amp; Jerry\! \~old\~`}, // an entity, an image's "!", a strikethrough
		{strings.Repeat("é", 300), strings.Repeat("é", 199) + "…"},
	} {
		if got := string(appendMarkdown(nil, tc.in, maxLinkTitle)); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.want)
		}
	}
	// Every link line of the golden config parses back to one link: no
	// title or description breaks out of its brackets or its line.
	body := get(llmsSitemap(t), "GET", "/llms.txt").Body.String()
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "- ") && !linkRE.MatchString(line) {
			t.Errorf("link line does not parse: %q", line)
		}
	}
}

// TestLLMSTxtFailsWithSitemap: llms.txt shares the sitemap's generation,
// so a failing source gives 503 with Retry-After for both, from one
// generation.
func TestLLMSTxtFailsWithSitemap(t *testing.T) {
	cfg := loadConfig(t, `
[[rule]]
match = "/notes/:id"
sitemap = true
sitemap_source = "upstream:/notes.jsonl"
[llms_txt]
title = "Notes"
[[llms_txt.section]]
name = "Notes"
match = "/notes/*"
`, nil)
	up := newSource(map[string]string{})
	up.set("/notes.jsonl", "", errBoom)
	s := New(cfg, Options{Fetch: up.Fetch})
	for _, p := range []string{"/llms.txt", "/sitemap.xml", "/llms.txt"} {
		w := get(s, "GET", p)
		if w.Code != 503 || w.Header().Get("Retry-After") == "" {
			t.Errorf("%s: %d %v", p, w.Code, w.Header())
		}
	}
	if n := up.count("/notes.jsonl"); n != 1 {
		t.Errorf("the source was read %d times, want 1 (one generation, retry_after)", n)
	}
}

func TestLLMSTxtHandles(t *testing.T) {
	with := llmsSitemap(t)
	without := New(loadConfig(t, "[[rule]]\nmatch = \"/\"\nsitemap = true\n", nil), Options{})
	if !with.Handles("/llms.txt") || without.Handles("/llms.txt") {
		t.Errorf("Handles(/llms.txt): with [llms_txt] %v, without %v", with.Handles("/llms.txt"), without.Handles("/llms.txt"))
	}
}

// TestLLMSTxt1M: a sitemap of 1,000,000 URLs gives an llms.txt of at most
// the sections' max_links links, within the size bound, and the
// generation's heap stays bounded.
func TestLLMSTxt1M(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a 1,000,000-URL generation")
	}
	cfg, err := rules.Parse("llms1m.toml", []byte(`
[server]
upstream = "http://127.0.0.1:3000"
[site]
base_url = "https://notes.example"
[[rule]]
match = "/notes/:id{[0-9]+}"
title = "Note {id} [*]"
description = "The note numbered {id}, with a description of some length to fill the line."
sitemap = true
sitemap_source = "upstream:/internal/notes.jsonl"
[llms_txt]
title = "Notes"
[[llms_txt.section]]
name = "First"
match = "/notes/:id{[0-9]*5}"
[[llms_txt.section]]
name = "Optional"
match = "/*"
max_links = 50000
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := New(cfg, Options{
		Fetch:         func(context.Context, string) (io.ReadCloser, error) { return &genSource{n: 1000000}, nil },
		SourceTimeout: 5 * time.Minute,
	})
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	stopPeak := heappeak.Start()
	start := time.Now()
	res, err := s.generate(context.Background())
	peak := stopPeak()
	if err != nil {
		t.Fatal(err)
	}
	if res.urls != 1000000 {
		t.Fatalf("%d URLs", res.urls)
	}
	body := string(res.llms.body)
	links := strings.Count(body, "\n- [")
	if links != 1000+50000 {
		t.Errorf("%d links, want 1000 + 50000 (the sections' max_links)", links)
	}
	if len(body) > maxLLMSBytes {
		t.Errorf("llms.txt is %d bytes, over %d", len(body), maxLLMSBytes)
	}
	growth := int64(peak) - int64(before.HeapAlloc)
	t.Logf("1,000,000 URLs: %v, llms.txt %d KiB with %d links, peak heap growth %.1f MiB (the sitemap's compressed files included)",
		time.Since(start).Round(time.Millisecond), len(body)>>10, links, float64(growth)/(1<<20))
	if growth > 96<<20 {
		t.Errorf("peak heap grew by %d MiB during the generation", growth>>20)
	}
}

func gunzip(t *testing.T, b []byte) string {
	t.Helper()
	zr, err := stdgzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// Link titles and descriptions from a [[table]] lookup are the row's
// (§12.1, §13.2); a title that renders empty (no row, an empty cell) is the
// path; a URL whose path holds "&copy;" reads back as itself, and a title
// "x" is no GFM task-list tick.
func TestLLMSTxtLookupsAndHardLinks(t *testing.T) {
	cfg := loadConfig(t, `
[[table]]
name = "products"
file = "products.csv"
key = "sku"
[[rule]]
match = "/p/:sku"
lookup = { products = "{sku}" }
title = "{products.name}"
description = "{products.summary}"
sitemap = true
sitemap_entries = [{ params = { sku = "A1" } }, { params = { sku = "B2" } }, { params = { sku = "ZZ" } }]
[[rule]]
match = "/r/:id"
title = "{id}"
sitemap = true
sitemap_entries = [{ params = { id = "a&copy;b" } }, { params = { id = "x" } }]
[llms_txt]
title = "Shop"
[[llms_txt.section]]
name = "All"
match = "/*"
`, map[string]string{"products.csv": "sku,name,summary\nA1,Blue Widget,A widget that is blue\nB2,,No name\n"})
	body := get(New(cfg, Options{}), "GET", "/llms.txt").Body.String()
	for _, want := range []string{
		"- [Blue Widget](https://notes.example/p/A1): A widget that is blue\n",
		"- [/p/B2](https://notes.example/p/B2): No name\n",
		"- [/p/ZZ](https://notes.example/p/ZZ)\n",
		`- [a\&copy;b](https://notes.example/r/a\&copy;b)` + "\n",
		"- [&#120;](https://notes.example/r/x)\n",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("llms.txt lacks %q:\n%s", want, body)
		}
	}
}

// With [markdown] and its suffix, llms.txt links each page's .md path form
// (§19.1): "/" is "/index.md"; pages outside markdown.match keep their
// URL.
func TestLLMSTxtMarkdownLinks(t *testing.T) {
	cfg := loadConfig(t, llmsConfig+`
[markdown]
enabled = true
match = ["/", "/notes/*", "/docs/*"]
`, map[string]string{"notes.jsonl": llmsNotes})
	w := get(New(cfg, Options{}), "GET", "/llms.txt")
	body := w.Body.String()
	for _, want := range []string{
		"(https://notes.example/notes/1.md)",
		"(https://notes.example/docs/intro.md)",
		"(https://notes.example/index.md)",
		"(https://notes.example/plain)",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("llms.txt lacks %s:\n%s", want, body)
		}
	}
	if strings.Contains(body, "(https://notes.example/notes/1)") {
		t.Errorf("a page with a Markdown version links its HTML:\n%s", body)
	}
}
