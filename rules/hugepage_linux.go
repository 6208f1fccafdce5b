package rules

import (
	"syscall"
	"unsafe"
)

// hugePage is the size of a transparent huge page on linux/amd64 and arm64
// (with 4 KiB base pages).
const hugePage = 2 << 20

// adviseHuge asks the kernel to back b's whole 2 MiB pages with huge pages
// (madvise MADV_HUGEPAGE), before b is first written: a lookup in a large
// table reads two random places of tens of megabytes, and with 4 KiB pages
// nearly every such read also misses the TLB and walks the page tables
// (twice over, on a virtual machine). Huge pages leave the walk out.
//
// It is advice: where transparent huge pages are off ("never") or the
// kernel has no huge page free, nothing changes, and the memory is still
// the Go heap's, freed by the GC as any other.
func adviseHuge(b []byte) {
	if cap(b) < 2*hugePage {
		return
	}
	b = b[:cap(b)]
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (start+hugePage-1)&^(hugePage-1) - start
	hi := (start+uintptr(cap(b)))&^(hugePage-1) - start
	if hi <= lo {
		return
	}
	_ = syscall.Madvise(b[lo:hi:hi], syscall.MADV_HUGEPAGE)
}
