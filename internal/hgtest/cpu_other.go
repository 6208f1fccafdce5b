//go:build !unix

package hgtest

import "time"

// ProcessCPU: there is no getrusage here; the benchmarks that report it
// say 0.
func ProcessCPU() time.Duration { return 0 }
