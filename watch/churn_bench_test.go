package watch

import (
	"strconv"
	"testing"
)

// BenchmarkObserveNewPages: every response is a page not remembered (a
// crawl through more pages than max_pages): an eviction and a baseline
// each, with the title's and description's start kept.
func BenchmarkObserveNewPages(b *testing.B) {
	c := Defaults()
	c.MaxPages = 10000
	w, _ := New(Options{Config: c})
	r := Response{Status: 200, Head: facts(b, `<html><head><title>Winter boots for the whole family</title><meta name="description" content="Warm wool boots, made in Norway."></head>`)}
	keys := make([]string, 1<<16)
	for i := range keys {
		keys[i] = "/products/" + strconv.Itoa(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w.Observe(keys[i&(len(keys)-1)], "", r)
	}
}
