package rewrite

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/headgate/headgate/rules"
)

const cacheConfig = `
[server]
upstream = "http://127.0.0.1:3000"
[site]
base_url = "https://notes.example"
[[rule]]
match = "/*"
title = "{page.title} (cached?)"
description = "A description"
canonical = "self"
[rule.open_graph]
site_name = "S"
`

func rewriteWith(t *testing.T, doc []byte, o Options, src func(io.Reader) io.Reader) ([]byte, *Result) {
	t.Helper()
	var in io.Reader = bytes.NewReader(doc)
	if src != nil {
		in = src(in)
	}
	r := NewReader(in, o)
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return out, r.Result()
}

// TestCacheReplaysExactly: with a cache, the second rewrite of the same head
// replays the plan, and its bytes and changes equal a fresh rewrite's, also
// when the body differs or the reads fall differently; a head that differs
// by one byte is rewritten afresh.
func TestCacheReplaysExactly(t *testing.T) {
	cfg, err := rules.Parse("c.toml", []byte(cacheConfig), nil)
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string][]byte{
		"late":     []byte("<html><head><title>T</title><div>x</div><link rel=canonical href=/late></head><body>b</body></html>"),
		"plain":    []byte("<!doctype html><html><head><meta charset=utf-8><title>T</title><link rel=canonical href=/x></head><body><p>body</p></body></html>"),
		"implicit": bytes.Repeat([]byte("<p>no head end "), 40),
	}
	if files, _ := os.ReadDir("../../shared/corpus"); len(files) > 0 {
		for _, f := range files {
			if b, err := os.ReadFile("../../shared/corpus/" + f.Name()); err == nil && bytes.HasSuffix([]byte(f.Name()), []byte(".html")) {
				docs[f.Name()] = b
			}
		}
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			c := NewCache(0)
			o := Options{Match: cfg.Resolve("/p?x=1"), ContentType: "text/html; charset=utf-8", CorrectUpstream: true}
			want, wres := rewriteWith(t, doc, o, nil)
			o.Cache = c
			first, _ := rewriteWith(t, doc, o, nil)
			second, sres := rewriteWith(t, doc, o, func(r io.Reader) io.Reader { return iotest.HalfReader(r) })
			for i, got := range [][]byte{first, second} {
				if !bytes.Equal(got, want) {
					t.Fatalf("rewrite %d with the cache differs from one without", i+1)
				}
			}
			// A plan is kept when the region ended at a token, not where the
			// input ended, and the head was rewritten or left as it was.
			lower := bytes.ToLower(doc)
			wantHit := (bytes.Contains(lower, []byte("</head")) || bytes.Contains(lower, []byte("<body"))) &&
				(wres.Outcome == Rewritten || wres.Outcome == Unchanged)
			if sres.Cached != wantHit {
				t.Errorf("second rewrite: Cached = %v, want %v", sres.Cached, wantHit)
			}
			if sres.Outcome != wres.Outcome || sres.Delta != wres.Delta || len(sres.Changes) != len(wres.Changes) {
				t.Errorf("replayed result %v/%d/%d changes, fresh %v/%d/%d", sres.Outcome, sres.Delta, len(sres.Changes), wres.Outcome, wres.Delta, len(wres.Changes))
			}
			// The same head with another body: replayed, body kept.
			if end := bytes.Index(doc, []byte("<body")); end > 0 {
				other := append(append([]byte{}, doc[:end]...), []byte("<body>another body</body>")...)
				fresh, _ := rewriteWith(t, other, Options{Match: o.Match, ContentType: o.ContentType, CorrectUpstream: true}, nil)
				got, _ := rewriteWith(t, other, o, nil)
				if !bytes.Equal(got, fresh) {
					t.Errorf("another body after the same head: output differs from a fresh rewrite")
				}
			}
			// One byte changed in the head: not the cached plan.
			if i := bytes.Index(doc, []byte("<title>")); i >= 0 && i+8 < len(doc) {
				changed := append([]byte{}, doc...)
				changed[i+7] ^= 0x20
				fresh, _ := rewriteWith(t, changed, Options{Match: o.Match, ContentType: o.ContentType, CorrectUpstream: true}, nil)
				got, _ := rewriteWith(t, changed, o, nil)
				if !bytes.Equal(got, fresh) {
					t.Errorf("a changed head got a stale plan")
				}
			}
		})
	}
}

// A plan depends on the request: another target is rewritten afresh.
func TestCacheKeyedByTarget(t *testing.T) {
	cfg, err := rules.Parse("c.toml", []byte(cacheConfig), nil)
	if err != nil {
		t.Fatal(err)
	}
	doc := []byte("<html><head><title>T</title></head><body>b</body></html>")
	c := NewCache(0)
	a, _ := rewriteWith(t, doc, Options{Match: cfg.Resolve("/a"), Cache: c}, nil)
	b, _ := rewriteWith(t, doc, Options{Match: cfg.Resolve("/b"), Cache: c}, nil)
	if !bytes.Contains(a, []byte(`href="https://notes.example/a"`)) || !bytes.Contains(b, []byte(`href="https://notes.example/b"`)) {
		t.Errorf("canonicals mixed up:\n%s\n%s", a, b)
	}
}

