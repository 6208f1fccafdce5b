package proxy

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/headgate/headgate/internal/hgtest"
	"github.com/headgate/headgate/rules"
)

// BenchmarkRedirectTableOverhead compares the proxy's throughput on a page
// that is not redirected with a 1,000,000-row redirect table loaded and
// with none (SPEC §11.2 floor: ≥ 0.97×). Both proxies run in this process
// in front of one upstream; a fixed set of keep-alive clients drives them
// in alternating rounds, so that the machine's noise falls on both:
//
//	go test ./proxy -run '^$' -bench RedirectTableOverhead -benchtime 1x
//
// HEADGATE_REDIRECT_ROUNDS (default 6) and HEADGATE_REDIRECT_SECONDS
// (default 1) set the rounds and their length.
func BenchmarkRedirectTableOverhead(b *testing.B) {
	rounds := envInt("HEADGATE_REDIRECT_ROUNDS", 6)
	round := time.Duration(envInt("HEADGATE_REDIRECT_SECONDS", 1)) * time.Second
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(len(testPage)))
		io.WriteString(w, testPage)
	}))
	defer up.Close()

	dir := b.TempDir()
	f, err := os.Create(filepath.Join(dir, "r.csv"))
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(w, "from,to")
	for i := range 1_000_000 {
		if i%10 == 9 {
			fmt.Fprintf(w, "/index.php?id=%d,/notes/%d\n", i, i)
		} else {
			fmt.Fprintf(w, "/old-section/article-%07d.html,/articles/%07d\n", i, i)
		}
	}
	w.Flush()
	f.Close()
	base := fmt.Sprintf("[server]\nupstream = %q\n[site]\nbase_url = \"https://notes.example\"\n%s", up.URL, testRules)
	load := func(name, extra string) *Proxy {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(base+extra), 0o644)
		cfg, err := rules.Load(p)
		if err != nil {
			b.Fatal(err)
		}
		px, err := New(cfg, Options{})
		if err != nil {
			b.Fatal(err)
		}
		return px
	}
	none := load("none.toml", "")
	table := load("table.toml", "\n[[redirect_table]]\nfile = \"r.csv\"\n")

	servers := map[string]*httptest.Server{"none": httptest.NewServer(none), "table": httptest.NewServer(table)}
	defer servers["none"].Close()
	defer servers["table"].Close()
	tr := &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 64}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	const clients = 8
	drive := func(u string) (int64, error) {
		var n atomic.Int64
		var failed atomic.Value
		stop := time.Now().Add(round)
		var wg sync.WaitGroup
		for k := range clients {
			wg.Go(func() {
				buf := make([]byte, 32<<10)
				for i := k; time.Now().Before(stop); i += clients {
					// Pages the table does not redirect, half with a query.
					target := fmt.Sprintf("%s/articles/%07d", u, i%1_000_000)
					if i%2 == 0 {
						target += "?page=2&id=" + strconv.Itoa(i)
					}
					res, err := c.Get(target)
					if err != nil {
						failed.Store(err)
						return
					}
					io.CopyBuffer(io.Discard, res.Body, buf)
					res.Body.Close()
					if res.StatusCode != 200 {
						failed.Store(fmt.Errorf("GET %s: %d", target, res.StatusCode))
						return
					}
					n.Add(1)
				}
			})
		}
		wg.Wait()
		if err, _ := failed.Load().(error); err != nil {
			return 0, err
		}
		return n.Load(), nil
	}
	b.ReportAllocs()
	var ratio float64
	for b.Loop() {
		var sums [2]int64
		for r := range rounds {
			order := []string{"none", "table"}
			if r%2 == 1 {
				order = []string{"table", "none"}
			}
			for _, name := range order {
				n, err := drive(servers[name].URL)
				if err != nil {
					b.Fatal(err)
				}
				if name == "table" {
					sums[1] += n
				} else {
					sums[0] += n
				}
			}
		}
		secs := float64(rounds) * round.Seconds()
		b.ReportMetric(float64(sums[0])/secs, "req/s(none)")
		b.ReportMetric(float64(sums[1])/secs, "req/s(1M-table)")
		ratio = float64(sums[1]) / float64(sums[0])
		b.ReportMetric(ratio, "ratio")
	}
	if ratio < 0.97 {
		b.Logf("ratio %.3f is under the 0.97 floor (the machine is shared: rerun with more rounds to tell noise from a cost)", ratio)
	}
}

