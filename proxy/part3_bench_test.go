//go:build unix

package proxy

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"
)

// BenchmarkPart3SideBySide is the number issue 37 states for all of §20
// together: the proxy with [bots] (and so §20.1's insight, which counts
// every request in finish) and [watch] on keeps ≥ 0.97× the CPU per
// request of the proxy with both off, side by side in alternating rounds
// (sideBySide). It joins BenchmarkBotsSideBySide's identify setup (1,000
// client addresses, half in googlebot.json, a quarter of requests saying
// Googlebot, no Headgate-Bot to the upstream, no reverse DNS) with
// BenchmarkWatchSideBySide's (5,000 pages the rewriter reads, 5 % answering
// 404, a tenth with a search engine's Referer, which insight counts on
// both sides), so neither feature's cost hides behind the other's setup.
//
// HEADGATE_PART3_AA=1 runs both sides with both off: the noise floor of
// the ratio on this machine.
//
//	go test ./proxy -run '^$' -bench Part3SideBySide -benchtime 3x -count 4 -cpu 2
func BenchmarkPart3SideBySide(b *testing.B) {
	aa := os.Getenv("HEADGATE_PART3_AA") != ""
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(len(testPage)))
		if len(r.URL.Path) > 3 && r.URL.Path[len(r.URL.Path)-2:] == "00" {
			w.WriteHeader(http.StatusNotFound)
		}
		io.WriteString(w, testPage)
	}))
	b.Cleanup(up.Close)
	addrs := make([]string, 1000)
	for i := range addrs {
		if i%2 == 0 {
			addrs[i] = fmt.Sprintf("127.66.%d.%d:40000", i/250, i%250) // in googlebot.json
		} else {
			addrs[i] = fmt.Sprintf("127.1.%d.%d:40000", i/250, i%250)
		}
	}
	dir := rangesDir(b)
	var px [2]*Proxy
	for i, on := range []bool{false, true} {
		src := fmt.Sprintf("[bots]\nenabled = %t\nreverse_dns = false\nranges_dir = %s\n[watch]\nenabled = %t\n%s",
			on && !aa, quote(dir), on && !aa, testRules)
		p, err := New(testConfig(b, up.URL, src), Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { p.Close() })
		px[i] = p
	}
	sideBySide(b, px, func(p *Proxy, i uint64) {
		req := httptest.NewRequest("GET", "http://notes.example/notes/"+strconv.Itoa(int(i%5000)), nil)
		req.RemoteAddr = addrs[i%uint64(len(addrs))]
		if i%4 == 0 {
			req.Header.Set("User-Agent", uaGooglebot)
		} else {
			req.Header.Set("User-Agent", uaBrowser)
		}
		if i%10 == 0 {
			req.Header.Set("Referer", "https://www.google.com/")
		}
		p.ServeHTTP(httptest.NewRecorder(), req)
	})
}
