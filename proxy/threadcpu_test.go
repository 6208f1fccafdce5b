package proxy

import (
	"time"

	"github.com/headgate/headgate/internal/hgtest"
)

// threadCPU is the calling OS thread's CPU time (hgtest.ThreadCPUTime):
// what the encoder bill and the Markdown header benchmark count, because
// wall time on a shared machine counts the other processes too. Call it
// with the goroutine locked to its thread.
func threadCPU() (time.Duration, bool) { return hgtest.ThreadCPUTime() }
