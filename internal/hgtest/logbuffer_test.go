package hgtest

import (
	"strings"
	"testing"
)

// A load test's access log fills the buffer before the line a test waits
// for (a reload refused) is written: that line must still be kept, while
// memory stays bounded. The log comes as a pipe's chunks: many lines to a
// chunk, the line waited for among access lines, and a line split across
// two chunks.
func TestLogBufferKeepsLinesPastAccessLog(t *testing.T) {
	var b LogBuffer
	access := `{"level":"INFO","msg":"request","path":"/p/1","status":200}` + "\n"
	chunk := strings.Repeat(access, 500)
	for b.buf.Len() <= 8<<20 {
		b.Write([]byte(chunk))
	}
	before := b.buf.Len()
	for range 20 {
		b.Write([]byte(chunk))
	}
	if b.buf.Len() != before {
		t.Errorf("access lines past 8 MiB kept: %d bytes, then %d", before, b.buf.Len())
	}
	refused := `{"level":"ERROR","msg":"config refused","err":"HG176"}` + "\n"
	mixed := strings.Repeat(access, 100) + refused + strings.Repeat(access, 100)
	b.Write([]byte(mixed[:len(mixed)/2+7])) // the refusal's line is cut in two
	b.Write([]byte(mixed[len(mixed)/2+7:]))
	if got := strings.Count(b.String(), "config refused"); got != 1 {
		t.Fatalf("the refusal's line, among access lines past 8 MiB, kept %d times, want 1", got)
	}
	if !strings.HasSuffix(b.String(), refused) {
		t.Fatalf("the refusal's line is not whole at the end of the log: %q", b.String()[b.buf.Len()-200:])
	}
	other := strings.Repeat("x", 1<<20) + "\n"
	for range 40 {
		b.Write([]byte(other))
	}
	if n := b.buf.Len(); n > 17<<20 {
		t.Errorf("the buffer grew to %d bytes, past its 16 MiB bound", n)
	}
}
