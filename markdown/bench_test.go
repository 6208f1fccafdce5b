package markdown

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/headgate/headgate/internal/hgtest"
)

// corpus returns the pages of ../shared/corpus, or skips.
func corpus(tb testing.TB) (pages [][]byte, size int64) {
	files, _ := filepath.Glob("../../shared/corpus/*.html")
	if len(files) == 0 {
		tb.Skip("../shared/corpus absent")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		pages = append(pages, b)
		size += int64(len(b))
	}
	return pages, size
}

// BenchmarkConvert converts every corpus page; MB/s is of HTML read, by
// the wall clock; cpu-MB/s by the process's CPU time, which a shared
// machine's load moves far less (reportCPU).
func BenchmarkConvert(b *testing.B) {
	pages, size := corpus(b)
	c, _ := New(Options{})
	b.SetBytes(size)
	b.ReportAllocs()
	cpu0 := hgtest.ProcessCPU()
	for b.Loop() {
		for _, p := range pages {
			if _, err := c.Convert(io.Discard, bytes.NewReader(p), Front{Title: "t"}); err != nil {
				b.Fatal(err)
			}
		}
	}
	reportCPU(b, size, cpu0)
}

// reportCPU reports cpu-MB/s: the bytes of b.N passes over size bytes per
// second of the process's CPU time since cpu0.
func reportCPU(b *testing.B, size int64, cpu0 time.Duration) {
	if d := hgtest.ProcessCPU() - cpu0; d > 0 && cpu0 > 0 {
		b.ReportMetric(float64(size)*float64(b.N)/d.Seconds()/1e6, "cpu-MB/s")
	}
}

// BenchmarkTokenize is the floor: x/net/html's tokenizer alone.
func BenchmarkTokenize(b *testing.B) {
	pages, size := corpus(b)
	b.SetBytes(size)
	b.ReportAllocs()
	cpu0 := hgtest.ProcessCPU()
	for b.Loop() {
		for _, p := range pages {
			z := html.NewTokenizer(bytes.NewReader(p))
			for z.Next() != html.ErrorToken {
			}
		}
	}
	reportCPU(b, size, cpu0)
}

// BenchmarkParse is the tree the converter does not build.
func BenchmarkParse(b *testing.B) {
	pages, size := corpus(b)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for _, p := range pages {
			if _, err := html.Parse(bytes.NewReader(p)); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestAllocsPerNode checks that allocations grow with the page's elements
// and attributes, not with its bytes or depth: at most 3 per start tag or
// attribute plus a constant. (x/net/html's tokenizer itself copies every
// attribute name to check for duplicates.)
func TestAllocsPerNode(t *testing.T) {
	pages, _ := corpus(t)
	c, _ := New(Options{})
	for _, p := range pages {
		tags, attrs := 0, 0
		z := html.NewTokenizer(bytes.NewReader(p))
		for tt := z.Next(); tt != html.ErrorToken; tt = z.Next() {
			if tt == html.StartTagToken || tt == html.SelfClosingTagToken {
				tags++
				for _, more := z.TagName(); more; attrs++ {
					_, _, more = z.TagAttr()
				}
			}
		}
		allocs := testing.AllocsPerRun(2, func() {
			c.Convert(io.Discard, bytes.NewReader(p), Front{})
		})
		t.Logf("%d bytes, %d start tags, %d attributes: %.0f allocs (%.2f per tag or attribute)",
			len(p), tags, attrs, allocs, allocs/float64(tags+attrs))
		if allocs > 3*float64(tags+attrs)+100 {
			t.Errorf("%.0f allocs for %d start tags and %d attributes", allocs, tags, attrs)
		}
	}
}
