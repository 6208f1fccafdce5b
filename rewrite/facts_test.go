package rewrite

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/headgate/headgate/internal/robotsmeta"
	"github.com/headgate/headgate/rules"
)

const factsConfig = `
[server]
upstream = "http://127.0.0.1:3000"
[site]
base_url = "https://shop.example"
[[rule]]
match = "/nothing-matches-this"
title = "x"
`

func factsOf(t testing.TB, page string, withRules bool, cache *Cache) *Result {
	t.Helper()
	o := Options{ContentType: "text/html; charset=utf-8", Cache: cache}
	if withRules {
		cfg, err := rules.Parse("c.toml", []byte(factsConfig), nil)
		if err != nil {
			t.Fatal(err)
		}
		o.Match = cfg.Resolve("/p/1")
	}
	r := NewReader(strings.NewReader(page), o)
	if err := r.Prepare(); err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, r)
	return r.Result()
}

// TestHeadFacts pins what HeadFacts reads of an upstream head: robots
// merged from robots and googlebot metas, the canonical made absolute,
// hreflang sets whatever their order, JSON-LD types in arrays and @graph.
func TestHeadFacts(t *testing.T) {
	const doc = "<!doctype html><html><head>"
	for _, tc := range []struct {
		name       string
		a, b       string // two heads
		same       string // which facts must be equal: "title", "canonical", "hreflang", "types", "robots"
		wantTypes  string // a's JSONLDTypes text
		wantRobots robotsmeta.Set
	}{
		{name: "robots merge", a: `<meta name=robots content="NoIndex"><meta name=GoogleBot content="nofollow, max-snippet:3">`,
			b: `<meta name=robots content="none,max-snippet:10">`, same: "robots", wantRobots: robotsmeta.NoIndex | robotsmeta.NoFollow | robotsmeta.MaxSnippet},
		{name: "canonical relative vs absolute", a: `<link rel=canonical href="/p/1">`, b: `<link rel="canonical" href="https://shop.example/p/1">`, same: "canonical"},
		{name: "canonical relative to the page", a: `<link rel=canonical href="1">`, b: `<link rel=canonical href="https://shop.example/p/1">`, same: "canonical"},
		{name: "hreflang order-insensitive", a: `<link rel=alternate hreflang=en href="https://shop.example/en"><link rel=alternate hreflang=DE href="https://shop.example/de">`,
			b: `<link rel=alternate hreflang=de href="https://shop.example/de"><link rel=alternate hreflang=en href="https://shop.example/en">`, same: "hreflang"},
		{name: "title white space", a: "<title> A \n shop </title>", b: "<title>A shop</title>", same: "title"},
		{name: "jsonld array and graph", a: `<script type="application/ld+json">{"@context":"https://schema.org","@graph":[{"@type":"Product","offers":{"@type" : "Offer"}},{"@type":["Organization","Brand"]}]}</script>`,
			b:    `<script type="application/ld+json">{"@type":["Brand","Offer"]}</script><script type=application/ld+json>[{"@type":"Organization"},{"@type":"Product"},{"@type":"Product"}]</script>`,
			same: "types", wantTypes: "Brand, Offer, Organization, Product"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, rulesOn := range []bool{true, false} {
				fa := factsOf(t, doc+tc.a+"</head><body>x</body></html>", rulesOn, nil).Upstream
				fb := factsOf(t, doc+tc.b+"</head><body>x</body></html>", rulesOn, nil).Upstream
				if !fa.Read || !fb.Read {
					t.Fatalf("facts not read: %+v", fa)
				}
				var x, y uint64
				switch tc.same {
				case "title":
					x, y = fa.Title.Hash, fb.Title.Hash
				case "canonical":
					if !rulesOn {
						continue // without rules, the href as written
					}
					x, y = fa.Canonical.Hash, fb.Canonical.Hash
					if s, _ := fa.Canonical.Text(); s != "https://shop.example/p/1" {
						t.Errorf("canonical %q", s)
					}
				case "hreflang":
					x, y = fa.Hreflang, fb.Hreflang
					if fa.Alternates != 2 {
						t.Errorf("alternates %d", fa.Alternates)
					}
				case "types":
					x, y = fa.JSONLDTypes.Hash, fb.JSONLDTypes.Hash
					if s, ok := fa.JSONLDTypes.Text(); !ok || s != tc.wantTypes {
						t.Errorf("types %q", s)
					}
				case "robots":
					if fa.Robots != tc.wantRobots || fb.Robots != robotsmeta.NoIndex|robotsmeta.NoFollow|robotsmeta.MaxSnippet {
						t.Errorf("robots %v %v", fa.Robots, fb.Robots)
					}
					continue
				}
				if x == 0 || x != y {
					t.Errorf("rules %v: %s differs: %x %x", rulesOn, tc.same, x, y)
				}
			}
		})
	}
}

