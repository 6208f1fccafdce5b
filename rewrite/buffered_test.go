package rewrite

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// countingReader counts the reads of its source.
type countingReader struct {
	r     io.Reader
	reads int
}

func (c *countingReader) Read(p []byte) (int, error) {
	c.reads++
	return c.r.Read(p)
}

// After Prepare, the Buffered bytes come out of Read without a read of the
// source, and they, then the source's own bytes, are the document Read
// gives whole; Done says when the source has no more.
func TestReaderBuffered(t *testing.T) {
	m := mustMatch(t, resetConfig, "/page")
	long := "<!doctype html><html><head><title>One</title></head><body>" + strings.Repeat("<p>body text</p>\n", 20000) + "</body></html>"
	for _, tc := range []struct {
		name, doc string
		wrap      func(io.Reader) io.Reader
		done      bool
	}{
		{"long page", long, nil, false},
		{"long page, a byte a read", long, iotest.OneByteReader, false},
		{"short page", "<html><head><title>x</title></head><body>short</body></html>", nil, false},
		// A source that says EOF with its last bytes (as net/http's
		// bodies of known length do): nothing is left past the buffer.
		{"short page, EOF with the bytes", "<html><head><title>x</title></head><body>short</body></html>", iotest.DataErrReader, true},
		{"no head, EOF with the bytes", "<p>no head at all</p>", iotest.DataErrReader, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			whole, err := io.ReadAll(NewReader(strings.NewReader(tc.doc), Options{Match: m}))
			if err != nil {
				t.Fatal(err)
			}
			var src io.Reader = strings.NewReader(tc.doc)
			if tc.wrap != nil {
				src = tc.wrap(src)
			}
			cr := &countingReader{r: src}
			r := NewReader(cr, Options{Match: m})
			if err := r.Prepare(); err != nil && err != io.EOF {
				t.Fatal(err)
			}
			if r.Done() != tc.done {
				t.Fatalf("Done %v, want %v", r.Done(), tc.done)
			}
			before := cr.reads
			buf := make([]byte, r.Buffered())
			if _, err := io.ReadFull(r, buf); err != nil {
				t.Fatal(err)
			}
			if cr.reads != before || r.Buffered() != 0 {
				t.Fatalf("reading the %d buffered bytes read the source %d times; %d left buffered", len(buf), cr.reads-before, r.Buffered())
			}
			got := string(buf)
			if !tc.done {
				rest, err := io.ReadAll(cr)
				if err != nil {
					t.Fatal(err)
				}
				got += string(rest)
			}
			if got != string(whole) {
				t.Fatalf("buffered bytes then the source's: %d bytes; Read whole: %d", len(got), len(whole))
			}
			if strings.Contains(tc.doc, "<head>") && !strings.Contains(got, "From the rules.") {
				t.Fatalf("not rewritten: %.200s", got)
			}
		})
	}
}
