package watch

import (
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headgate/headgate/internal/robotsmeta"
	"github.com/headgate/headgate/rewrite"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// facts runs the rewriter over a page and returns its HeadFacts.
func facts(t testing.TB, page string) *rewrite.HeadFacts {
	t.Helper()
	r := rewrite.NewReader(strings.NewReader(page), rewrite.Options{ContentType: "text/html; charset=utf-8"})
	if err := r.Prepare(); err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, r)
	f := r.Result().Upstream
	return &f
}

func page(title, robots string) string {
	p := "<!doctype html><html><head><title>" + title + "</title>"
	if robots != "" {
		p += `<meta name="robots" content="` + robots + `">`
	}
	return p + "</head><body>x</body></html>"
}

func newWatcher(t testing.TB, confirm int, reg prometheus.Registerer) *Watcher {
	t.Helper()
	c := Defaults()
	c.Confirm = confirm
	w, err := New(Options{Config: c, Registerer: reg, BaseURL: "https://shop.example",
		Now: func() time.Time { return time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(*Config)
		codes []string
	}{
		{"defaults", func(*Config) {}, nil},
		{"bad signal", func(c *Config) { c.Signals = []string{"status", "titel"} }, []string{HGBadSignal}},
		{"no signals", func(c *Config) { c.Signals = nil }, []string{HGNoSignals}},
		{"confirm 0", func(c *Config) { c.Confirm = 0 }, []string{HGBadConfirm}},
		{"confirm 101", func(c *Config) { c.Confirm = 101 }, []string{HGBadConfirm}},
		{"max_pages 0", func(c *Config) { c.MaxPages = 0 }, []string{HGBadMaxPages}},
		{"max_pages huge", func(c *Config) { c.MaxPages = 20_000_000 }, []string{HGBadMaxPages}},
		{"webhook ftp", func(c *Config) { c.Webhook = "ftp://hooks.example/T" }, []string{HGBadWebhook}},
		{"webhook relative", func(c *Config) { c.Webhook = "/hooks" }, []string{HGBadWebhook}},
		{"webhook ok", func(c *Config) { c.Webhook = "https://hooks.example/T"; c.WebhookFormat = FormatSlack }, nil},
		{"bad format", func(c *Config) { c.WebhookFormat = "xml" }, []string{HGBadFormat}},
		{"all at once", func(c *Config) { c.Confirm, c.MaxPages, c.WebhookFormat = -1, -1, "" }, []string{HGBadConfirm, HGBadMaxPages, HGBadFormat}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Defaults()
			tc.edit(&c)
			var got []string
			for _, p := range c.Check() {
				got = append(got, p.Code)
				if p.Key == "" || p.Message == "" || !strings.HasPrefix(p.Key, "watch.") {
					t.Errorf("problem %v", p)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.codes) {
				t.Errorf("codes %v, want %v", got, tc.codes)
			}
		})
	}
}

// TestConfirm: a change counts when seen on confirm responses in a row;
// a flapping head never confirms; confirm=1 reports at once; the first
// response is no event.
func TestConfirm(t *testing.T) {
	a, b, c := facts(t, page("A", "")), facts(t, page("B", "")), facts(t, page("C", ""))
	for _, tc := range []struct {
		name    string
		confirm int
		seq     []*rewrite.HeadFacts
		want    int // title events
	}{
		{"first is baseline", 2, []*rewrite.HeadFacts{a}, 0},
		{"same", 2, []*rewrite.HeadFacts{a, a, a, a}, 0},
		{"confirm 1 immediate", 1, []*rewrite.HeadFacts{a, b}, 1},
		{"confirm 1 flapping reports each", 1, []*rewrite.HeadFacts{a, b, a}, 2},
		{"confirm 2 once", 2, []*rewrite.HeadFacts{a, b}, 0},
		{"confirm 2 twice", 2, []*rewrite.HeadFacts{a, b, b}, 1},
		{"confirm 2 flapping", 2, []*rewrite.HeadFacts{a, b, a, b, a, b, a, b}, 0},
		{"confirm 2 random", 2, []*rewrite.HeadFacts{a, b, c, b, c, b, c}, 0},
		{"confirm 2 new candidate restarts", 2, []*rewrite.HeadFacts{a, b, c, c}, 1},
		{"confirm 3", 3, []*rewrite.HeadFacts{a, b, b, b, b, b}, 1},
		{"back again", 2, []*rewrite.HeadFacts{a, b, b, a, a}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWatcher(t, tc.confirm, nil)
			for _, f := range tc.seq {
				w.Observe("/p", "", Response{Status: 200, Head: f})
			}
			if got := len(w.Events("")); got != tc.want {
				t.Errorf("events %d, want %d: %v", got, tc.want, w.Events(""))
			}
		})
	}
}

// TestSignalsIndependent: a flapping description does not hold back a
// title change that holds.
func TestSignalsIndependent(t *testing.T) {
	w := newWatcher(t, 2, nil)
	pg := func(title, desc string) *rewrite.HeadFacts {
		return facts(t, `<html><head><title>`+title+`</title><meta name=description content="`+desc+`"></head>`)
	}
	for _, f := range []*rewrite.HeadFacts{pg("A", "x"), pg("B", "y"), pg("B", "z"), pg("B", "w")} {
		w.Observe("/p", "", Response{Status: 200, Head: f})
	}
	ev := w.Events("")
	if len(ev) != 1 || ev[0].Signal != "title" || ev[0].After != "B" {
		t.Errorf("events %+v", ev)
	}
}

func TestSeverity(t *testing.T) {
	const h1, h2 = 0x1111, 0x2222
	noindex := uint64(robotsmeta.NoIndex)
	for _, tc := range []struct {
		s             Signal
		before, after uint64
		want          string
	}{
		{Status, 200, 500, Critical},
		{Status, 200, 404, Critical},
		{Status, 200, 301, Critical},
		{Status, 200, 204, Info},
		{Status, 500, 200, Info},
		{Status, 404, 500, Info},
		{Robots, 0, noindex, Critical},
		{Robots, uint64(robotsmeta.NoFollow), noindex | uint64(robotsmeta.NoFollow), Critical},
		{Robots, noindex, 0, Info},
		{Robots, 0, uint64(robotsmeta.NoArchive), Info},
		{Canonical, h1, h2, Critical},
		{Canonical, h1, 0, Critical},
		{Canonical, 0, h1, Info},
		{Title, h1, 0, Critical},
		{Title, h1, h2, Info},
		{Title, 0, h1, Info},
		{Description, h1, 0, Critical},
		{Description, h1, h2, Info},
		{Hreflang, h1, 0, Info},
		{JSONLDTypes, h1, 0, Info},
	} {
		if got := severity(tc.s, tc.before, tc.after); got != tc.want {
			t.Errorf("%v %x→%x: %s, want %s", tc.s, tc.before, tc.after, got, tc.want)
		}
	}
}

// TestEvents: what an event says, end to end from the rewriter's facts.
func TestEvents(t *testing.T) {
	reg := prometheus.NewRegistry()
	w := newWatcher(t, 1, reg)
	ok := facts(t, `<html><head><title>Shoes</title><link rel=canonical href="https://shop.example/shoes"></head>`)
	moved := facts(t, `<html><head><title>Shoes</title><link rel=canonical href="https://shop.example/boots"><meta name=robots content=noindex></head>`)
	w.Observe("/shoes", "c=1", Response{Status: 200, Head: ok})
	w.Observe("/shoes", "c=1", Response{Status: 200, Head: moved})
	w.Observe("/shoes", "c=1", Response{Status: 503, Head: ok}) // a head of an error page: status only
	w.Observe("/shoes", "c=1", Response{Status: 304})           // ignored
	w.Observe("/shoes", "c=1", Response{Status: 200, RobotsHeader: []string{"otherbot: noindex"}, Head: moved})
	var got []string
	for _, e := range w.Events("") {
		got = append(got, fmt.Sprintf("%s %s %s %q→%q", e.Severity, e.URL, e.Signal, e.Before, e.After))
	}
	want := []string{
		`info https://shop.example/shoes?c=1 status "503"→"200"`,
		`critical https://shop.example/shoes?c=1 status "200"→"503"`,
		`critical https://shop.example/shoes?c=1 canonical "https://shop.example/shoes"→"https://shop.example/boots"`,
		`critical https://shop.example/shoes?c=1 robots ""→"noindex"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := testutil.ToFloat64(w.count[Status][1]); n != 1 {
		t.Errorf("critical status count %v", n)
	}
	if n, err := testutil.GatherAndCount(reg, "headgate_upstream_changes_total"); err != nil || n != 14 {
		t.Errorf("series %d %v", n, err)
	}
	if len(w.EventsFor("/shoes?c=1")) != 4 || len(w.EventsFor("/shoes")) != 0 || len(w.Events(Critical)) != 3 {
		t.Errorf("EventsFor/Events filters")
	}
	// X-Robots-Tag for every crawler counts.
	w.Observe("/h", "", Response{Status: 200, Head: ok})
	w.Observe("/h", "", Response{Status: 200, Head: ok, RobotsHeader: []string{"GoogleBot: none"}})
	if ev := w.EventsFor("/h"); len(ev) != 1 || ev[0].After != "noindex, nofollow" {
		t.Errorf("header robots %+v", ev)
	}
}

func TestMatch(t *testing.T) {
	c := Defaults()
	w, _ := New(Options{Config: c, Match: func(p string) bool { return strings.HasPrefix(p, "/shop/") }})
	f := facts(t, page("A", ""))
	w.Observe("/blog/1", "", Response{Status: 200, Head: f})
	w.Observe("/shop/1", "", Response{Status: 200, Head: f})
	if w.Pages() != 1 {
		t.Errorf("pages %d", w.Pages())
	}
}

func TestLRUBound(t *testing.T) {
	c := Defaults()
	c.MaxPages, c.Confirm = 1000, 1
	w, _ := New(Options{Config: c})
	f := facts(t, page("A", ""))
	for i := range 20000 {
		w.Observe(fmt.Sprintf("/p/%d", i), "", Response{Status: 200, Head: f})
	}
	if n := w.Pages(); n > 1000 || n < 900 {
		t.Errorf("pages %d, want ≤ 1000", n)
	}
	// The most recent pages are remembered: a change on one is seen.
	w.Observe("/p/19999", "", Response{Status: 500, Head: f})
	if len(w.Events("")) != 1 {
		t.Errorf("recent page forgotten")
	}
	// The oldest are not: a page seen again is a baseline.
	w.Observe("/p/0", "", Response{Status: 500, Head: f})
	if len(w.Events("")) != 1 {
		t.Errorf("old page remembered")
	}
}

// TestEntrySize measures what a remembered page costs, map included:
// SPEC §20.2 allows 256 B.
func TestEntrySize(t *testing.T) {
	const n = 100000
	c := Defaults()
	c.MaxPages = n
	f := facts(t, page("A", ""))
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("/p/%d", i)
	}
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	w, _ := New(Options{Config: c})
	for _, k := range keys {
		w.Observe(k, "", Response{Status: 200, Head: f})
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	per := float64(m1.HeapAlloc-m0.HeapAlloc) / n
	t.Logf("%.0f B a page (%d pages)", per, w.Pages())
	if per > 256 {
		t.Errorf("%.0f B a page, want ≤ 256", per)
	}
	runtime.KeepAlive(w)
}

func TestConcurrent(t *testing.T) {
	c := Defaults()
	c.MaxPages, c.Confirm = 500, 2
	w, _ := New(Options{Config: c})
	a, b := facts(t, page("A", "")), facts(t, page("B", "noindex"))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				f := a
				if (i/4)%2 == 1 {
					f = b
				}
				w.Observe(fmt.Sprintf("/p/%d", (i+g)%700), "", Response{Status: 200, Head: f})
				if i%100 == 0 {
					w.Events(Critical)
					w.EventsFor("/p/1")
				}
			}
		}()
	}
	wg.Wait()
	if w.Pages() > 500 {
		t.Errorf("pages %d", w.Pages())
	}
}

func TestObserveAllocs(t *testing.T) {
	w := newWatcher(t, 2, prometheus.NewRegistry())
	f := facts(t, page("A", "noindex"))
	r := Response{Status: 200, Head: f, RobotsHeader: []string{"noarchive"}}
	w.Observe("/p", "q=1", r)
	if n := testing.AllocsPerRun(1000, func() { w.Observe("/p", "q=1", r) }); n != 0 {
		t.Errorf("Observe allocates %v times when nothing changed", n)
	}
}

func BenchmarkObserve(b *testing.B) {
	w := newWatcher(b, 2, nil)
	f := facts(b, page("A product page title", "index, follow"))
	keys := make([]string, 10000)
	for i := range keys {
		keys[i] = fmt.Sprintf("/products/%d", i)
	}
	r := Response{Status: 200, Head: f}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			w.Observe(keys[i%len(keys)], "", r)
			i++
		}
	})
}

// TestMillionPages: 1,000,000 distinct pages through max_pages = 100000
// keep the heap growth under issue 37's 32 MiB.
func TestMillionPages(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000,000 pages")
	}
	c := Defaults()
	f := facts(t, page("A", ""))
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	w, _ := New(Options{Config: c})
	buf := make([]byte, 0, 32)
	for i := range 1_000_000 {
		buf = append(buf[:0], "/p/"...)
		buf = strconv.AppendInt(buf, int64(i), 10)
		w.Observe(string(buf), "", Response{Status: 200, Head: f})
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	grew := int64(m1.HeapAlloc) - int64(m0.HeapAlloc)
	t.Logf("heap grew %.1f MiB for %d pages remembered", float64(grew)/(1<<20), w.Pages())
	if grew > 32<<20 {
		t.Errorf("heap grew %d MiB, want ≤ 32", grew>>20)
	}
	// Evictions leave the maps fuller than a first fill (TestEntrySize):
	// a page still costs at most 256 B.
	if per := grew / int64(w.Pages()); per > 256 {
		t.Errorf("%d B a page after evictions, want ≤ 256", per)
	}
	runtime.KeepAlive(w)
}

// TestOnlyPages: a path first seen without a head (an image, a 404) is
// not remembered; a page's later error is compared.
func TestOnlyPages(t *testing.T) {
	w := newWatcher(t, 1, nil)
	w.Observe("/logo.png", "", Response{Status: 200})
	w.Observe("/logo.png", "", Response{Status: 404})
	w.Observe("/gone", "", Response{Status: 404, Head: facts(t, page("Not found", ""))})
	if w.Pages() != 0 || len(w.Events("")) != 0 {
		t.Errorf("pages %d events %v", w.Pages(), w.Events(""))
	}
	w.Observe("/p", "", Response{Status: 200, Head: facts(t, page("A", ""))})
	w.Observe("/p", "", Response{Status: 301})
	if ev := w.Events(Critical); len(ev) != 1 || ev[0].Signal != "status" || ev[0].After != "301" {
		t.Errorf("events %+v", ev)
	}
}

// TestShardIndex checks a shard's index against the pages it holds after
// random observations through evictions: every entry in the LRU list is
// found at its key, no slot names an entry twice, and keys whose tags
// collide (the same upper half) stay apart.
func TestShardIndex(t *testing.T) {
	s := &shard{max: 300, head: -1, tail: -1}
	rng := rand.New(rand.NewPCG(1, 2))
	var v values
	var cmp [numSignals]bool
	var ch changes
	for range 20000 {
		key := rng.Uint64N(1000) * nShards // one shard's keys
		if rng.IntN(4) == 0 {
			key |= 0xdead_beef << 32 // a tag others share
		}
		s.observe(key, &v, &cmp, 2, &rewrite.HeadFacts{}, &ch)
	}
	seen := map[int32]bool{}
	used := 0
	for _, sl := range s.slots {
		if sl.tag != 0 {
			used++
			if seen[sl.i] {
				t.Fatalf("entry %d in two slots", sl.i)
			}
			seen[sl.i] = true
		}
	}
	n := 0
	for i := s.head; i >= 0; i = s.at(i).next {
		n++
		key := s.at(i).key
		if pos, ok := s.find(key); !ok || s.slots[pos].i != i {
			t.Fatalf("entry %d (key %x) not found", i, key)
		}
	}
	if n != int(s.n) || used != n || n != s.max {
		t.Errorf("list %d, slots %d, n %d, max %d", n, used, s.n, s.max)
	}
}
