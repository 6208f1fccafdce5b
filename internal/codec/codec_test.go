package codec

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

func encode(t *testing.T, coding string, raw bool, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	var w io.WriteCloser
	switch {
	case coding == Gzip:
		w = gzip.NewWriter(&b)
	case coding == Deflate && raw:
		w, _ = flate.NewWriter(&b, 5)
	case coding == Deflate:
		w = zlib.NewWriter(&b)
	case coding == Br:
		w = brotli.NewWriter(&b)
	case coding == Zstd:
		w, _ = zstd.NewWriter(&b)
	}
	w.Write(data)
	w.Close()
	return b.Bytes()
}

// Every coding decodes, from a pooled decoder used twice; deflate both as
// RFC 9110 says (zlib) and raw, as some servers send it.
func TestRoundTrip(t *testing.T) {
	page := []byte(strings.Repeat("<p>héllo, wörld</p>\n", 500))
	for _, tc := range []struct {
		coding string
		raw    bool
	}{{Gzip, false}, {Deflate, false}, {Deflate, true}, {Br, false}, {Zstd, false}} {
		for range 2 {
			d, err := NewDecoder(tc.coding, bytes.NewReader(encode(t, tc.coding, tc.raw, page)))
			if err != nil {
				t.Fatalf("%s: %v", tc.coding, err)
			}
			got, err := io.ReadAll(d)
			d.Release()
			if err != nil || !bytes.Equal(got, page) {
				t.Fatalf("%s raw=%v: %d bytes, %v", tc.coding, tc.raw, len(got), err)
			}
		}
	}
}

func TestCorrupt(t *testing.T) {
	if _, err := NewDecoder(Gzip, strings.NewReader("not compressed at all, really")); !errors.Is(err, ErrBadEncoding) {
		t.Errorf("gzip: err = %v, want ErrBadEncoding", err)
	}
	// deflate and zstd find out on the first Read.
	for _, c := range []string{Deflate, Zstd} {
		d, err := NewDecoder(c, strings.NewReader("not compressed at all, really"))
		if err == nil {
			_, err = io.ReadAll(d)
			d.Release()
		}
		if err == nil {
			t.Errorf("%s: a corrupt body decoded", c)
		}
	}
	if _, err := NewDecoder("compress", strings.NewReader("")); err == nil {
		t.Error("an unknown coding decoded")
	}
}

// A zstd frame that asks for a window over 8 MiB is refused, not allocated.
func TestZstdWindowBound(t *testing.T) {
	// The magic number, a frame header with no content size and a window
	// descriptor of 2^(10+16) bytes, then one raw block of one byte.
	frame := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 16 << 3, 0x09, 0x00, 0x00, 'x'}
	if d, err := NewDecoder(Zstd, bytes.NewReader([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 12 << 3, 0x09, 0x00, 0x00, 'x'})); err != nil {
		t.Fatal(err)
	} else if got, err := io.ReadAll(d); err != nil || string(got) != "x" {
		t.Fatalf("a 4 MiB-window frame: %q, %v", got, err) // the frame itself is sound
	} else {
		d.Release()
	}
	d, err := NewDecoder(Zstd, bytes.NewReader(frame))
	if err == nil {
		_, err = io.ReadAll(d)
		d.Release()
	}
	if err == nil {
		t.Error("a 64 MiB-window frame decoded")
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{"": Identity, " GZIP ": Gzip, "x-gzip": Gzip, "deflate": Deflate, "br": Br, "zstd": Zstd} {
		if got, ok := Normalize(in); !ok || got != want {
			t.Errorf("Normalize(%q) = %q, %v", in, got, ok)
		}
	}
	if _, ok := Normalize("gzip, br"); ok {
		t.Error("a stack of codings is decodable")
	}
}
