// Package gcfloor keeps a floor under the garbage collector's headroom:
// after every collection it sets GOGC so that the heap may grow by at
// least Floor bytes before the next one, and back to 100 once the live
// heap is itself larger than Floor.
//
// Why: the collector's goal is the live heap times (1 + GOGC/100), and
// never under 4 MiB. A proxy's live heap is small (its rules, its idle
// connections, the buffers of the requests in flight: 2 MiB at 32
// connections), so at GOGC=100 it collects every 2 MiB it allocates —
// every 200 or so requests, a tenth of its CPU. With a floor of 8 MiB it
// collects a quarter as often.
//
// Where the live heap is large (hundreds of connections in flight, a
// million-row table) GOGC=100 already gives more than the floor and
// nothing changes, so peak memory under heavy load is not raised. The
// percent is drawn from the largest live heap of the last few
// collections, so that an idle spell between two bursts does not leave
// GOGC raised for the second burst, and it is never over maxPercent: what
// a burst can overshoot is bounded.
//
// An operator's own choice wins: with GOGC in the environment, Start does
// nothing. GOMEMLIMIT is kept with the floor: the runtime collects before
// the limit whatever GOGC says, so the floor never takes the heap past it
// (the Kubernetes manifests set both, in effect).
package gcfloor

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
)

// heapMinimum is the runtime's smallest heap goal at GOGC=100 (4 MiB),
// scaled by GOGC/100 as the runtime scales it.
const heapMinimum = 4 << 20

// maxPercent bounds GOGC while the live heap is tiny, and with it how far
// a burst can overshoot: the goal set after a collection applies to the
// live heap the next one finds, and a heap that grew 4x meanwhile gets a
// goal 4x the floor's.
const maxPercent = 300

// window is how many collections' live heaps the percent is drawn from:
// the largest of them, so that after a burst of connections the next
// idle spell does not raise GOGC for the next burst (which would find it
// raised, and overshoot).
const window = 8

// Tuner is a running floor; Stop ends it and restores GOGC=100.
type Tuner struct {
	floor   uint64
	stopped atomic.Bool

	mu      sync.Mutex
	percent int // what was last set
	sample  [1]metrics.Sample
	lives   [window]uint64 // the last collections' live heaps
	next    int
	// adjusted, when set (by tests), is told each value the tuner sets.
	adjusted func(live uint64, percent int)
}

// sentinel is the object whose cleanup runs once after each collection:
// it holds a pointer, so it is never one of the tiny allocations that
// share a block (whose cleanups need not run).
type sentinel struct {
	p *int
	_ [8]byte
}

// Start begins tuning with the given floor in bytes. It returns nil, and
// changes nothing, when floor is 0 or GOGC is set.
func Start(floor uint64) *Tuner {
	if floor == 0 || os.Getenv("GOGC") != "" {
		return nil
	}
	t := &Tuner{floor: floor, percent: 100}
	t.sample[0].Name = "/gc/heap/live:bytes"
	t.adjust()
	t.arm()
	return t
}

// Stop ends the tuning and sets GOGC back to 100.
func (t *Tuner) Stop() {
	if t == nil || t.stopped.Swap(true) {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	debug.SetGCPercent(100)
	t.percent = 100
}

// arm allocates a sentinel nobody keeps: the next collection finds it
// unreachable and runs its cleanup, which adjusts and arms again.
func (t *Tuner) arm() {
	s := &sentinel{}
	runtime.AddCleanup(s, func(t *Tuner) {
		if t.stopped.Load() {
			return
		}
		t.adjust()
		t.arm()
	}, t)
}

// adjust sets GOGC for the live heap the last collection found.
func (t *Tuner) adjust() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped.Load() {
		return
	}
	metrics.Read(t.sample[:])
	if t.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	live := t.sample[0].Value.Uint64()
	t.lives[t.next] = live
	t.next = (t.next + 1) % window
	p := Percent(slices.Max(t.lives[:]), t.floor)
	// Small changes are not worth a call: the live heap moves with the
	// requests in flight from one collection to the next. Back to 100 is
	// always made, so that a large heap is never held above GOGC=100's.
	if p == t.percent || p != 100 && within25(p, t.percent) {
		return
	}
	debug.SetGCPercent(p)
	t.percent = p
	if t.adjusted != nil {
		t.adjusted(live, p)
	}
}

// within25 reports whether a and b differ by less than a quarter of the
// larger.
func within25(a, b int) bool {
	lo, hi := min(a, b), max(a, b)
	return lo*5 > hi*4
}

// Percent is the GOGC that lets a heap whose live part is live bytes grow
// by floor bytes before the next collection: the smallest percent whose
// goal, max(live*(1+p/100), heapMinimum*p/100), reaches live+floor; never
// under 100 (the runtime's default) nor over maxPercent (so at a tiny heap
// the floor is not reached: 4 MiB * 3 = 12 MiB is the most).
func Percent(live, floor uint64) int {
	if live == 0 {
		live = 1
	}
	goal := live + floor
	byLive := (100*floor + live - 1) / live             // live*(1+p/100) >= goal
	byMin := (100*goal + heapMinimum - 1) / heapMinimum // heapMinimum*p/100 >= goal
	p := min(byLive, byMin)
	return int(max(100, min(p, maxPercent)))
}
