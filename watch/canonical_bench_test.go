package watch

import (
	"strconv"
	"testing"
)

// canonicalHead is a product page's head: a canonical and JSON-LD.
const canonicalHead = `<html><head><title>Winter boots</title><link rel="canonical" href="https://notes.example/products/1"><script type="application/ld+json">{"@type":"Product"}</script></head>`

// BenchmarkObserveCanonical: a remembered page with a canonical and
// JSON-LD, nothing changing (the steady state).
func BenchmarkObserveCanonical(b *testing.B) {
	c := Defaults()
	w, _ := New(Options{Config: c, BaseURL: "https://notes.example"})
	r := Response{Status: 200, Head: facts(b, canonicalHead)}
	w.Observe("/products/1", "", r)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w.Observe("/products/1", "", r)
	}
}

// BenchmarkObserveNewPagesCanonical: every response a new page (an
// eviction and a baseline each) carrying a canonical elsewhere and
// JSON-LD: the names table's cost at its worst (a new canonical each).
func BenchmarkObserveNewPagesCanonical(b *testing.B) {
	c := Defaults()
	c.MaxPages = 10000
	w, _ := New(Options{Config: c, BaseURL: "https://notes.example"})
	heads := make([]Response, 1<<13) // over namesMax: each value new to the table
	for i := range heads {
		heads[i] = Response{Status: 200, Head: facts(b, `<html><head><title>Boots</title><link rel="canonical" href="https://notes.example/c/`+strconv.Itoa(i)+
			`"><script type="application/ld+json">{"@type":"Product"}</script></head>`)}
	}
	keys := make([]string, 1<<16)
	for i := range keys {
		keys[i] = "/products/" + strconv.Itoa(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w.Observe(keys[i&(len(keys)-1)], "", heads[i&(len(heads)-1)])
	}
}
