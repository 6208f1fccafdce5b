package rules

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/headgate/headgate/internal/pct"
)

// denyConfig denies the areas the deny tests try to reach; /* and a
// spanning rule are there so that other rules match around them.
const denyConfig = `
[[rule]]
match = "/*"
title = "layout"
[[rule]]
match = "/files/:p{.+}"
title = "files"
[[rule]]
match = "/internal/*"
deny = true
[[rule]]
match = "/admin"
deny = true
[[rule]]
match = "/api/:v/private/*"
deny = true
[[rule]]
match = "/x/:id{[0-9]+}/secret"
deny = true
`

// The spellings of issue 19: what servlet containers, Windows servers and
// decoding upstreams resolve into a denied area is denied or refused; what
// no deny covers, ";" included, still passes.
func TestDenySpellings(t *testing.T) {
	cfg := mustParse(t, denyConfig)
	tests := []struct {
		path string
		want string // "400", "deny" or "pass"
	}{
		// ;parameters and dot segments with them (Tomcat, Jetty, Spring)
		{"/x/..;/internal/admin", "400"},
		{"/x/..%3B/internal/admin", "400"},
		{"/x/..%3b/internal/admin", "400"},
		{"/x/.;/internal/admin", "400"},
		{"/x/.%3Bx=1/internal", "400"},
		{"/x/%2e%2e;a/internal", "400"},
		{"/x/..;jsessionid=1", "400"},
		{"/internal;x=1/admin", "deny"},
		{"/internal;/admin", "deny"},
		{"/;/internal/admin", "deny"},
		{"/;x/internal/admin", "deny"},
		{"/internal%3Bx/admin", "deny"},
		{"/admin;jsessionid=ABC", "deny"},
		{"/api/v1;x/private/keys", "deny"},
		{"/api/v1/private;y/keys", "deny"},
		{"/x/42;a/secret", "deny"},
		{"/x/42/secret;a", "deny"},
		// backslash as slash (IIS, ASP.NET, Windows hosts)
		{"/internal\\admin", "deny"},
		{"/internal%5Cadmin", "deny"},
		{"/internal%5cadmin", "deny"},
		{"/%5Cinternal/admin", "deny"},
		{"/api\\v1\\private\\keys", "deny"},
		{"/x\\42\\secret", "deny"},
		{"/x/..\\internal", "400"},
		// a trailing slash, as Express and Rails route it
		{"/admin/", "deny"},
		{"/admin//", "deny"},
		{"/x/42/secret/", "deny"},
		// what was denied before still is
		{"/internal%2Fadmin", "deny"},
		{"//internal/admin", "deny"},
		{"/intern%61l/x", "deny"},
		// legitimate paths with ";" and the like, under no deny
		{"/a;b", "pass"},
		{"/public;v=1/x", "pass"},
		{"/files/a;b/c", "pass"},
		{"/blog/2024;draft", "pass"},
		{"/matrix;color=red;size=L/item", "pass"},
		{"/internalx;a", "pass"},
		{"/adminx", "pass"},
		{"/admin2/", "pass"},
		{"/x/abc/secret", "pass"},
		{"/a\\b", "pass"},
		{"/;", "pass"},
		{"/a/;../b", "pass"}, // the segment ";.." has no name: it is cut to nothing, not to ".."
		{"/..a;/b", "pass"},
	}
	for _, tc := range tests {
		got := "pass"
		if CheckPath(tc.path) != nil {
			got = "400"
		} else if cfg.Resolve(tc.path).Deny {
			got = "deny"
		}
		if got != tc.want {
			t.Errorf("%q: %s, want %s", tc.path, got, tc.want)
		}
	}
	// A path with ";" still matches its own rules as it is spelled.
	if m := cfg.Resolve("/files/a;b"); len(m.Matched) != 2 || paramsOf(m.Matched[1].Params)["p"] != "a;b" {
		t.Errorf("/files/a;b matched %v", m.Patterns())
	}
}

