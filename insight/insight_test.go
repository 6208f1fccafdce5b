package insight

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/headgate/headgate/bots"
)

// clock is a settable time source for the window.
type clock struct{ ns atomic.Int64 }

func newClock(t time.Time) *clock { c := new(clock); c.ns.Store(t.UnixNano()); return c }
func (c *clock) now() time.Time   { return time.Unix(0, c.ns.Load()).UTC() }
func (c *clock) add(d time.Duration) {
	c.ns.Add(int64(d))
}

var t0 = time.Date(2026, 12, 6, 13, 20, 0, 0, time.UTC)

func newTracker(t testing.TB, reg prometheus.Registerer, c *clock) *Tracker {
	t.Helper()
	tr, err := New(Options{Registerer: reg, Now: c.now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

var (
	googleIP    = bots.Identity{Name: "googlebot", Category: bots.Search, Verified: bots.VerifiedIP}
	googleFake  = bots.Identity{Name: "googlebot", Category: bots.Search, Verified: bots.VerifiedNo}
	gptbot      = bots.Identity{Name: "gptbot", Category: bots.AITraining, Verified: bots.VerifiedIP}
	claudeUnver = bots.Identity{Name: "claudebot", Category: bots.AITraining, Verified: bots.VerifiedUnverifiable}
	unknownWBA  = bots.Identity{Name: "agent.example:8443", Verified: bots.VerifiedSignature}
)

func TestObserveMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := newClock(t0)
	tr := newTracker(t, reg, c)
	tr.Observe(Request{Identity: googleIP, Path: "/a", Status: 200, Bytes: 1000})
	tr.Observe(Request{Identity: googleIP, Path: "/a", Status: 200, Bytes: 500})
	tr.Observe(Request{Identity: googleFake, Path: "/private/x", Status: 403, RobotsViolation: true})
	tr.Observe(Request{Identity: gptbot, Path: "/b", Status: 301})
	tr.Observe(Request{Identity: unknownWBA, Path: "/c", Status: 503, Bytes: 10})
	tr.Observe(Request{Identity: bots.None, Path: "/d", Status: 200, Bytes: 99, Referer: "https://www.google.co.uk/"})
	tr.Observe(Request{Identity: bots.Identity{}, Path: "/d", Status: 200, Referer: "https://chatgpt.com/"})
	tr.Observe(Request{Identity: bots.None, Path: "/e", Status: 0, Referer: "https://google.evil.com/"})

	want := `
# HELP headgate_bot_requests_total Requests of identified crawlers: bot is a directory name or other; verified ip, dns, signature, no (spoofed) or unverifiable; code_class 2xx to 5xx; group control or variant on split-test pages, absent elsewhere.
# TYPE headgate_bot_requests_total counter
headgate_bot_requests_total{bot="googlebot",category="search",code_class="2xx",verified="ip"} 2
headgate_bot_requests_total{bot="googlebot",category="search",code_class="4xx",verified="no"} 1
headgate_bot_requests_total{bot="gptbot",category="ai-training",code_class="3xx",verified="ip"} 1
headgate_bot_requests_total{bot="other",category="unknown",code_class="5xx",verified="signature"} 1
# HELP headgate_bot_response_bytes_total Response body bytes sent to identified crawlers.
# TYPE headgate_bot_response_bytes_total counter
headgate_bot_response_bytes_total{bot="googlebot"} 1500
headgate_bot_response_bytes_total{bot="other"} 10
# HELP headgate_bot_robots_violations_total Requests of identified crawlers for a path the served robots.txt disallows for their group.
# TYPE headgate_bot_robots_violations_total counter
headgate_bot_robots_violations_total{bot="googlebot",verified="no"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), MetricRequests, MetricBytes, MetricViolations); err != nil {
		t.Error(err)
	}
	ref := func(s string) float64 {
		n, err := testutil.GatherAndCount(reg, MetricReferrals)
		if err != nil || n != len(Sources()) {
			t.Errorf("referral series %d (%v), want every source from the start: %d", n, err, len(Sources()))
		}
		mfs, _ := reg.Gather()
		for _, mf := range mfs {
			if mf.GetName() != MetricReferrals {
				continue
			}
			for _, m := range mf.GetMetric() {
				if m.GetLabel()[0].GetValue() == s {
					return m.GetCounter().GetValue()
				}
			}
		}
		return -1
	}
	if g, c, b := ref("google"), ref("chatgpt"), ref("bing"); g != 1 || c != 1 || b != 0 {
		t.Errorf("referrals google %v chatgpt %v bing %v; want 1 1 0", g, c, b)
	}

	s := tr.Snapshot()
	byName := map[string]CrawlerWindow{}
	for _, w := range s.Crawlers {
		byName[w.Name] = w
	}
	if len(byName) != 3 || s.Crawlers[0].Name != "googlebot" {
		t.Fatalf("crawlers %v, want googlebot first, gptbot, other", s.Crawlers)
	}
	g := byName["googlebot"]
	if g.Requests != 3 || g.Verified["yes"] != 2 || g.Verified["ip"] != 2 || g.Verified["no"] != 1 || g.RobotsViolations != 1 ||
		g.Status["2xx"] != 2 || g.Status["4xx"] != 1 || g.Bytes != 1500 || g.ByHour[Hours-1] != 3 || g.Spoofed[Hours-1] != 1 {
		t.Errorf("googlebot %+v", g)
	}
	if len(g.TopPaths) != 2 || g.TopPaths[0] != (PathCount{Path: "/a", Count: 2}) {
		t.Errorf("googlebot top paths %v", g.TopPaths)
	}
	if o := byName["other"]; o.Requests != 1 || o.Verified["signature"] != 1 || o.Status["5xx"] != 1 {
		t.Errorf("other %+v", o)
	}
}

func TestNoRegisterer(t *testing.T) {
	tr := newTracker(t, nil, newClock(t0))
	tr.Observe(Request{Identity: googleIP, Path: "/", Status: 200, Referer: "https://bing.com/"})
	if s := tr.Snapshot(); len(s.Crawlers) != 1 || s.Referrals[0].Source != "bing" || s.Referrals[0].Total != 1 {
		t.Errorf("snapshot %+v", s)
	}
}

func TestRegisterTwice(t *testing.T) {
	reg := prometheus.NewRegistry()
	newTracker(t, reg, newClock(t0))
	if _, err := New(Options{Registerer: reg}); err == nil {
		t.Error("a second tracker on the same registry: want an error")
	}
}

func TestClassIndex(t *testing.T) {
	for status, want := range map[int]string{200: "2xx", 204: "2xx", 299: "2xx", 301: "3xx", 304: "3xx", 404: "4xx", 0: "4xx", 101: "4xx", 500: "5xx", 503: "5xx", 999: "5xx"} {
		if got := classLabels[classIndex(status)]; got != want {
			t.Errorf("status %d: %s, want %s", status, got, want)
		}
	}
}

// The window keeps 24 hourly buckets: an hour 24 hours back is forgotten,
// a bucket reused for a new hour starts from zero.
func TestWindowRollsOver(t *testing.T) {
	c := newClock(t0)
	tr := newTracker(t, nil, c)
	for h := 0; h < 30; h++ {
		for i := 0; i <= h; i++ {
			tr.Observe(Request{Identity: gptbot, Path: fmt.Sprintf("/h%d", h), Status: 200})
		}
		tr.Observe(Request{Identity: bots.None, Referer: "https://claude.ai/"})
		c.add(time.Hour)
	}
	c.add(-time.Hour) // the last hour observed is the current one
	s := tr.Snapshot()
	if len(s.Hours) != Hours || !s.Hours[Hours-1].Equal(t0.Truncate(time.Hour).Add(29*time.Hour)) {
		t.Fatalf("hours %v", s.Hours)
	}
	w := s.Crawlers[0]
	var total uint64
	for i, n := range w.ByHour {
		if want := uint64(i + 7); n != want { // hours 6..29 observed h+1 each
			t.Errorf("hour %d: %d, want %d", i, n, want)
		}
		total += n
	}
	if w.Requests != total || w.Status["2xx"] != total {
		t.Errorf("requests %d, 2xx %d, want %d", w.Requests, w.Status["2xx"], total)
	}
	for _, r := range s.Referrals {
		if r.Source == "claude" && r.Total != Hours {
			t.Errorf("claude referrals %d, want %d", r.Total, Hours)
		}
	}
	// Top paths: the current and the previous half-day only.
	for _, p := range w.TopPaths {
		var h int
		fmt.Sscanf(p.Path, "/h%d", &h)
		if hour := t0.Add(time.Duration(h)*time.Hour).Unix() / 3600; hour/halfDay < (t0.Add(29*time.Hour).Unix()/3600)/halfDay-1 {
			t.Errorf("top path %s from an older half-day", p.Path)
		}
	}
	if w.TopPaths[0].Path != "/h29" || w.TopPaths[0].Count != 30 {
		t.Errorf("top path %v, want /h29 with 30", w.TopPaths[0])
	}
	// A day of silence empties the window.
	c.add(Hours * time.Hour)
	if s := tr.Snapshot(); len(s.Crawlers) != 0 || s.Referrals[0].Total != 0 {
		t.Errorf("after a quiet day: %+v", s)
	}
}

// Many goroutines, several crawlers, hour rollovers while they run: the
// totals add up (run with -race).
func TestConcurrentObserve(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := newClock(t0)
	tr := newTracker(t, reg, c)
	ids := []bots.Identity{googleIP, googleFake, gptbot, claudeUnver, unknownWBA}
	const workers, each = 8, 2000
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				tr.Observe(Request{Identity: ids[i%len(ids)], Path: fmt.Sprintf("/p/%d", i%100), Status: 200 + 100*(i%4),
					Bytes: 1, Referer: "https://duckduckgo.com/", Time: t0})
				if i%500 == 0 {
					tr.Snapshot()
				}
			}
		}()
	}
	wg.Wait()
	if got := testutil.ToFloat64(tr.bytesVec.WithLabelValues("googlebot")); got != workers*each*2/5 {
		t.Errorf("googlebot bytes %v, want %d", got, workers*each*2/5)
	}
	s := tr.Snapshot()
	var total uint64
	for _, w := range s.Crawlers {
		total += w.Requests
		var paths uint64
		for _, p := range w.TopPaths {
			paths += p.Count
		}
		if paths != w.Requests { // Space-Saving's counts sum to the stream's length
			t.Errorf("%s: top path counts sum to %d, requests %d", w.Name, paths, w.Requests)
		}
	}
	if total != workers*each || s.Referrals[0].Total != workers*each {
		t.Errorf("total %d, referrals %d; want %d", total, s.Referrals[0].Total, workers*each)
	}
}

func TestViolationLogIsBounded(t *testing.T) {
	var buf strings.Builder
	var mu sync.Mutex
	c := newClock(t0)
	tr, _ := New(Options{Now: c.now, Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, &buf}, nil))})
	for i := 0; i < 100; i++ {
		tr.Observe(Request{Identity: googleFake, Path: "/private", Status: 200, RobotsViolation: true})
	}
	c.add(time.Second)
	tr.Observe(Request{Identity: googleFake, Path: "/private\n<x>", Status: 200, RobotsViolation: true})
	out := buf.String()
	if n := strings.Count(out, "robots violation"); n != 2 {
		t.Fatalf("%d lines, want 2:\n%s", n, out)
	}
	if !strings.Contains(out, "suppressed=99") || !strings.Contains(out, `path="/private\n<x>"`) {
		t.Errorf("log:\n%s", out)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestCustomCrawlers(t *testing.T) {
	list := bots.Merge(bots.Directory(), []bots.Crawler{{Name: "acmebot", Tokens: []string{"AcmeBot"}, Category: bots.Monitor}}, nil)
	tr, err := New(Options{Crawlers: list})
	if err != nil {
		t.Fatal(err)
	}
	tr.Observe(Request{Identity: bots.Identity{Name: "acmebot", Category: bots.Monitor, Verified: bots.VerifiedUnverifiable}, Status: 200})
	if s := tr.Snapshot(); len(s.Crawlers) != 1 || s.Crawlers[0].Name != "acmebot" || s.Crawlers[0].Category != "monitor" {
		t.Errorf("crawlers %+v", s.Crawlers)
	}
}

// Memory does not grow with traffic: 300,000 requests for distinct
// long paths, under made-up crawler names and every verdict, leave the
// heap where the first thousand did.
func TestMemoryIsBounded(t *testing.T) {
	if testing.Short() || raceOn {
		t.Skip("short, or under the race detector (its shadow memory is what the heap would measure)")
	}
	reg := prometheus.NewRegistry()
	c := newClock(t0)
	tr := newTracker(t, reg, c)
	long := strings.Repeat("x", 1000)
	verdicts := []bots.Verified{bots.VerifiedIP, bots.VerifiedDNS, bots.VerifiedNo, bots.VerifiedUnverifiable, bots.VerifiedSignature, "bogus"}
	run := func(from, to int) {
		for i := from; i < to; i++ {
			name := "googlebot"
			if i%3 == 0 {
				name = fmt.Sprintf("agent-%d.example", i) // all "other"
			}
			tr.Observe(Request{Identity: bots.Identity{Name: name, Category: bots.Category(fmt.Sprint(i % 11)), Verified: verdicts[i%len(verdicts)]},
				Path: fmt.Sprintf("/%d/%s", i, long), Status: i % 600, Bytes: 1, RobotsViolation: i%7 == 0,
				Referer: fmt.Sprintf("https://www.google.com/%d", i)})
			if i%20000 == 0 {
				c.add(time.Hour)
			}
		}
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	run(0, 1000)
	before := heap()
	run(1000, 300_000)
	after := heap()
	t.Logf("heap %d KiB after 1,000 requests, %d KiB after 300,000", before>>10, after>>10)
	if after > before+1<<20 {
		t.Errorf("heap grew by %d KiB over 300,000 requests", (after-before)>>10)
	}
	if n, _ := testutil.GatherAndCount(reg, MetricRequests); n > 2*16*5*4 {
		t.Errorf("%d series of %s", n, MetricRequests)
	}
}

// TestGroupLabel: §21's group is a label of two values, on experiment
// pages' series only: a page outside any experiment (or any other value)
// has no group label at all, not group="". The exposition parses
// (expfmt) and, when installed, passes promtool check metrics.
func TestGroupLabel(t *testing.T) {
	reg := prometheus.NewRegistry()
	tr := newTracker(t, reg, newClock(t0))
	tr.Observe(Request{Identity: gptbot, Path: "/p/1", Status: 200, Group: "variant"})
	tr.Observe(Request{Identity: gptbot, Path: "/p/2", Status: 200, Group: "control"})
	tr.Observe(Request{Identity: gptbot, Path: "/p/3", Status: 200, Group: "bogus"})
	want := `
# HELP headgate_bot_requests_total Requests of identified crawlers: bot is a directory name or other; verified ip, dns, signature, no (spoofed) or unverifiable; code_class 2xx to 5xx; group control or variant on split-test pages, absent elsewhere.
# TYPE headgate_bot_requests_total counter
headgate_bot_requests_total{bot="gptbot",category="ai-training",code_class="2xx",verified="ip"} 1
headgate_bot_requests_total{bot="gptbot",category="ai-training",code_class="2xx",group="control",verified="ip"} 1
headgate_bot_requests_total{bot="gptbot",category="ai-training",code_class="2xx",group="variant",verified="ip"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), MetricRequests); err != nil {
		t.Error(err)
	}
	checkExposition(t, reg)
}

// checkExposition writes reg's families as /metrics does, parses them
// back with expfmt and runs promtool check metrics on them when it is
// installed: one name with two label sets is valid exposition.
func checkExposition(t *testing.T, reg *prometheus.Registry) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&buf, mf); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range strings.Split(buf.String(), "\n") {
		if strings.Contains(l, `group=""`) {
			t.Errorf("an empty group label: %s", l)
		}
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	if _, err := parser.TextToMetricFamilies(bytes.NewReader(buf.Bytes())); err != nil {
		t.Errorf("the exposition does not parse: %v\n%s", err, buf.String())
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Log("promtool not installed: the exposition was checked by expfmt only")
		return
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(buf.Bytes())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestSetCrawlers: a reload's list is followed. A crawler it adds gets its
// own label value and page entry (not other); one it drops counts as other
// from then on; one it keeps keeps its window; names past MaxCrawlers are
// returned and count as other, whatever a reload lists.
func TestSetCrawlers(t *testing.T) {
	reg := prometheus.NewRegistry()
	tr := newTracker(t, reg, newClock(t0))
	acme := bots.Identity{Name: "acmebot", Category: bots.Monitor, Verified: bots.VerifiedUnverifiable}
	tr.Observe(Request{Identity: gptbot, Path: "/a", Status: 200})
	tr.Observe(Request{Identity: acme, Path: "/a", Status: 200})

	added := bots.Merge(bots.Directory(), []bots.Crawler{{Name: "acmebot", Tokens: []string{"AcmeBot"}, Category: bots.Monitor, Operator: "Acme"}}, nil)
	if left := tr.SetCrawlers(added); len(left) != 0 {
		t.Fatalf("left %v", left)
	}
	tr.Observe(Request{Identity: acme, Path: "/b", Status: 200})
	byName := func() map[string]CrawlerWindow {
		m := map[string]CrawlerWindow{}
		for _, c := range tr.Snapshot().Crawlers {
			m[c.Name] = c
		}
		return m
	}
	got := byName()
	if got["acmebot"].Requests != 1 || got["acmebot"].Operator != "Acme" || got[Other].Requests != 1 || got["gptbot"].Requests != 1 {
		t.Errorf("after the reload that adds acmebot: %+v", got)
	}
	if n := testutil.ToFloat64(tr.reqVec.WithLabelValues("acmebot", "monitor", "unverifiable", "2xx")); n != 1 {
		t.Errorf("%s{bot=acmebot} = %v, want 1", MetricRequests, n)
	}

	if left := tr.SetCrawlers(bots.Directory()); len(left) != 0 {
		t.Fatalf("left %v", left)
	}
	tr.Observe(Request{Identity: acme, Path: "/c", Status: 200})
	got = byName()
	if _, ok := got["acmebot"]; ok || got[Other].Requests != 2 || got["gptbot"].Requests != 1 {
		t.Errorf("after the reload that drops acmebot: %+v", got)
	}

	var many []bots.Crawler
	for i := range MaxCrawlers + 10 {
		many = append(many, bots.Crawler{Name: fmt.Sprintf("bot%d", i), Category: bots.Monitor})
	}
	left := tr.SetCrawlers(many)
	if len(left) == 0 || len(tr.known) != MaxCrawlers {
		t.Errorf("%d names left out, %d tracked; want the tracked ones capped at %d", len(left), len(tr.known), MaxCrawlers)
	}
	tr.Observe(Request{Identity: bots.Identity{Name: left[0], Category: bots.Monitor, Verified: bots.VerifiedUnverifiable}, Status: 200})
	if got := byName(); got[Other].Requests != 3 {
		t.Errorf("a name past MaxCrawlers: other has %d requests, want 3", got[Other].Requests)
	}
}
