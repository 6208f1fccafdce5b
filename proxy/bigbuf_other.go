//go:build !unix

package proxy

// newBigCopyBuffer makes one of the process's large copy buffers on the
// heap (bigbuf_unix.go maps them outside it).
func newBigCopyBuffer() *bigCopyBuffer { return new(bigCopyBuffer) }

const offHeapBigBuffers = false
