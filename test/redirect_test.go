package test

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// writeRedirectTable writes a table of n rows /old/N → /PREFIX/N, through
// a temporary file and a rename, as an operator (or a ConfigMap) replaces
// a file: headgate never reads it half-written.
func writeRedirectTable(t *testing.T, path, prefix string, n int) {
	t.Helper()
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(w, "from,to,status")
	for i := range n {
		fmt.Fprintf(w, "/old/%d,/%s/%d,\n", i, prefix, i)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// A 100,000-row redirect table is served, then replaced by SIGHUP and by a
// change of the file, while a bounded load client runs on 127.0.0.1: every
// response is the old table's answer or the new one's, never an error,
// never a page that should have redirected, and never the old answer once
// a client has seen the new one.
func TestRedirectTableSwapUnderLoad(t *testing.T) {
	const rows = 100_000
	up := newUpstream(t, htmlHandler(page))
	dir := t.TempDir()
	table := filepath.Join(dir, "redirects.csv")
	writeRedirectTable(t, table, "aaa", rows)
	hg := start(t, config{Upstream: up.URL, Rules: fmt.Sprintf("[[redirect_table]]\nfile = %q\n", table)})

	var version atomic.Int32 // the newest version a client has seen: 0 aaa, 1 bbb, 2 ccc
	prefixes := []string{"aaa", "bbb", "ccc"}
	var total, redirects, pages atomic.Int64
	var mu sync.Mutex
	var failures []string
	fail := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		if len(failures) < 20 {
			failures = append(failures, s)
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	tr := &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 8}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	deadline := time.Now().Add(60 * time.Second) // the bound, whatever happens
	for k := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(k), 7))
			seen := 0 // the newest version this client has seen
			for n := 0; n < 200_000 && time.Now().Before(deadline); n++ {
				select {
				case <-stop:
					return
				default:
				}
				i := rng.IntN(rows)
				target := fmt.Sprintf("/old/%d", i)
				if n%5 == 4 {
					target = fmt.Sprintf("/page/%d", i) // served, never redirected
				}
				res, err := c.Get(hg.URL + target)
				if err != nil {
					fail(fmt.Sprintf("GET %s: %v", target, err))
					continue
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				total.Add(1)
				if strings.HasPrefix(target, "/page/") {
					pages.Add(1)
					if res.StatusCode != 200 {
						fail(fmt.Sprintf("GET %s: %d, want 200", target, res.StatusCode))
					}
					continue
				}
				redirects.Add(1)
				loc := res.Header.Get("Location")
				v := -1
				for j, p := range prefixes {
					if loc == fmt.Sprintf("https://notes.example/%s/%d", p, i) {
						v = j
					}
				}
				switch {
				case res.StatusCode != 301 || v < 0:
					fail(fmt.Sprintf("GET %s: %d %q", target, res.StatusCode, loc))
				case v < seen:
					fail(fmt.Sprintf("GET %s: %q after this client saw version %d", target, loc, seen))
				default:
					seen = v
					for {
						cur := version.Load()
						if int32(v) <= cur || version.CompareAndSwap(cur, int32(v)) {
							break
						}
					}
				}
			}
		})
	}
	waitVersion := func(v int32, what string) {
		t.Helper()
		limit := time.Now().Add(30 * time.Second)
		for version.Load() < v {
			if time.Now().After(limit) {
				t.Fatalf("no client saw the table of %s within 30s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// Let the load run on the first table, then swap by SIGHUP: the new
	// table has the same size and mtime, so only the signal can show it.
	time.Sleep(500 * time.Millisecond)
	fi, _ := os.Stat(table)
	writeRedirectTable(t, table, "bbb", rows)
	os.Chtimes(table, fi.ModTime(), fi.ModTime())
	time.Sleep(1500 * time.Millisecond) // past a poll: the watcher must not have seen it
	if version.Load() != 0 {
		t.Fatal("the table changed before SIGHUP")
	}
	hg.cmd.Process.Signal(syscall.SIGHUP)
	waitVersion(1, "SIGHUP")
	// Then by a change of the file alone.
	time.Sleep(500 * time.Millisecond)
	writeRedirectTable(t, table, "ccc", rows)
	waitVersion(2, "the file change")
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()
	t.Logf("%d requests (%d redirects, %d pages) during two swaps of a %d-row table", total.Load(), redirects.Load(), pages.Load(), rows)
	if len(failures) > 0 {
		t.Fatalf("%d failed or wrong responses, first:\n%s", len(failures), strings.Join(failures, "\n"))
	}
	if total.Load() < 100 {
		t.Fatalf("only %d requests: the load did not run", total.Load())
	}
	if got := hg.Metric(t, `headgate_config_reloads_total{result="ok"}`); got < 2 {
		t.Errorf("config_reloads_total{ok} = %v, want 2", got)
	}
	if got := hg.Metric(t, `headgate_redirects_total{source="table",status="301"}`); got < 1 {
		t.Errorf("redirects_total{table,301} = %v", got)
	}
	hg.WaitLog(t, `"redirect":"table"`)
}