func TestHeadFactsDiffer(t *testing.T) {
	base := factsOf(t, `<html><head><title>A</title><meta name=description content="d"><link rel=canonical href="/a"></head>`, true, nil).Upstream
	for _, other := range []string{
		`<html><head><title>B</title><meta name=description content="d"><link rel=canonical href="/a"></head>`,
		`<html><head><title>A</title><meta name=description content="e"><link rel=canonical href="/a"></head>`,
		`<html><head><title>A</title><meta name=description content="d"><link rel=canonical href="/b"></head>`,
	} {
		f := factsOf(t, other, true, nil).Upstream
		if f.Title == base.Title && f.Description == base.Description && f.Canonical == base.Canonical {
			t.Errorf("%s: same facts as the base", other)
		}
	}
	if f := factsOf(t, `<html><head><title> </title></head>`, true, nil).Upstream; f.Title.Set() {
		t.Errorf("an empty title is set")
	}
	long := strings.Repeat("x", FactTextMax+1)
	f := factsOf(t, `<html><head><title>`+long+`</title></head>`, true, nil).Upstream
	if s, ok := f.Title.Text(); ok || s != "" || f.Title.Len != FactTextMax+1 || !f.Title.Set() {
		t.Errorf("long title kept: %q %v", s, f.Title.Len)
	}
	if f := factsOf(t, `<div>a fragment</div>`, true, nil).Upstream; f.Read {
		t.Errorf("a fragment's facts read")
	}
}

// TestHeadFactsPlanCache: a plan replayed has the facts of the head it
// was made of, and a head that differs only where no decision reads (a
// CSRF token) is a near hit with the same facts.
func TestHeadFactsPlanCache(t *testing.T) {
	c := NewCache(8)
	page := func(tok string) string {
		return `<html><head><title>T</title><meta name="csrf-token" content="` + tok + `"><meta name=googlebot content=noindex><script type="application/ld+json">{"@type":"Article"}</script></head><body>`
	}
	first := factsOf(t, page("aaaa"), true, c)
	again := factsOf(t, page("aaaa"), true, c)
	near := factsOf(t, page("bbbb"), true, c)
	if again.Plan != PlanHit || near.Plan != PlanNear {
		t.Fatalf("plans %q %q", again.Plan, near.Plan)
	}
	if again.Upstream != first.Upstream || near.Upstream != first.Upstream {
		t.Errorf("replayed facts differ")
	}
	if first.Upstream.Robots != robotsmeta.NoIndex {
		t.Errorf("robots %v", first.Upstream.Robots)
	}
	// The googlebot meta is read: a change in it is no near hit.
	changed := factsOf(t, strings.Replace(page("aaaa"), "content=noindex", "content=noarchive", 1), true, c)
	if changed.Plan == PlanNear || changed.Plan == PlanHit || changed.Upstream.Robots != robotsmeta.NoArchive {
		t.Errorf("googlebot change: plan %q robots %v", changed.Plan, changed.Upstream.Robots)
	}
}

func TestTypeScanBounded(t *testing.T) {
	var s typeSet
	b := []byte(strings.Repeat(`{"@type":"T`+"\x00"+`"}`, 10) + `"@type": [ "A" , "B" ] "@type":"` + strings.Repeat("y", 100) + `" "@type":[1] "@type":"unterminated`)
	s.scan(b)
	if s.n != 3 {
		t.Errorf("types %d: %q", s.n, s.v[:s.n])
	}
	s = typeSet{}
	for i := 0; i < 40; i++ {
		s.scan([]byte(`{"@type":"T` + string(rune('A'+i)) + `"}`))
	}
	if s.n != maxTypes {
		t.Errorf("types %d", s.n)
	}
}

