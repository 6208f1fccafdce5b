package bots

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// publishedSizeRanges writes range files the size of the published ones
// (googlebot.json has ~300 prefixes, chatgpt-user.json ~250, bingbot.json
// ~30; every list together well under 2,000) times four, so the figure
// holds for lists that grow.
func publishedSizeRanges(b *testing.B) string {
	dir := b.TempDir()
	write := func(name string, n int, seed byte) {
		var sb strings.Builder
		sb.WriteString(`{"creationTime": "2026-12-05T23:00:00.000000", "prefixes": [`)
		for i := range n {
			if i > 0 {
				sb.WriteString(",")
			}
			if i%3 == 0 {
				fmt.Fprintf(&sb, `{"ipv6Prefix": "2001:4860:%x:%x::/64"}`, seed, i)
			} else {
				fmt.Fprintf(&sb, `{"ipv4Prefix": "%d.%d.%d.0/27"}`, 20+int(seed), i>>8, i&255)
			}
		}
		sb.WriteString("]}")
		os.WriteFile(filepath.Join(dir, name+".json"), []byte(sb.String()), 0o644)
	}
	write("googlebot", 1200, 1)
	write("google-special", 400, 2)
	write("google-user", 800, 3)
	write("bingbot", 120, 4)
	write("gptbot", 100, 5)
	write("oai-searchbot", 150, 6)
	write("chatgpt-user", 1000, 7)
	write("perplexitybot", 40, 8)
	write("applebot", 100, 9)
	write("duckduckbot", 100, 10)
	write("ccbot", 50, 11)
	return dir
}

func BenchmarkIdentifyRanges(b *testing.B) {
	cfg := Defaults()
	cfg.RangesDir = publishedSizeRanges(b)
	v := newTestVerifier(b, cfg, Options{Resolver: &fakeResolver{}})
	r := googlebotRequest()
	a := netip.MustParseAddr("21.4.100.5") // googlebot.json's prefix 1124
	if id := v.Identify(context.Background(), r, a); id.Verified != VerifiedIP {
		b.Fatalf("%+v", id)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		v.Identify(context.Background(), r, a)
	}
}

func BenchmarkIdentifyDNSCached(b *testing.B) {
	a := netip.MustParseAddr("66.249.66.1")
	res := &fakeResolver{ptr: map[string][]string{"66.249.66.1": {"crawl-66-249-66-1.googlebot.com"}},
		fwd: map[string][]netip.Addr{"crawl-66-249-66-1.googlebot.com": {a}}}
	cfg := Defaults()
	cfg.DNSWait = Duration{Duration: time.Second}
	v := newTestVerifier(b, cfg, Options{Resolver: res})
	r := googlebotRequest()
	if id := v.Identify(context.Background(), r, a); id.Verified != VerifiedDNS {
		b.Fatalf("%+v", id)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		v.Identify(context.Background(), r, a)
	}
}

func BenchmarkIdentifyBrowser(b *testing.B) {
	v := newTestVerifier(b, Defaults(), Options{Resolver: &fakeResolver{}})
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("User-Agent", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36")
	a := netip.MustParseAddr("192.0.2.1")
	b.ReportAllocs()
	for b.Loop() {
		v.Identify(context.Background(), r, a)
	}
}

func BenchmarkRangesContains(b *testing.B) {
	for _, n := range []int{10, 1000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ps := make([]netip.Prefix, n)
			for i := range ps {
				ps[i] = netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(i >> 16), byte(i >> 8), byte(i), 0}), 28)
			}
			rs := NewRanges(ps)
			a := netip.AddrFrom4([4]byte{0, byte(n / 2 >> 8), byte(n / 2), 5})
			b.ReportAllocs()
			for b.Loop() {
				if !rs.Contains(a) {
					b.Fatal("miss")
				}
			}
		})
	}
}

func BenchmarkHeader(b *testing.B) {
	id := Identity{"gptbot", AITraining, VerifiedIP}
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		buf = id.AppendHeader(buf[:0])
	}
}

// BenchmarkIdentify1000Clients is the proxy's load of SPEC §18.3: 1,000
// distinct client addresses, every one cached (half claim Googlebot and
// were confirmed by DNS, half are browsers).
func BenchmarkIdentify1000Clients(b *testing.B) {
	ptr, fwd := map[string][]string{}, map[string][]netip.Addr{}
	addrs := make([]netip.Addr, 1000)
	for i := range addrs {
		a := netip.AddrFrom4([4]byte{66, 249, byte(i >> 8), byte(i)})
		addrs[i] = a
		name := fmt.Sprintf("crawl-%d.googlebot.com", i)
		ptr[a.String()], fwd[name] = []string{name}, []netip.Addr{a}
	}
	cfg := Defaults()
	cfg.DNSWait = Duration{Duration: time.Second}
	v := newTestVerifier(b, cfg, Options{Resolver: &fakeResolver{ptr: ptr, fwd: fwd}})
	bot, browser := googlebotRequest(), httptest.NewRequest("GET", "/", nil)
	browser.Header.Set("User-Agent", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36")
	for _, a := range addrs {
		if id := v.Identify(context.Background(), bot, a); id.Verified != VerifiedDNS {
			b.Fatalf("%s: %+v", a, id)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		r := bot
		if i&1 == 1 {
			r = browser
		}
		v.Identify(context.Background(), r, addrs[i%len(addrs)])
		i++
	}
}

// BenchmarkIdentifySigned is a Web Bot Auth request whose agent's key
// directory is cached: parsing, the signature base and an Ed25519
// verification.
func BenchmarkIdentifySigned(b *testing.B) {
	dir := httptest.NewServer(nil)
	defer dir.Close()
	s := newTestSigner(dir.URL, 7)
	dir.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", DirectoryMediaType)
		fmt.Fprintf(w, `{"keys":[%s]}`, s.jwk())
	})
	now := time.Now()
	cfg := Defaults()
	cfg.DNSWait = Duration{Duration: 2 * time.Second}
	cfg.InsecureDirectories = []string{dir.URL}
	v := newTestVerifier(b, cfg, Options{})
	r := signRequest(s, now, now.Add(time.Hour), "") // no nonce: the same request may repeat
	if id := v.Identify(context.Background(), r, netip.Addr{}); id.Verified != VerifiedSignature {
		b.Fatalf("%+v", id)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		v.Identify(context.Background(), r, netip.Addr{})
	}
}
