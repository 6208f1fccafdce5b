package rewrite

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/headgate/headgate/rules"
)

// nearConfig is cacheConfig with a template that reads a page meta, so that
// a meta the rules read is never taken for an opaque one.
const nearConfig = cacheConfig + `
[[rule]]
match = "/author"
description = "By {page.meta.author}"
`

// TestNearMatchReplays: a head that differs from a cached plan's only
// inside a stretch nothing reads (a CSRF meta's content, a script's nonce,
// an inline script's text), by bytes of the same length that cannot change
// how the stretch is tokenized, replays the plan; any other difference is
// scanned. Either way the bytes and the result equal a rewrite without the
// cache.
func TestNearMatchReplays(t *testing.T) {
	cfg, err := rules.Parse("c.toml", []byte(nearConfig), nil)
	if err != nil {
		t.Fatal(err)
	}
	const doc = `<!doctype html><html><head><meta charset=utf-8>` +
		`<meta name="csrf-token" content="0123456789">` +
		`<meta name=request-id content=abc123>` +
		`<meta name="author" content="Ann Lee">` +
		`<meta http-equiv="x-ua-compatible" content="IE=edge">` +
		`<meta name="description" content="upstream words">` +
		`<script nonce="n0nce0">var t = "tok0"; if (a < b) { x-- }</script>` +
		`<style nonce="s0">.a{color:red}</style>` +
		`<link rel="preload" as="script" href="/app.js?v=1" nonce="l0">` +
		`<link rel="stylesheet" href="/a.css">` +
		`<link rel="canonicax" href="/d">` +
		`<link rel="canonical" href="/c/1">` +
		`<title>Title</title></head><body><p>body text</p></body></html>`
	tests := []struct {
		name, path string
		from, to   string // doc with the first from replaced by to
		cached     bool
	}{
		{"the same head", "/a", "", "", true},
		{"a CSRF token", "/a", `content="0123456789"`, `content="9876543210"`, true},
		{"a CSRF token of another length", "/a", `content="0123456789"`, `content="98765432100"`, false},
		{"a CSRF token that ends its value", "/a", `content="0123456789"`, `content="01234"6789"`, false},
		{"a CSRF token that holds a '<'", "/a", `content="0123456789"`, `content="0123<56789"`, false},
		{"an unquoted value", "/a", `content=abc123`, `content=xyz789`, true},
		{"an unquoted value that a space ends", "/a", `content=abc123`, `content=abc 23`, false},
		{"an unquoted value that a quote breaks", "/a", `content=abc123`, `content=abc"23`, false},
		{"a meta the template reads", "/author", `Ann Lee`, `Bob Lee`, false},
		{"a meta a template reads, on a path whose rules do not", "/a", `Ann Lee`, `Bob Lee`, false}, // what templates read is the configuration's
		{"a byte after a '<' in a CSRF token", "/a", `content="0123456789"`, `content="0<23456789"`, false},
		{"an http-equiv content", "/a", `IE=edge`, `IE=EDGE`, false},
		{"the description headgate replaces", "/a", `upstream words`, `upstream wordy`, false},
		{"a script nonce", "/a", `nonce="n0nce0"`, `nonce="n1nce1"`, true},
		{"a script nonce that makes it read json", "/a", `nonce="n0nce0"`, `nonce="njsonx"`, false},
		{"a token in an inline script", "/a", `"tok0"`, `"tok9"`, true},
		{"a dash in an inline script", "/a", `"tok0"`, `"tok-"`, false},
		{"a byte near a '<' in a script", "/a", `a < b`, `a < c`, false},
		{"a style's text", "/a", `color:red`, `color:tan`, true},
		{"a style's nonce", "/a", `nonce="s0"`, `nonce="s9"`, true},
		{"a preload link's nonce", "/a", `nonce="l0"`, `nonce="l9"`, true},
		{"a preload link's href", "/a", `?v=1`, `?v=2`, true},
		{"a link's rel", "/a", `rel="stylesheet"`, `rel="stylesheex"`, false},
		{"a rel that becomes canonical", "/a", `rel="canonicax"`, `rel="canonical"`, false},
		{"the canonical's href", "/a", `/c/1`, `/c/2`, false},
		{"the title headgate reads", "/a", `<title>Title`, `<title>Tithe`, false},
		{"the body, after the head", "/a", `body text`, `body tax!`, true},
		{"a tag name", "/a", `<style nonce`, `<styla nonce`, false},
		{"two tokens", "/a", `content="0123456789"`, `content="abcdefghij"`, true}, // and the nonce below
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := doc
			if tc.from != "" {
				if !strings.Contains(doc, tc.from) {
					t.Fatalf("%q is not in the document", tc.from)
				}
				b = strings.Replace(doc, tc.from, tc.to, 1)
			}
			if tc.name == "two tokens" {
				b = strings.Replace(b, `nonce="n0nce0"`, `nonce="zzzzzz"`, 1)
			}
			m := cfg.Resolve(tc.path)
			cache := NewCache(0)
			if _, res := rewriteWith(t, []byte(doc), Options{Match: m, Cache: cache}, nil); res.Cached || res.Outcome != Rewritten {
				t.Fatalf("first rewrite: cached %v, outcome %v", res.Cached, res.Outcome)
			}
			got, res := rewriteWith(t, []byte(b), Options{Match: m, Cache: cache}, nil)
			want, wres := rewriteWith(t, []byte(b), Options{Match: m}, nil)
			if res.Cached != tc.cached {
				t.Errorf("cached = %v, want %v", res.Cached, tc.cached)
			}
			use := map[bool]PlanUse{true: PlanNear, false: PlanMiss}[tc.cached]
			if tc.from == "" || tc.name == "the body, after the head" {
				use = PlanHit // the plan's bytes end before the body
			}
			if res.Plan != use {
				t.Errorf("plan use %q, want %q", res.Plan, use)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("through the cache:\n%s\nwithout:\n%s", got, want)
			}
			if !sameResult(res, wres) {
				t.Errorf("result through the cache %+v, without %+v", *res, *wres)
			}
		})
	}
}

