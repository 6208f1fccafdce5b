package test

// Hostile upstreams and hostile clients (issue 19): each test runs the real
// binary against an upstream on 127.0.0.1 that does what an attacker's
// upstream, or an attacker's client through headgate, would.

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
)

// emptyMembers is a body of n bytes (rounded up to whole members) of empty
// gzip members, or of empty stored deflate blocks: it decodes to nothing.
type emptyMembers struct {
	unit []byte
	n    int64
}

func newEmptyMembers(t testing.TB, coding string, n int64) *emptyMembers {
	var one []byte
	switch coding {
	case "gzip":
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Close()
		one = b.Bytes()
	case "deflate":
		one = []byte{0x00, 0x00, 0x00, 0xff, 0xff} // a stored block, not final, of length 0
	default:
		t.Fatalf("coding %s", coding)
	}
	return &emptyMembers{unit: bytes.Repeat(one, (64<<10)/len(one)), n: n}
}

func (e *emptyMembers) size() int64 {
	u := int64(len(e.unit))
	return (e.n + u - 1) / u * u
}

func (e *emptyMembers) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for total < e.n {
		k, err := w.Write(e.unit)
		total += int64(k)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// Compressed bytes that decode to nothing are not recorded without end
// while headgate looks for the head: a 400 MiB body of empty gzip members,
// and three at once, go through unchanged with headgate's peak RSS
// bounded; the head search stops at 4 × max_head_bytes and is counted.
func TestEmptyMembersBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 1.6 GB through headgate")
	}
	const size = 400 << 20
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		coding := r.URL.Query().Get("coding")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Encoding", coding)
		n := int64(size)
		if coding == "deflate" {
			n = 100 << 20
		}
		newEmptyMembers(t, coding, n).WriteTo(w)
	})
	hg := start(t, config{Upstream: up.URL, Rules: pageRules})
	base := hg.peakRSS(t)
	fetch := func(coding string) error {
		req, _ := http.NewRequest("GET", hg.URL+"/page?coding="+coding, nil)
		req.Header.Set("Accept-Encoding", coding)
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		n, err := io.Copy(io.Discard, res.Body)
		if err != nil {
			return fmt.Errorf("after %d bytes: %v", n, err)
		}
		want := newEmptyMembers(t, coding, size).size()
		if coding == "deflate" {
			want = newEmptyMembers(t, coding, 100<<20).size()
		}
		if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != coding || n != want {
			return fmt.Errorf("status %d, coding %q, %d bytes; want 200, %s, %d bytes (the upstream's, unchanged)",
				res.StatusCode, res.Header.Get("Content-Encoding"), n, coding, want)
		}
		return nil
	}
	const bound = 96 << 20
	if err := fetch("gzip"); err != nil {
		t.Fatal(err)
	}
	one := hg.peakRSS(t)
	t.Logf("peak RSS: %d MiB at start, %d MiB after one 400 MiB body of empty gzip members", base>>20, one>>20)
	if one > bound {
		t.Errorf("peak RSS %d MiB after one body, want under %d MiB", one>>20, bound>>20)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for _, coding := range []string{"gzip", "gzip", "gzip", "deflate"} {
		wg.Go(func() { errs <- fetch(coding) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	three := hg.peakRSS(t)
	t.Logf("peak RSS: %d MiB after three more at once (and 100 MiB of empty deflate blocks)", three>>20)
	if three > bound {
		t.Errorf("peak RSS %d MiB after three bodies at once, want under %d MiB", three>>20, bound>>20)
	}
	if v := hg.metric(t, "headgate_head_search_limit_total"); v != 5 {
		t.Errorf("headgate_head_search_limit_total = %v, want 5", v)
	}
	if v := hg.metric(t, `headgate_requests_total{outcome="skipped_too_large"}`); v != 5 {
		t.Errorf(`requests_total{outcome="skipped_too_large"} = %v, want 5`, v)
	}
	// A real compressed page is still rewritten.
	up2 := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(encode(t, "gzip", []byte(page)))
	})
	hg2 := start(t, config{Upstream: up2.URL, Rules: pageRules})
	res, body := hg2.get(t, "GET", "/p", "Accept-Encoding: gzip")
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
	rewrittenHead(t, decode(t, res.Header.Get("Content-Encoding"), body), "/p")
}