func TestHeadFactsAllocs(t *testing.T) {
	cfg, err := rules.Parse("c.toml", []byte(factsConfig), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := cfg.Resolve("/p/1")
	page := []byte(`<html><head><title>T</title><meta name=robots content=noindex><link rel=alternate hreflang=en href=/en><script type="application/ld+json">{"@type":["A","B"]}</script></head><body>`)
	r := NewReader(strings.NewReader(string(page)), Options{Match: m, ContentType: "text/html"})
	if err := r.Prepare(); err != nil {
		t.Fatal(err)
	}
	h := &headScan{r: r, st: r.st} // the scan's tags, still in the state until Read ends
	d := decision{match: m, cs: docCharset{utf8: true}}
	n := testing.AllocsPerRun(100, func() { h.facts(&d) })
	if n != 0 {
		t.Errorf("facts allocates %v times", n)
	}
	if f := h.r.res.Upstream; f.Alternates != 1 || f.Robots != robotsmeta.NoIndex || f.JSONLDTypes.Len != 4 {
		t.Errorf("facts %+v", f)
	}
}

// FuzzHeadFacts: whatever the head, the facts neither panic nor outgrow
// their bounds, and they are the same whether the page is scanned or
// replayed from a plan.
func FuzzHeadFacts(f *testing.F) {
	f.Add([]byte(`<html><head><title>T</title><meta name=robots content=noindex><meta name=googlebot content="max-snippet:1"><link rel=canonical href=/a><link rel=alternate hreflang=en href=/en><script type="application/ld+json">{"@graph":[{"@type":["A","B"]}]}</script></head>`))
	f.Add([]byte(`<title>` + strings.Repeat("é", 100) + `</title><script type=application/ld+json>"@type":"` + strings.Repeat(`\"`, 40)))
	f.Add([]byte(`<meta name=description content="&amp;&#0;"><script type=application/ld+json>{"@type" :[ "x" , 1 , "y"`))
	cfg, err := rules.Parse("c.toml", []byte(factsConfig), nil)
	if err != nil {
		f.Fatal(err)
	}
	m := cfg.Resolve("/p/1")
	f.Fuzz(func(t *testing.T, page []byte) {
		c := NewCache(4)
		var first HeadFacts
		for i := range 3 {
			r := NewReader(bytes.NewReader(page), Options{Match: m, ContentType: "text/html", Cache: c})
			r.Prepare()
			io.Copy(io.Discard, r)
			u := r.Result().Upstream
			for _, x := range []*Fact{&u.Title, &u.Description, &u.Canonical, &u.JSONLDTypes} {
				if s, ok := x.Text(); len(s) > FactTextMax || ok && int32(len(s)) != x.Len || x.Len < 0 || ok != (x.Len <= FactTextMax) {
					t.Fatalf("fact out of bounds: %q %d", s, x.Len)
				}
			}
			if i == 0 {
				first = u
			} else if u != first {
				t.Fatalf("replayed facts differ")
			}
		}
		var s typeSet
		s.scan(page)
		if s.n > maxTypes {
			t.Fatalf("%d types", s.n)
		}
		for _, v := range s.v[:s.n] {
			if len(v) == 0 || len(v) > maxTypeLen {
				t.Fatalf("type %q", v)
			}
		}
	})
}

// BenchmarkHeadFacts is what HeadFacts adds to a scan of each corpus
// page's head (a plan-cache hit adds nothing: the facts are replayed).
func BenchmarkHeadFacts(b *testing.B) {
	opts := benchOpts(b)
	for _, p := range benchPages(b) {
		b.Run(benchName(p), func(b *testing.B) {
			r := NewReader(bytes.NewReader(headOf(p.data)), opts)
			r.Prepare()
			h := &headScan{r: r, st: r.st}
			d := decision{match: opts.Match, cs: docCharset{utf8: true}, page: r.res.Page}
			b.ReportAllocs()
			for b.Loop() {
				h.facts(&d)
			}
			u := r.res.Upstream
			b.ReportMetric(float64(u.Alternates), "alternates")
		})
	}
}
