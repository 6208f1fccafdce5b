package watch

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"
)

// TestEntryLayout: the start of the title and description fits in what
// the entry's layout pads anyway; a page's entry stays 136 B (the ≤ 256 B
// budget with the map is TestEntrySize's and TestMillionPages').
func TestEntryLayout(t *testing.T) {
	if n := unsafe.Sizeof(entry{}); n != 136 {
		t.Errorf("entry is %d B, want 136", n)
	}
}

// TestBeforeText: an event's before of a title or description is the
// start the entry kept — whole when short, cut on a rune boundary with
// "…" when longer — and the hash when the text was longer than the Fact
// keeps; hostile text stays text (the page escapes it: TestHandler).
func TestBeforeText(t *testing.T) {
	long := strings.Repeat("Very long title ", 6) // 96 B: the Fact keeps its hash alone
	for _, tc := range []struct{ name, before, after, want string }{
		{"short", "Boots", "Shoes", "Boots"},
		{"cut", "Winter boots for the whole family", "Boots", "Winter boots for…"},
		{"runes", "Ünïcödé tïtlé wïth áccents", "x", "Ünïcödé tït…"},
		{"hostile", `<script>x</script>`, "y", "<script>x</scrip…"},
		{"too long to keep", long, "z", "#"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWatcher(t, 2, nil)
			a, b := facts(t, page(tc.before, "")), facts(t, page(tc.after, ""))
			w.Observe("/p", "", Response{Status: 200, Head: a})
			w.Observe("/p", "", Response{Status: 200, Head: b})
			w.Observe("/p", "", Response{Status: 200, Head: b})
			ev := w.Events("")
			if len(ev) != 1 || ev[0].Signal != "title" {
				t.Fatalf("events %+v", ev)
			}
			got := ev[0].Before
			if tc.want == "#" {
				if got != hashText(a.Title.Hash) {
					t.Errorf("before %q, want the hash %s", got, hashText(a.Title.Hash))
				}
				return
			}
			if got != tc.want || !utf8.ValidString(got) || len(strings.TrimSuffix(got, "…")) > titleKept {
				t.Errorf("before %q, want %q", got, tc.want)
			}
			if ev[0].After != tc.after {
				t.Errorf("after %q", ev[0].After)
			}
			// The next change's before is what the last one confirmed.
			w.Observe("/p", "", Response{Status: 200, Head: a})
			w.Observe("/p", "", Response{Status: 200, Head: a})
			if ev := w.Events(""); len(ev) != 2 || ev[0].Before != tc.after {
				t.Errorf("the second change: %+v", ev)
			}
		})
	}

	// The description's start, and a description that disappears: critical,
	// with what it said.
	w := newWatcher(t, 1, nil)
	with := facts(t, `<html><head><title>T</title><meta name="description" content="Warm wool boots, made in Norway."></head>`)
	without := facts(t, `<html><head><title>T</title></head>`)
	w.Observe("/d", "", Response{Status: 200, Head: with})
	w.Observe("/d", "", Response{Status: 200, Head: without})
	ev := w.Events(Critical)
	if len(ev) != 1 || ev[0].Signal != "description" || ev[0].Before != "Warm wool b…" || ev[0].After != "" {
		t.Errorf("description events %+v", ev)
	}

	// A flapping title (A/B) below confirm keeps the confirmed start.
	w = newWatcher(t, 3, nil)
	a, b := facts(t, page("Alpha title", "")), facts(t, page("Beta title", ""))
	w.Observe("/f", "", Response{Status: 200, Head: a})
	for range 10 {
		w.Observe("/f", "", Response{Status: 200, Head: b})
		w.Observe("/f", "", Response{Status: 200, Head: a})
	}
	if ev := w.Events(""); len(ev) != 0 {
		t.Errorf("a flapping title alerted: %+v", ev)
	}
	for range 3 {
		w.Observe("/f", "", Response{Status: 200, Head: b})
	}
	if ev := w.Events(""); len(ev) != 1 || ev[0].Before != "Alpha title" || ev[0].After != "Beta title" {
		t.Errorf("after the flapping: %+v", ev)
	}
}

