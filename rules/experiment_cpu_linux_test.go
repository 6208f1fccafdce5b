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

// BenchmarkExperimentResolveCPU is BenchmarkExperimentResolve in the
// thread's CPU time: what deciding the group from the canonical's path
// (groupPath) adds, side by side with a build that hashed the request path.
func BenchmarkExperimentResolveCPU(b *testing.B) {
	for _, tc := range []struct{ name, extra, target string }{
		{"experiment=false", "", "/products/blue-widget-2000"},
		{"experiment=true", titleExp, "/products/blue-widget-2000"},
		{"canonical-template", titleExp + "\n[[rule]]\nmatch = \"/products/:slug/print\"\ncanonical = \"{base_url}/products/{slug}\"\n", "/products/blue-widget-2000/print"},
	} {
		c := loadExp(b, tc.extra)
		b.Run(tc.name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			m := c.PooledMatch()
			b.ReportAllocs()
			cpu := func() time.Duration {
				var ru syscall.Rusage
				syscall.Getrusage(syscall.RUSAGE_THREAD, &ru)
				return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			}
			c0 := cpu()
			for b.Loop() {
				c.ResolveInto(m, tc.target)
			}
			b.ReportMetric(float64((cpu()-c0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}
