package test

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// mdBigPage is a page of about size bytes whose <main> holds sections of
// headings, paragraphs with links and emphasis, lists and a table, behind
// a navigation and a footer.
func mdBigPage(size int) []byte {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Big</title>` +
		`<meta name="description" content="A big page."></head><body><nav><a href="/">Home</a> <a href="/about">About</a></nav><main>`)
	for i := 0; b.Len() < size-200; i++ {
		fmt.Fprintf(&b, `<section id="s%d"><h2>Section %d</h2><p>Some <em>words</em> about <a href="/notes/%d">note %d</a> and <strong>more</strong> text, with a <code>code span</code>.</p>`+
			`<ul><li>first item</li><li>second <a href="https://example.org/x?y=%d">link</a></li></ul>`+
			`<table><tr><th>Name</th><th>Value</th></tr><tr><td>a%d</td><td>%d</td></tr></table></section>`, i, i, i, i, i, i, i)
	}
	b.WriteString(`</main><footer>Footer words</footer></body></html>`)
	return []byte(b.String())
}

// 64 concurrent Markdown requests of a 2 MB page keep headgate's peak RSS
// (VmHWM) under 300 MiB (SPEC §19.1, issue 36): a conversion holds at most
// max_bytes of its page and a bounded tree. Half the clients take gzip.
func TestMarkdownConcurrentMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("converts 64 pages of 2 MB at once")
	}
	const (
		clients = 64
		size    = 2 << 20
	)
	body := mdBigPage(size)
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	})
	hg := start(t, config{Upstream: up.URL, Server: "access_log = false", Rules: "[markdown]\nenabled = true\nmax_bytes = \"8MiB\"\n" + pageRules})
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, DisableCompression: true}}
	defer c.CloseIdleConnections()

	var wg sync.WaitGroup
	gate := make(chan struct{})
	errs := make(chan error, clients)
	for i := range clients {
		wg.Go(func() {
			<-gate
			req, _ := http.NewRequest("GET", fmt.Sprintf("%s/big/%d.md", hg.URL, i), nil)
			if i%2 == 1 {
				req.Header.Set("Accept-Encoding", "gzip")
			}
			res, err := c.Do(req)
			if err != nil {
				errs <- err
				return
			}
			defer res.Body.Close()
			n, err := io.Copy(io.Discard, res.Body)
			if err != nil || res.Header.Get("Content-Type") != "text/markdown; charset=utf-8" || n < 50<<10 {
				errs <- fmt.Errorf("client %d: %d %v, %d bytes, %v", i, res.StatusCode, res.Header, n, err)
			}
		})
	}
	close(gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	rss := hg.peakRSS(t)
	t.Logf("%d concurrent Markdown requests of a %d-byte page: headgate peak RSS (VmHWM) %.1f MiB", clients, len(body), float64(rss)/(1<<20))
	if rss > 300<<20 {
		t.Errorf("peak RSS %.1f MiB, want under 300 MiB", float64(rss)/(1<<20))
	}
}
