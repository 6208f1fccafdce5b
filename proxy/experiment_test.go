package proxy

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/headgate/headgate/internal/hgtest"
	"github.com/headgate/headgate/rules"
)

const expRules = testRules + `
[[experiment]]
name = "title-price"
match = "/products/:slug"
variant_share = 50
[experiment.variant]
title = "{slug} – free delivery"
description = "Variant of {path}"
`

func htmlUpstream(t testing.TB) *httptest.Server {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(len(testPage)))
		io.WriteString(w, testPage)
	}))
	t.Cleanup(up.Close)
	return up
}

// Every client gets byte-identical heads (and bodies) for a URL: the group
// is the page's, never the visitor's (§21, no cloaking); the variant's
// fields are served on variant pages only, and the pages counter follows.
func TestExperimentSameForEveryClient(t *testing.T) {
	up := htmlUpstream(t)
	cfg := testConfig(t, up.URL, expRules)
	p, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(p)
	defer front.Close()
	uas := []string{
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36",
		"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
		"",
	}
	groups := map[string]int{}
	for i := range 40 {
		path := fmt.Sprintf("/products/item-%d", i)
		var first []byte
		for _, ua := range uas {
			req, _ := http.NewRequest("GET", front.URL+path, nil)
			req.Header.Set("User-Agent", ua) // "" sends none
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if first == nil {
				first = b
			} else if !bytes.Equal(first, b) {
				t.Fatalf("%s: UA %q got another page:\n%s\n---\n%s", path, ua, first, b)
			}
		}
		_, g := cfg.Resolve(path).Experiment()
		groups[g]++
		isVariant := bytes.Contains(first, []byte("Variant of "+path))
		if isVariant != (g == rules.GroupVariant) {
			t.Errorf("%s: group %s, served variant %v", path, g, isVariant)
		}
	}
	if groups["variant"] == 0 || groups["control"] == 0 {
		t.Errorf("groups %v", groups)
	}
	for g, n := range groups {
		c := p.m.expPages.WithLabelValues("title-price", g)
		if got := testutil.ToFloat64(c); got != float64(n*len(uas)) {
			t.Errorf("headgate_experiment_pages{group=%q} = %v, want %d", g, got, n*len(uas))
		}
	}
}

// The inspector's JSON and HTML name the experiment and the group, from
// the decision Record.
func TestExperimentInspector(t *testing.T) {
	f := newInspector(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, testPage)
	}, expRules)
	cfg := f.p.Config()
	for i := range 6 {
		path := fmt.Sprintf("/products/item-%d", i)
		_, want := cfg.Resolve(path).Experiment()
		_, rep := f.report(t, path)
		if rep.Decision.Experiment != "title-price" || rep.Decision.Group != want {
			t.Errorf("%s: experiment %q group %q, want %s", path, rep.Decision.Experiment, rep.Decision.Group, want)
		}
		_, _, html := f.get(t, f.admin, "/inspect", map[string][]string{"path": {path}})
		if !strings.Contains(string(html), `experiment <span class="mono">title-price</span>: group <span class="badge">`+want+`</span>`) {
			t.Errorf("%s: the HTML report does not show the group %s", path, want)
		}
	}
	_, rep := f.report(t, "/about")
	if rep.Decision.Experiment != "" || rep.Decision.Group != "" {
		t.Errorf("/about: %+v", rep.Decision)
	}
}

