//go:build race

package insight

const raceOn = true // the race detector makes the memory test take minutes and measure itself
