//go:build unix

package hgtest

import (
	"syscall"
	"time"
)

// ProcessCPU is the process's user and system CPU time (getrusage): on a
// shared machine it says what an operation costs where wall time says how
// long it waited.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
