package test

// A crawl of 2,000 generated pages on loopback, its time and its peak
// heap, then the same crawl with pages ten times larger, whose peak must
// stay about the same (the audit keeps a few facts per page, never the
// page); then 10,000 pages, whose peak grows by the few facts per page.
//
//	go test ./test -run TestAuditScale -count=1 -v

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/headgate/headgate/audit"
)

const audScalePages = 2000

// audScaleSite serves pages pages of about size bytes each: a clean head,
// links to eight other pages, and paragraphs of text.
func audScaleSite(size, pages int) (http.Handler, *atomic.Int64) {
	audScalePages := pages
	para := "<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. <em>Ut enim</em> ad minim veniam.</p>\n"
	filler := []byte(strings.Repeat(para, size/len(para)+1)[:size])
	var served atomic.Int64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := 0
		if r.URL.Path != "/" {
			if _, err := fmt.Sscanf(r.URL.Path, "/g/%d", &n); err != nil || n <= 0 || n >= audScalePages || r.URL.Path != fmt.Sprintf("/g/%d", n) {
				http.NotFound(w, r)
				return
			}
		}
		self := "/"
		if n > 0 {
			self = fmt.Sprintf("/g/%d", n)
		}
		link := func(i int) string {
			i %= audScalePages
			if i == 0 {
				return `<a href="/">home</a> `
			}
			return fmt.Sprintf(`<a href="/g/%d">page %d</a> `, i, i)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		var head strings.Builder
		fmt.Fprintf(&head, `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Generated page %d of the scale test</title>`+
			`<meta name="description" content="The generated page number %d of the audit's scale test, described at a length results show.">`+
			`<link rel="canonical" href="http://%s%s"><meta property="og:url" content="http://%s%s"></head><body><nav>`,
			n, n, r.Host, self, r.Host, self)
		for _, i := range []int{n + 1, n + 2, 2*n + 1, 7*n + 3} {
			head.WriteString(link(i))
		}
		head.WriteString("</nav>\n")
		w.Write([]byte(head.String()))
		w.Write(filler)
		var tail strings.Builder
		tail.WriteString("<footer>")
		for _, i := range []int{n + 3, 3*n + 2, 11*n + 5, 13*n + 7} {
			tail.WriteString(link(i))
		}
		tail.WriteString("</footer></body></html>\n")
		w.Write([]byte(tail.String()))
		served.Add(int64(head.Len() + len(filler) + tail.Len()))
	}), &served
}

type audScaleResult struct {
	pages    int
	findings int
	elapsed  time.Duration
	peak     uint64 // peak HeapInuse, sampled every millisecond
	alloc    uint64 // bytes allocated during the crawl
	bytes    int64  // bytes served
}

func audScaleRun(t *testing.T, size, pages int) audScaleResult {
	t.Helper()
	h, served := audScaleSite(size, pages)
	srv := httptest.NewServer(h)
	defer srv.Close()

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		// runtime/metrics, unlike ReadMemStats, does not stop the world: a
		// sample every millisecond costs the crawl nothing.
		defer close(sampled)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
		for {
			metrics.Read(samples)
			if inuse := samples[0].Value.Uint64() + samples[1].Value.Uint64(); inuse > peak.Load() {
				peak.Store(inuse) // HeapInuse
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	began := time.Now()
	r, err := audit.Run(context.Background(), audit.Options{Live: srv.URL, MaxPages: pages + 100, Concurrency: 4}, nil)
	elapsed := time.Since(began)
	close(stop)
	<-sampled
	if err != nil {
		t.Fatal(err)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	return audScaleResult{
		pages: len(r.Pages), findings: len(r.Findings), elapsed: elapsed,
		peak: peak.Load(), alloc: after.TotalAlloc - before.TotalAlloc, bytes: served.Load(),
	}
}

func TestAuditScale(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls 2 × 2,000 and 10,000 pages")
	}
	const mib = 1 << 20
	small := audScaleRun(t, 20<<10, audScalePages)
	large := audScaleRun(t, 200<<10, audScalePages)
	many := audScaleRun(t, 20<<10, 5*audScalePages)
	for _, x := range []struct {
		name  string
		r     audScaleResult
		pages int
	}{{"20 KiB pages", small, audScalePages}, {"200 KiB pages", large, audScalePages}, {"10,000 pages of 20 KiB", many, 5 * audScalePages}} {
		t.Logf("%s: %d pages (%.0f MiB) in %v (%.0f pages/s), peak HeapInuse %.1f MiB, allocated %.0f MiB",
			x.name, x.r.pages, float64(x.r.bytes)/mib, x.r.elapsed.Round(time.Millisecond),
			float64(x.r.pages)/x.r.elapsed.Seconds(), float64(x.r.peak)/mib, float64(x.r.alloc)/mib)
		if x.r.pages != x.pages || x.r.findings != 0 {
			t.Errorf("%s: %d pages, %d findings; want %d clean pages", x.name, x.r.pages, x.r.findings, x.pages)
		}
	}
	// Ten times the bytes, about the same peak: the margin is for the GC's
	// pacing and the sampling, not for anything that grows with page size.
	if limit := small.peak + small.peak/2 + 4*mib; large.peak > limit {
		t.Errorf("peak heap %.1f MiB with 200 KiB pages, %.1f MiB with 20 KiB pages: it grows with page size",
			float64(large.peak)/mib, float64(small.peak)/mib)
	}
	// Five times the pages: what grows is the few facts kept per page
	// (URL, title, description, links as ids, an 8-byte body hash for
	// duplicate-without-canonical, a bit for sitemap-orphan), not the
	// pages' bytes: at most 4 KiB a page more.
	perPage := (float64(many.peak) - float64(small.peak)) / float64(4*audScalePages)
	t.Logf("10,000 pages: %.0f bytes of peak heap per page more than 2,000 pages", perPage)
	if perPage > 4<<10 {
		t.Errorf("peak heap %.1f MiB for 10,000 pages, %.1f MiB for 2,000: %.0f bytes a page", float64(many.peak)/mib, float64(small.peak)/mib, perPage)
	}
}
