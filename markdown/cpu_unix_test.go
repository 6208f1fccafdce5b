//go:build unix

package markdown

import (
	"syscall"
	"time"
)

// processCPU is the CPU time this process has used (user and system, all
// threads, the collector's included): on a shared machine it moves far
// less than the wall clock with the load.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
