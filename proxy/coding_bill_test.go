package proxy

import (
	"bytes"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/headgate/headgate/internal/codec"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// The encoder bill: CPU per byte and output size of every coding and level
// headgate could re-encode a page with, on the corpus pages. It decided
// the default server.compress order and the levels in coding.go (the
// table is in docs/performance.md, "Encodings"):
//
//	go test -run '^$' -bench EncoderBill -benchtime 20x ./proxy/
//	HEADGATE_BILL_PAGES=bbc.html go test -run '^$' -bench 'EncoderBill/bbc' ./proxy/
//
// Each op encodes one page with an encoder reused through Reset, as the
// pool in coding.go reuses them, written in the 32 KiB pieces
// ReverseProxy copies. Reported beside ns/op and MB/s: cpu_ns/B and
// cpu_µs/op (the CPU time of the benchmark's own thread, per input byte and
// per page: robust to a loaded machine, where ns/op is not), out_B (the
// encoded size) and ratio_% (out/in).

// billPages are typical pages of the corpus: a news front page, a blog
// post, a product page, a Q&A page, an encyclopedia article, a landing
// page.
var billPages = []string{"bbc.html", "blogpost.html", "amazon.html", "stackoverflow.html", "wikipedia.html", "cloudflare.com.html"}

// billCoding is one coding at one setting.
type billCoding struct {
	name   string
	coding string // for the round-trip check
	new    func(w io.Writer) encoder
}

func gzipAt(level int) func(io.Writer) encoder {
	return func(w io.Writer) encoder { e, _ := gzip.NewWriterLevel(w, level); return e }
}

func zstdAt(level zstd.EncoderLevel) func(io.Writer) encoder {
	// The options of newEncoder, at this level.
	return func(w io.Writer) encoder { return newZstd(w, level) }
}

func brotliAt(level int) func(io.Writer) encoder {
	return func(w io.Writer) encoder { return brotli.NewWriterLevel(w, level) }
}

func billCodings() []billCoding {
	cs := []billCoding{
		{"gzip-huffman", cGzip, gzipAt(gzip.HuffmanOnly)},
		{"gzip-stateless", cGzip, gzipAt(gzip.StatelessCompression)},
	}
	for l := 1; l <= 6; l++ {
		cs = append(cs, billCoding{"gzip-" + strconv.Itoa(l), cGzip, gzipAt(l)})
	}
	cs = append(cs,
		billCoding{"zstd-fastest", cZstd, zstdAt(zstd.SpeedFastest)},
		billCoding{"zstd-default", cZstd, zstdAt(zstd.SpeedDefault)},
		billCoding{"zstd-better", cZstd, zstdAt(zstd.SpeedBetterCompression)},
	)
	for _, l := range []int{0, 1, 2, 3, 4, 5, 11} {
		cs = append(cs, billCoding{"br-" + strconv.Itoa(l), cBr, brotliAt(l)})
	}
	// What headgate produces today, through its own pool.
	for _, c := range []string{cZstd, cGzip, cBr} {
		cs = append(cs, billCoding{"headgate-" + c, c, func(w io.Writer) encoder { return newEncoder(c, w) }})
	}
	return cs
}

// reportCPU reports the CPU the benchmark's thread used per input byte
// (cpu_ns/B) and per page (cpu_µs/op): on a loaded machine the figure to
// compare, where ns/op counts the wait for a core too.
func reportCPU(b *testing.B, ok bool, cpu time.Duration, size int) {
	if !ok {
		return
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(size), "cpu_ns/B")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu_µs/op")
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// resetter is what the pooled encoders have in common.
type resetter interface{ Reset(io.Writer) }

func encodeOnce(e encoder, doc []byte) error {
	for p := doc; len(p) > 0; {
		n := min(len(p), 32<<10)
		if _, err := e.Write(p[:n]); err != nil {
			return err
		}
		p = p[n:]
	}
	return e.Close()
}

// billPage is one corpus page, named without its .html.
type billPage struct {
	name string
	doc  []byte
}

// readBillPages reads the corpus pages the bills measure: billPages, or
// the names in HEADGATE_BILL_PAGES (comma-separated).
func readBillPages(b *testing.B) []billPage {
	names := billPages
	if s := os.Getenv("HEADGATE_BILL_PAGES"); s != "" {
		names = strings.Split(s, ",")
	}
	var out []billPage
	for _, name := range names {
		doc, err := os.ReadFile("../../shared/corpus/" + name)
		if err != nil {
			b.Skipf("the corpus (../shared/corpus) is not here: %v", err)
		}
		out = append(out, billPage{strings.TrimSuffix(name, ".html"), doc})
	}
	return out
}

func BenchmarkEncoderBill(b *testing.B) {
	for _, bp := range readBillPages(b) {
		page, doc := bp.name, bp.doc
		for _, c := range billCodings() {
			if c.name == "br-11" && len(doc) > 128<<10 {
				continue // seconds a page: measured on the smaller pages only
			}
			b.Run(page+"/"+c.name, func(b *testing.B) {
				// Once, outside the clock: the output decodes to the page.
				var out bytes.Buffer
				e := c.new(&out)
				if err := encodeOnce(e, doc); err != nil {
					b.Fatal(err)
				}
				dec, err := codec.NewDecoder(c.coding, bytes.NewReader(out.Bytes()))
				if err != nil {
					b.Fatal(err)
				}
				got, err := io.ReadAll(dec)
				dec.Release()
				if err != nil || !bytes.Equal(got, doc) {
					b.Fatalf("round trip: %d bytes, %v", len(got), err)
				}
				size := out.Len()

				var cw countWriter
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				b.ReportAllocs()
				b.SetBytes(int64(len(doc)))
				b.ResetTimer()
				cpu0, cpuOK := threadCPU()
				for range b.N {
					e.(resetter).Reset(&cw)
					if err := encodeOnce(e, doc); err != nil {
						b.Fatal(err)
					}
				}
				cpu1, _ := threadCPU()
				b.StopTimer()
				reportCPU(b, cpuOK, cpu1-cpu0, len(doc))
				b.ReportMetric(float64(size), "out_B")
				b.ReportMetric(100*float64(size)/float64(len(doc)), "ratio_%")
			})
		}
	}
}

// BenchmarkDecodeBill is the other half of a re-encoding: reading the
// upstream's coding (as peer upstream serves it: gzip at its default
// level, and the others at theirs).
//
//	go test -run '^$' -bench DecodeBill -benchtime 20x ./proxy/
func BenchmarkDecodeBill(b *testing.B) {
	for _, bp := range readBillPages(b) {
		page, doc := bp.name, bp.doc
		for _, c := range []billCoding{
			{"gzip-6", cGzip, gzipAt(6)},
			{"zstd-default", cZstd, zstdAt(zstd.SpeedDefault)},
			{"br-5", cBr, brotliAt(5)},
		} {
			b.Run(page+"/"+c.name, func(b *testing.B) {
				var enc bytes.Buffer
				if err := encodeOnce(c.new(&enc), doc); err != nil {
					b.Fatal(err)
				}
				buf := make([]byte, 32<<10)
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				b.ReportAllocs()
				b.SetBytes(int64(len(doc)))
				b.ResetTimer()
				cpu0, cpuOK := threadCPU()
				for range b.N {
					dec, err := codec.NewDecoder(c.coding, bytes.NewReader(enc.Bytes()))
					if err != nil {
						b.Fatal(err)
					}
					if _, err := io.CopyBuffer(io.Discard, dec, buf); err != nil {
						b.Fatal(err)
					}
					dec.Release()
				}
				cpu1, _ := threadCPU()
				b.StopTimer()
				reportCPU(b, cpuOK, cpu1-cpu0, len(doc))
			})
		}
	}
}
