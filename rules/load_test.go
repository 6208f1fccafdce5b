package rules

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExampleConfig(t *testing.T) {
	const file = "../config.example.toml"
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Parse(file, src, nil)
	if err != nil {
		t.Fatalf("config.example.toml does not load:\n%v", err)
	}
	if cfg.Server.Upstream != BuiltinDemo || cfg.Site.BaseURL != "https://notes.example" {
		t.Errorf("upstream %q, base URL %q", cfg.Server.Upstream, cfg.Site.BaseURL)
	}
	// A few of the paths the demo serves, as the example's comments promise.
	if m := cfg.Resolve("/internal/sitemap/notes.jsonl"); !m.Deny {
		t.Error("/internal/… is not denied")
	}
	h := cfg.Resolve("/notes/3?ref=x").Render(Page{Title: "Note three", HasTitle: true})
	// The notes keep their own title (no rule sets one): the template is
	// for titles rules set.
	if h.Title != nil || str(h.Canonical) != "https://notes.example/notes/3" {
		t.Errorf("/notes/3: title %q, canonical %q", str(h.Title), str(h.Canonical))
	}
	if h := cfg.Resolve("/de-at/about").Render(Page{}); len(h.Alternates) != 4 {
		t.Errorf("/de-at/about: alternates %q, want en, de, de-AT and x-default", alternates(h))
	}
}

