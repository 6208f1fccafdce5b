package proxy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

// Content codings headgate decodes and may produce. "deflate" is the zlib
// format of RFC 9110 on the way out; on the way in a raw deflate stream is
// accepted too, as some servers send one.
const (
	identity = "identity"
	cGzip    = "gzip"
	cDeflate = "deflate"
	cBr      = "br"
	cZstd    = "zstd"
)

// decodable lists the codings headgate reads, in the order it offers them
// upstream.
var decodable = [...]string{cZstd, cBr, cGzip, cDeflate}

// Compression levels: chosen for dynamic HTML, where CPU per response
// matters more than the last percent of size.
const (
	gzipLevel    = 5
	deflateLevel = 5
	brotliLevel  = 4
)

// zstdMaxWindow bounds the memory one zstd response may make headgate
// allocate: 8 MiB is what RFC 8878 asks of web decoders.
const zstdMaxWindow = 8 << 20

// upstreamCoding normalises a response's Content-Encoding. ok is false for
// a coding headgate does not decode (also a stack of several codings).
func upstreamCoding(h string) (coding string, ok bool) {
	h = strings.TrimSpace(h)
	switch strings.ToLower(h) {
	case "", identity:
		return identity, true
	case cGzip, "x-gzip":
		return cGzip, true
	case cDeflate:
		return cDeflate, true
	case cBr:
		return cBr, true
	case cZstd:
		return cZstd, true
	}
	return h, false
}

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
func (ae *acceptEncoding) upstream() string {
	var b strings.Builder
	for i, c := range decodable {
		q := ae.qOf(i)
		if q <= 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c)
		if q < 1000 {
			fmt.Fprintf(&b, ";q=%s", strconv.FormatFloat(float64(q)/1000, 'f', -1, 64))
		}
	}
	return b.String()
}

// choose picks the coding of a re-encoded response: the acceptable coding
// with the highest q among prefs (server.compress), earlier ones winning
// ties; identity when the client accepts none of them.
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

// ---- decoders ----

// decoder is a pooled reader of one coding.
type decoder interface {
	io.Reader
	release() // return to its pool; the decoder must not be used after
}

var (
	gzipReaders   sync.Pool // *gzipDecoder
	zstdReaders   sync.Pool // *zstdDecoder
	brotliReaders sync.Pool // *brotliDecoder
	flateReaders  sync.Pool // *flateDecoder
)

type gzipDecoder struct{ gzip.Reader }

func (d *gzipDecoder) release() { gzipReaders.Put(d) }

type zstdDecoder struct{ *zstd.Decoder }

func (d *zstdDecoder) release() {
	_ = d.Decoder.Reset(nil) // drop the reference to the body
	zstdReaders.Put(d)
}

type brotliDecoder struct{ *brotli.Reader }

func (d *brotliDecoder) release() { brotliReaders.Put(d) }

// flateDecoder reads "deflate": zlib-wrapped as the RFC says, or raw.
type flateDecoder struct {
	br  *bufio.Reader
	rc  io.ReadCloser // the zlib or raw flate reader
	raw bool
}

func (d *flateDecoder) Read(p []byte) (int, error) { return d.rc.Read(p) }
func (d *flateDecoder) release() {
	d.br.Reset(nil)
	flateReaders.Put(d)
}

// errBadEncoding marks a body that does not decode in its declared coding.
var errBadEncoding = errors.New("corrupt content coding")

// newDecoder returns a decoder of coding over r. It may read from r (the
// gzip and zlib headers); an error wraps errBadEncoding (callers that wrap r
// tell a failing source apart themselves).
func newDecoder(coding string, r io.Reader) (decoder, error) {
	bad := func(err error) error {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("%w: %s: %w", errBadEncoding, coding, err)
	}
	switch coding {
	case cGzip:
		d, _ := gzipReaders.Get().(*gzipDecoder)
		if d == nil {
			d = new(gzipDecoder)
		}
		if err := d.Reset(r); err != nil {
			gzipReaders.Put(d)
			return nil, bad(err)
		}
		return d, nil
	case cZstd:
		d, _ := zstdReaders.Get().(*zstdDecoder)
		if d == nil {
			zd, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
				zstd.WithDecoderMaxWindow(zstdMaxWindow))
			if err != nil {
				return nil, err
			}
			d = &zstdDecoder{zd}
		}
		if err := d.Decoder.Reset(r); err != nil {
			d.release()
			return nil, bad(err)
		}
		return d, nil
	case cBr:
		d, _ := brotliReaders.Get().(*brotliDecoder)
		if d == nil {
			return &brotliDecoder{brotli.NewReader(r)}, nil
		}
		if err := d.Reset(r); err != nil {
			return nil, bad(err)
		}
		return d, nil
	case cDeflate:
		d, _ := flateReaders.Get().(*flateDecoder)
		if d == nil {
			d = &flateDecoder{br: bufio.NewReaderSize(r, 4096)}
		} else {
			d.br.Reset(r)
		}
		hdr, err := d.br.Peek(2)
		if err != nil && len(hdr) < 2 {
			d.release()
			return nil, bad(err)
		}
		isZlib := hdr[0]&0x0f == 8 && (uint16(hdr[0])<<8|uint16(hdr[1]))%31 == 0
		if isZlib {
			if d.rc != nil && !d.raw {
				err = d.rc.(zlib.Resetter).Reset(d.br, nil)
			} else {
				d.rc, err = zlib.NewReader(d.br)
			}
			if err != nil {
				d.rc = nil
				d.release()
				return nil, bad(err)
			}
		} else if d.rc != nil && d.raw {
			_ = d.rc.(flate.Resetter).Reset(d.br, nil)
		} else {
			d.rc = flate.NewReader(d.br)
		}
		d.raw = !isZlib
		return d, nil
	}
	return nil, fmt.Errorf("coding %q is not decodable", coding)
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
		e, _ := zstd.NewWriter(w, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedDefault),
			zstd.WithWindowSize(1<<20), zstd.WithLowerEncoderMem(true))
		return e
	}
	return nil
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