func TestCheckPathParams(t *testing.T) {
	for _, p := range []string{"/..;", "/.;", "/..;/", "/a/..;b/c", "/a/.%3B", "/a/%2E%2E%3b/", "/a\\..;x\\b", "/a%2F.;%2Fb"} {
		if err := CheckPath(p); !errors.Is(err, ErrBadPath) {
			t.Errorf("CheckPath(%q) = %v, want ErrBadPath", p, err)
		}
	}
	for _, p := range []string{"/;", "/;/", "/a;..", "/;..", "/...;", "/.a;b", "/a;b;c", "/%3B", "/a%3b.."} {
		if err := CheckPath(p); err != nil {
			t.Errorf("CheckPath(%q) = %v, want nil", p, err)
		}
	}
}

// denyFuzzTokens are what FuzzDenyNormalization builds paths of: segments
// a deny covers, in several spellings, separators, ";parameters", dots and
// escapes.
var denyFuzzTokens = []string{
	"internal", "admin", "api", "v1", "private", "x", "42", "secret", "public", "a",
	"INTERNAL", "Admin", "intern%61l", "%61dmin", "%69nternal", "7",
	"/", "/", "/", "/", "\\", "%2F", "%2f", "%5C", "%5c", "//",
	";", ";x=1", ";jsessionid=AB", "%3B", "%3bx", ";/",
	".", "..", "%2e", "%2E%2e", ".%2e", "...",
	"%252F", "%255C", "%253B", "%252e", "%20", "~",
}

// denySeed spells a path as token indices.
func denySeed(tb testing.TB, tokens ...string) []byte {
	var b []byte
	for _, tok := range tokens {
		i := -1
		for j, t := range denyFuzzTokens {
			if t == tok {
				i = j
				break
			}
		}
		if i < 0 {
			tb.Fatalf("no token %q", tok)
		}
		b = append(b, byte(i))
	}
	return b
}

// FuzzDenyNormalization: a path that any modelled upstream resolves into a
// denied area is refused (400) or denied (404) by headgate. The models are
// what real upstreams do with a path before routing it: a servlet container
// (";parameters" cut off each segment, then decoded, optionally "\" as "/",
// then dot segments resolved), a Windows server (decoded, "\" as "/", dots
// resolved), a plain decoding server, one that decodes before it cuts
// ";parameters", and one that resolves dots on the raw path and decodes
// segments (as headgate's own matching does). Each decodes once; empty
// segments are collapsed, as most do.
func FuzzDenyNormalization(f *testing.F) {
	for _, seed := range [][]string{
		{"/", "x", "/", "..", ";", "/", "internal", "/", "admin"},
		{"/", "internal", ";x=1", "/", "admin"},
		{"/", ";", "/", "internal", "/", "admin"},
		{"/", "x", "/", "..", "%3B", "/", "internal", "/", "admin"},
		{"/", "internal", "\\", "admin"},
		{"/", "internal", "%5C", "admin"},
		{"/", "api", "/", "v1", "%3bx", "/", "private", "/", "a"},
		{"/", "x", "%2F", "42", ";", "/", "secret"},
		{"/", "admin", "/"},
		{"/", "public", "/", "%2E%2e", "\\", "internal"},
		{"/", "intern%61l", "%2f", "a"},
		{"/", "a", ";/", "internal"},
	} {
		f.Add(denySeed(f, seed...))
	}
	cfg := mustParse(f, denyConfig)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64 {
			return
		}
		var b strings.Builder
		b.WriteByte('/')
		for _, c := range data {
			b.WriteString(denyFuzzTokens[int(c)%len(denyFuzzTokens)])
		}
		path := b.String()
		if CheckPath(path) != nil || cfg.Resolve(path).Deny {
			return
		}
		for _, m := range upstreamModels {
			if segs := m.resolve(path); deniedByModel(segs) {
				t.Fatalf("%q reaches the upstream, and %s resolves it to %q, which a deny covers", path, m.name, strings.Join(segs, "/"))
			}
		}
	})
}

