package proxy

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/headgate/headgate/internal/codec"
	"github.com/klauspost/compress/gzip"
)

// TestChooseByCost: with the default server.compress a client that
// accepts several codings alike gets the cheapest good one (zstd, then
// gzip, then br: the encoder bill's order), while its q-values still rule
// and q=0 refuses.
func TestChooseByCost(t *testing.T) {
	prefs := testConfig(t, "http://127.0.0.1:1", "").Server.Compress
	if strings.Join(prefs, ",") != "zstd,gzip,br" {
		t.Fatalf("default server.compress %q, want the bill's order zstd, gzip, br", prefs)
	}
	for _, tc := range []struct{ accept, want string }{
		{"gzip, deflate, br, zstd", "zstd"}, // Chrome, Firefox, Edge
		{"gzip, deflate, br", "gzip"},       // Safari: gzip 4 before brotli
		{"br", "br"},
		{"br, gzip;q=0.9", "br"},           // the client's preference wins over cost
		{"br;q=0.9, gzip;q=0.9", "gzip"},   // a tie: cost
		{"zstd;q=0, gzip, br", "gzip"},     // q=0 refuses
		{"zstd;q=0, gzip;q=0, br", "br"},   // the only acceptable one
		{"*", "zstd"},                      //
		{"*;q=0, br;q=0.1", "br"},          //
		{"gzip;q=0, br;q=0, zstd;q=0", ""}, // none: identity
		{"*;q=0", ""},
		{"deflate", ""}, // decoded, but not in server.compress
		{"identity", ""},
		{"", ""},
	} {
		var h []string
		if tc.accept != "" {
			h = []string{tc.accept}
		}
		ae := parseAcceptEncoding(h)
		want := tc.want
		if want == "" {
			want = identity
		}
		if got := ae.choose(prefs); got != want {
			t.Errorf("Accept-Encoding %q: %q, want %q", tc.accept, got, want)
		}
	}
}

// TestEncodersRoundTrip: every coding newEncoder makes, at the bill's
// levels, decodes to its input, also when the encoder comes back from its
// pool for the next response.
func TestEncodersRoundTrip(t *testing.T) {
	doc := []byte("<!doctype html><html><head><title>t</title></head><body>" +
		strings.Repeat("<p class=x>some text that a page has, and some more</p>\n", 3000) + "</body></html>")
	for _, c := range []string{cZstd, cGzip, cBr, cDeflate} {
		for round := 0; round < 2; round++ {
			var out bytes.Buffer
			e := newEncoder(c, &out)
			if err := encodeOnce(e, doc); err != nil {
				t.Fatalf("%s: %v", c, err)
			}
			releaseEncoder(e)
			d, err := codec.NewDecoder(c, bytes.NewReader(out.Bytes()))
			if err != nil {
				t.Fatalf("%s: %v", c, err)
			}
			got, err := io.ReadAll(d)
			d.Release()
			if err != nil || !bytes.Equal(got, doc) {
				t.Fatalf("%s, round %d: %d bytes back (%v), want %d", c, round, len(got), err, len(doc))
			}
			if out.Len() > len(doc)/5 {
				t.Errorf("%s: %d bytes for a %d-byte page that compresses 20×", c, out.Len(), len(doc))
			}
		}
	}
}

// TestRecodeGzipUpstream: a gzip upstream's rewritten page goes to a
// browser as zstd and to a client that takes gzip and br as gzip; an
// unchanged page keeps the upstream's own gzip bytes.
func TestRecodeGzipUpstream(t *testing.T) {
	page := "<!doctype html><html><head><title>Old</title></head><body>" + strings.Repeat("<p>body text</p>", 2000) + "</body></html>"
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, 6)
	zw.Write([]byte(page))
	zw.Close()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(gz.Bytes())
	}))
	defer up.Close()
	p, err := New(testConfig(t, up.URL, `
[[rule]]
match = "/new"
title = "New title"

[[rule]]
match = "/same"
`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(p)
	defer front.Close()
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	for _, tc := range []struct{ path, accept, coding, title string }{
		{"/new", "gzip, deflate, br, zstd", "zstd", "New title"},
		{"/new", "gzip, deflate, br", "gzip", "New title"},
		{"/new", "br", "br", "New title"},
		{"/same", "gzip, deflate, br, zstd", "gzip", "Old"}, // the upstream's bytes
	} {
		req, _ := http.NewRequest("GET", front.URL+tc.path, nil)
		req.Header.Set("Accept-Encoding", tc.accept)
		res, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Header.Get("Content-Encoding"); got != tc.coding {
			t.Fatalf("%s, %q: Content-Encoding %q, want %q", tc.path, tc.accept, got, tc.coding)
		}
		if tc.path == "/same" && !bytes.Equal(raw, gz.Bytes()) {
			t.Errorf("%s: an unchanged page is not the upstream's own gzip bytes", tc.path)
		}
		d, err := codec.NewDecoder(tc.coding, bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(d)
		d.Release()
		if err != nil || !strings.Contains(string(body), "<title>"+tc.title+"</title>") || !strings.HasSuffix(string(body), strings.Repeat("<p>body text</p>", 2000)+"</body></html>") {
			t.Errorf("%s, %q: body (%d bytes, %v) lacks the title %q or the page's tail", tc.path, tc.accept, len(body), err, tc.title)
		}
	}
}

// A zstd encoder is held by every zstd response in flight, and pooled: its
// memory is per connection. Its history is window + 128 KiB whatever the
// page's size, so the window is what sizes it: 1.5–1.8 MiB with a 1 MiB
// window, 0.75–1.05 MiB with zstdWindow (256 KiB).
func TestZstdEncoderMemory(t *testing.T) {
	page := []byte(strings.Repeat("<li><a href=\"/articles/2026/a-long-path\">An article title</a></li>\n", 3000))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	e := newZstd(io.Discard, zstdLevel)
	if _, err := e.Write(page); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	got, limit := after.TotalAlloc-before.TotalAlloc, uint64(1280<<10)
	t.Logf("a zstd encoder of a %d KiB page: %d KiB", len(page)>>10, got>>10)
	if got > limit {
		t.Fatalf("a zstd encoder of a %d KiB page allocated %d KiB, want at most %d", len(page)>>10, got>>10, limit>>10)
	}
}