func TestEnvOverrides(t *testing.T) {
	env := map[string]string{
		"HEADGATE_LISTEN":       ":9999",
		"HEADGATE_ADMIN_LISTEN": "127.0.0.1:9998",
		"HEADGATE_UPSTREAM":     "http://127.0.0.1:3000",
		"HEADGATE_BASE_URL":     "https://www.example.com/ignored/path",
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	cfg, err := Parse("env.toml", []byte(header), lookup)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server.AdminListen != "127.0.0.1:9998" {
		t.Errorf("admin_listen %q, want HEADGATE_ADMIN_LISTEN's", cfg.Server.AdminListen)
	}
	if cfg.Server.Listen != ":9999" || cfg.Server.Upstream != "http://127.0.0.1:3000" || cfg.Site.BaseURL != "https://www.example.com" {
		t.Errorf("listen %q, upstream %q, base URL %q", cfg.Server.Listen, cfg.Server.Upstream, cfg.Site.BaseURL)
	}
	plain, _ := Parse("env.toml", []byte(header), nil)
	if plain.Hash == cfg.Hash {
		t.Error("overrides do not change the config hash")
	}
	// Overrides apply without the tables in the file at all.
	if _, err := Parse("env.toml", nil, lookup); err != nil {
		t.Errorf("an empty file with every override: %v", err)
	}
	// A bad override is reported as coming from the environment.
	env["HEADGATE_UPSTREAM"] = "ftp://x"
	_, err = Parse("env.toml", []byte(header), lookup)
	want := `HG102 env.toml: server.upstream: "ftp://x": not an http(s) URL or "builtin:demo" (from the environment)`
	if err == nil || err.Error() != want {
		t.Errorf("bad override: %v\nwant: %s", err, want)
	}
}

// Arrays of tables may be written inline as well as with [[…]].
func TestInlineArraysOfTables(t *testing.T) {
	cfg := mustParse(t, `
[[rule]]
match = "/n/:id"
sitemap = true
sitemap_entries = [{ params = { id = "1" }, lastmod = 2026-01-02 }, { params = { id = 2 }, lastmod = "2026-02-03T04:05:06Z" }]
json_ld = [{ "@type" = "Thing", published = 2026-01-02T10:00:00 }, { "@graph" = [] }]
open_graph = { article = { published_time = 2026-01-02T10:00:00+02:00 } }
`)
	r := cfg.Rules[0]
	if len(r.SitemapEntries) != 2 || r.SitemapEntries[0].Params["id"] != "1" || r.SitemapEntries[1].Params["id"] != "2" {
		t.Fatalf("entries %+v", r.SitemapEntries)
	}
	// Local dates and times stay local: no offset of the machine that loads them.
	if got := r.SitemapEntries[0].Lastmod; got != "2026-01-02" {
		t.Errorf("lastmod %q, want 2026-01-02", got)
	}
	if got := r.SitemapEntries[1].Lastmod; got != "2026-02-03T04:05:06Z" {
		t.Errorf("lastmod %q", got)
	}
	h := cfg.Resolve("/n/1").Render(Page{})
	sameList(t, "json_ld", jsonLD(h), []string{`{"@type":"Thing","published":"2026-01-02T10:00:00"}`, `{"@graph":[]}`})
	sameList(t, "meta", metas(h), []string{"article:published_time=2026-01-02T10:00:00+02:00"})

	cfg, err := Parse("inline.toml", []byte(header+`rule = [{ match = "/a", title = "A" }]`+"\n"), nil)
	// "rule = […]" after [site] belongs to [site]; at the top it is the rules.
	if err == nil || !strings.Contains(err.Error(), "site.rule: unknown key") {
		t.Errorf("rule inside [site]: %v", err)
	}
	cfg, err = Parse("inline.toml", []byte(`rule = [{ match = "/a", title = "A" }]`+header), nil)
	if err != nil || len(cfg.Rules) != 1 || str(cfg.Resolve("/a").Render(Page{}).Title) != "A" {
		t.Errorf("inline rules: %v", err)
	}
}

func TestJSONLDFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("one.json", `{"@type": "Organization", "name": "{id}", "n": 1.50}`)
	write("two.json", `[{"@type": "A"}, {"@graph": []}]`)
	write("notype.json", `[{"@type": "A"}, {"name": "x"}]`)
	write("scalar.json", `"x"`)
	write("big.json", `{"@type": "A", "x": "`+strings.Repeat("a", maxJSONLDFile)+`"}`)
	if err := os.Mkdir(filepath.Join(dir, "dir.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ file, want string }{
		{"one.json", ""},
		{"two.json", ""},
		{"notype.json", "block 1 needs @type or @graph"},
		{"scalar.json", "must hold a JSON object or an array of objects"},
		{"big.json", "larger than 1048576 bytes"},
		{"dir.json", "not a regular file"},
		{"missing.json", "no such file"},
	}
	for _, tc := range tests {
		src := header + "[[rule]]\nmatch = \"/n/:id\"\njson_ld_file = \"" + tc.file + "\"\n"
		_, err := Parse(filepath.Join(dir, "headgate.toml"), []byte(src), nil)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.file, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "HG160 ") {
			t.Errorf("%s: %v, want HG160 with %q", tc.file, err, tc.want)
		}
	}
	cfg, err := Parse(filepath.Join(dir, "headgate.toml"), []byte(header+"[[rule]]\nmatch = \"/n/:id\"\njson_ld_file = \"one.json\"\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	// A file's strings are templates too; its numbers keep their spelling.
	sameList(t, "json_ld", jsonLD(cfg.Resolve("/n/7").Render(Page{})), []string{`{"@type":"Organization","n":1.50,"name":"7"}`})
}

// Two problems on one line come out in the same order on every run.
func TestProblemOrderStable(t *testing.T) {
	src := header + `[[rule]]
match = "/"
open_graph = { url = "javascript:x", image = "//x", title = "{a}", description = "{b}", site_name = "{c}" }
`
	_, first := Parse("x.toml", []byte(src), nil)
	if first == nil {
		t.Fatal("no problems")
	}
	for i := 0; i < 20; i++ {
		if _, err := Parse("x.toml", []byte(src), nil); err.Error() != first.Error() {
			t.Fatalf("run %d:\n%v\nfirst run:\n%v", i, err, first)
		}
	}
	var ps Problems
	errors.As(first, &ps)
	var keys []string
	for _, p := range ps {
		keys = append(keys, p.Key)
	}
	// By line, then code (HG121 before HG150), then key.
	sameList(t, "keys", keys, []string{
		"rule[0].open_graph.description", "rule[0].open_graph.site_name", "rule[0].open_graph.title",
		"rule[0].open_graph.image", "rule[0].open_graph.url",
	})
}

// server.upstream_page_coding: "identity" unless the file says "client";
// any other value (also in another case) is HG141 with its key and line.
func TestUpstreamPageCoding(t *testing.T) {
	const base = "[server]\nupstream = \"http://127.0.0.1:3000\"\n"
	site := "\n[site]\nbase_url = \"https://www.example.com\"\n"
	for _, tc := range []struct {
		name, line, want, err string
	}{
		{"default", "", UpstreamPageIdentity, ""},
		{"identity", `upstream_page_coding = "identity"`, UpstreamPageIdentity, ""},
		{"client", `upstream_page_coding = "client"`, UpstreamPageClient, ""},
		{"case", `upstream_page_coding = "Client"`, "", `HG141 c.toml:3: server.upstream_page_coding: "Client" is not one of "identity", "client"`},
		{"empty", `upstream_page_coding = ""`, "", `HG141 c.toml:3: server.upstream_page_coding: "" is not one of "identity", "client"`},
		{"type", `upstream_page_coding = false`, "", `HG141 c.toml:3: server.upstream_page_coding: must be a string, not a boolean`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse("c.toml", []byte(base+tc.line+"\n"+site), nil)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("err %v\nwant %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Server.UpstreamPageCoding != tc.want {
				t.Errorf("UpstreamPageCoding %q, want %q", cfg.Server.UpstreamPageCoding, tc.want)
			}
		})
	}
}
