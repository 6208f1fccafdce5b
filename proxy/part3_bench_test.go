//go:build unix

package proxy

import (
	"fmt"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkPart3SideBySide is the number issue 37 states for all of §20
// together: the proxy with [bots] (and so §20.1's insight, which counts
// every request in finish) and [watch] on keeps ≥ 0.97× the CPU per
// request of the proxy with both off, side by side in alternating rounds
// (sideBySide). It joins BenchmarkBotsSideBySide's identify setup (1,000
// client addresses, half in googlebot.json, a quarter of requests saying
// Googlebot, no Headgate-Bot to the upstream, no reverse DNS) with
// BenchmarkWatchSideBySide's (5,000 pages the rewriter reads, 1 % answering
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

// BenchmarkPart3AllSideBySide is issue 40's "Part III's features inside
// the budgets, measured together in one run with all of them on": the
// proxy with every Part III feature on against the proxy with all of them
// off, side by side in alternating rounds (sideBySide), off/on the ratio.
// On: [bots] with the identity to the upstream (Headgate-Bot) and so
// §20.1's insight, [watch], [markdown] (every page has a Markdown version:
// Vary, the alternate Link and head tag on each HTML answer), a
// content_signal on every path (Content-Signal and Content-Usage) and an
// [[experiment]] splitting /notes/:id in half. Off: the same rules, with
// the experiment's variant title as a plain rule, so that both render heads
// of one size. The traffic is BenchmarkPart3SideBySide's (1,000 client
// addresses, a quarter saying Googlebot, half of those from its ranges;
// 5,000 pages, 1 % answering 404; a tenth with a search engine's Referer),
// every request a browser's Accept: an HTML answer on both sides, which is
// what the budgets are about (a Markdown answer is a conversion).
// HEADGATE_PART3_AA=1 runs both sides with all off.
//
//	go test ./proxy -run '^$' -bench Part3AllSideBySide -benchtime 3x -count 4 -cpu 2
func BenchmarkPart3AllSideBySide(b *testing.B) {
	aa := os.Getenv("HEADGATE_PART3_AA") != ""
	addrs := benchClientAddrs()
	dir := rangesDir(b)
	const off = testRules + `
[[rule]]
match = "/notes/:id"
title = "Note {id}, as the variant has it"
`
	const on = `
[[rule]]
match = "/*"
title = "Rewritten title"
description = "A rewritten page."
canonical = "self"
content_signal = { search = "yes", ai_input = "yes", ai_train = "no" }

[[experiment]]
name = "note-title"
match = "/notes/:id"
variant_share = 50
[experiment.variant]
title = "Note {id}, as the variant has it"
`
	px := benchPair(b, pageUpstream(b, true), func(o bool) string {
		if !o || aa {
			return off
		}
		return fmt.Sprintf("[bots]\nenabled = true\nreverse_dns = false\nupstream_header = \"Headgate-Bot\"\nranges_dir = %s\n[watch]\nenabled = true\n[markdown]\nenabled = true\n%s",
			quote(dir), on)
	})
	for i, p := range px {
		w := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "http://notes.example/notes/1", nil)
		req.Header.Set("Accept", acceptBrowser)
		p.ServeHTTP(w, req)
		h := w.Header()
		if w.Code != 200 || (h.Get("Content-Signal") != "" || h.Get("Link") != "") != (i == 1 && !aa) {
			b.Fatalf("proxy %d: %d, Content-Signal %q, Link %q", i, w.Code, h.Get("Content-Signal"), h.Get("Link"))
		}
		variant := 0
		for k := range 32 {
			w := httptest.NewRecorder()
			p.ServeHTTP(w, httptest.NewRequest("GET", "http://notes.example/notes/"+strconv.Itoa(k), nil))
			if strings.Contains(w.Body.String(), "as the variant has it") {
				variant++
			}
		}
		if (variant == 32) != (i == 0 || aa) || variant == 0 {
			b.Fatalf("proxy %d: %d of 32 pages with the variant's title", i, variant)
		}
	}
	sideBySide(b, px, func(p *Proxy, i uint64) {
		req := httptest.NewRequest("GET", "http://notes.example/notes/"+strconv.Itoa(int(i%5000)), nil)
		req.RemoteAddr = addrs[i%uint64(len(addrs))]
		req.Header.Set("Accept", acceptBrowser)
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

// acceptBrowser is a browser's Accept: it wants the HTML.
const acceptBrowser = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"
