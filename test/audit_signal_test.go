package test

// Issue 34, end of item 8: a 20,000-page audit took 113 s to exit after
// SIGTERM. The crawl itself stopped at once; the cross-page checks that
// run on what was crawled compared every pair of pages sharing a title,
// description or body text, which on a site of generated views is most of
// them. The audit now stops within a second or two and still writes the
// report of what it crawled.
//
//	go test ./test -run TestAuditSignal -count=1 -v

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// signalAfter is how many pages the audit has fetched when it is told to
// stop: before the fix, 2,000 alike pages took 3 s to exit and 5,000 more
// than 20 s (every pair of pages with one title was compared).
const signalAfter = 5000

func TestAuditSignalStopsPromptly(t *testing.T) {
	if testing.Short() {
		t.Skip("starts headgate audit on a 20,000-page site")
	}
	site := sameSite(20000)
	first := make(chan struct{})
	var once sync.Once
	var served atomic.Int64 // requests answered
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		site.ServeHTTP(w, r)
		if served.Add(1) >= signalAfter {
			once.Do(func() { close(first) })
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "headgate.toml")
	os.WriteFile(cfg, []byte(`[server]
upstream = "`+srv.URL+`"
[site]
base_url = "https://notes.example"
[[rule]]
match = "/g/:n"
description = "Page {n} of the generated site, as the signal test serves it to the audit."
`), 0o644)
	report := filepath.Join(dir, "report.json")
	cmd := exec.Command(binary, append([]string{"audit", "-config", cfg}, "-max-pages", "20000", "-format", "json", "-o", report, "-fail-on", "never")...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-first: // the audit is crawling: 200 pages served
	case err := <-exited:
		t.Fatalf("the audit exited before it crawled 200 pages: %v", err)
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the audit did not crawl 200 pages in 60 s")
	}
	sent := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	var err error
	select {
	case err = <-exited:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		<-exited
		t.Fatalf("no exit within 20 s of SIGTERM (%d pages served)", served.Load())
	}
	took := time.Since(sent)
	t.Logf("exit %v %s after SIGTERM, %d pages served", err, took.Round(time.Millisecond), served.Load())
	if took > 3*time.Second {
		t.Errorf("exit %s after SIGTERM, want within 3 s", took.Round(time.Millisecond))
	}
	var rep struct {
		Pages []json.RawMessage `json:"pages"`
	}
	b, rerr := os.ReadFile(report)
	if rerr != nil || json.Unmarshal(b, &rep) != nil {
		t.Fatalf("no report of what was crawled: %v (%d bytes)\n%s", rerr, len(b), b)
	}
	if len(rep.Pages) < signalAfter/2 {
		t.Errorf("the report lists %d pages, want those crawled before SIGTERM (about %d)", len(rep.Pages), signalAfter)
	}
	t.Logf("report: %d bytes, %d pages", len(b), len(rep.Pages))
}

// sameSite serves pages pages that all look alike, as a CMS's generated
// views do: one title, one description, one body text, each its own
// canonical, linking onwards.
func sameSite(pages int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := 0
		if r.URL.Path != "/" {
			if _, err := fmt.Sscanf(r.URL.Path, "/g/%d", &n); err != nil || n <= 0 || n >= pages || r.URL.Path != fmt.Sprintf("/g/%d", n) {
				http.NotFound(w, r)
				return
			}
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Special page</title>`+
			`<meta name="description" content="A view the wiki generates for every page, alike on each of them."></head><body><p>Nothing here yet.</p>`)
		for _, i := range []int{n + 1, n + 2, 2*n + 1, 7*n + 3} {
			if i%pages != 0 {
				fmt.Fprintf(w, `<a href="/g/%d">next</a> `, i%pages)
			}
		}
		io.WriteString(w, "</body></html>")
	})
}
