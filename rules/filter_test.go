package rules

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFilters(t *testing.T) {
	title := "Café culture – Tiergarten Notes"
	cases := []struct{ tmpl, in, want string }{
		{`{page.title|before_last:" – "}`, title, "Café culture"},
		{`{page.title|before_last:" – "}`, "A – B – Site", "A – B"},
		{`{page.title|before_last:" – "}`, "No suffix", "No suffix"},
		{`{page.title|before:" – "}`, "A – B – Site", "A"},
		{`{page.title|after:" – "}`, "A – B – Site", "B – Site"},
		{`{page.title|after_last:" – "}`, "A – B – Site", "Site"},
		{`{page.title|trim_suffix:" – Tiergarten Notes"}`, title, "Café culture"},
		{`{page.title|trim_prefix:"Café "}`, title, "culture – Tiergarten Notes"},
		{`{page.title|default:"Notes"}`, "", "Notes"},
		{`{page.title|default:"Notes"}`, "  ", "Notes"},
		{`{page.title|default:"Notes"}`, "Set", "Set"},
		{`{page.title|lower}`, "ÉCOLE Go", "école go"},
		{`{page.title|before_last:" – "|lower}`, title, "café culture"},
		{`{page.title|truncate:12}`, "Twelve tips for writing Go", "Twelve tips…"},
		{`{page.title|truncate:11}`, "Twelve tips for writing Go", "Twelve…"},
		{`{page.title|truncate:26}`, "Twelve tips for writing Go", "Twelve tips for writing Go"},
		{`{page.title|truncate:5}`, "Supercalifragilistic", "Supe…"},
		{`{page.title|truncate:4}`, "über alles", "übe…"},
		{`{page.title|truncate:8}`, "Hi, you, all", "Hi, you…"},
		{`{page.title|truncate:1}`, "ab", "…"},
		{`{page.title|truncate:3}`, "", ""},
		{`{page.title|date}`, "2024-05-01T23:30:00-02:00", "2024-05-02"},
		{`{page.title|date}`, "2024-05-01T10:00:00Z", "2024-05-01"},
		{`{page.title|date}`, "2024-05-01 10:00:00", "2024-05-01"},
		{`{page.title|date}`, "2024-05-01T10:00:00", "2024-05-01"},
		{`{page.title|date}`, "2024-05-01", "2024-05-01"},
		{`{page.title|date}`, "2024-05-01t23:30:00z", "2024-05-01"},
		{`{page.title|date}`, "2024-05-01t23:30:00-02:00", "2024-05-02"},
		{`{page.title|date}`, "May 1st", ""},
		{`{page.title|date}`, "", ""},
		{`{page.title|date|default:"undated"}`, "soon", "undated"},
		{`x{page.title|before:"}"}y`, "a}b", "xay"},
		{`{page.title|before:"\""}`, `say "hi"`, "say"},
	}
	for _, c := range cases {
		tm, err := parseTemplate(c.tmpl)
		if err != nil {
			t.Errorf("%s: %v", c.tmpl, err)
			continue
		}
		v := &vars{pageTitle: c.in}
		if got := tm.render(v, false); got != c.want {
			t.Errorf("%s on %q = %q, want %q", c.tmpl, c.in, got, c.want)
		}
	}
}

// Filters fed empty and huge values stay bounded and valid.
func TestFiltersHugeValues(t *testing.T) {
	huge := strings.Repeat("wörd ", 200000) // 1.2 MB
	for _, tmpl := range []string{`{page.title|truncate:160}`, `{page.title|before_last:" "}`, `{page.title|lower}`, `{page.title|date}`, `{page.title|after:"x"}`} {
		tm, err := parseTemplate(tmpl)
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range []string{"", huge, string([]byte{0xff, 0xfe}) + huge} {
			got := tm.render(&vars{pageTitle: in}, false)
			if strings.HasPrefix(tmpl, "{page.title|truncate") && utf8.RuneCountInString(got) > 160 {
				t.Errorf("%s: %d characters", tmpl, utf8.RuneCountInString(got))
			}
			if strings.HasPrefix(tmpl, "{page.title|truncate") && !utf8.ValidString(got) {
				t.Errorf("%s: invalid UTF-8", tmpl)
			}
		}
	}
}

