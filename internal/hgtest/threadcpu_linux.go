package hgtest

import (
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// ThreadCPU runs f on one locked OS thread and returns the CPU time that
// thread spent (CLOCK_THREAD_CPUTIME_ID). A test that bounds the cost of
// hostile input measures with it rather than with wall time, which on a
// shared machine counts every other process's turn too.
func ThreadCPU(f func()) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start, ok := ThreadCPUTime()
	if !ok {
		t := time.Now()
		f()
		return time.Since(t)
	}
	f()
	end, _ := ThreadCPUTime()
	return end - start
}

// ThreadCPUTime is the CPU time of the calling OS thread
// (CLOCK_THREAD_CPUTIME_ID, exact to the nanosecond, where getrusage counts
// in scheduler ticks); false where the clock cannot be read. Call it with
// the goroutine locked to its thread.
func ThreadCPUTime() (time.Duration, bool) {
	var ts syscall.Timespec
	const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
