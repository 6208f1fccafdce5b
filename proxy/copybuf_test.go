package proxy

import (
	rtmetrics "runtime/metrics"
	"testing"
)

// The large copy buffers are bounded for the process: however many
// responses are in flight, at most bigCopyBuffers of 128 KiB exist; the
// rest get 48 KiB ones; a large one given back is handed out again,
// nothing new made.
func TestCopyBuffersBounded(t *testing.T) {
	var p bufferPool
	var held [][]byte
	big := 0
	for range 4 * bigCopyBuffers {
		b := p.Get()
		switch len(b) {
		case bigCopyBufferSize:
			big++
		case copyBufferSize:
		default:
			t.Fatalf("a copy buffer of %d bytes", len(b))
		}
		held = append(held, b)
	}
	if big == 0 || big > bigCopyBuffers {
		t.Errorf("%d large buffers handed out at once, want 1 to %d", big, bigCopyBuffers)
	}
	if n := bigMade.Load(); n > bigCopyBuffers {
		t.Errorf("%d large buffers made, bound %d", n, bigCopyBuffers)
	}
	for _, b := range held {
		p.Put(b)
	}
	made := bigMade.Load()
	for range 3 {
		b := p.Get()
		if len(b) != bigCopyBufferSize {
			t.Errorf("with large buffers free, Get gave %d bytes", len(b))
		}
		p.Put(b)
	}
	if bigMade.Load() != made {
		t.Errorf("large buffers made while free ones waited: %d, then %d", made, bigMade.Load())
	}
}

// TestBigCopyBufferOffHeap: on unix a large copy buffer is mapped outside
// the Go heap (the collector's goal does not count it twice), and it
// holds what is written into it.
func TestBigCopyBufferOffHeap(t *testing.T) {
	if !offHeapBigBuffers {
		t.Skip("large copy buffers are on the heap here")
	}
	s := []rtmetrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	rtmetrics.Read(s)
	before := s[0].Value.Uint64()
	b := newBigCopyBuffer()
	rtmetrics.Read(s)
	if d := s[0].Value.Uint64() - before; d >= bigCopyBufferSize {
		t.Fatalf("a large copy buffer took %d bytes of the heap", d)
	}
	for i := range b {
		b[i] = byte(i)
	}
	if last := len(b) - 1; b[last] != byte(last) {
		t.Fatal("the mapped buffer does not hold its bytes")
	}
}