// TestBeforeNotHash: only a title or description may show as a hash
// (SPEC §24); a canonical's and the JSON-LD types' before is their text:
// the page's own URL when the canonical was the page itself, else the
// text the shared table (names) kept when the value was confirmed.
// Hreflang shows as its after does.
func TestBeforeNotHash(t *testing.T) {
	head := func(canon, typ, hreflang string) string {
		p := "<!doctype html><html><head><title>T</title>"
		if canon != "" {
			p += `<link rel="canonical" href="` + canon + `">`
		}
		if typ != "" {
			p += `<script type="application/ld+json">{"@context":"https://schema.org","@type":"` + typ + `"}</script>`
		}
		if hreflang != "" {
			p += `<link rel="alternate" hreflang="` + hreflang + `" href="https://shop.example/` + hreflang + `/p">`
		}
		return p + "</head><body>x</body></html>"
	}
	for _, tc := range []struct {
		name, signal  string
		path, query   string
		before, after string // pages
		want, after2  string // the event's before and after
	}{
		{"canonical self", "canonical", "/p", "", head("https://shop.example/p", "", ""), head("https://shop.example/q", "", ""),
			"https://shop.example/p", "https://shop.example/q"},
		{"canonical self, relative", "canonical", "/p", "", head("/p", "", ""), head("/q", "", ""), "/p", "/q"},
		{"canonical self with query", "canonical", "/p", "a=1", head("https://shop.example/p?a=1", "", ""), head("https://shop.example/p", "", ""),
			"https://shop.example/p?a=1", "https://shop.example/p"},
		{"canonical elsewhere", "canonical", "/p", "a=1", head("https://shop.example/p", "", ""), head("https://shop.example/q", "", ""),
			"https://shop.example/p", "https://shop.example/q"},
		{"canonical to self", "canonical", "/p", "", head("https://shop.example/q", "", ""), head("https://shop.example/p", "", ""),
			"https://shop.example/q", "https://shop.example/p"},
		{"jsonld types", "jsonld_types", "/p", "", head("", "Article", ""), head("", "Product", ""), "Article", "Product"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWatcher(t, 1, nil)
			a, b := facts(t, tc.before), facts(t, tc.after)
			w.Observe(tc.path, tc.query, Response{Status: 200, Head: a})
			w.Observe(tc.path, tc.query, Response{Status: 200, Head: b})
			ev := w.Events("")
			if len(ev) != 1 || ev[0].Signal != tc.signal {
				t.Fatalf("events %+v", ev)
			}
			if ev[0].Before != tc.want || ev[0].After != tc.after2 {
				t.Errorf("before %q after %q, want %q and %q", ev[0].Before, ev[0].After, tc.want, tc.after2)
			}
			// And back: the before is the text the last change confirmed.
			w.Observe(tc.path, tc.query, Response{Status: 200, Head: a})
			if ev := w.Events(""); len(ev) != 2 || ev[0].Before != tc.after2 || ev[0].After != tc.want {
				t.Errorf("the change back: %+v", ev)
			}
		})
	}

	// Hreflang: its before as its after shows it (a hash of the set, with
	// how many alternates it had).
	w := newWatcher(t, 1, nil)
	a, b := facts(t, head("", "", "de")), facts(t, head("", "", "fr"))
	w.Observe("/h", "", Response{Status: 200, Head: a})
	w.Observe("/h", "", Response{Status: 200, Head: b})
	w.Observe("/h", "", Response{Status: 200, Head: a})
	ev := w.Events("")
	if len(ev) != 2 || ev[0].Signal != "hreflang" || ev[0].Before != ev[1].After || ev[0].After != ev[1].Before ||
		!strings.HasSuffix(ev[0].Before, "(1 alternates)") {
		t.Errorf("hreflang events %+v", ev)
	}
}

// TestNamesBounded: the table keeps at most namesMax values, the oldest
// dropped first; a value dropped shows as its hash again. Observe of a
// page that names itself, with JSON-LD, allocates nothing once seen.
func TestNamesBounded(t *testing.T) {
	var n names
	f := facts(t, `<html><head><link rel="canonical" href="https://shop.example/first"></head>`)
	var v values
	v[Canonical] = f.Canonical.Hash
	n.remember(&v, f)
	if got, ok := n.lookup(Canonical, v[Canonical]); !ok || got != "https://shop.example/first" {
		t.Fatalf("lookup %q %v", got, ok)
	}
	for i := range namesMax {
		g := facts(t, fmt.Sprintf(`<html><head><link rel="canonical" href="/c/%d"></head>`, i))
		var w values
		w[Canonical] = g.Canonical.Hash
		n.remember(&w, g)
	}
	if len(n.m) != namesMax {
		t.Errorf("%d values kept, want %d", len(n.m), namesMax)
	}
	if _, ok := n.lookup(Canonical, v[Canonical]); ok {
		t.Error("the oldest value was not dropped")
	}

	w := newWatcher(t, 2, nil)
	r := Response{Status: 200, Head: facts(t, `<html><head><title>T</title><link rel="canonical" href="https://shop.example/p?q=1">`+
		`<script type="application/ld+json">{"@type":"Product"}</script></head>`)}
	w.Observe("/p", "q=1", r)
	if v := valuesOf(&r, w.base, "/p", "q=1"); v[Canonical] != selfAbsolute || v[JSONLDTypes] == 0 {
		t.Errorf("values %x", v)
	}
	if a := testing.AllocsPerRun(1000, func() { w.Observe("/p", "q=1", r) }); a != 0 {
		t.Errorf("Observe allocates %v times when nothing changed", a)
	}
}
