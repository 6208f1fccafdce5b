package rules

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

// header is the smallest valid configuration; tests append [[rule]] tables.
const header = `
[server]
upstream = "builtin:demo"
[site]
base_url = "https://notes.example"
`

// mustParse loads header plus the given TOML, failing the test on any
// problem. Keys before the first table header in it extend [site]
// (locales = […], title_template = …).
func mustParse(t testing.TB, rulesTOML string) *Config {
	t.Helper()
	cfg, err := Parse("test.toml", []byte(header+rulesTOML), nil)
	if err != nil {
		t.Fatalf("config does not load:\n%v", err)
	}
	return cfg
}

// oneRule is a configuration with one rule of the given pattern.
func oneRule(t testing.TB, pattern string) *Config {
	t.Helper()
	return mustParse(t, "[[rule]]\nmatch = "+tomlString(pattern)+"\n")
}

// tomlString writes s as a TOML literal string, or a basic one when it
// holds a quote.
func tomlString(s string) string {
	if !strings.Contains(s, "'") {
		return "'" + s + "'"
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

func paramsOf(ps []Param) map[string]string {
	out := map[string]string{}
	for _, p := range ps {
		out[p.Name] = p.Value
	}
	return out
}

func TestParsePattern(t *testing.T) {
	good := []struct {
		in     string
		params []string
		has    bool // HasParams
	}{
		{"/", nil, false},
		{"/notes", nil, false},
		{"/notes/", nil, false},
		{"/a%20b", nil, false},
		{"/notes/:id", []string{"id"}, true},
		{"/notes/:id{[0-9]+}", []string{"id"}, true},
		{"/d/:y{[0-9]{4}}/:m{[0-9]{2}}", []string{"y", "m"}, true},
		{"/files/:p{.+}", []string{"p"}, true},
		{"/files/:p{[a-z/]+}/raw", []string{"p"}, true},
		{"/blog/*", nil, true},
		{"/*", nil, true},
		{"/a:b", nil, false}, // ':' inside a segment is a literal
	}
	for _, tc := range good {
		t.Run(tc.in, func(t *testing.T) {
			p, err := ParsePattern(tc.in)
			if err != nil {
				t.Fatalf("ParsePattern(%q): %v", tc.in, err)
			}
			if got := strings.Join(p.Params(), ","); got != strings.Join(tc.params, ",") {
				t.Errorf("Params() = %q, want %q", got, strings.Join(tc.params, ","))
			}
			if p.HasParams() != tc.has {
				t.Errorf("HasParams() = %v, want %v", p.HasParams(), tc.has)
			}
		})
	}

	bad := []struct{ in, err string }{
		{"", "starts with /"},
		{"notes", "starts with /"},
		{"/a/*/b", "* is only allowed as the last segment"},
		{"/a*", "* and {} belong to parameters"},
		{"/a/{x}", "* and {} belong to parameters"},
		{"/:id/:id", `duplicate parameter name "id"`},
		{"/:title", `"title" is reserved`},
		{"/:locale", `"locale" is reserved`},
		{"/:1x", `bad parameter name "1x"`},
		{"/:", `bad parameter name ""`},
		{"/:a-b", `bad parameter name "a-b"`},
		{"/:x{[}", "constraint of :x"},
		{"/:x{a", "unclosed {"},
		{"/:x{a}b", "text after the constraint of :x"},
		{"/%zz", "invalid URL escape"},
	}
	for _, tc := range bad {
		t.Run("bad "+tc.in, func(t *testing.T) {
			_, err := ParsePattern(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("ParsePattern(%q) = %v, want an error with %q", tc.in, err, tc.err)
			}
		})
	}
}

func TestPatternMatch(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          map[string]string // nil: no match
	}{
		// literals: compared exactly, after percent-decoding
		{"/notes", "/notes", map[string]string{}},
		{"/notes", "/notes?page=2", map[string]string{}},
		{"/notes", "/notes/", nil},
		{"/notes", "/Notes", nil},
		{"/notes", "/notesx", nil},
		{"/notes/", "/notes/", map[string]string{}},
		{"/notes/", "/notes", nil},
		{"/", "/", map[string]string{}},
		{"/", "/x", nil},
		{"/a%20b", "/a%20b", map[string]string{}},
		{"/a b", "/a%20b", map[string]string{}},
		{"/caf%C3%A9", "/caf%c3%a9", map[string]string{}},
		{"/a%2Fb", "/a%2Fb", map[string]string{}},
		{"/a%2Fb", "/a/b", nil},

		// plain parameters: one non-empty segment without /
		{"/notes/:id", "/notes/42", map[string]string{"id": "42"}},
		{"/notes/:id", "/notes/a%20b", map[string]string{"id": "a b"}},
		{"/notes/:id", "/notes/", nil},
		{"/notes/:id", "/notes", nil},
		{"/notes/:id", "/notes/42/x", nil},
		{"/notes/:id", "/notes/a%2Fb", nil}, // %2F is a / in the value
		{"/notes/:id", "/notes/a%2fb", nil},
		{"/x/:a/:b", "/x/1/2", map[string]string{"a": "1", "b": "2"}},

		// constraints: the whole value, RE2
		{"/notes/:id{[0-9]+}", "/notes/42", map[string]string{"id": "42"}},
		{"/notes/:id{[0-9]+}", "/notes/4a", nil},
		{"/notes/:id{[0-9]+}", "/notes/x42", nil},
		{"/notes/:id{[0-9]+}", "/notes/", nil},
		{"/n/:x{[0-9]*}", "/n/", nil}, // a value is never empty
		{"/n/:x{[0-9]*}", "/n/7", map[string]string{"x": "7"}},
		{"/d/:y{[0-9]{4}}/:m{[0-9]{2}}", "/d/2026/01", map[string]string{"y": "2026", "m": "01"}},
		{"/x/:p{[a-z]+}", "/x/a%2Fb", nil}, // a constraint without / never sees one

		// * as the last segment: any rest, empty included
		{"/blog/*", "/blog", map[string]string{}},
		{"/blog/*", "/blog/", map[string]string{}},
		{"/blog/*", "/blog/a/b", map[string]string{}},
		{"/blog/*", "/blogx", nil},
		{"/blog/*", "/", nil},
		{"/*", "/", map[string]string{}},
		{"/*", "/a/b/c", map[string]string{}},

		// constraints that can match / span segments
		{"/files/:p{.+}", "/files/a", map[string]string{"p": "a"}},
		{"/files/:p{.+}", "/files/a/b", map[string]string{"p": "a/b"}},
		{"/files/:p{.+}", "/files/a%2Fb", map[string]string{"p": "a/b"}},
		{"/files/:p{.+}", "/files/a/b/", map[string]string{"p": "a/b/"}},
		{"/files/:p{.+}", "/files/", nil},
		{"/files/:p{.+}", "/files", nil},
		{"/x/:p{[a-z/]+}", "/x/a%2Fb", map[string]string{"p": "a/b"}},
		{"/x/:p{[a-z/]+}", "/x/a/b", map[string]string{"p": "a/b"}},
		{"/x/:p{[a-z/]+}", "/x/a/1", nil},
		{"/repo/:p{.+}/raw", "/repo/a/b/raw", map[string]string{"p": "a/b"}},
		{"/repo/:p{.+}/raw", "/repo/x/raw", map[string]string{"p": "x"}},
		{"/repo/:p{.+}/raw", "/repo/raw", nil},
		{"/repo/:p{.+}/raw", "/repo/a/b", nil},
		// longest span first, as a greedy regex would
		{"/g/:a{.+}/:b{.+}", "/g/x/y/z", map[string]string{"a": "x/y", "b": "z"}},
		{"/g/:a{.+}/:b{[0-9]+}", "/g/x/1/y/2", map[string]string{"a": "x/1/y", "b": "2"}},
	}
	for _, tc := range tests {
		t.Run(tc.pattern+" "+tc.path, func(t *testing.T) {
			m := oneRule(t, tc.pattern).Resolve(tc.path)
			if tc.want == nil {
				if m.Any() {
					t.Fatalf("matched with %v, want no match", m.Matched[0].Params)
				}
				return
			}
			if len(m.Matched) != 1 {
				t.Fatalf("matched %d rules, want 1", len(m.Matched))
			}
			got := paramsOf(m.Matched[0].Params)
			if len(got) != len(tc.want) {
				t.Fatalf("params %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("param %s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

func TestCheckPath(t *testing.T) {
	good := []string{
		"/", "/a", "/a/b/", "//", "/a//b", "/a.b", "/.well-known/x", "/.a", "/a..", "/...",
		"/a/.../b", "/%41", "/a%2Fb", "/a%2fb", "/%2e%2e%2e", "/%2ea", "/%ff", "/\xff\xfe",
		"/a;b", "/a%20b", "/~user", "/a.%2e.", "/a%5Cb",
	}
	for _, p := range good {
		if err := CheckPath(p); err != nil {
			t.Errorf("CheckPath(%q) = %v, want nil", p, err)
		}
	}
	bad := []string{
		"", "a", "*", "http://x/",
		// dot segments, raw or percent-encoded
		"/.", "/..", "/./", "/../", "/a/./b", "/a/../b", "/a/..", "/a/.",
		"/%2e", "/%2E", "/%2e%2e", "/%2E%2e", "/%2e%2E/x", "/.%2e", "/%2e.", "/a/%2e%2e/",
		// a dot segment separated by an encoded slash or a backslash
		"/..%2Fsecret", "/..%2fsecret", "/a%2F..", "/a%2f.%2fb", "/a%2F%2e%2e%2Fb",
		"/a\\..\\b", "/..\\x", "/a%5C..", "/a%5c%2e%2e%5cb",
		// NUL
		"/a\x00", "/\x00", "/a%00", "/a%00b",
		// invalid percent-encoding
		"/a%", "/a%0", "/a%zz", "/a%g1", "/a%1g", "/%",
	}
	for _, p := range bad {
		if err := CheckPath(p); !errors.Is(err, ErrBadPath) {
			t.Errorf("CheckPath(%q) = %v, want ErrBadPath", p, err)
		}
	}
}

// hostileConfig has a rule of every kind, a localized one and deny rules.
const hostileConfig = `
locales = ["en", "de-AT"]
[[rule]]
match = "/*"
title = "layout"
[[rule]]
match = "/notes/:id"
canonical = "/notes/{id}"
[[rule]]
match = "/n/:id{[0-9a-z.%]+}"
[[rule]]
match = "/files/:p{.+}"
canonical = "/files/{p}"
[[rule]]
match = "/g/:a{.+}/:b{[^/]+}"
[[rule]]
match = "/internal/*"
deny = true
[[rule]]
match = "/about/:section"
localized = true
`

func hostilePaths() []string {
	long := "/files" + strings.Repeat("/abcdefgh", 1000) // 9 KB
	return []string{
		"/notes/%2e%2e", "/notes/%2E%2E", "/notes/.%2e", "/notes/..", "/notes/.",
		"/notes/%2e%2e%2fetc%2fpasswd", "/notes/..%2f..%2fetc", "/files/..%2F..%2Fetc",
		"/files/a%2F..%2Fb", "/files/a/../b", "/files/%2e%2e/x", "/files/a%2f%2e%2e",
		"/g/%2e%2e/x", "/g/a/%2e%2e", "/n/%2e%2e", "/n/..", "/n/%252e%252e",
		"/notes/%2f", "/notes/%2F", "//", "///", "//notes//42", "/notes//42",
		"/notes/a\x00b", "/notes/%00", "/files/%00/x",
		"/notes/\xff\xfe", "/files/\xc3\x28", "/notes/%ff%fe",
		"/notes/%", "/notes/%2", "/notes/%zz", "/files/%", "/files/a%2",
		"/en/about/%2e%2e", "/de-at/about/..", "/DE-AT/about/%2E%2E",
		"/notes\\..\\x", "/files/a%5C..%5Cb",
		long, long + "/%2e%2e", "/g" + strings.Repeat("/a", 4000),
		strings.Repeat("/", 8192), "/" + strings.Repeat("%2F", 2700),
		"", "x", "?", "/?", "/notes/42?%00",
	}
}

// A traversal never binds a parameter: wherever CheckPath accepts a path,
// no parameter value is, or holds, a "." or ".." segment.
func TestHostilePaths(t *testing.T) {
	cfg := mustParse(t, hostileConfig)
	for _, p := range hostilePaths() {
		m := cfg.Resolve(p) // must not panic, whatever CheckPath says
		m.Render(Page{Title: "t", HasTitle: true})
		path, _, _ := strings.Cut(p, "?")
		if CheckPath(path) != nil {
			continue
		}
		for _, mr := range m.Matched {
			for _, prm := range mr.Params {
				if dotSegment(prm.Value) {
					t.Errorf("%.60q: CheckPath accepts it and %s binds %s = %.40q", p, mr.Rule.Match, prm.Name, prm.Value)
				}
			}
		}
	}
	// The traversals a parameter could otherwise bind are refused.
	for _, p := range []string{"/notes/%2e%2e", "/notes/.%2e", "/files/a%2F..%2Fb", "/files/..%2F..%2Fetc", "/g/a/%2e%2e", "/de-at/about/%2E%2E"} {
		if CheckPath(p) == nil {
			t.Errorf("CheckPath(%q) = nil, want ErrBadPath", p)
		}
	}
}

func dotSegment(v string) bool {
	for _, s := range strings.Split(v, "/") {
		if s == "." || s == ".." {
			return true
		}
	}
	return false
}

func TestSpanLongPath(t *testing.T) {
	cfg := mustParse(t, hostileConfig)
	rest := strings.Repeat("/abcdefgh", 1000)
	m := cfg.Resolve("/files" + rest)
	if len(m.Matched) != 2 || m.Matched[1].Rule.Match != "/files/:p{.+}" {
		t.Fatalf("matched %v, want /* and /files/:p{.+}", m.Patterns())
	}
	if got := paramsOf(m.Matched[1].Params)["p"]; got != rest[1:] {
		t.Errorf("p is %d bytes, want the %d bytes of the rest", len(got), len(rest)-1)
	}
	if m.Deny {
		t.Error("a long path that matches within the budget is not denied")
	}
}

// A hostile path against patterns whose search is quadratic exhausts the
// regex budget; with a deny rule in the file, it is denied (fail closed).
func TestSpanBudget(t *testing.T) {
	const cfgTOML = `
[[rule]]
match = "/g/:a{.+}/:b{.+}/:c{[0-9]+}"
[[rule]]
match = "/private/*"
deny = true
`
	long := "/g" + strings.Repeat("/abcdefgh", 1500) + "/x" // no digits at the end: no match
	m := mustParse(t, cfgTOML).Resolve(long)
	if !m.Deny {
		t.Errorf("Deny = false after the budget ran out, want true (fail closed)")
	}
	short := "/g/a/b/c/d/e/f/x"
	if m := mustParse(t, cfgTOML).Resolve(short); m.Deny || m.Any() {
		t.Errorf("Resolve(%q): Deny %v, matched %v; want neither", short, m.Deny, m.Patterns())
	}
	if m := mustParse(t, cfgTOML).Resolve("/g/a/b/c/1"); !m.Any() {
		t.Errorf("no match, want %s", "/g/:a{.+}/:b{.+}/:c{[0-9]+}")
	} else if got := paramsOf(m.Matched[0].Params); got["a"] != "a/b" || got["b"] != "c" || got["c"] != "1" {
		t.Errorf("params %v, want a=a/b b=c c=1", got)
	}
}

func TestDenyForms(t *testing.T) {
	cfg := mustParse(t, `
locales = ["en", "de-AT"]
[[rule]]
match = "/internal/*"
deny = true
[[rule]]
match = "/admin"
deny = true
localized = true
[[rule]]
match = "/secret/*"
deny = true
localized = true
[[rule]]
match = "/files/:p{[a-z/]+}"
title = "files"
`)
	tests := []struct {
		path string
		deny bool
	}{
		{"/internal", true},
		{"/internal/x", true},
		{"/internal%2Fx", true},
		{"/internal%2fx%2fy", true},
		{"//internal/x", true},
		{"/internal//x", true},
		{"///internal", true},
		{"/%2Finternal/x", true},
		{"/de-at/admin", true},
		{"/de-at//admin", true},
		{"/en%2Fadmin", true},
		{"/de-at/secret%2Fx", true},
		{"/de-AT/secret/x", true},
		{"/secret/x", false},
		{"/internalx", false},
		{"/intern%61l/x", true}, // literals compare after decoding
		{"/public/internal", false},
		{"/admin", false}, // the localized rule does not match the unprefixed path
		{"/files/a%2Fb", false},
		{"/files//x", false},
	}
	for _, tc := range tests {
		if got := cfg.Resolve(tc.path).Deny; got != tc.deny {
			t.Errorf("Resolve(%q).Deny = %v, want %v", tc.path, got, tc.deny)
		}
	}
}

func TestFill(t *testing.T) {
	tests := []struct {
		pattern string
		params  map[string]string
		want    string // "" when an error is expected
		err     string
	}{
		{"/", nil, "/", ""},
		{"/about", nil, "/about", ""},
		{"/a%20b/c", nil, "/a%20b/c", ""},
		{"/blog/*", nil, "/blog", ""},
		{"/*", nil, "/", ""},
		{"/notes/:id{[0-9]+}", map[string]string{"id": "42"}, "/notes/42", ""},
		{"/notes/:id{[0-9]+}", map[string]string{"id": "4a"}, "", `"4a" does not match {[0-9]+}`},
		{"/notes/:id{[0-9]+}", map[string]string{}, "", `missing parameter "id"`},
		{"/notes/:id{[0-9]+}", map[string]string{"slug": "42"}, "", `missing parameter "id"`},
		{"/notes/:id", map[string]string{"id": ""}, "", `parameter "id" is empty`},
		{"/notes/:slug", map[string]string{"slug": "a b"}, "/notes/a%20b", ""},
		{"/notes/:slug", map[string]string{"slug": "a?b#c"}, "/notes/a%3Fb%23c", ""},
		{"/notes/:slug", map[string]string{"slug": "100%"}, "/notes/100%25", ""},
		{"/notes/:slug", map[string]string{"slug": "café"}, "/notes/caf%C3%A9", ""},
		{"/notes/:slug", map[string]string{"slug": "a/b"}, "", `"a/b" holds a /`},
		{"/notes/:slug", map[string]string{"slug": "."}, "", "dot segment"},
		{"/notes/:slug", map[string]string{"slug": ".."}, "", "dot segment"},
		{"/notes/:slug", map[string]string{"slug": "a\x00"}, "", "NUL"},
		{"/notes/:slug", map[string]string{"slug": "..."}, "/notes/...", ""},
		{"/x/:a/:b", map[string]string{"a": "1", "b": "2"}, "/x/1/2", ""},
		{"/x/:a/:b", map[string]string{"a": "1"}, "", `missing parameter "b"`},
		{"/files/:p{.+}", map[string]string{"p": "a/b c"}, "/files/a/b%20c", ""},
		{"/files/:p{.+}", map[string]string{"p": "a%2Fb"}, "/files/a%252Fb", ""},
		{"/files/:p{.+}", map[string]string{"p": "a/../b"}, "", "dot segment"},
		{"/files/:p{.+}", map[string]string{"p": "./b"}, "", "dot segment"},
		{"/files/:p{[a-z]+}", map[string]string{"p": "a/b"}, "", `does not match`},
		{"/repo/:p{.+}/raw", map[string]string{"p": "a/b"}, "/repo/a/b/raw", ""},
		{"/blog/:y{[0-9]{4}}/*", map[string]string{"y": "2026"}, "/blog/2026", ""},
		{"/blog/*", map[string]string{"*": "2026/a b"}, "/blog/2026/a%20b", ""},
		{"/*", map[string]string{"*": "docs/intro"}, "/docs/intro", ""},
		{"/blog/*", map[string]string{"*": "a/../b"}, "", "dot segment"},
	}
	for _, tc := range tests {
		t.Run(tc.pattern+" "+tc.want+tc.err, func(t *testing.T) {
			p, err := ParsePattern(tc.pattern)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Fill(tc.params)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Fill = %q, %v; want an error with %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Fill = %q, %v; want %q", got, err, tc.want)
			}
			// What Fill writes is what the pattern matches, with the same values.
			if CheckPath(got) != nil {
				t.Fatalf("CheckPath(%q) refuses what Fill wrote", got)
			}
			m := oneRule(t, tc.pattern).Resolve(got)
			if !m.Any() {
				t.Fatalf("%s does not match %q, which Fill wrote", tc.pattern, got)
			}
			back := paramsOf(m.Matched[0].Params)
			for k, v := range back {
				if tc.params[k] != v {
					t.Errorf("matching %q binds %s = %q, Fill was given %q", got, k, v, tc.params[k])
				}
			}
		})
	}
}

func TestAbsURL(t *testing.T) {
	base, _ := url.Parse("https://notes.example/")
	tests := []struct {
		in, want, why string
	}{
		{"/x", "https://notes.example/x", ""},
		{"/covers/1.png?v=2#top", "https://notes.example/covers/1.png?v=2#top", ""},
		{"x.png", "https://notes.example/x.png", ""},
		{"?q=1", "https://notes.example/?q=1", ""},
		{"/a b", "https://notes.example/a%20b", ""},
		{"/a/../b", "https://notes.example/b", ""},
		{"https://cdn.example/x.png", "https://cdn.example/x.png", ""}, // keeps its host
		{"HTTP://cdn.example/x", "HTTP://cdn.example/x", ""},
		{"https://notes.example:8443/x", "https://notes.example:8443/x", ""},

		{"", "", DropUnparsable},
		{"/x\n", "", DropControl},
		{"/x\ry", "", DropControl},
		{"/x\ty", "", DropControl},
		{"\x00/x", "", DropControl},
		{"/x\x7f", "", DropControl},
		{"/x\u0085", "", DropControl}, // C1: NEXT LINE
		{"java\tscript:alert(1)", "", DropControl},
		{" /x", "", DropSpace},
		{"/x ", "", DropSpace},
		{" javascript:alert(1)", "", DropSpace},
		{"javascript:alert(1)", "", DropScheme},
		{"JavaScript:alert(1)", "", DropScheme},
		{"data:text/html,<b>x</b>", "", DropScheme},
		{"vbscript:msgbox(1)", "", DropScheme},
		{"file:///etc/passwd", "", DropScheme},
		{"blob:https://notes.example/5f1c", "", DropScheme},
		{"mailto:a@notes.example", "", DropScheme},
		{"ftp://notes.example/x", "", DropScheme},
		{"https:x", "", DropScheme},
		{"http:/x", "", DropScheme},
		{"https:", "", DropScheme},
		{`https:\\evil.example`, "", DropScheme},
		{"//evil.example/x", "", DropOtherHost},
		{"///evil.example/x", "", DropOtherHost},
		{`\evil.example`, "", DropOtherHost},
		{`\\evil.example`, "", DropOtherHost},
		{`/\evil.example`, "", DropOtherHost},
		{"https:///x", "", DropUnparsable},
		{`https://evil.example\@notes.example/`, "", DropUnparsable},
		{"https://[::1/x", "", DropUnparsable},
		{"1http://x/", "", DropUnparsable},
	}
	for _, tc := range tests {
		got, why := AbsURL(base, tc.in)
		if got != tc.want || why != tc.why {
			t.Errorf("AbsURL(%q) = %q, %q; want %q, %q", tc.in, got, why, tc.want, tc.why)
		}
		if v := ValidURL("https://notes.example", tc.in); v != tc.why {
			t.Errorf("ValidURL(%q) = %q, want %q", tc.in, v, tc.why)
		}
	}
}

func TestEscapePath(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/", "/"},
		{"/notes/42", "/notes/42"},
		{"/a b", "/a%20b"},
		{"/a%20b", "/a%20b"},
		{"/a%2Fb", "/a%2Fb"},
		{"/100%", "/100%25"},
		{"/a%4", "/a%254"},
		{"/%zz", "/%25zz"},
		{"/café", "/caf%C3%A9"},
		{"/\xff", "/%FF"},
		{"/a?b#c", "/a%3Fb%23c"},
		{`/a"b<c>d'e`, "/a%22b%3Cc%3Ed'e"},
		{"/a\x00b\nc", "/a%00b%0Ac"},
		{`/a\b`, "/a%5Cb"},
		{"/a:b@c;d=e,f+g$h&i(j)k*l!m~n-o_p.q", "/a:b@c;d=e,f+g$h&i(j)k*l!m~n-o_p.q"},
	}
	for _, tc := range tests {
		if got := EscapePath(tc.in); got != tc.want {
			t.Errorf("EscapePath(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Fill says why it refused a value as a *FillError, so that callers (the
// sitemap's reasons) branch on the reason, never on the message.
func TestFillError(t *testing.T) {
	p, err := ParsePattern("/notes/:id{[0-9]+}/:slug")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		params map[string]string
		param  string
		reason FillReason
	}{
		{map[string]string{"slug": "a"}, "id", FillMissing},
		{map[string]string{"id": "", "slug": "a"}, "id", FillEmpty},
		{map[string]string{"id": "x", "slug": "a"}, "id", FillConstraint},
		{map[string]string{"id": "1", "slug": "a/b"}, "slug", FillSlash},
		{map[string]string{"id": "1", "slug": ".."}, "slug", FillDotOrNUL},
		{map[string]string{"id": "1", "slug": "a\x00"}, "slug", FillDotOrNUL},
		{map[string]string{"id": "1/..", "slug": "a"}, "id", FillDotOrNUL}, // unsafe before the constraint
	} {
		_, err := p.Fill(tc.params)
		var fe *FillError
		if !errors.As(err, &fe) || fe.Param != tc.param || fe.Reason != tc.reason {
			t.Errorf("Fill(%q) = %v, want a FillError of %q with reason %d", tc.params, err, tc.param, tc.reason)
		}
	}
	if got, err := p.Fill(map[string]string{"id": "7", "slug": "caf\u00e9"}); err != nil || got != "/notes/7/caf%C3%A9" {
		t.Errorf("Fill = %q, %v", got, err)
	}
}
