package sitemap

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/headgate/headgate/internal/hgtest"
	"github.com/headgate/headgate/rules"
)

// genSource is a JSON Lines source of n entries produced as it is read:
// no allocation proportional to n.
type genSource struct {
	n, i int
	buf  []byte
	off  int
}

func (g *genSource) Read(p []byte) (int, error) {
	if g.off == len(g.buf) {
		if g.i == g.n {
			return 0, io.EOF
		}
		g.buf = g.buf[:0]
		for k := 0; k < 64 && g.i < g.n; k++ {
			g.buf = append(g.buf, `{"params":{"id":"`...)
			g.buf = strconv.AppendInt(g.buf, int64(1000000+g.i), 10)
			g.buf = append(g.buf, `"},"lastmod":"2026-01-`...)
			g.buf = strconv.AppendInt(g.buf, int64(10+g.i%18), 10)
			g.buf = append(g.buf, "T10:00:00Z\"}\n"...)
			g.i++
		}
		g.off = 0
	}
	n := copy(p, g.buf[g.off:])
	g.off += n
	return n, nil
}

func (g *genSource) Close() error { return nil }

const config1M = `
[server]
upstream = "http://127.0.0.1:3000"
[site]
base_url = "https://notes.example"
locales = ["en", "de"]
[sitemap]
max_urls = 2000000
[[rule]]
match = "/notes/:id{[0-9]+}"
localized = true
canonical = "self"
sitemap = true
sitemap_source = "upstream:/internal/notes.jsonl"
[[rule]]
match = "/internal/*"
deny = true
`

func new1M(tb testing.TB, n int) *Sitemap {
	cfg, err := rules.Parse("bench.toml", []byte(config1M), nil)
	if err != nil {
		tb.Fatal(err)
	}
	return New(cfg, Options{
		Fetch: func(ctx context.Context, path string) (io.ReadCloser, error) {
			return &genSource{n: n}, nil
		},
		SourceTimeout: time.Minute,
	})
}

// BenchmarkGenerate1M generates the sitemap of a source of 1,000,000
// entries in 2 locales: 2,000,000 URLs in 40 files.
//
//	go test -run '^$' -bench Generate1M -benchtime 3x -count 1 ./sitemap/
func BenchmarkGenerate1M(b *testing.B) {
	s := new1M(b, 1000000)
	b.ReportAllocs()
	for b.Loop() {
		res, err := s.generate(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.urls), "urls/op")
		b.ReportMetric(float64(len(res.parts)), "files/op")
		var gz int64
		for _, p := range res.parts {
			gz += p.gz.n
		}
		b.ReportMetric(float64(gz)/(1<<20), "gzMiB/op")
	}
}

// TestGenerate1M measures one generation of the 1M-entry sitemap in a
// fresh process, so that the peak RSS (VmHWM) is the generation's own. It
// runs only when asked:
//
//	HEADGATE_SITEMAP_1M=1 go test -count=1 -run Generate1M -v ./sitemap/
func TestGenerate1M(t *testing.T) {
	if os.Getenv("HEADGATE_SITEMAP_1M") == "" {
		t.Skip("set HEADGATE_SITEMAP_1M=1 to measure a 1M-entry generation (time and peak RSS)")
	}
	if os.Getenv("HEADGATE_SITEMAP_1M_CHILD") != "" {
		s := new1M(t, 1000000)
		start := time.Now()
		res, err := s.generate(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		d := time.Since(start)
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		cpu := hgtest.ProcessCPU()
		out, _ := json.Marshal(map[string]any{
			"seconds": d.Seconds(), "cpu_seconds": cpu.Seconds(), "urls": res.urls, "files": len(res.parts),
			"vmhwm_kib": vmHWM(t), "heap_inuse_mib": ms.HeapInuse >> 20,
		})
		fmt.Printf("RESULT %s\n", out)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestGenerate1M$", "-test.count=1")
	cmd.Env = append(os.Environ(), "HEADGATE_SITEMAP_1M_CHILD=1")
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v\n%s", err, stdout.String())
	}
	_, line, ok := strings.Cut(stdout.String(), "RESULT ")
	if !ok {
		t.Fatalf("child printed no result:\n%s", stdout.String())
	}
	var r struct {
		Seconds float64 `json:"seconds"`
		CPU     float64 `json:"cpu_seconds"`
		URLs    int     `json:"urls"`
		Files   int     `json:"files"`
		VmHWM   int64   `json:"vmhwm_kib"`
		HeapMiB int64   `json:"heap_inuse_mib"`
	}
	if err := json.Unmarshal([]byte(strings.SplitN(line, "\n", 2)[0]), &r); err != nil {
		t.Fatal(err)
	}
	t.Logf("1M entries, 2 locales: %d URLs in %d files, %.2f s (CPU %.2f s), peak RSS %d MiB, heap in use after %d MiB",
		r.URLs, r.Files, r.Seconds, r.CPU, r.VmHWM>>10, r.HeapMiB)
	if r.URLs != 2000000 || r.Files != 40 {
		t.Errorf("got %d URLs in %d files, want 2000000 in 40", r.URLs, r.Files)
	}
	// The machine is shared: wall time varies with the neighbours' load,
	// CPU time (the process's, GC included) much less. Either within the
	// floor passes.
	if r.Seconds > 10 && r.CPU > 10 {
		t.Errorf("generation took %.2f s (CPU %.2f s), the floor is 10 s", r.Seconds, r.CPU)
	}
	if r.VmHWM > 150<<10 {
		t.Errorf("peak RSS %d MiB, the floor is 150 MiB", r.VmHWM>>10)
	}
}

func vmHWM(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status: peak RSS is not measurable here")
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}
