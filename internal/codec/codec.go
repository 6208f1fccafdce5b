// Package codec decodes the content codings headgate reads — gzip,
// deflate (zlib-wrapped as RFC 9110 says, or raw, as some servers send
// it), br and zstd — with pooled decoders and one memory bound: the one
// content decoder of the proxy and the audit.
package codec

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

// The content codings, as Normalize spells them.
const (
	Identity = "identity"
	Gzip     = "gzip"
	Deflate  = "deflate"
	Br       = "br"
	Zstd     = "zstd"
)

// ZstdMaxWindow bounds the memory one zstd response may make a decoder
// allocate: 8 MiB is what RFC 8878 asks of web decoders. A frame that
// needs more fails with ErrBadEncoding.
const ZstdMaxWindow = 8 << 20

// Normalize spells a response's Content-Encoding as a coding of this
// package. ok is false for a coding it does not decode (also a stack of
// several codings).
func Normalize(h string) (coding string, ok bool) {
	h = strings.TrimSpace(h)
	switch strings.ToLower(h) {
	case "", Identity:
		return Identity, true
	case Gzip, "x-gzip":
		return Gzip, true
	case Deflate:
		return Deflate, true
	case Br:
		return Br, true
	case Zstd:
		return Zstd, true
	}
	return h, false
}

// Decoder is a pooled reader of one coding.
type Decoder interface {
	io.Reader
	Release() // return to its pool; the decoder must not be used after
}

var (
	gzipReaders   sync.Pool // *gzipDecoder
	zstdReaders   sync.Pool // *zstdDecoder
	brotliReaders sync.Pool // *brotliDecoder
	flateReaders  sync.Pool // *flateDecoder
)

type gzipDecoder struct{ gzip.Reader }

func (d *gzipDecoder) Release() { gzipReaders.Put(d) }

type zstdDecoder struct{ *zstd.Decoder }

func (d *zstdDecoder) Release() {
	_ = d.Decoder.Reset(nil) // drop the reference to the body
	zstdReaders.Put(d)
}

type brotliDecoder struct{ *brotli.Reader }

func (d *brotliDecoder) Release() { brotliReaders.Put(d) }

// flateDecoder reads "deflate": zlib-wrapped as the RFC says, or raw.
type flateDecoder struct {
	br  *bufio.Reader
	rc  io.ReadCloser // the zlib or raw flate reader
	raw bool
}

func (d *flateDecoder) Read(p []byte) (int, error) { return d.rc.Read(p) }
func (d *flateDecoder) Release() {
	d.br.Reset(nil)
	flateReaders.Put(d)
}

// ErrBadEncoding marks a body that does not decode in its declared coding.
var ErrBadEncoding = errors.New("corrupt content coding")

// NewDecoder returns a decoder of coding (as Normalize spells it) over r. It may read from r (the
// gzip and zlib headers); an error wraps ErrBadEncoding (callers that wrap r
// tell a failing source apart themselves).
func NewDecoder(coding string, r io.Reader) (Decoder, error) {
	bad := func(err error) error {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("%w: %s: %w", ErrBadEncoding, coding, err)
	}
	switch coding {
	case Gzip:
		d, _ := gzipReaders.Get().(*gzipDecoder)
		if d == nil {
			d = new(gzipDecoder)
		}
		if err := d.Reset(r); err != nil {
			gzipReaders.Put(d)
			return nil, bad(err)
		}
		return d, nil
	case Zstd:
		d, _ := zstdReaders.Get().(*zstdDecoder)
		if d == nil {
			zd, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
				zstd.WithDecoderMaxWindow(ZstdMaxWindow))
			if err != nil {
				return nil, err
			}
			d = &zstdDecoder{zd}
		}
		if err := d.Decoder.Reset(r); err != nil {
			d.Release()
			return nil, bad(err)
		}
		return d, nil
	case Br:
		d, _ := brotliReaders.Get().(*brotliDecoder)
		if d == nil {
			return &brotliDecoder{brotli.NewReader(r)}, nil
		}
		if err := d.Reset(r); err != nil {
			return nil, bad(err)
		}
		return d, nil
	case Deflate:
		d, _ := flateReaders.Get().(*flateDecoder)
		if d == nil {
			d = &flateDecoder{br: bufio.NewReaderSize(r, 4096)}
		} else {
			d.br.Reset(r)
		}
		hdr, err := d.br.Peek(2)
		if err != nil && len(hdr) < 2 {
			d.Release()
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
				d.Release()
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