// sameResult compares two results but for how long they took and whether
// a plan answered.
func sameResult(a, b *Result) bool {
	x, y := *a, *b
	x.Duration, y.Duration, x.Cached, y.Cached, x.Plan, y.Plan = 0, 0, false, false, "", ""
	return reflect.DeepEqual(x, y)
}

// TestNearMatchBounds: the comparison itself, on its edges.
func TestNearMatchBounds(t *testing.T) {
	old := []byte(`<meta content="aaaa"><script>xx</script>`)
	lt := []byte(`<script>a<bcdefgh</script>`)
	ltSpans := []opaqueSpan{{start: 8, end: 17, kind: spanRaw}}
	for _, tc := range []struct {
		cur  string
		want bool
	}{
		{`<script>A<bcdefgh</script>`, true},  // before the '<'
		{`<script>a<bcdefgH</script>`, false}, // within reach of it
	} {
		if got := nearMatch(lt, []byte(tc.cur), ltSpans); got != tc.want {
			t.Errorf("nearMatch(%q) = %v, want %v", tc.cur, got, tc.want)
		}
	}
	spans := []opaqueSpan{{start: 15, end: 19, kind: spanValue, quote: '"'}, {start: 29, end: 31, kind: spanRaw}}
	for _, tc := range []struct {
		cur  string
		want bool
	}{
		{`<meta content="aaaa"><script>xx</script>`, true},
		{`<meta content="bbbb"><script>yy</script>`, true},
		{`<meta content="bbbb"><script>xx</script> and more after it`, true},
		{`<meta content="aaaa"><script>xx</script`, false}, // shorter than the plan's bytes
		{`<meta content="aaaa"><script>x-</script>`, false},
		{`<meta content="aaaa"><script>xx</scripy>`, false}, // outside every span
		{`<meta content="aaab"<script>xx</script>`, false},  // a quote moved
		{`<meta content='aaaa'><script>xx</script>`, false}, // the quotes are not in the span
	} {
		if got := nearMatch(old, []byte(tc.cur), spans); got != tc.want {
			t.Errorf("nearMatch(%q) = %v, want %v", tc.cur, got, tc.want)
		}
	}
	for n := range 2000 {
		a := bytes.Repeat([]byte{'x'}, n)
		if got := mismatch(a, a); got != -1 {
			t.Fatalf("mismatch of equal %d bytes = %d", n, got)
		}
		for _, at := range []int{0, n / 2, n - 1} {
			if at < 0 || at >= n {
				continue
			}
			b := bytes.Clone(a)
			b[at] = 'y'
			if got := mismatch(a, b); got != at {
				t.Fatalf("mismatch with %d bytes, differing at %d = %d", n, at, got)
			}
		}
	}
}

