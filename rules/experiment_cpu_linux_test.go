package rules

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

// BenchmarkExperimentAssignCPU is BenchmarkExperimentAssign measured in
// the thread's CPU time (RUSAGE_THREAD), which on a shared machine says
// what an assignment costs where ns/op also counts the time the thread
// waited for a core.
func BenchmarkExperimentAssignCPU(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	e := &Experiment{Name: "title-price", Share: 50}
	p := GroupPath("/products/blue-widget-2000")
	b.ReportAllocs()
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_THREAD, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	c0 := cpu()
	for b.Loop() {
		_ = e.Group(p, time.Time{})
	}
	b.ReportMetric(float64((cpu()-c0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}
