package proxy

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/headgate/headgate/rules"
)

// Issue 34 item 4, the attack run's case: a 10 MiB cell used in five
// fields made each response about 52 MB and four concurrent requests cost
// hundreds of MiB. Such a table is now refused at load (§23: HG177). Were
// it to load, the test measures what each request costs and fails with
// the figure, which is how the figure before the fix was taken.
func TestTenMiBCellRefusedNotServed(t *testing.T) {
	dir := t.TempDir()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!doctype html><html><head><title>t</title></head><body>b</body></html>")
	}))
	defer up.Close()
	cell := strings.Repeat("x", 10<<20)
	os.WriteFile(filepath.Join(dir, "p.csv"), []byte("sku,name\nA1,"+cell+"\n"), 0o644)
	toml := `[server]
upstream = "` + up.URL + `"
[site]
base_url = "https://notes.example"
[[table]]
name = "p"
file = "p.csv"
key = "sku"
[[rule]]
match = "/p/:sku"
lookup = { p = "{sku}" }
title = "{p.name}"
description = "{p.name}"
[rule.open_graph]
title = "{p.name}"
description = "{p.name}"
[rule.twitter]
title = "{p.name}"
`
	path := filepath.Join(dir, "headgate.toml")
	os.WriteFile(path, []byte(toml), 0o644)
	cfg, err := rules.Load(path)
	if err != nil {
		if !strings.Contains(err.Error(), "HG177") || !strings.Contains(err.Error(), "p.csv:2") {
			t.Fatalf("refused, but not as HG177 at p.csv:2: %v", err)
		}
		return
	}
	cell = ""
	p, err := New(cfg, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var wg sync.WaitGroup
	sizes := make([]int, 4)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := httptest.NewRecorder()
			p.ServeHTTP(rec, httptest.NewRequest("GET", "http://notes.example/p/A1", nil))
			sizes[i] = rec.Body.Len()
		}()
	}
	wg.Wait()
	runtime.ReadMemStats(&after)
	t.Errorf("a 10 MiB cell loaded: responses of %v bytes; %d MiB allocated for 4 requests, heap %d → %d MiB",
		sizes, (after.TotalAlloc-before.TotalAlloc)>>20, before.HeapInuse>>20, after.HeapInuse>>20)
}