// TestNearMatchPages: on real pages (the generated legacy pages in every
// clone, and ../shared's corpora when they are beside it), bytes inside the
// opaque spans a page's plan holds are overwritten, one at a time, with a
// byte a token could be made of or with one that ends or starts a token;
// every rewrite through the plan equals one without the cache, and the
// first kind is replayed on many pages (the feature is not silently off).
func TestNearMatchPages(t *testing.T) {
	cfg, err := rules.Parse("c.toml", []byte(nearConfig), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := cfg.Resolve("/a")
	const perPage = 6
	var tried, near, inertTried, inertNear, pages int
	for _, pg := range allPages(t) {
		probe := NewCache(0)
		rewriteWith(t, pg.data, Options{Match: m, Cache: probe}, nil)
		var spans []opaqueSpan
		for _, p := range probe.m {
			spans = p.spans
		}
		if len(spans) == 0 {
			continue
		}
		pages++
		rng := rand.New(rand.NewPCG(uint64(len(pg.data)), uint64(len(spans))))
		for k := range perPage {
			sp := spans[rng.IntN(len(spans))]
			at := int(sp.start) + rng.IntN(int(sp.end-sp.start))
			var c byte
			inert := k%2 == 0
			if inert {
				const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
				c = alnum[rng.IntN(len(alnum))]
			} else {
				const structural = "\"'<>-/= \t\x00&!"
				c = structural[rng.IntN(len(structural))]
			}
			if pg.data[at] == c {
				continue
			}
			b := bytes.Clone(pg.data)
			b[at] = c
			cache := NewCache(0)
			rewriteWith(t, pg.data, Options{Match: m, Cache: cache}, nil)
			got, res := rewriteWith(t, b, Options{Match: m, Cache: cache}, nil)
			want, wres := rewriteWith(t, b, Options{Match: m}, nil)
			if !bytes.Equal(got, want) || !sameResult(res, wres) {
				t.Fatalf("%s: byte %d (%q in a span of kind %d) set to %q: the cached rewrite (plan %q) differs from one without the cache", pg.name, at, pg.data[at], sp.kind, c, res.Plan)
			}
			tried++
			if inert {
				inertTried++
			}
			if res.Plan == PlanNear {
				near++
				if inert {
					inertNear++
				}
			}
		}
	}
	t.Logf("%d pages with spans: %d changes, %d replayed (%d of %d with a letter or digit)", pages, tried, near, inertNear, inertTried)
	if inertTried > 0 && inertNear*2 < inertTried {
		t.Errorf("a letter or digit inside a span was replayed in %d of %d cases: near matches are mostly off", inertNear, inertTried)
	}
}

// A strict Content-Security-Policy sends a new nonce on every response, in
// its header and on the page's scripts. The plan cache's key leaves the
// nonce out, so the plan holds (a near match over the scripts' nonces)
// unless the plan wrote the nonce itself, on the JSON-LD it adds: then the
// head is scanned, and the new nonce written.
func TestCacheCSPNonce(t *testing.T) {
	const jsonLD = `
[[rule.json_ld]]
"@context" = "https://schema.org"
"@type" = "WebPage"
name = "A page"
`
	page := func(n string) []byte {
		return []byte(`<!doctype html><html><head><meta charset=utf-8><title>T</title><script nonce="` + n + `">var a = 1</script></head><body>b</body></html>`)
	}
	csp := func(n string) string { return "script-src 'nonce-" + n + "' 'strict-dynamic'; object-src 'none'" }
	for _, tc := range []struct {
		name, config string
		use          PlanUse
	}{
		{"no tag of headgate's carries the nonce", cacheConfig, PlanNear},
		{"headgate writes JSON-LD with the nonce", cacheConfig + jsonLD, PlanMiss},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := rules.Parse("c.toml", []byte(tc.config), nil)
			if err != nil {
				t.Fatal(err)
			}
			m := cfg.Resolve("/a")
			cache := NewCache(0)
			rewriteWith(t, page("AAAA1111"), Options{Match: m, Cache: cache, CSP: csp("AAAA1111")}, nil)
			o := Options{Match: m, CSP: csp("BBBB2222")}
			want, wres := rewriteWith(t, page("BBBB2222"), o, nil)
			o.Cache = cache
			got, res := rewriteWith(t, page("BBBB2222"), o, nil)
			if res.Plan != tc.use {
				t.Errorf("plan use %q, want %q", res.Plan, tc.use)
			}
			if !bytes.Equal(got, want) || !sameResult(res, wres) {
				t.Errorf("through the cache:\n%s\nwithout:\n%s", got, want)
			}
			if tc.use == PlanMiss && !bytes.Contains(got, []byte(`type="application/ld+json" nonce="BBBB2222"`)) {
				t.Errorf("headgate's JSON-LD does not carry the response's nonce:\n%s", got)
			}
		})
	}
	for in, want := range map[string]string{
		"":                              "",
		"default-src 'self'":            "default-src 'self'",
		"script-src 'nonce-abc' 'self'": "script-src 'nonce-' 'self'",
		"script-src 'NONCE-abc'; style-src 'nonce-d'": "script-src 'NONCE-'; style-src 'nonce-'",
		"script-src 'nonce-abc":                       "script-src 'nonce-",
	} {
		if got := string(appendWithoutNonces(nil, in)); got != want {
			t.Errorf("appendWithoutNonces(%q) = %q, want %q", in, got, want)
		}
	}
}
