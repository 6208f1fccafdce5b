//go:build unix

package proxy

import (
	"fmt"
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
	addrs := benchClientAddrs()
	dir := rangesDir(b)
	px := benchPair(b, pageUpstream(b, true), func(on bool) string {
		return fmt.Sprintf("[bots]\nenabled = %t\nreverse_dns = false\nranges_dir = %s\n[watch]\nenabled = %t\n%s",
			on && !aa, quote(dir), on && !aa, testRules)
	})
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
