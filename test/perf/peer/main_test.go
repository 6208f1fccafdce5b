package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// TestRecodeWholeBody: the -recode proxy sends every byte of the page,
// re-encoded, and ends the response cleanly. It used to close its own pipe
// (res.Body was the pipe by the time the copier closed "the upstream"), so
// every response was cut and wrk completed no request.
func TestRecodeWholeBody(t *testing.T) {
	doc := []byte("<!doctype html><html><head><title>t</title></head><body>" +
		strings.Repeat("<p>some text that compresses well</p>\n", 5000) + "</body></html>")
	up := httptest.NewServer(newUpstream(doc))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	for _, level := range []int{gzip.DefaultCompression, 1, gzip.HuffmanOnly} {
		px := httptest.NewServer(newPlain(u, level))
		// Several requests on one keep-alive connection: a cut response
		// would also break the next one.
		tr := &http.Transport{DisableCompression: true}
		c := &http.Client{Transport: tr}
		for i := 0; i < 3; i++ {
			req, _ := http.NewRequest("GET", px.URL+"/page", nil)
			req.Header.Set("Accept-Encoding", "gzip")
			res, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil {
				t.Fatalf("level %d, request %d: body cut: %v (%d bytes)", level, i, err, len(raw))
			}
			if res.Header.Get("Content-Encoding") != "gzip" {
				t.Fatalf("level %d: Content-Encoding %q", level, res.Header.Get("Content-Encoding"))
			}
			zr, err := gzip.NewReader(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(zr)
			if err != nil || !bytes.Equal(got, doc) {
				t.Fatalf("level %d: decoded %d bytes (err %v), want the page's %d", level, len(got), err, len(doc))
			}
		}
		// A client that takes no gzip gets the upstream's identity bytes.
		res, err := c.Get(px.URL + "/page")
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || !bytes.Equal(raw, doc) || res.Header.Get("Content-Encoding") != "" {
			t.Fatalf("level %d, identity: %d bytes, %q, %v", level, len(raw), res.Header.Get("Content-Encoding"), err)
		}
		tr.CloseIdleConnections()
		px.Close()
	}
}

// TestPlainPassesGzip: without -recode the upstream's gzip bytes go
// through as they are.
func TestPlainPassesGzip(t *testing.T) {
	doc := []byte("<html><head></head><body>" + strings.Repeat("x", 10000) + "</body></html>")
	up := httptest.NewServer(newUpstream(doc))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	px := httptest.NewServer(newPlain(u, noRecode))
	defer px.Close()
	req, _ := http.NewRequest("GET", px.URL+"/", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	res, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.ContentLength <= 0 || res.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("Content-Length %d, Content-Encoding %q: want the upstream's gzip with its length", res.ContentLength, res.Header.Get("Content-Encoding"))
	}
}

// TestLoopbackOnly: -listen and -pprof take loopback addresses only.
func TestLoopbackOnly(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:18001": true, "localhost:6060": true,
		"": false, ":18001": false, "0.0.0.0:18001": false, "10.0.0.1:80": false, "127.0.0.1": false,
	} {
		if err := loopback(addr); (err == nil) != ok {
			t.Errorf("%q: %v", addr, err)
		}
	}
}
