package rules

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/headgate/headgate/internal/pct"
)

// FuzzQueryMatch feeds request queries to rules with query conditions: no
// panic; a bound value is the decoded first value of its key, valid UTF-8
// without control characters; a value used in a path template stays in
// its segment of the canonical; a header value never carries CR or LF.
func FuzzQueryMatch(f *testing.F) {
	for _, s := range []string{"s=M%C3%BCll", "s=a+b&paged=2", "s=", "S=x", "s=%0d%0a", "s=%zz", "s=%ff", "p=123",
		"s=..", "s=a/b", "s=a%2Fb&s=c", "&&=&s==x", "s=%3Cscript%3E", strings.Repeat("s=x&", 100)} {
		f.Add(s)
	}
	cfg, err := Parse("fuzz.toml", []byte(header+`
[[rule]]
match = "/"
query = { s = ":q" }
canonical = "/search/{q}/"
description = '{q|truncate:20|default:"none"}'
[rule.headers]
x-query = "{q}"

[[rule]]
match = "/"
query = { s = ":q", paged = ":n{[0-9]+}" }
title = "{q} {n}"

[[rule]]
match = "/"
query = { p = ":id{[0-9]+}", preview = "true" }
canonical = "/?p={id}"
`), nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, q string) {
		m := cfg.Resolve("/?" + q)
		for _, mr := range m.Matched {
			for _, p := range mr.Params {
				if !utf8.ValidString(p.Value) || hasControl(p.Value) || p.Value == "" {
					t.Fatalf("bound %s=%q", p.Name, p.Value)
				}
			}
		}
		h := m.Render(Page{})
		if h.Canonical != nil {
			u, err := url.Parse(*h.Canonical)
			if err != nil || u.Host != "notes.example" {
				t.Fatalf("canonical %q", *h.Canonical)
			}
			if rest, ok := strings.CutPrefix(u.EscapedPath(), "/search/"); ok && strings.Count(rest, "/") != 1+strings.Count(mustQ(t, m), "/") {
				t.Fatalf("canonical %q: the value left its segment", *h.Canonical)
			}
		}
		for _, hv := range h.Headers {
			if strings.ContainsAny(hv.Value, "\r\n\x00") {
				t.Fatalf("header %q", hv.Value)
			}
		}
	})
}

func mustQ(t *testing.T, m *Match) string {
	for _, mr := range m.Matched {
		for _, p := range mr.Params {
			if p.Name == "q" {
				return p.Value
			}
		}
	}
	return ""
}

// FuzzTemplateFilters parses templates with filters and renders them with
// any value: no panic; what truncate gives is at most N characters; a
// template that parses renders the same twice.
func FuzzTemplateFilters(f *testing.F) {
	for _, s := range []string{`{page.title|before_last:" – "}`, `{page.title|truncate:5|default:"x"}`, `{page.title|date}`,
		`a{page.title|after:"\""|lower}b`, `{page.meta.og:image}`, `{page.title|before:"}"}`, `{{x}}`, `{x|`, `{x|truncate:99999999999}`} {
		f.Add(s, "Café culture – Tiergarten Notes")
	}
	f.Fuzz(func(t *testing.T, tmpl, val string) {
		tm, err := parseTemplate(tmpl)
		if err != nil {
			return
		}
		v := &vars{pageTitle: val, pageMeta: []PageMeta{{"og:image", val}}}
		a, b := tm.render(v, false), tm.render(v, true)
		if a != tm.render(v, false) || b != tm.render(v, true) {
			t.Fatal("not deterministic")
		}
		for _, p := range tm.parts {
			for _, fl := range p.filters {
				if fl.kind == fTruncate && len(tm.parts) == 1 && len(p.filters) == 1 && utf8.ValidString(val) {
					if n := utf8.RuneCountInString(a); n > fl.n {
						t.Fatalf("truncate:%d gave %d characters", fl.n, n)
					}
				}
			}
		}
	})
}

// A kept upstream canonical's path (segmentSpelling) is one spelling: a
// second pass changes nothing, it holds no dot segment a client would
// resolve, and no byte a path may not hold raw.
func FuzzSegmentSpelling(f *testing.F) {
	for _, s := range []string{"/", "/wiki/Tea_%28drink%29", "/a%2fb/%25/%22", "/a/./b/../c", "/%2e%2E/x", "/a/..", "/caf%c3%a9", "/%zz/ é", "/a//b/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if !strings.HasPrefix(p, "/") {
			return
		}
		once := segmentSpelling(p)
		if twice := segmentSpelling(once); twice != once {
			t.Fatalf("not stable: %q -> %q -> %q", p, once, twice)
		}
		if !strings.HasPrefix(once, "/") {
			t.Fatalf("%q -> %q: not a path", p, once)
		}
		if dotSegmentValue(once) {
			t.Fatalf("%q -> %q: a dot segment (to a WHATWG parser)", p, once)
		}
		for i := 0; i < len(once); i++ {
			if c := once[i]; c != '%' && !pct.Path.Has(c) {
				t.Fatalf("%q -> %q: raw byte %q", p, once, c)
			}
		}
	})
}
