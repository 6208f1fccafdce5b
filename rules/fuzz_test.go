package rules

import (
	"bufio"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// fuzzTargets are resolved against every configuration FuzzLoad loads.
var fuzzTargets = []string{
	"/", "/notes/42?page=2&utm=x", "/notes/%2e%2e", "/de-AT/about", "/en/about/x",
	"/files/a%2Fb/c", "//internal/x", "/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r", "",
}

// FuzzLoad: no input makes Parse panic; a failure is always a Problems list
// of well-formed lines, the same on every run; a loaded config resolves and
// renders any path without panicking.
func FuzzLoad(f *testing.F) {
	files, _ := filepath.Glob("testdata/bad/*.toml")
	more, _ := filepath.Glob("testdata/problems/*/input.toml") // every key with a value of every type
	files = append(append(files, more...), "../config.example.toml")
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	for _, s := range []string{layoutAndPage, hostileConfig, localizedConfig} {
		f.Add([]byte(header + s))
	}
	// A data table's problems name its file (§12), whose name may hold a
	// space.
	lineRE := regexp.MustCompile(`^HG[0-9]{3} (fuzz\.toml|[^:]+)(:[0-9]+)?: `)
	f.Fuzz(func(t *testing.T, src []byte) {
		cfg, err := Parse("fuzz.toml", src, nil)
		if err != nil {
			var ps Problems
			if !errors.As(err, &ps) || len(ps) == 0 {
				t.Fatalf("Parse failed with %T %v, want Problems", err, err)
			}
			for _, p := range ps {
				if !lineRE.MatchString(p.String()) || p.Message == "" {
					t.Fatalf("malformed problem %q", p.String())
				}
			}
			if _, again := Parse("fuzz.toml", src, nil); again == nil || again.Error() != err.Error() {
				t.Fatalf("two runs disagree:\n%v\n---\n%v", err, again)
			}
			return
		}
		for _, target := range fuzzTargets {
			m := cfg.Resolve(target)
			m.Render(Page{Title: "T", HasTitle: true, Description: "D", Canonical: "https://notes.example/x"})
			m.SelfURL(true)
		}
		for _, r := range cfg.Rules {
			r.Pattern.Fill(map[string]string{"id": "1", "slug": "a/b", "p": ".."})
		}
	})
}

// FuzzMatch: patterns and paths never make ParsePattern, Resolve, Render,
// CheckPath or Fill panic. Where CheckPath accepts a path, no parameter
// binds a "." or ".." segment, and Fill given the bound values writes a
// path the rule matches again.
func FuzzMatch(f *testing.F) {
	seeds, err := os.Open("testdata/match_seeds.txt")
	if err != nil {
		f.Fatal(err)
	}
	defer seeds.Close()
	sc := bufio.NewScanner(seeds)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		pattern, target, ok := strings.Cut(line, "\t")
		if !ok {
			f.Fatalf("seed %q has no tab", line)
		}
		f.Add(pattern, target)
	}
	f.Fuzz(func(t *testing.T, pattern, target string) {
		p, err := ParsePattern(pattern)
		if err != nil {
			return
		}
		cfg := &Config{Site: Site{BaseURL: "https://notes.example", TitleTemplate: "%s", Locales: []string{"en", "de-AT"}}}
		layout, _ := ParsePattern("/*")
		deny, _ := ParsePattern("/deny/*")
		tmpl, _ := parseTemplate("/c/{path}")
		cfg.Rules = []*Rule{
			{Index: 0, Match: "/*", Pattern: layout},
			{Index: 1, Match: pattern, Pattern: p, Canonical: tmpl},
			{Index: 2, Match: pattern, Pattern: p, Localized: true, Canonical: &Template{Raw: "self", parts: []tpart{{lit: "self"}}}},
			{Index: 3, Match: "/deny/*", Pattern: deny, Deny: true},
		}
		cfg.table = newTable(cfg.Rules, cfg.Site.Locales)

		m := cfg.Resolve(target)
		head := m.Render(Page{})
		// A Match reused from another request (the proxy pools them)
		// resolves and renders as a fresh one does.
		var reused Match
		cfg.ResolveInto(&reused, "/deny/a/b/c/d/e/f/g/h/i/j?x=1&y=2")
		cfg.ResolveInto(&reused, target)
		sameMatch(t, target, m, &reused)
		if h2 := reused.Render(Page{}); !reflect.DeepEqual(head, h2) {
			t.Fatalf("%q: a reused Match renders\n%+v\nwhere a fresh one renders\n%+v", target, h2, head)
		}
		path, _, _ := strings.Cut(target, "?")
		if CheckPath(path) != nil {
			return
		}
		for _, mr := range m.Matched {
			for _, prm := range mr.Params {
				if dotSegment(prm.Value) {
					t.Fatalf("CheckPath accepts %q, and %s binds %s = %q", path, mr.Rule.Match, prm.Name, prm.Value)
				}
			}
		}
		if m.truncated {
			return // the budget ran out: the round trip below may not hold
		}
		for _, mr := range m.Matched {
			if mr.Rule.Index != 1 {
				continue
			}
			filled, err := p.Fill(paramsOf(mr.Params))
			if err != nil {
				t.Fatalf("%s matches %q with %v, but Fill refuses them: %v", pattern, path, mr.Params, err)
			}
			again := cfg.Resolve(filled)
			found := false
			for _, mr2 := range again.Matched {
				found = found || mr2.Rule.Index == 1
			}
			if !found && !again.truncated {
				t.Fatalf("%s matches %q with %v; Fill wrote %q, which it does not match", pattern, path, mr.Params, filled)
			}
		}
	})
}

// FuzzAbsoluteURL checks AbsURL's shortcut for absolute http(s) URLs
// against url.Parse, which it stands for: the same URLs kept, the same
// dropped.
func FuzzAbsoluteURL(f *testing.F) {
	for _, s := range []string{
		"https://example.com/", "http://a.b:8080/x?y=%41#z", "https://h/%zz", "https://h:x/",
		"https://user@h/", "https://[::1]/", "https://h/a\\b", "https://h\\x/", "https://h/#%4", "https://-/",
		"https://h:/", "https://h?q", "https://h#f", "https://h%41/", "https://ex ample.com/",
	} {
		f.Add(s)
	}
	base, _ := url.Parse("https://headgate.test/")
	f.Fuzz(func(t *testing.T, s string) {
		scheme, rest, ok := cutScheme(s)
		if !ok || !strings.EqualFold(scheme, "http") && !strings.EqualFold(scheme, "https") || !strings.HasPrefix(rest, "//") {
			return
		}
		got, why := AbsURL(base, s)
		if why == DropControl || why == DropSpace {
			return // refused before either way is taken
		}
		u, err := url.Parse(s)
		want := err == nil && u.Host != "" && !strings.Contains(u.Host, `\`)
		if (why == "") != want || why == "" && got != s {
			t.Fatalf("AbsURL(%q) = %q, %q; url.Parse accepts it: %v", s, got, why, want)
		}
	})
}

// sameMatch fails unless two Matches of target say the same: the rules,
// their parameters, and what the merge made of them.
func sameMatch(t *testing.T, target string, a, b *Match) {
	t.Helper()
	if a.Path != b.Path || a.Query != b.Query || a.Locale != b.Locale || a.Deny != b.Deny ||
		a.rest != b.rest || a.truncated != b.truncated ||
		!reflect.DeepEqual(a.Matched, b.Matched) || !reflect.DeepEqual(a.Ignored, b.Ignored) {
		t.Fatalf("%q: a reused Match differs from a fresh one:\n%+v\n%+v", target, b, a)
	}
}
