//go:build unix

package proxy

import (
	"syscall"
	"unsafe"
)

// newBigCopyBuffer maps one of the process's large copy buffers outside
// the Go heap. They are at most bigCopyBuffers (1 MiB), made once and
// never freed; on the heap they were live at every collection, and the
// collector's goal (twice the live heap) counted them twice in peak RSS.
// A failed mapping falls back to the heap.
func newBigCopyBuffer() *bigCopyBuffer {
	mem, err := syscall.Mmap(-1, 0, bigCopyBufferSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil || len(mem) != bigCopyBufferSize {
		return new(bigCopyBuffer)
	}
	return (*bigCopyBuffer)(unsafe.Pointer(&mem[0]))
}

const offHeapBigBuffers = true