func envInt(k string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(k)); err == nil && n > 0 {
		return n
	}
	return def
}

// BenchmarkRedirectDecision times what the proxy pays per request for
// §11's decision, with tables of 1k, 100k and 1M rows: Proxy.redirect on a
// request a row redirects (the answer written: Location, headers, the
// short page, the metric) and on one it does not (every served page pays
// this). The keys are every row in random order, so that the table's
// memory is cold as under a crawler:
//
//	go test ./proxy -run '^$' -bench RedirectDecision -benchmem -count 5
func BenchmarkRedirectDecision(b *testing.B) {
	for _, n := range []int{1_000, 100_000, 1_000_000} {
		dir := b.TempDir()
		f, err := os.Create(filepath.Join(dir, "r.csv"))
		if err != nil {
			b.Fatal(err)
		}
		w := bufio.NewWriterSize(f, 1<<20)
		fmt.Fprintln(w, "from,to")
		for i := range n {
			fmt.Fprintf(w, "/old-section/article-%07d.html,/articles/%07d\n", i, i)
		}
		w.Flush()
		f.Close()
		cfgPath := filepath.Join(dir, "headgate.toml")
		os.WriteFile(cfgPath, []byte("[server]\nupstream = \"http://127.0.0.1:9\"\n[site]\nbase_url = \"https://notes.example\"\n[[redirect_table]]\nfile = \"r.csv\"\n"), 0o644)
		cfg, err := rules.Load(cfgPath)
		if err != nil {
			b.Fatal(err)
		}
		px, err := New(cfg, Options{})
		if err != nil {
			b.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		perm := rng.Perm(n)
		hits, misses := make([]string, 0, n), make([]string, 0, n)
		for _, j := range perm { // each kind's keys together: a request's bytes are in the cache
			hits = append(hits, fmt.Sprintf("/old-section/article-%07d.html", j))
		}
		for _, j := range perm {
			misses = append(misses, fmt.Sprintf("/articles/%07d?page=2", j))
		}
		for _, kind := range []struct {
			name string
			keys []string
			want bool
		}{{"hit", hits, true}, {"miss", misses, false}} {
			b.Run(fmt.Sprintf("%s/rows=%d", kind.name, n), func(b *testing.B) {
				b.ReportAllocs()
				r := httptest.NewRequest("GET", "http://notes.example/", nil)
				r.RemoteAddr = "127.0.0.1:40000"
				sink := &nullWriter{h: http.Header{}}
				rs := &reqState{st: px.state.Load(), w: &responseWriter{w: sink}}
				ks := kind.keys
				i := 0
				c0 := hgtest.ProcessCPU()
				for b.Loop() {
					clear(sink.h)
					rs.w.wroteHeader = false
					if px.redirect(rs, rs.w, r, ks[i]) != kind.want {
						b.Fatalf("%s: redirected %v", ks[i], !kind.want)
					}
					if i++; i == len(ks) {
						i = 0
					}
				}
				b.ReportMetric(float64(hgtest.ProcessCPU()-c0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// nullWriter is a ResponseWriter that keeps the headers and drops the rest.
type nullWriter struct{ h http.Header }

func (w *nullWriter) Header() http.Header         { return w.h }
func (w *nullWriter) WriteHeader(int)             {}
func (w *nullWriter) Write(b []byte) (int, error) { return len(b), nil }
