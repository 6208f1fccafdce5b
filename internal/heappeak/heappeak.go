// Package heappeak samples the live heap while a test's work runs, for the
// bounded-memory tests of whole runs (a million-entry sitemap, an IndexNow
// run over a million URLs): the peak, not the end state, is what a
// container's memory limit sees.
package heappeak

import (
	rtmetrics "runtime/metrics"
	"sync/atomic"
	"time"
)

// Start samples the bytes of live heap objects every 5 ms until the
// returned stop is called; stop returns the largest value seen.
func Start() (stop func() uint64) {
	var peak atomic.Uint64
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		sample := []rtmetrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			rtmetrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-quit:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return func() uint64 {
		close(quit)
		<-done
		return peak.Load()
	}
}