// The cache holds at most its entries and its byte budget.
func TestCacheBounded(t *testing.T) {
	c := NewCache(4)
	for i := 0; i < 100; i++ {
		c.put(string(rune('a'+i%26))+string(rune('0'+i/26)), &plan{size: 1000})
	}
	if len(c.m) > 4 || c.bytes != 1000*len(c.m) {
		t.Errorf("%d plans, %d bytes", len(c.m), c.bytes)
	}
	c.put("big", &plan{size: cacheBytes})
	if _, ok := c.m["big"]; ok {
		t.Error("a plan over the per-plan bound was kept")
	}
	c = NewCache(0)
	for i := 0; i < 200; i++ {
		c.put(string(rune(i+0x100)), &plan{size: cacheBytes / 32})
	}
	if c.bytes > cacheBytes {
		t.Errorf("%d bytes held, budget %d", c.bytes, cacheBytes)
	}
}

// Many rewrites at once share one cache: the same bytes out of each (run
// with -race to check the locking).
func TestCacheConcurrent(t *testing.T) {
	cfg, err := rules.Parse("c.toml", []byte(cacheConfig), nil)
	if err != nil {
		t.Fatal(err)
	}
	doc := []byte("<html><head><title>T</title><link rel=canonical href=/x></head><body>b</body></html>")
	want, _ := rewriteWith(t, doc, Options{Match: cfg.Resolve("/p")}, nil)
	c := NewCache(2)
	done := make(chan []byte)
	for i := 0; i < 16; i++ {
		go func(i int) {
			target := []string{"/p", "/q", "/r"}[i%3]
			r := NewReader(bytes.NewReader(doc), Options{Match: cfg.Resolve(target), Cache: c})
			out, _ := io.ReadAll(r)
			if target != "/p" {
				out = nil
			}
			done <- out
		}(i)
	}
	for i := 0; i < 16; i++ {
		if out := <-done; out != nil && !bytes.Equal(out, want) {
			t.Errorf("concurrent rewrite differs:\n%s", out)
		}
	}
}

