package rules

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// writeBigTable writes a products table of n rows of four short columns
// and a config that looks it up, and returns the config's path.
func writeBigTable(t testing.TB, n int) string {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "p.csv"))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("sku,name,summary,image\n")
	for i := range n {
		fmt.Fprintf(w, "s%07d,Name %d,Summary %d,/img/%d.png\n", i, i, i, i)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	cfg := filepath.Join(dir, "headgate.toml")
	src := productsTable + "description = \"{products.summary}\"\n[rule.open_graph]\nimage = \"{products.image}\"\n"
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// heapAfter returns the live heap once the garbage is collected.
func heapAfter() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestTableScale checks the floors of §12 on 1,000,000 rows of four short
// columns: at most 200 bytes of heap per row (asserted) and a load within
// 3 s (logged; asserted only far over it, since a loaded machine is slow).
func TestTableScale(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 1,000,000 rows")
	}
	const n = 1_000_000
	file := writeBigTable(t, n)
	before := heapAfter()
	start := time.Now()
	cfg, err := Load(file)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	perRow := float64(heapAfter()-before) / n
	t.Logf("1,000,000 rows: loaded in %v, %.1f bytes of heap per row", took, perRow)
	if perRow > 200 {
		t.Errorf("%.1f bytes of heap per row, over 200", perRow)
	}
	// The floor is 3 s on an idle machine (BenchmarkTableLoad measures
	// it); under go test ./... on a shared machine the packages compete
	// for the cores, so the test only catches what no load explains.
	if took > 20*time.Second {
		t.Errorf("load took %v: far over the 3 s floor", took)
	}
	h := cfg.Resolve("/p/s0999999").Render(Page{})
	if h.Title == nil || *h.Title != "Name 999999" {
		t.Errorf("last row: title %v", h.Title)
	}
	runtime.KeepAlive(cfg)
}

// BenchmarkTableLoad loads 1,000,000 rows of four short columns; it
// reports the heap each row keeps.
func BenchmarkTableLoad(b *testing.B) {
	file := writeBigTable(b, 1_000_000)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		before := heapAfter()
		b.StartTimer()
		cfg, err := Load(file)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(heapAfter()-before)/1e6, "heap-B/row")
		runtime.KeepAlive(cfg)
	}
}

// BenchmarkTableLookup finds a row by key in tables of 1k, 100k and 1M
// rows: the time is flat.
func BenchmarkTableLookup(b *testing.B) {
	for _, n := range []int{1_000, 100_000, 1_000_000} {
		file := writeBigTable(b, n)
		cfg, err := Load(file)
		if err != nil {
			b.Fatal(err)
		}
		dt := cfg.data.table("products")
		keys := make([]string, 1024)
		for i := range keys {
			keys[i] = fmt.Sprintf("s%07d", (i*7919)%n)
		}
		b.Run("find/"+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for i := range b.N {
				if dt.Find(keys[i&1023]) < 0 {
					b.Fatal("not found")
				}
			}
		})
		paths := make([]string, 1024)
		for i := range paths {
			paths[i] = "/p/" + keys[i]
		}
		b.Run("resolve+render/"+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for i := range b.N {
				h := cfg.Resolve(paths[i&1023]).Render(Page{})
				if h.Title == nil {
					b.Fatal("no title")
				}
			}
		})
	}
}
