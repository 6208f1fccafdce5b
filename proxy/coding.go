package proxy

import (
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/headgate/headgate/internal/codec"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

// Content codings headgate decodes (internal/codec) and may produce.
// "deflate" is the zlib format of RFC 9110 on the way out.
const (
	identity = codec.Identity
	cGzip    = codec.Gzip
	cDeflate = codec.Deflate
	cBr      = codec.Br
	cZstd    = codec.Zstd
)

// decodable lists the codings headgate reads, in the order it offers them
// upstream.
var decodable = [...]string{cZstd, cBr, cGzip, cDeflate}

// Compression levels of a re-encoded page, chosen by the encoder bill
// (BenchmarkEncoderBill; the table is in docs/performance.md,
// "Encodings"): for each coding the cheapest setting whose output is at
// most 10% larger than gzip -6's (what an origin typically sends) on every
// page of the bill. A rewritten page is encoded on every request, so CPU
// per byte is the proxy's bill; past that bound a byte saved costs more
// CPU than it is worth. The same bill orders server.compress's default:
// zstd (5.3 ns/B), gzip (7.0), br (16.3).
const (
	// GzipLevel is the gzip level of a re-encoded page (exported for the
	// load benchmark's reference proxy, which re-encodes at the same one).
	GzipLevel    = 4
	gzipLevel    = GzipLevel
	deflateLevel = GzipLevel // the same compressor in a zlib wrapper
	brotliLevel  = 2         // 0 and 1 are a third larger than gzip -6
	// zstdLevel: SpeedFastest is as small as gzip -5 over the bill (2%
	// larger than gzip -6) for 26% less CPU than SpeedDefault.
	zstdLevel = zstd.SpeedFastest
	// zstdWindow is the zstd encoder's window. A pooled encoder keeps a
	// history of window + 128 KiB whatever the page's size: 1.5–1.8 MiB
	// an encoder at a 1 MiB window, 0.75–1.05 MiB at 256 KiB, and one is
	// held by every zstd response in flight (32 at 32 connections). A page
	// under 256 KiB compresses to the same bytes; over the corpus the
	// largest pages grew by at most 3.6 % (wiki-list, 2.3 MB, still under
	// gzip -6), the rest by under 1 % (docs/performance.md). Clients
	// decode with a window this size too.
	zstdWindow = 256 << 10
)

// acceptEncoding is a parsed Accept-Encoding header: the q-value (in
// thousandths) of each coding headgate knows, with "*" applied.
type acceptEncoding struct {
	q       [4]int16 // indexed like decodable; -1: not mentioned
	star    int16    // q of "*"; -1: not mentioned
	present bool     // the header was sent at all
}

func codingIndex(c string) int {
	switch c {
	case cZstd:
		return 0
	case cBr:
		return 1
	case cGzip, "x-gzip":
		return 2
	case cDeflate:
		return 3
	}
	return -1
}

// parseAcceptEncoding reads an Accept-Encoding header (RFC 9110 §12.5.3).
// Malformed members are ignored.
func parseAcceptEncoding(values []string) acceptEncoding {
	ae := acceptEncoding{q: [4]int16{-1, -1, -1, -1}, star: -1, present: len(values) > 0}
	for _, v := range values {
		for v != "" {
			var member string
			member, v, _ = strings.Cut(v, ",")
			name, params, _ := strings.Cut(member, ";")
			name = strings.ToLower(strings.TrimSpace(name))
			if name == "" {
				continue
			}
			q := int16(1000)
			for params != "" {
				var p string
				p, params, _ = strings.Cut(params, ";")
				k, val, _ := strings.Cut(p, "=")
				if strings.EqualFold(strings.TrimSpace(k), "q") {
					q = parseQ(strings.TrimSpace(val))
				}
			}
			if name == "*" {
				ae.star = q
			} else if i := codingIndex(name); i >= 0 {
				ae.q[i] = max(ae.q[i], q)
			}
		}
	}
	return ae
}

// parseQ parses a qvalue ("0", "0.5", "1.000") into thousandths; anything
// malformed counts as 0 (not acceptable), the cautious reading.
func parseQ(s string) int16 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f > 1 {
		return 0
	}
	return int16(f*1000 + 0.5)
}

func (ae *acceptEncoding) qOf(i int) int16 {
	if ae.q[i] >= 0 {
		return ae.q[i]
	}
	if ae.star >= 0 {
		return ae.star
	}
	return 0
}

