package test

import (
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

// writeSeo writes a page table of n rows, every title "Page I vV", by a
// temporary file renamed into place (as docs/cookbook.md tells operators
// to: a reload never sees a half-written file). It keeps the mtime given
// (when not zero), so that only a signal can reveal a same-size change.
func writeSeo(t *testing.T, path string, n int, version string, mtime time.Time) {
	t.Helper()
	var b strings.Builder
	b.WriteString("path,title,description\n")
	for i := range n {
		fmt.Fprintf(&b, "/p/%d,Page %d %s,\"Row %d, from the sheet\"\n", i, i, version, i)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if !mtime.IsZero() {
		os.Chtimes(tmp, mtime, mtime)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestPageTableReloadUnderLoad replaces a page table of 20,000 rows while
// clients request its pages: on SIGHUP, on a change of the file, and with
// a broken file that must be refused. No request fails, and every page
// carries a title of one whole version of the table — never the
// upstream's, which a half-loaded table would leave on its missing rows.
func TestPageTableReloadUnderLoad(t *testing.T) {
	const rows = 20_000
	dir := t.TempDir()
	seo := filepath.Join(dir, "seo.csv")
	writeSeo(t, seo, rows, "v1", time.Time{})
	up := newUpstream(t, htmlHandler(page))
	hg := start(t, config{Upstream: up.URL, Rules: fmt.Sprintf("[[page_table]]\nfile = %q\n", seo)})

	var (
		stop     atomic.Bool
		requests atomic.Int64
		mu       sync.Mutex
		failures []string
		seen     = map[string]int{}
		wg       sync.WaitGroup
	)
	const maxRequests = 40_000 // bounded in count as in time
	for c := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(c), 7))
			for !stop.Load() && requests.Add(1) <= maxRequests {
				i := rng.IntN(rows)
				if rng.IntN(8) == 0 {
					i = rows - 1 // the last row: the first a half-loaded table would lack
				}
				res, err := client.Get(fmt.Sprintf("%s/p/%d", hg.URL, i))
				if err != nil {
					mu.Lock()
					failures = append(failures, err.Error())
					mu.Unlock()
					continue
				}
				body, err := io.ReadAll(res.Body)
				res.Body.Close()
				_, rest, _ := strings.Cut(string(body), "<title>")
				title, _, _ := strings.Cut(rest, "</title>")
				v := ""
				if want := fmt.Sprintf("Page %d ", i); strings.HasPrefix(title, want) {
					v = title[len(want):]
				}
				mu.Lock()
				switch {
				case err != nil || res.StatusCode != http.StatusOK:
					failures = append(failures, fmt.Sprintf("/p/%d: %d %v", i, res.StatusCode, err))
				case v == "":
					failures = append(failures, fmt.Sprintf("/p/%d: title %q", i, title))
				default:
					seen[v]++
				}
				mu.Unlock()
			}
		})
	}
	finish := func() {
		stop.Store(true)
		wg.Wait()
	}
	defer finish()

	waitVersion := func(t *testing.T, v string) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			_, body := hg.Get(t, "GET", fmt.Sprintf("/p/%d", rows-1))
			if strings.Contains(string(body), fmt.Sprintf("<title>Page %d %s</title>", rows-1, v)) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("not serving %s:\n%s", v, body)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitVersion(t, "v1")

	t.Run("SIGHUP", func(t *testing.T) {
		fi, err := os.Stat(seo)
		if err != nil {
			t.Fatal(err)
		}
		writeSeo(t, seo, rows, "v2", fi.ModTime()) // same size, same mtime
		time.Sleep(1500 * time.Millisecond)        // past a poll: only the signal reveals it
		_, body := hg.Get(t, "GET", "/p/0")
		if !strings.Contains(string(body), "<title>Page 0 v1</title>") {
			t.Fatalf("reloaded before SIGHUP:\n%s", body)
		}
		hg.cmd.Process.Signal(syscall.SIGHUP)
		waitVersion(t, "v2")
		hg.WaitLog(t, `config reloaded.*signal`)
	})
	t.Run("file change", func(t *testing.T) {
		writeSeo(t, seo, rows, "v3-changed", time.Time{})
		waitVersion(t, "v3-changed")
	})
	t.Run("broken table refused", func(t *testing.T) {
		// A ragged row at the very end: a loader that swapped rows in as
		// it read them would serve all but one.
		data, _ := os.ReadFile(seo)
		broken := strings.ReplaceAll(string(data), "v3-changed", "v4-broken") + "/p/extra,a,b,c\n"
		if err := os.WriteFile(seo+".tmp", []byte(broken), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Rename(seo+".tmp", seo)
		hg.WaitLog(t, `config refused.*HG176`)
		_, body := hg.Get(t, "GET", fmt.Sprintf("/p/%d", rows-1))
		if !strings.Contains(string(body), "v3-changed") {
			t.Errorf("after a refused table:\n%s", body)
		}
	})
	finish()
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d requests; titles by version: %v", min(requests.Load(), maxRequests), seen)
	if len(failures) > 0 {
		t.Errorf("%d failed requests, first: %v", len(failures), failures[:min(5, len(failures))])
	}
	if seen["v4-broken"] > 0 {
		t.Errorf("the broken table served %d pages", seen["v4-broken"])
	}
	for _, v := range []string{"v1", "v2", "v3-changed"} {
		if seen[v] == 0 {
			t.Errorf("no page carried %s while it was in service", v)
		}
	}
}
