package test

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"
)

// filler is a body generated on the fly: head, n bytes of paragraphs, tail.
type filler struct {
	head, tail []byte
	n          int64 // body bytes left
	chunk      []byte
	off        int
}

const fillerTail = "<p id=end>the end</p></body></html>\n"

func newFiller(n int64) *filler {
	head, _, _ := bytes.Cut([]byte(page), []byte("<body>"))
	head = append(head, "<body>\n"...)
	return &filler{
		head:  head,
		tail:  []byte(fillerTail),
		n:     n,
		chunk: bytes.Repeat([]byte("<p>All work and no play makes Jack a dull boy, all day long.</p>\n"), 512),
	}
}

func (f *filler) size() int64 { return int64(len(f.head)) + f.n + int64(len(f.tail)) }

func (f *filler) Read(p []byte) (int, error) {
	switch {
	case len(f.head) > 0:
		n := copy(p, f.head)
		f.head = f.head[n:]
		return n, nil
	case f.n > 0:
		b := f.chunk[f.off:]
		if int64(len(b)) > f.n {
			b = b[:f.n]
		}
		n := copy(p, b)
		f.off = (f.off + n) % len(f.chunk)
		f.n -= int64(n)
		return n, nil
	case len(f.tail) > 0:
		n := copy(p, f.tail)
		f.tail = f.tail[n:]
		return n, nil
	}
	return 0, io.EOF
}

// tailWriter keeps the last bytes written and counts them all.
type tailWriter struct {
	n    int64
	last []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	w.last = append(w.last, p...)
	if len(w.last) > 4096 {
		w.last = append(w.last[:0], w.last[len(w.last)-4096:]...)
	}
	return len(p), nil
}

// A 500 MB identity page and a 100 MB page gzipped both ways stream
// through with headgate's peak RSS under 64 MiB.
func TestLargeBodiesFlatMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 600 MB")
	}
	const (
		identitySize = 500 << 20
		gzipSize     = 100 << 20
	)
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/identity":
			f := newFiller(identitySize)
			w.Header().Set("Content-Length", strconv.FormatInt(f.size(), 10))
			io.Copy(w, f)
		case "/gzip":
			w.Header().Set("Content-Encoding", "gzip")
			zw, _ := kgzip.NewWriterLevel(w, kgzip.BestSpeed)
			io.Copy(zw, newFiller(gzipSize))
			zw.Close()
		}
	})
	hg := start(t, config{Upstream: up.URL, Rules: pageRules, Server: "access_log = false"})

	t.Run("identity 500 MB", func(t *testing.T) {
		res, err := client.Get(hg.URL + "/identity")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		tw := &tailWriter{}
		head := make([]byte, 1024)
		n, _ := io.ReadFull(res.Body, head)
		rewrittenHead(t, head[:n], "/identity")
		if _, err := io.Copy(tw, res.Body); err != nil {
			t.Fatal(err)
		}
		if got := int64(n) + tw.n; got != res.ContentLength {
			t.Errorf("read %d bytes, Content-Length %d", got, res.ContentLength)
		}
		if res.ContentLength < identitySize || !bytes.HasSuffix(tw.last, []byte(fillerTail)) {
			t.Errorf("body incomplete: %d bytes", res.ContentLength)
		}
	})
	t.Run("gzip 100 MB both ways", func(t *testing.T) {
		req, _ := http.NewRequest("GET", hg.URL+"/gzip", nil)
		req.Header.Set("Accept-Encoding", "gzip")
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if ce := res.Header.Get("Content-Encoding"); ce != "gzip" {
			t.Fatalf("Content-Encoding %q", ce)
		}
		zr, err := kgzip.NewReader(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		head := make([]byte, 1024)
		n, _ := io.ReadFull(zr, head)
		rewrittenHead(t, head[:n], "/gzip")
		tw := &tailWriter{}
		if _, err := io.Copy(tw, zr); err != nil {
			t.Fatal(err)
		}
		if int64(n)+tw.n < gzipSize || !bytes.HasSuffix(tw.last, []byte(fillerTail)) {
			t.Errorf("body incomplete: %d bytes", tw.n)
		}
	})
	rss := hg.peakRSS(t)
	t.Logf("headgate peak RSS (VmHWM): %.1f MiB", float64(rss)/(1<<20))
	if rss > 64<<20 {
		t.Errorf("peak RSS %.1f MiB, want under 64 MiB", float64(rss)/(1<<20))
	}
}