// BenchmarkExperimentOverhead serves the same pages through a proxy with
// an experiment covering them and one without, in alternating rounds, and
// reports the CPU per request of each and their ratio (without ÷ with:
// ≥ 0.98 is the goal of issue 38).
//
//	HEADGATE_EXP_ROUNDS=8 go test ./proxy -run '^$' -bench ExperimentOverhead -benchtime 1x
func BenchmarkExperimentOverhead(b *testing.B) {
	rounds := envInt("HEADGATE_EXP_ROUNDS", 6)
	round := time.Duration(envInt("HEADGATE_EXP_MS", 700)) * time.Millisecond
	up := htmlUpstream(b)
	// The variant writes what the rules write on the other proxy, so that
	// both render heads of one size: the difference is the assignment.
	same := testRules + `
[[rule]]
match = "/products/:slug"
title = "{slug} – free delivery"
`
	on := strings.Replace(expRules, `description = "Variant of {path}"`, "", 1)
	servers := map[string]*httptest.Server{}
	for name, extra := range map[string]string{"off": same, "on": on} {
		p, err := New(testConfig(b, up.URL, extra), Options{})
		if err != nil {
			b.Fatal(err)
		}
		servers[name] = httptest.NewServer(p)
		defer servers[name].Close()
	}
	tr := &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 64}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	const clients = 4
	drive := func(u string) (int64, time.Duration) {
		var n atomic.Int64
		stop := time.Now().Add(round)
		cpu0 := hgtest.ProcessCPU()
		var wg sync.WaitGroup
		for k := range clients {
			wg.Go(func() {
				buf := make([]byte, 32<<10)
				for i := k; time.Now().Before(stop); i += clients {
					res, err := c.Get(fmt.Sprintf("%s/products/item-%d", u, i%5000))
					if err != nil {
						b.Error(err)
						return
					}
					io.CopyBuffer(io.Discard, res.Body, buf)
					res.Body.Close()
					n.Add(1)
				}
			})
		}
		wg.Wait()
		return n.Load(), hgtest.ProcessCPU() - cpu0
	}
	var ratio float64
	for b.Loop() {
		var reqs [2]int64
		var cpu [2]time.Duration
		for r := range rounds {
			order := []int{0, 1}
			if r%2 == 1 {
				order = []int{1, 0}
			}
			for _, i := range order {
				n, d := drive(servers[[]string{"off", "on"}[i]].URL)
				reqs[i] += n
				cpu[i] += d
			}
		}
		off := float64(cpu[0].Nanoseconds()) / float64(reqs[0]) / 1e3
		with := float64(cpu[1].Nanoseconds()) / float64(reqs[1]) / 1e3
		ratio = off / with
		b.ReportMetric(off, "µs-cpu/req(off)")
		b.ReportMetric(with, "µs-cpu/req(on)")
		b.ReportMetric(ratio, "ratio")
	}
	if ratio < 0.98 {
		b.Logf("ratio %.3f is under the 0.98 floor (a shared machine: rerun with more rounds to tell noise from a cost)", ratio)
	}
}

// A reload to experiments that overlap, or to a variant with an unknown
// field, is refused with each problem's code, file:line and key, and the
// old config keeps serving.
func TestExperimentReloadRefused(t *testing.T) {
	up := htmlUpstream(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "headgate.toml")
	base := "[server]\nupstream = \"" + up.URL + "\"\n[site]\nbase_url = \"https://notes.example\"\n" + expRules
	if err := os.WriteFile(file, []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := rules.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	p, err := New(cfg, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	bad := base + `
[[experiment]]
name = "desc"
match = "/products/*"
variant_share = 10
[experiment.variant]
descripton = "x"
`
	if err := os.WriteFile(file, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	p.Reload("test")
	if p.Config() != cfg {
		t.Fatal("the refused config replaced the old one")
	}
	for _, want := range []string{
		"HG210 " + file + ":22: experiment[1].match",
		"HG211 " + file + ":25: experiment[1].variant.descripton: unknown variant field (did you mean description?)",
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log does not say %q:\n%s", want, logs.String())
		}
	}
}

// Counting an experiment page allocates nothing once its series exist.
func TestExperimentPageAllocs(t *testing.T) {
	cfg := testConfig(t, "http://127.0.0.1:1", expRules)
	m, err := newMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	mt := cfg.Resolve("/products/item-1")
	m.experimentPage(mt, Rewritten)
	if n := testing.AllocsPerRun(100, func() { m.experimentPage(mt, Rewritten) }); n != 0 {
		t.Errorf("%v allocations per page", n)
	}
	if got := testutil.ToFloat64(m.expPages.WithLabelValues("title-price", func() string { _, g := mt.Experiment(); return g }())); got != 102 { // once, then AllocsPerRun's warm-up and 100 runs
		t.Errorf("counted %v, want 102", got)
	}
}

// §21 names the metric headgate_experiment_pages{experiment, group}: that
// exact name is on /metrics in the Prometheus text format and in
// OpenMetrics (where a counter's samples would gain "_total").
func TestExperimentPagesMetricName(t *testing.T) {
	up := htmlUpstream(t)
	p, err := New(testConfig(t, up.URL, expRules), Options{})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(p)
	defer front.Close()
	res, err := http.Get(front.URL + "/products/blue")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	admin := httptest.NewServer(p.adminMux())
	defer admin.Close()
	for _, accept := range []string{"text/plain", "application/openmetrics-text; version=1.0.0"} {
		req, _ := http.NewRequest("GET", admin.URL+"/metrics", nil)
		req.Header.Set("Accept", accept)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if !bytes.Contains(b, []byte("\nheadgate_experiment_pages{experiment=\"title-price\",group=")) || bytes.Contains(b, []byte("headgate_experiment_pages_")) {
			t.Errorf("Accept %s: no headgate_experiment_pages series, or one with a suffix:\n%s", accept, grepLines(b, "experiment"))
		}
	}
}

func grepLines(b []byte, sub string) string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