// upstream returns the Accept-Encoding to send upstream: the client's
// acceptable codings limited to those headgate decodes, or "" for none
// (identity).
//
// It is built on the stack; a browser's offer (every coding, q=1) comes
// back as a constant, so that the common requests allocate nothing here.
func (ae *acceptEncoding) upstream() string {
	var arr [96]byte
	b := arr[:0]
	for i, c := range decodable {
		q := ae.qOf(i)
		if q <= 0 {
			continue
		}
		if len(b) > 0 {
			b = append(b, ", "...)
		}
		b = append(b, c...)
		if q < 1000 {
			b = append(b, ";q="...)
			b = strconv.AppendFloat(b, float64(q)/1000, 'f', -1, 64)
		}
	}
	switch string(b) {
	case "":
		return ""
	case allDecodable:
		return allDecodable
	}
	return string(b)
}

// allDecodable is upstream's offer when the client accepts every coding.
var allDecodable = strings.Join(decodable[:], ", ")

// choose picks the coding of a re-encoded response: the acceptable coding
// with the highest q among prefs (server.compress), earlier ones winning
// ties; identity when the client accepts none of them. The default prefs
// are in order of measured cost, so a client that accepts several codings
// alike gets the cheapest good one; a q-value still says what the client
// prefers, and q=0 refuses a coding.
//
// The upstream's coding is not preferred: a rewritten page is decoded
// whole and re-encoded, and no encoder here can continue the upstream's
// compressed stream after a changed head (a deflate or zstd stream refers
// back into the bytes before it), so the coding that costs least to
// produce is the best one whatever the upstream sent. An unchanged page is
// replayed as the upstream's own bytes, coding and all, or encoded here
// when headgate asked the upstream for identity (upstream.go).
func (ae *acceptEncoding) choose(prefs []string) string {
	best, bestQ := identity, int16(0)
	for _, c := range prefs {
		i := codingIndex(c)
		if i < 0 {
			continue
		}
		if q := ae.qOf(i); q > bestQ {
			best, bestQ = c, q
		}
	}
	return best
}

// ---- encoders ----

// encoder is a pooled writer of one coding.
type encoder interface {
	io.Writer
	Flush() error
	Close() error
}

var (
	gzipWriters   sync.Pool // *gzip.Writer
	zlibWriters   sync.Pool // *zlib.Writer
	brotliWriters sync.Pool // *brotli.Writer
	zstdWriters   sync.Pool // *zstd.Encoder
)

// newEncoder returns a pooled encoder of coding writing to w.
func newEncoder(coding string, w io.Writer) encoder {
	switch coding {
	case cGzip:
		if e, ok := gzipWriters.Get().(*gzip.Writer); ok {
			e.Reset(w)
			return e
		}
		e, _ := gzip.NewWriterLevel(w, gzipLevel)
		return e
	case cDeflate:
		if e, ok := zlibWriters.Get().(*zlib.Writer); ok {
			e.Reset(w)
			return e
		}
		e, _ := zlib.NewWriterLevel(w, deflateLevel)
		return e
	case cBr:
		if e, ok := brotliWriters.Get().(*brotli.Writer); ok {
			e.Reset(w)
			return e
		}
		return brotli.NewWriterLevel(w, brotliLevel)
	case cZstd:
		if e, ok := zstdWriters.Get().(*zstd.Encoder); ok {
			e.Reset(w)
			return e
		}
		return newZstd(w, zstdLevel)
	}
	return nil
}

// newZstd returns a zstd encoder with headgate's options at level: one
// goroutine, zstdWindow, the encoder's lower-memory mode.
func newZstd(w io.Writer, level zstd.EncoderLevel) *zstd.Encoder {
	e, _ := zstd.NewWriter(w, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(level),
		zstd.WithWindowSize(zstdWindow), zstd.WithLowerEncoderMem(true))
	return e
}

// releaseEncoder returns e to its pool. It must not be used after.
func releaseEncoder(e encoder) {
	switch e := e.(type) {
	case *gzip.Writer:
		e.Reset(io.Discard)
		gzipWriters.Put(e)
	case *zlib.Writer:
		e.Reset(io.Discard)
		zlibWriters.Put(e)
	case *brotli.Writer:
		e.Reset(io.Discard)
		brotliWriters.Put(e)
	case *zstd.Encoder:
		e.Reset(io.Discard)
		zstdWriters.Put(e)
	}
}