func TestFilterProblems(t *testing.T) {
	cases := map[string]string{
		`{page.title|upper}`:          "unknown filter |upper",
		`{page.title|lowr}`:           "did you mean |lower?",
		`{page.title|truncate}`:       "needs an argument",
		`{page.title|truncate:0}`:     "from 1 to",
		`{page.title|truncate:x}`:     "from 1 to",
		`{page.title|truncate:"5"}`:   "from 1 to",
		`{page.title|before_last}`:    "needs an argument",
		`{page.title|before_last:x}`:  "double-quoted",
		`{page.title|before_last:""}`: "is empty",
		`{page.title|before_last:"x}`: "unclosed",
		`{page.title|lower:"x"}`:      "takes no argument",
		`{page.title|date:"x"}`:       "takes no argument",
		`{page.title|lower x}`:        "unexpected",
		`{page.title|}`:               "unknown filter",
	}
	for tmpl, want := range cases {
		_, err := parseTemplate(tmpl)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one with %q", tmpl, err, want)
		}
	}
	// In a config, they are HG121, as unknown page variables are.
	_, err := Parse("t.toml", []byte(header+`
[[rule]]
match = "/*"
title = '{page.title|upper}'
description = "{page.meta.}"
[rule.open_graph]
title = "{page.og.title}"
`), nil)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"HG121 t.toml:9: rule[0].title: unknown filter |upper", "HG121 t.toml:10: rule[0].description: unknown template variable {page.meta.}", "HG121 t.toml:12: rule[0].open_graph.title: unknown template variable {page.og.title}"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("problems:\n%v\nwant %q", err, want)
		}
	}
}

func TestPageVariables(t *testing.T) {
	cfg := mustParse(t, `
[[rule]]
match = "/*"
description = '{page.meta.description|default:"x"}'
title = '{page.title|before_last:" – "}'
[rule.open_graph]
type = "article"
image = "{page.og.image}"
locale = "{page.lang}"
[rule.open_graph.article]
published_time = "{page.meta.article:published_time}"
authors = ["{page.meta.author}"]
[[rule.json_ld]]
"@type" = "BlogPosting"
headline = '{page.title|before_last:" – "}'
datePublished = "{page.meta.article:published_time|date}"
author = "{page.meta.author}"
url = "{page.canonical}"
keywords = ["{page.meta.author}", "fixed"]
contributor = ["{page.meta.author}"]
`)
	names := slices.Sorted(slices.Values(cfg.PageMetaNames()))
	if got := strings.Join(names, ","); got != "article:published_time,author,description,og:image" || !cfg.WantsLang() {
		t.Errorf("PageMetaNames = %q, WantsLang %v", got, cfg.WantsLang())
	}
	page := Page{
		Title: "Café culture – Tiergarten Notes", HasTitle: true, Lang: "de-DE",
		Canonical: "https://notes.example/cafe/",
		Meta: []PageMeta{
			{"og:image", "https://cdn.example/c.jpg?w=1&h=2"},
			{"article:published_time", "2024-05-01T10:00:00+02:00"},
		},
	}
	h := cfg.Resolve("/cafe/").Render(page)
	if str(h.Title) != "Café culture" || str(h.Description) != "x" {
		t.Errorf("title %q description %q", str(h.Title), str(h.Description))
	}
	sameList(t, "metas", metas(h), []string{
		"og:title=Café culture", "og:description=x", "og:type=article", "og:locale=de-DE",
		"og:image=https://cdn.example/c.jpg?w=1&h=2", "article:published_time=2024-05-01T10:00:00+02:00",
	}) // author comes out empty: not written
	sameList(t, "json-ld", jsonLD(h), []string{`{"@type":"BlogPosting","datePublished":"2024-05-01","headline":"Café culture","keywords":["fixed"],"url":"https://notes.example/cafe/"}`})
	// Nothing from the page at all: the fields that come out empty are not written.
	h = cfg.Resolve("/cafe/").Render(Page{})
	sameList(t, "metas", metas(h), []string{"og:description=x", "og:type=article"})
	sameList(t, "json-ld", jsonLD(h), []string{`{"@type":"BlogPosting","keywords":["fixed"]}`}) // an array's empty elements too, and an array of only them
	if len(h.Dropped) != 0 {
		t.Errorf("empty fields reported as dropped: %v", drops(h))
	}
}

func TestEmptyHeaderNotWritten(t *testing.T) {
	cfg := mustParse(t, `
[[rule]]
match = "/*"
[rule.headers]
x-author = "{page.meta.author}"
x-static = ""
`)
	h := cfg.Resolve("/a").Render(Page{})
	sameList(t, "headers", headers(h), []string{"x-static: "})
	h = cfg.Resolve("/a").Render(Page{Meta: []PageMeta{{"author", "Jürgen"}}})
	sameList(t, "headers", headers(h), []string{"x-author: Jürgen", "x-static: "})
}
