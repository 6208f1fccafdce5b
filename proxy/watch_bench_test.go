//go:build unix

package proxy

import (
	"fmt"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"
)

// BenchmarkWatchSideBySide is the proxy with [watch] off and on, side by
// side in alternating rounds (sideBySide), over 5,000 distinct pages that
// the rewriter reads, 1% of them answering 404 (status-only
// observations). SPEC §20.2 / issue 37 want on ≥ 0.97× the CPU per
// request of off. A tenth of the requests carry a search engine's
// Referer, which §20.1 counts on both sides.
//
// HEADGATE_WATCH_AA=1 runs both sides with [watch] off: the noise floor of
// the ratio on this machine.
//
//	go test ./proxy -run '^$' -bench 'WatchSideBySide' -benchtime 3x -cpu 2
func BenchmarkWatchSideBySide(b *testing.B) {
	aa := os.Getenv("HEADGATE_WATCH_AA") != ""
	px := benchPair(b, pageUpstream(b, true), func(on bool) string {
		return fmt.Sprintf("[watch]\nenabled = %t\n%s", on && !aa, testRules)
	})
	sideBySide(b, px, func(p *Proxy, i uint64) {
		req := httptest.NewRequest("GET", "http://notes.example/notes/"+strconv.Itoa(int(i%5000)), nil)
		if i%10 == 0 {
			req.Header.Set("Referer", "https://www.google.com/")
		}
		p.ServeHTTP(httptest.NewRecorder(), req)
	})
}
