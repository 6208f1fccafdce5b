package gcfloor

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// The percent reaches the floor by the live heap or by the runtime's
// scaled minimum, whichever needs less, and stays within [100, 2000].
func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		live, floor uint64
		want        int
	}{
		{2 * mib, 8 * mib, 250},   // 4 MiB * 2.5 = 10 MiB = live + floor (live * 5 = 10 too)
		{1 * mib, 8 * mib, 225},   // 4 MiB * 2.25 = 9 MiB; live * 9 would need 800
		{10 * mib, 16 * mib, 160}, // 10 * 2.6 = 26 = live + floor
		{16 * mib, 16 * mib, 100}, // GOGC=100 already doubles it
		{200 * mib, 16 * mib, 100},
		{2 * mib, 16 * mib, 300}, // would be 450: bounded
		{0, 16 * mib, 300},       // no reading yet: as for one byte, bounded
		{1 * mib, 1 << 40, 300},
		{3 * mib, 1 * mib, 100}, // the 4 MiB goal already allows 1 MiB more
		{6 * mib, 8 * mib, 134}, // 6 * 2.34 = 14.04 >= 14
		{100 * mib, 0, 100},
	} {
		if got := Percent(tc.live, tc.floor); got != tc.want {
			t.Errorf("Percent(%d MiB, %d MiB) = %d, want %d", tc.live/mib, tc.floor/mib, got, tc.want)
		}
		// Whatever it says, the goal it gives reaches live + floor when
		// the percent is not at a bound.
		p := uint64(Percent(tc.live, tc.floor))
		if p > 100 && p < maxPercent {
			goal := max(tc.live*(100+p)/100, heapMinimum*p/100)
			if goal < tc.live+tc.floor {
				t.Errorf("Percent(%d, %d) = %d: goal %d under %d", tc.live, tc.floor, p, goal, tc.live+tc.floor)
			}
		}
	}
}

// After collections the tuner sets GOGC above 100 while the live heap is
// small, and back to 100 once a large live heap passes the floor; Stop
// restores 100. GOGC is the process's: this test must not run in parallel.
func TestTunerFollowsLiveHeap(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetGCPercent(100)
	type step struct {
		live    uint64
		percent int
	}
	steps := make(chan step, 64)
	tu := &Tuner{floor: 32 << 20, percent: 100, adjusted: func(live uint64, p int) {
		select {
		case steps <- step{live, p}:
		default:
		}
	}}
	tu.sample[0].Name = "/gc/heap/live:bytes"
	tu.arm()
	defer tu.Stop()

	// waitFor collects until the tuner has set a percent that ok accepts.
	waitFor := func(what string, ok func(int) bool) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			runtime.GC()
			select {
			case s := <-steps:
				if ok(s.percent) {
					t.Logf("%s: live %d KiB -> GOGC %d", what, s.live>>10, s.percent)
					return
				}
			case <-deadline:
				t.Fatalf("%s: the tuner never set an expected GOGC", what)
			case <-time.After(50 * time.Millisecond): // the cleanup runs after the collection, on its own goroutine
			}
		}
	}
	waitFor("small heap", func(p int) bool { return p > 100 })
	if cur := debug.SetGCPercent(-1); cur <= 100 {
		t.Errorf("GOGC is %d with a small heap, want over 100", cur)
	} else {
		debug.SetGCPercent(cur)
	}

	big := make([]*[1 << 20]byte, 96) // 96 MiB live, in pointers so that it stays reachable as a whole
	for i := range big {
		big[i] = new([1 << 20]byte)
	}
	waitFor("large heap", func(p int) bool { return p == 100 })

	runtime.KeepAlive(big)
	big = nil
	// The large heap is remembered for a window of collections: an idle
	// spell after a burst does not raise GOGC for the next burst.
	for range window - 2 {
		runtime.GC()
	}
	if cur := debug.SetGCPercent(-1); cur != 100 {
		t.Errorf("GOGC is %d within %d collections of a 64 MiB live heap, want 100", cur, window)
		debug.SetGCPercent(cur)
	} else {
		debug.SetGCPercent(100)
	}
	waitFor("after the window", func(p int) bool { return p > 100 })

	tu.Stop()
	if cur := debug.SetGCPercent(100); cur != 100 {
		t.Errorf("after Stop GOGC is %d, want 100", cur)
	}
}

// An operator's GOGC turns the tuner off, as does a floor of 0; a
// GOMEMLIMIT does not (the limit binds whatever GOGC is).
func TestStartRespectsEnvironment(t *testing.T) {
	t.Setenv("GOGC", "200")
	if tu := Start(16 << 20); tu != nil {
		tu.Stop()
		t.Error("Start with GOGC=200 returned a tuner")
	}
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "100MiB")
	if tu := Start(16 << 20); tu == nil {
		t.Error("Start with GOMEMLIMIT=100MiB returned nil: the limit and the floor go together")
	} else {
		tu.Stop()
	}
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	if tu := Start(0); tu != nil {
		tu.Stop()
		t.Error("Start(0) returned a tuner")
	}
	tu := Start(16 << 20)
	if tu == nil {
		t.Fatal("Start(16 MiB) with no GOGC returned nil")
	}
	tu.Stop()
	tu.Stop() // twice is fine
	if cur := debug.SetGCPercent(100); cur != 100 {
		t.Errorf("after Stop GOGC is %d, want 100", cur)
	}
}
