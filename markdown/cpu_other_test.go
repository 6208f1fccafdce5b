//go:build !unix

package markdown

import "time"

// processCPU is 0 where getrusage is missing: no cpu-MB/s is reported.
func processCPU() time.Duration { return 0 }
