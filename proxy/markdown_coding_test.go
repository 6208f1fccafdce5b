package proxy

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

// mdFetch is mdGet with the client's Accept-Encoding; the body is read as
// it came, not decoded.
func mdFetch(t *testing.T, method, url, accept, acceptEncoding string) (*http.Response, []byte) {
	t.Helper()
	return fetchRaw(t, method, url, http.Header{"Accept": {accept}, "Accept-Encoding": {acceptEncoding}})
}

func decodeAs(t *testing.T, coding string, b []byte) []byte {
	t.Helper()
	var r io.Reader
	switch coding {
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	case "br":
		r = brotli.NewReader(bytes.NewReader(b))
	case "zstd":
		zr, err := zstd.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		r = zr
	case "":
		return b
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s: %v", coding, err)
	}
	return out
}

func varyTokens(h http.Header) []string {
	var out []string
	for _, v := range h.Values("Vary") {
		for t := range strings.SplitSeq(v, ",") {
			out = append(out, strings.TrimSpace(t))
		}
	}
	return out
}

// TestMarkdownCompressed: a Markdown answer is encoded in the coding the
// client's Accept-Encoding chooses among server.compress, as an HTML one
// is, says Vary: Accept, Accept-Encoding whatever the coding, and decodes
// to the identity answer's bytes. So is the HTML a failed conversion
// answers with.
func TestMarkdownCompressed(t *testing.T) {
	_, front, _ := mdProxy(t, mdConfig)
	for _, tc := range []struct{ ae, coding string }{
		{"gzip", "gzip"},
		{"br", "br"},
		{"zstd", "zstd"},
		{"gzip;q=0.5, br", "br"},
		{"gzip, deflate, br, zstd", "zstd"}, // server.compress's default order
		{"compress", ""},
		{"gzip;q=0", ""},
	} {
		for _, path := range []string{"/notes/3", "/notes/3.md", "/gz/1"} {
			plainRes, plain := mdFetch(t, "GET", front.URL+path, "text/markdown", "identity")
			if !isMarkdown(plainRes) || plainRes.Header.Get("Content-Encoding") != "" || plainRes.ContentLength != int64(len(plain)) {
				t.Fatalf("%s, identity: %v\n%s", path, plainRes.Header, plain)
			}
			res, b := mdFetch(t, "GET", front.URL+path, "text/markdown", tc.ae)
			if got := res.Header.Get("Content-Encoding"); got != tc.coding {
				t.Errorf("%s, Accept-Encoding %q: Content-Encoding %q, want %q", path, tc.ae, got, tc.coding)
				continue
			}
			vary := varyTokens(res.Header)
			if !slices.Contains(vary, "Accept") || !slices.Contains(vary, "Accept-Encoding") {
				t.Errorf("%s, %q: Vary %q, want Accept and Accept-Encoding", path, tc.ae, vary)
			}
			if res.ContentLength >= 0 && res.ContentLength != int64(len(b)) {
				t.Errorf("%s, %q: Content-Length %d of %d bytes", path, tc.ae, res.ContentLength, len(b))
			}
			if got := decodeAs(t, tc.coding, b); !bytes.Equal(got, plain) || !isMarkdown(res) {
				t.Errorf("%s, %q: %v\n%s\nwant\n%s", path, tc.ae, res.Header, got, plain)
			}
		}
	}
	// The HTML of a page too large to convert: encoded all the same.
	res, b := mdFetch(t, "GET", front.URL+"/big/1", "text/markdown", "gzip")
	if res.Header.Get("Content-Encoding") != "gzip" || !bytes.Contains(decodeAs(t, "gzip", b), []byte("filler text")) {
		t.Errorf("fallback HTML: %v", res.Header)
	}
}

// A HEAD of the Markdown form answers the GET's headers, the token count
// and an identity Content-Length included (SPEC §19.1: "A GET or HEAD …
// gets … X-Markdown-Tokens"), with no body.
func TestMarkdownHead(t *testing.T) {
	_, front := newTestProxy(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		head, rest, _ := strings.Cut(mdPage, "<body>")
		io.WriteString(w, head+"<body>"+strings.Repeat("<p>more words</p>", 2000)+rest)
	}, strings.Replace(mdConfig, `max_bytes = "2KiB"`, `max_bytes = "1MiB"`, 1))

	for _, ae := range []string{"identity", "gzip"} {
		get, _ := mdFetch(t, "GET", front.URL+"/notes/3.md", "", ae)
		head, body := mdFetch(t, "HEAD", front.URL+"/notes/3.md", "", ae)
		if len(body) != 0 || !isMarkdown(head) {
			t.Fatalf("HEAD: %v, body %q", head.Header, body)
		}
		if head.Header.Get("X-Markdown-Tokens") == "" {
			t.Errorf("%s: HEAD without X-Markdown-Tokens", ae)
		}
		if ae == "identity" && head.Header.Get("Content-Length") == "" {
			t.Errorf("identity HEAD without Content-Length")
		}
		delete(get.Header, "Date")
		delete(head.Header, "Date")
		if ae != "identity" {
			// The encoded length is known only by encoding; net/http
			// gives the GET's when the body fits its buffer.
			delete(get.Header, "Content-Length")
		}
		for k, v := range get.Header {
			if !slices.Equal(head.Header[k], v) {
				t.Errorf("%s: %s: HEAD %q, GET %q", ae, k, head.Header[k], v)
			}
		}
		for k := range head.Header {
			if _, ok := get.Header[k]; !ok {
				t.Errorf("%s: HEAD has %s, GET not", ae, k)
			}
		}
	}
}

// A request waiting for a conversion slot gives up when its context ends
// (the client went away) or its wait does, and takes a slot freed
// meanwhile.
func TestConversionSlots(t *testing.T) {
	var s convSlots
	n := cap(s.slots())
	for range n {
		if err := s.acquire(context.Background(), time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.acquire(ctx, time.Minute); err == nil || errors.Is(err, errNoSlot) {
		t.Fatalf("a canceled wait: %v", err)
	}
	if err := s.acquire(context.Background(), time.Millisecond); !errors.Is(err, errNoSlot) {
		t.Fatalf("a wait that ran out: %v, want errNoSlot", err)
	}
	got := make(chan error)
	go func() { got <- s.acquire(context.Background(), time.Minute) }()
	s.release()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	for range n {
		s.release()
	}
}
