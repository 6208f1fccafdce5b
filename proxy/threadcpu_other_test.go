//go:build !linux

package proxy

import "time"

// threadCPU: only Linux says what one thread used.
func threadCPU() (time.Duration, bool) { return 0, false }