// upstreamModels are the resolutions FuzzDenyNormalization models; each
// returns the path's segments as the upstream routes them.
var upstreamModels = []struct {
	name    string
	resolve func(string) []string
}{
	{"a servlet container", func(p string) []string { return modelSplit(modelDecode(modelCutParams(p))) }},
	{"a servlet container on Windows", func(p string) []string {
		return modelSplit(modelBackslash(modelDecode(modelCutParams(p))))
	}},
	{"a Windows server", func(p string) []string { return modelSplit(modelBackslash(modelDecode(p))) }},
	{"a decoding server", func(p string) []string { return modelSplit(modelDecode(p)) }},
	{"a server that decodes, then cuts parameters", func(p string) []string {
		return modelSplit(modelCutParams(modelDecode(p)))
	}},
	{"a Windows server that cuts parameters", func(p string) []string {
		return modelSplit(modelCutParams(modelBackslash(modelDecode(p))))
	}},
	{"a server that decodes each segment", func(p string) []string {
		segs := modelSplit(p)
		for i, s := range segs {
			segs[i] = modelDecode(s)
		}
		return segs
	}},
}

// modelDecode percent-decodes every escape once.
func modelDecode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && pct.IsHex(s[i+1]) && pct.IsHex(s[i+2]) {
			b.WriteByte(modelUnhex(s[i+1])<<4 | modelUnhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func modelUnhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// modelCutParams cuts each "/" segment at its first raw ";".
func modelCutParams(s string) string {
	segs := strings.Split(s, "/")
	for i, seg := range segs {
		seg, _, _ = strings.Cut(seg, ";")
		segs[i] = seg
	}
	return strings.Join(segs, "/")
}

func modelBackslash(s string) string { return strings.ReplaceAll(s, "\\", "/") }

// modelSplit splits on "/", resolves dot segments (RFC 3986 §5.2.4) and
// drops empty segments.
func modelSplit(s string) []string {
	var out []string
	for _, seg := range strings.Split(s, "/") {
		switch seg {
		case "", ".":
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, seg)
		}
	}
	return out
}

var digitsRE = regexp.MustCompile(`^[0-9]+$`)

// deniedByModel matches segments against denyConfig's deny rules,
// written out by hand.
func deniedByModel(segs []string) bool {
	for _, pat := range [][]string{
		{"internal", "*"}, {"admin"}, {"api", ":v", "private", "*"}, {"x", ":num", "secret"},
	} {
		if modelMatch(pat, segs) {
			return true
		}
	}
	return false
}

func modelMatch(pat, segs []string) bool {
	for i, p := range pat {
		if p == "*" {
			return true
		}
		if i >= len(segs) {
			return false
		}
		s := segs[i]
		switch p {
		case ":v":
			if s == "" || strings.Contains(s, "/") {
				return false
			}
		case ":num":
			if !digitsRE.MatchString(s) {
				return false
			}
		default:
			if s != p {
				return false
			}
		}
	}
	return len(segs) == len(pat)
}

// The deny forms cost little where they apply to common paths: a trailing
// slash, a ";" parameter.
func TestDenyFormsAllocs(t *testing.T) {
	cfg := benchConfig(t)
	for _, p := range []string{"/s7/page-707/", "/s7/12345;x=1", "/s7/page-707;jsessionid=1/"} {
		if allocs := testing.AllocsPerRun(100, func() { cfg.Resolve(p) }); allocs > maxResolveAllocs {
			t.Errorf("Resolve(%q) makes %.0f allocations, want at most %d", p, allocs, maxResolveAllocs)
		}
	}
	if m := cfg.Resolve("/internal;x/y/"); !m.Deny {
		t.Error("/internal;x/y/ is not denied")
	}
}