// A target whose head changes on every request (where the rules read it) stops being compared and
// stored after missLimit misses in a row, probes again now and then with a
// growing pause, and is cached again as soon as its head repeats. Every
// response is rewritten exactly as without a cache, cached or not.
func TestCacheSkipsFreshHeads(t *testing.T) {
	cfg, err := rules.Parse("c.toml", []byte(cacheConfig), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := cfg.Resolve("/p")
	page := func(n int) []byte {
		// The title changes, which the rules read: a CSRF token would be
		// one of the changes a plan replays over (TestNearMatchReplays).
		return []byte("<html><head><meta name=csrf-token content=x><title>T" + strconv.Itoa(n) + "</title></head><body>b</body></html>")
	}
	c := NewCache(0)
	k := string(c.appendKey(nil, &Options{Match: m, MaxHeadBytes: rules.DefaultMaxHeadBytes}))
	stored := func() (misses, skip int, ok bool) {
		c.mu.Lock()
		defer c.mu.Unlock()
		p, ok := c.m[k]
		if !ok {
			return 0, 0, false
		}
		return p.misses, p.skip, true
	}
	var probes []int // the requests whose plan was stored
	var last *plan
	for i := 1; i <= 200; i++ {
		out, res := rewriteWith(t, page(i), Options{Match: m, Cache: c}, nil)
		want, _ := rewriteWith(t, page(i), Options{Match: m}, nil)
		if !bytes.Equal(out, want) || res.Cached {
			t.Fatalf("request %d: cached %v, output differs: %v", i, res.Cached, !bytes.Equal(out, want))
		}
		c.mu.Lock()
		if p := c.m[k]; p != nil && p != last {
			last = p
			probes = append(probes, i)
		}
		c.mu.Unlock()
	}
	t.Logf("plans stored at requests %v", probes)
	// Stored for the first missLimit requests (the first plan, and one per
	// miss until the limit), then only as probes, further and further apart.
	if len(probes) < missLimit || len(probes) > missLimit+6 {
		t.Fatalf("plans stored at requests %v", probes)
	}
	for i := missLimit + 1; i < len(probes); i++ {
		if gap, prev := probes[i]-probes[i-1], probes[i-1]-probes[i-2]; gap < prev {
			t.Errorf("probes at %v: the pause shrank", probes)
		}
	}
	if misses, skip, ok := stored(); !ok || misses < missLimit || skip == 0 {
		t.Errorf("after 200 fresh heads: misses %d, skip %d, stored %v", misses, skip, ok)
	}
	// The head stops changing: within one pause and a probe it is cached again.
	hits := 0
	for i := 0; i < maxSkip+3; i++ {
		_, res := rewriteWith(t, page(7), Options{Match: m, Cache: c}, nil)
		if res.Cached {
			hits++
		}
	}
	if misses, _, _ := stored(); hits == 0 || misses != 0 {
		t.Errorf("a repeating head: %d hits, misses %d", hits, misses)
	}
	if got := skipFor(missLimit + 100); got != maxSkip {
		t.Errorf("skipFor grows past maxSkip: %d", got)
	}
}

// FuzzCache: whatever document a plan was made from, a second document
// rewritten through the cache comes out exactly as it does without one
// (the cache never changes an answer). With c set, the second is the first
// with the byte at at changed to c: it differs inside the head or past it.
func FuzzCache(f *testing.F) {
	cfg, err := rules.Parse("c.toml", []byte(cacheConfig), nil)
	if err != nil {
		f.Fatal(err)
	}
	m := cfg.Resolve("/a")
	for _, s := range []string{
		"<html><head><title>T</title><link rel=canonical href=/x></head><body>b</body></html>",
		"<head><meta name=description content=d><script>x</script></head>",
		"<title>T</title><div>x</div>",
	} {
		f.Add([]byte(s), []byte(s), uint16(0), byte(0))
		f.Add([]byte(s), []byte(s), uint16(7), byte('>'))
	}
	f.Fuzz(func(t *testing.T, a, b []byte, at uint16, c byte) {
		if len(a) > 1<<16 || len(b) > 1<<16 {
			return
		}
		if len(a) > 0 && c != 0 { // b is a with one byte changed
			b = bytes.Clone(a)
			b[int(at)%len(a)] = c
		}
		checkThroughPlan(t, m, a, b)
	})
}

// checkThroughPlan rewrites b through the plan made of a, and holds it to
// a rewrite of b without the cache: the same bytes and the same result.
func checkThroughPlan(t *testing.T, m *rules.Match, a, b []byte) {
	t.Helper()
	cache := NewCache(0)
	rewriteWith(t, a, Options{Match: m, Cache: cache}, nil)
	got, res := rewriteWith(t, b, Options{Match: m, Cache: cache}, nil)
	want, wres := rewriteWith(t, b, Options{Match: m}, nil)
	if !bytes.Equal(got, want) {
		t.Fatalf("through the cache (plan %q):\n%q\nwithout:\n%q", res.Plan, got, want)
	}
	if !sameResult(res, wres) {
		t.Fatalf("result through the cache (plan %q) %+v, without %+v", res.Plan, *res, *wres)
	}
}

// FuzzNearMatch: a document whose bytes at some offset are overwritten in
// place (a token of the same length, as a CSRF token or a nonce changes)
// is rewritten through the plan of the original exactly as without the
// cache, bytes and result, whether the plan answers or not.
func FuzzNearMatch(f *testing.F) {
	cfg, err := rules.Parse("c.toml", []byte(nearConfig), nil)
	if err != nil {
		f.Fatal(err)
	}
	m := cfg.Resolve("/a")
	for _, s := range []string{
		`<!doctype html><head><meta name="csrf-token" content="0123456789"><title>T</title></head><body>x</body>`,
		`<head><script nonce="abcdef">var a = "</scrip"; x--</script><meta name=x content=y></head>`,
		`<head><script><!--<script>a="b"</script>--></script><style>p{a:b}</style><title>t</title>`,
		`<head><meta name=author content=ann><meta name=description content=d><link rel=canonical href=/x></head>`,
		`<title>T</title><meta name=a content=b><div>x</div><meta name=c content="d"></head><body>`,
		`<head><style nonce=n1>a{}</style><link rel=preload href=/a.js nonce="n2"><link rel=canonical href=/x></head>`,
	} {
		f.Add([]byte(s), uint16(len(s)/3), []byte("9"))
		f.Add([]byte(s), uint16(len(s)/2), []byte("zz"))
		// Each structural byte in turn, after every '=' and '>'.
		for i := 0; i < len(s); i++ {
			if s[i] == '=' || s[i] == '>' {
				for _, c := range []string{`"`, "'", " ", "<", "-", ">", "j", "/"} {
					f.Add([]byte(s), uint16(i+2), []byte(c))
				}
			}
		}
	}
	// Changes that do move a token boundary, and so the head's end: each
	// must be scanned, not replayed.
	for _, c := range []struct{ doc, at, with string }{
		{`<head><script>a="</scripX>"</script><meta name=description content=d></head><body>`, "X", "t"},
		{`<head><meta name=x content=aXb><meta name=description content=d></head><body>`, "X", ">"},
		{`<head><meta name=x content="aXb"><meta name=description content=d></head><body>`, "X", `"`},
		{`<head><script><!--X<script></script>a</script><title>t</title></head><body>`, "X", "-"},
	} {
		f.Add([]byte(c.doc), uint16(strings.Index(c.doc, c.at)), []byte(c.with))
	}
	f.Fuzz(func(t *testing.T, a []byte, at uint16, with []byte) {
		if len(a) > 1<<16 || len(with) == 0 || int(at)+len(with) > len(a) {
			return
		}
		b := bytes.Clone(a)
		copy(b[at:], with)
		checkThroughPlan(t, m, a, b)
	})
}
