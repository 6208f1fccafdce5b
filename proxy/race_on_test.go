//go:build race

package proxy

// raceEnabled: under the race detector sync.Pool drops a share of what is
// put back on purpose, so allocation counts are not the program's.
const raceEnabled = true
