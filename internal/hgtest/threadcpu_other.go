//go:build !linux

package hgtest

import "time"

// ThreadCPU runs f and returns the wall time it took: only Linux has a
// per-thread CPU clock this package reads.
func ThreadCPU(f func()) time.Duration {
	t := time.Now()
	f()
	return time.Since(t)
}

// ThreadCPUTime: only Linux says what one thread used.
func ThreadCPUTime() (time.Duration, bool) { return 0, false }
