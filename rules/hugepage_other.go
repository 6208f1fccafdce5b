//go:build !linux

package rules

// adviseHuge is linux's madvise(MADV_HUGEPAGE); elsewhere, nothing.
func adviseHuge([]byte) {}
