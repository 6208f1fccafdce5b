package insight

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/headgate/headgate/bots"
)

// The per-request cost the proxy pays: an identified crawler on a known
// path, with metrics on (SPEC §20.1, issue 37: ≤ 1 µs, no allocation).
func BenchmarkObserve(b *testing.B) {
	tr := newTracker(b, prometheus.NewRegistry(), newClock(t0))
	paths := make([]string, 64)
	for i := range paths {
		paths[i] = fmt.Sprintf("/notes/%d", i)
	}
	ids := []bots.Identity{googleIP, googleFake, gptbot, claudeUnver}
	for _, id := range ids { // resolve the label children once, as a running proxy has
		tr.Observe(Request{Identity: id, Path: "/", Status: 200, Time: t0})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		tr.Observe(Request{Identity: ids[i%len(ids)], Path: paths[i%len(paths)], Status: 200, Bytes: 5000, Time: t0})
	}
}

// A person's visit from a search result: no identity, a Referer.
func BenchmarkObserveReferral(b *testing.B) {
	tr := newTracker(b, prometheus.NewRegistry(), newClock(t0))
	b.ReportAllocs()
	for b.Loop() {
		tr.Observe(Request{Identity: bots.None, Path: "/notes/3", Status: 200, Referer: "https://www.google.co.uk/", Time: t0})
	}
}

// A request with neither: what most requests cost.
func BenchmarkObserveNothing(b *testing.B) {
	tr := newTracker(b, prometheus.NewRegistry(), newClock(t0))
	b.ReportAllocs()
	for b.Loop() {
		tr.Observe(Request{Identity: bots.None, Path: "/notes/3", Status: 200, Time: t0})
	}
}

// One crawler from every core: the contention case (its sketch's mutex).
func BenchmarkObserveParallel(b *testing.B) {
	tr := newTracker(b, prometheus.NewRegistry(), newClock(t0))
	tr.Observe(Request{Identity: googleIP, Path: "/", Status: 200, Time: t0})
	paths := make([]string, 16)
	for i := range paths {
		paths[i] = fmt.Sprintf("/notes/%d", i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			tr.Observe(Request{Identity: googleIP, Path: paths[i%len(paths)], Status: 200, Bytes: 5000, Time: t0})
			i++
		}
	})
}

func BenchmarkSource(b *testing.B) {
	refs := []string{"https://www.google.co.uk/", "https://gemini.google.com/app", "https://chatgpt.com/", "https://example.com/page"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		Source(refs[i%len(refs)])
	}
}

func BenchmarkSnapshot(b *testing.B) {
	tr := newTracker(b, nil, newClock(t0))
	for _, c := range bots.Directory() {
		for i := 0; i < 100; i++ {
			tr.Observe(Request{Identity: bots.Identity{Name: c.Name, Category: c.Category, Verified: bots.VerifiedIP}, Path: fmt.Sprintf("/p/%d", i), Status: 200, Time: t0})
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		tr.Snapshot()
	}
}
