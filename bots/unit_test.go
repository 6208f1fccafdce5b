package bots

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestParseRanges(t *testing.T) {
	for _, tc := range []struct{ name, in, err string }{
		{"google", `{"creationTime":"2026-12-05T23:00:00.000000","prefixes":[{"ipv6Prefix":"2001:4860:4801:10::/64"},{"ipv4Prefix":"66.249.64.0/27"}]}`, ""},
		{"unknown keys are ignored", `{"syncToken":"1","creationTime":"x","prefixes":[{"ipv4Prefix":"1.2.3.0/24","service":"x"}]}`, ""},
		{"unmasked prefix", `{"prefixes":[{"ipv4Prefix":"1.2.3.4/24"}]}`, ""},
		{"not JSON", `<html>`, "not the published JSON layout"},
		{"no prefixes", `{"creationTime":"x","prefixes":[]}`, `no "prefixes"`},
		{"both families", `{"prefixes":[{"ipv4Prefix":"1.2.3.0/24","ipv6Prefix":"::/0"}]}`, "exactly one"},
		{"neither", `{"prefixes":[{"ip_prefix":"1.2.3.0/24"}]}`, "exactly one"},
		{"wrong family", `{"prefixes":[{"ipv4Prefix":"2001:db8::/32"}]}`, "wrong family"},
		{"bad prefix", `{"prefixes":[{"ipv4Prefix":"1.2.3.0/33"}]}`, "prefixes[0]"},
		{"huge", `{"prefixes":[` + strings.Repeat(" ", MaxRangesFile) + `]}`, "larger than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseRanges(strings.NewReader(tc.in))
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("err = %v, want %q", err, tc.err)
			}
		})
	}
}

func TestRangesContains(t *testing.T) {
	rs := NewRanges([]netip.Prefix{
		netip.MustParsePrefix("66.249.64.0/27"),
		netip.MustParsePrefix("66.249.64.16/28"), // inside the one above
		netip.MustParsePrefix("10.0.0.0/8"),
		netip.MustParsePrefix("2001:4860:4801:10::/64"),
		netip.MustParsePrefix("0.0.0.0/32"),
	})
	for _, tc := range []struct {
		a    string
		want bool
	}{
		{"66.249.64.0", true}, {"66.249.64.31", true}, {"66.249.64.32", false}, {"66.249.63.255", false},
		{"::ffff:66.249.64.1", true}, {"10.255.255.255", true}, {"11.0.0.0", false},
		{"2001:4860:4801:10::1", true}, {"2001:4860:4801:10:ffff:ffff:ffff:ffff", true}, {"2001:4860:4801:11::", false},
		{"0.0.0.0", true}, {"0.0.0.1", false}, {"::", false},
		// An IPv6 address whose low 32 bits spell an IPv4 range is not in it.
		{"::42f9:4001", false},
	} {
		if got := rs.Contains(netip.MustParseAddr(tc.a)); got != tc.want {
			t.Errorf("Contains(%s) = %v, want %v", tc.a, got, tc.want)
		}
	}
	if rs.Contains(netip.Addr{}) || (*Ranges)(nil).Contains(netip.MustParseAddr("1.1.1.1")) {
		t.Error("the zero address or a nil set contains something")
	}
}

// naiveMatch is the independent oracle of uaMatcher: every token, every
// position, by strings.
func naiveMatch(cs []Crawler, ua string) int {
	if len(ua) > maxUAScan {
		ua = ua[:maxUAScan]
	}
	best, bestPos := -1, len(ua)+1
	seen := map[string]bool{}
	for i, c := range cs {
		for _, tok := range c.Tokens {
			lt := strings.ToLower(tok)
			if seen[lt] {
				continue
			}
			seen[lt] = true
			low := asciiLower(ua) // strings.ToLower changes the length of invalid UTF-8 (found by FuzzUserAgent)
			for off := 0; ; {
				j := strings.Index(low[off:], lt)
				if j < 0 {
					break
				}
				j += off
				before := j == 0 || !isWordByte(ua[j-1])
				after := j+len(lt) == len(ua) || !isWordByte(ua[j+len(lt)])
				if before && after && j < bestPos {
					best, bestPos = i, j
				}
				off = j + 1
			}
		}
	}
	return best
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = lower(c)
	}
	return string(b)
}

func TestUserAgentMatch(t *testing.T) {
	cs := Directory()
	m := newUAMatcher(cs)
	for _, tc := range []struct{ ua, want string }{
		{"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "googlebot"},
		{"Googlebot-Image/1.0", "googlebot"},
		{"Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.204 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "googlebot"},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; AdsBot-Google-Mobile)", "google-special"},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot", "chatgpt-user"},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.3; +https://openai.com/searchbot", "oai-searchbot"},
		{"TelegramBot (like TwitterBot)", "telegrambot"},
		{"facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", "facebookexternalhit"},
		{"NotGooglebot/1.0", ""},
		{"Googlebotty", ""},
		{"Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0", ""},
		{"", ""},
	} {
		got := m.match(tc.ua)
		name := ""
		if got >= 0 {
			name = cs[got].Name
		}
		if name != tc.want {
			t.Errorf("%q: got %q, want %q", tc.ua, name, tc.want)
		}
		if n := naiveMatch(cs, tc.ua); n != got {
			t.Errorf("%q: matcher %d, oracle %d", tc.ua, got, n)
		}
	}
}

func TestIdentityHeader(t *testing.T) {
	for _, tc := range []struct {
		id   Identity
		want string
	}{
		{Identity{"gptbot", AITraining, VerifiedIP}, "name=gptbot, category=ai-training, verified=ip"},
		{None, `name="-"`},
		{Identity{}, `name="-"`},
		{Identity{Name: "agent.example:8443", Verified: VerifiedSignature}, "name=agent.example:8443, verified=signature"},
		{Identity{Name: `evil", verified=ip`, Category: Search, Verified: VerifiedNo}, `name="evil\", verified=ip", category=search, verified=no`},
		{Identity{Name: "a\r\nX-Injected: 1\\", Verified: VerifiedNo}, `name="a??X-Injected: 1\\", verified=no`},
		{Identity{Name: "ünï", Verified: VerifiedNo}, `name="??n??", verified=no`},
	} {
		got := tc.id.Header()
		if got != tc.want {
			t.Errorf("%+v: got %s, want %s", tc.id, got, tc.want)
		}
		// The independent check: our own RFC 8941 parser reads it back.
		d, err := parseDictionary(got)
		if err != nil || len(d) == 0 || d[0].key != "name" {
			t.Errorf("%s: not a dictionary: %v", got, err)
		}
	}
}

func problemCodes(ps []Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Code+" "+p.Key)
	}
	return out
}

func TestConfigCheck(t *testing.T) {
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "googlebot.json"), []byte(`{"prefixes": 1}`), 0o644)
	misnamed := t.TempDir()
	good, _ := os.ReadFile("testdata/ranges/gptbot.json")
	os.WriteFile(filepath.Join(misnamed, "openai-gptbot.json"), good, 0o644)
	os.WriteFile(filepath.Join(misnamed, "README"), []byte("not json"), 0o644)
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want []string
	}{
		{"defaults", func(*Config) {}, nil},
		{"published files", func(c *Config) { c.RangesDir = "testdata/ranges" }, nil},
		{"HG200", func(c *Config) { c.RangesDir = bad }, []string{"HG200 bots.ranges_dir"}},
		{"HG200 no directory", func(c *Config) { c.RangesDir = filepath.Join(bad, "nope") }, []string{"HG200 bots.ranges_dir"}},
		{"HG201 file named after no entry", func(c *Config) { c.RangesDir = misnamed }, []string{"HG201 bots.ranges_dir"}},
		{"HG201 name", func(c *Config) {
			c.Access = []AccessRule{{Crawlers: []string{"gptbot", "nosuchbot", "@ai-training", "@nosuch", "*"}, Action: "deny"}}
		}, []string{"HG201 bots.access[0].crawlers[1]", "HG201 bots.access[0].crawlers[3]"}},
		{"HG201 categories", func(c *Config) { c.Categories = map[string]Category{"bytespider": "ai-search", "nosuchbot": "search"} },
			[]string{"HG201 bots.categories.nosuchbot"}},
		{"HG202", func(c *Config) {
			c.Crawler = []Crawler{{Name: "Mine", Tokens: []string{"my bot"}, Category: Monitor, SignatureAgent: "https://x/y"}, {Name: "newbot"}}
		}, []string{"HG202 bots.crawler[0].name", "HG202 bots.crawler[0].tokens[0]", "HG202 bots.crawler[0].signature_agent", "HG202 bots.crawler[1].category"}},
		{"HG203", func(c *Config) {
			c.DNSWait = Duration{Duration: time.Minute}
			c.CacheTTL = Duration{Duration: time.Second}
		},
			[]string{"HG203 bots.dns_wait", "HG203 bots.cache_ttl"}},
		{"HG204", func(c *Config) { c.CacheSize = -1 }, []string{"HG204 bots.cache_size"}},
		{"HG205", func(c *Config) { c.Access = []AccessRule{{Action: "deny"}} }, []string{"HG205 bots.access[0].crawlers"}},
		{"HG206", func(c *Config) {
			c.Spoofed = "block"
			c.Access = []AccessRule{{Crawlers: []string{"*"}, Action: "403"}}
		},
			[]string{"HG206 bots.spoofed", "HG206 bots.access[0].action"}},
		{"HG207", func(c *Config) { c.Access = []AccessRule{{Crawlers: []string{"*"}, Verified: "true", Action: "deny"}} },
			[]string{"HG207 bots.access[0].verified"}},
		{"HG208", func(c *Config) { c.Resolver = "1.1.1.1" }, []string{"HG208 bots.resolver"}},
		{"HG209", func(c *Config) { c.UpstreamHeader = "Headgate Bot"; c.InsecureDirectories = []string{"ftp://x"} },
			[]string{"HG209 bots.upstream_header", "HG209 bots.insecure_directories[0]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Defaults()
			tc.edit(&c)
			got := problemCodes(c.Check())
			slices.Sort(got)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("got  %q\nwant %q", got, want)
			}
		})
	}
}

func TestDirectory(t *testing.T) {
	cs := Directory()
	if len(cs) < 30 {
		t.Errorf("%d entries, want at least 30", len(cs))
	}
	names, tokens := map[string]bool{}, map[string]string{}
	cats := map[Category]int{}
	for _, c := range cs {
		if names[c.Name] || !validToken(c.Name) || c.Name != strings.ToLower(c.Name) {
			t.Errorf("name %q duplicated or not valid", c.Name)
		}
		names[c.Name] = true
		cats[c.Category]++
		if !knownCategory(c.Category) || c.Source == "" || c.Operator == "" || len(c.Tokens) == 0 {
			t.Errorf("%s: incomplete entry", c.Name)
		}
		for _, tok := range c.Tokens {
			if !validToken(tok) {
				t.Errorf("%s: token %q is not one word", c.Name, tok)
			}
			if o, dup := tokens[strings.ToLower(tok)]; dup {
				t.Errorf("token %q in %s and %s", tok, o, c.Name)
			}
			tokens[strings.ToLower(tok)] = c.Name
		}
	}
	for _, c := range Categories {
		if cats[c] == 0 {
			t.Errorf("no crawler in %s", c)
		}
	}
	for _, n := range []string{"googlebot", "bingbot", "gptbot", "oai-searchbot", "chatgpt-user", "claudebot", "claude-user",
		"perplexitybot", "perplexity-user", "applebot", "ccbot", "bytespider", "yandexbot", "baiduspider", "duckduckbot",
		"facebookexternalhit", "twitterbot", "linkedinbot", "ahrefsbot", "semrushbot"} {
		if !names[n] {
			t.Errorf("SPEC §18.1 names %s; the directory has no such entry", n)
		}
	}
	doc, err := os.ReadFile("../docs/bots.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if !bytes.Contains(doc, []byte("| `"+c.Name+"` |")) {
			t.Errorf("docs/bots.md has no row for %s", c.Name)
		}
	}
}

func TestMerge(t *testing.T) {
	base := Directory()
	out := Merge(base, []Crawler{
		{Name: "Bytespider", Category: AISearch},
		{Name: "mybot", Tokens: []string{"MyBot"}, Category: Monitor},
	}, map[string]Category{"ccbot": Search})
	get := func(n string) Crawler {
		i := slices.IndexFunc(out, func(c Crawler) bool { return c.Name == n })
		if i < 0 {
			t.Fatalf("no %s", n)
		}
		return out[i]
	}
	if c := get("bytespider"); c.Category != AISearch || len(c.Tokens) != 1 {
		t.Errorf("override: %+v", c)
	}
	if get("mybot").Category != Monitor || get("ccbot").Category != Search {
		t.Error("new entry or category override lost")
	}
	if base[slices.IndexFunc(base, func(c Crawler) bool { return c.Name == "bytespider" })].Category != AITraining {
		t.Error("Merge modified its input")
	}
}

type matchPrefix string

func (m matchPrefix) Match(p string) bool { return strings.HasPrefix(p, string(m)) }

func TestAccessDecide(t *testing.T) {
	cfg := Defaults()
	cfg.Spoofed = "deny"
	cfg.EnforceRobots = true
	cfg.Access = []AccessRule{
		{Crawlers: []string{"googlebot"}, Verified: "yes", Match: "/private/", Action: "allow"},
		{Crawlers: []string{"@ai-training", "bytespider"}, Action: "deny"},
		{Crawlers: []string{"*"}, Match: "/private/", Action: "deny"},
	}
	a, err := NewAccess(cfg, AccessOptions{
		Compile:    func(p string) (PathMatcher, error) { return matchPrefix(p), nil },
		Disallowed: func(group, path string) bool { return group == "bingbot" && path == "/nobing" },
	})
	if err != nil {
		t.Fatal(err)
	}
	g := Identity{"googlebot", Search, VerifiedIP}
	for _, tc := range []struct {
		id   Identity
		path string
		deny bool
		rule int
	}{
		{g, "/private/x", false, 0},
		{Identity{"googlebot", Search, VerifiedNo}, "/private/x", true, 2},
		{Identity{"gptbot", AITraining, VerifiedIP}, "/", true, 1},
		{Identity{"bytespider", AITraining, VerifiedUnverifiable}, "/", true, 1},
		{Identity{"bingbot", Search, VerifiedNo}, "/", true, RuleSpoofed},
		{Identity{"bingbot", Search, VerifiedDNS}, "/nobing", true, RuleRobots},
		{Identity{"bingbot", Search, VerifiedDNS}, "/robots.txt", false, RuleNone},
		{g, "/", false, RuleNone},
		{None, "/private/x", false, RuleNone},
	} {
		deny, rule := a.Decide(tc.id, tc.path)
		if r := Reason(rule); (rule == RuleNone) != (r == "") {
			t.Errorf("Reason(%d) = %q", rule, r)
		}
		if deny != tc.deny || rule != tc.rule {
			t.Errorf("%+v %s: got %v,%d want %v,%d", tc.id, tc.path, deny, rule, tc.deny, tc.rule)
		}
	}
}

// fakeResolver answers from maps, counting calls; block makes every call
// wait for its context.
type fakeResolver struct {
	ptr       map[string][]string
	fwd       map[string][]netip.Addr
	block     bool
	delay     time.Duration
	ptrCalls  atomic.Int64
	fwdCalls  atomic.Int64
	failPTR   bool
	released  chan struct{}
	releaseMu sync.Once
}

func (f *fakeResolver) LookupAddr(ctx context.Context, addr string) ([]string, error) {
	f.ptrCalls.Add(1)
	if f.block {
		<-ctx.Done()
		return nil, &net.DNSError{Err: "timeout", IsTimeout: true}
	}
	if f.delay > 0 {
		time.Sleep(f.delay)
	}
	if f.failPTR {
		return nil, &net.DNSError{Err: "server misbehaving", IsTemporary: true}
	}
	if n, ok := f.ptr[addr]; ok {
		return n, nil
	}
	return nil, &net.DNSError{Err: "no such host", IsNotFound: true}
}

func (f *fakeResolver) LookupNetIP(ctx context.Context, _, host string) ([]netip.Addr, error) {
	f.fwdCalls.Add(1)
	if a, ok := f.fwd[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", IsNotFound: true}
}

func googlebotRequest() *http.Request {
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("User-Agent", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)")
	return r
}

func newTestVerifier(t testing.TB, cfg Config, opt Options) *Verifier {
	t.Helper()
	if opt.Logger == nil {
		opt.Logger = quiet
	}
	v, err := New(cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestReverseDNSResolverMisbehaves(t *testing.T) {
	a := netip.MustParseAddr("66.249.66.1")
	flood := make([]string, 1000)
	for i := range flood {
		flood[i] = fmt.Sprintf("crawl-%d.googlebot.com", i)
	}
	floodFwd := map[string][]netip.Addr{}
	for _, n := range flood {
		floodFwd[n] = []netip.Addr{netip.MustParseAddr("10.0.0.1")}
	}
	manyAddrs := make([]netip.Addr, 10000)
	for i := range manyAddrs {
		manyAddrs[i] = netip.AddrFrom4([4]byte{10, byte(i >> 8), byte(i), 1})
	}
	manyAddrs[len(manyAddrs)-1] = a // beyond what is read: not confirmed
	for _, tc := range []struct {
		name    string
		res     *fakeResolver
		want    Verified
		maxFwd  int64
		failed  uint64
		waitFor time.Duration
	}{
		{"confirmed", &fakeResolver{ptr: map[string][]string{"66.249.66.1": {"crawl-66-249-66-1.googlebot.com."}},
			fwd: map[string][]netip.Addr{"crawl-66-249-66-1.googlebot.com": {a}}}, VerifiedDNS, 1, 0, time.Second},
		{"times out", &fakeResolver{block: true}, VerifiedNo, 0, 0, 50 * time.Millisecond},
		{"fails", &fakeResolver{failPTR: true}, VerifiedNo, 0, 1, time.Second},
		{"lies: PTR does not resolve back", &fakeResolver{ptr: map[string][]string{"66.249.66.1": {"crawl.googlebot.com"}},
			fwd: map[string][]netip.Addr{"crawl.googlebot.com": {netip.MustParseAddr("66.249.66.2")}}}, VerifiedNo, 1, 0, time.Second},
		{"lies: PTR in another domain", &fakeResolver{ptr: map[string][]string{"66.249.66.1": {"googlebot.com.evil.example"}},
			fwd: map[string][]netip.Addr{"googlebot.com.evil.example": {a}}}, VerifiedNo, 0, 0, time.Second},
		{"floods PTR names", &fakeResolver{ptr: map[string][]string{"66.249.66.1": flood}, fwd: floodFwd}, VerifiedNo, maxPTRNames, 0, time.Second},
		{"floods addresses", &fakeResolver{ptr: map[string][]string{"66.249.66.1": {"x.googlebot.com"}},
			fwd: map[string][]netip.Addr{"x.googlebot.com": manyAddrs}}, VerifiedNo, 1, 0, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Defaults()
			cfg.DNSWait = Duration{Duration: tc.waitFor}
			v := newTestVerifier(t, cfg, Options{Resolver: tc.res})
			start := time.Now()
			id := v.Identify(context.Background(), googlebotRequest(), a)
			if id.Verified != tc.want {
				t.Errorf("verified = %s, want %s", id.Verified, tc.want)
			}
			if el := time.Since(start); el > tc.waitFor+time.Second {
				t.Errorf("waited %s, dns_wait is %s", el, tc.waitFor)
			}
			if n := tc.res.fwdCalls.Load(); n > tc.maxFwd {
				t.Errorf("%d forward lookups, want at most %d", n, tc.maxFwd)
			}
			if n := v.Stats().DNSFailed.Load(); n != tc.failed {
				t.Errorf("DNSFailed = %d, want %d", n, tc.failed)
			}
		})
	}
}

func TestReverseDNSLateAnswerIsCached(t *testing.T) {
	a := netip.MustParseAddr("66.249.66.1")
	res := &fakeResolver{delay: 100 * time.Millisecond,
		ptr: map[string][]string{"66.249.66.1": {"crawl.googlebot.com"}},
		fwd: map[string][]netip.Addr{"crawl.googlebot.com": {a}}}
	cfg := Defaults()
	cfg.DNSWait = Duration{Duration: 10 * time.Millisecond}
	v := newTestVerifier(t, cfg, Options{Resolver: res})
	// Many first requests at once: one lookup.
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if id := v.Identify(context.Background(), googlebotRequest(), a); id.Verified != VerifiedNo {
				t.Errorf("first requests: %s before the answer", id.Verified)
			}
		}()
	}
	wg.Wait()
	var id Identity
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if id = v.Identify(context.Background(), googlebotRequest(), a); id.Verified == VerifiedDNS {
			break
		}
	}
	if id.Verified != VerifiedDNS {
		t.Errorf("after the late answer: %s", id.Verified)
	}
	if n := res.ptrCalls.Load(); n != 1 {
		t.Errorf("%d PTR lookups for one address, want 1", n)
	}
}

func TestReverseDNSCacheBounded(t *testing.T) {
	res := &fakeResolver{}
	cfg := Defaults()
	cfg.CacheSize = 10
	cfg.DNSWait = Duration{Duration: time.Second}
	v := newTestVerifier(t, cfg, Options{Resolver: res})
	for i := range 100 {
		v.Identify(context.Background(), googlebotRequest(), netip.AddrFrom4([4]byte{10, 0, 0, byte(i)}))
	}
	v.dns.mu.Lock()
	n, l := len(v.dns.entries), v.dns.lru.Len()
	v.dns.mu.Unlock()
	if n > 10 || l > 10 {
		t.Errorf("%d entries (%d in the LRU) remembered, cache_size is 10", n, l)
	}
}

func TestReverseDNSInflightBounded(t *testing.T) {
	res := &fakeResolver{block: true}
	cfg := Defaults()
	cfg.DNSWait = Duration{Duration: time.Millisecond}
	v := newTestVerifier(t, cfg, Options{Resolver: res, MaxLookups: 4})
	for i := range 20 {
		v.Identify(context.Background(), googlebotRequest(), netip.AddrFrom4([4]byte{10, 0, 0, byte(i)}))
	}
	if n := res.ptrCalls.Load(); n > 4 {
		t.Errorf("%d lookups started, at most 4 may be in flight", n)
	}
	if v.Stats().DNSBusy.Load() == 0 {
		t.Error("DNSBusy not counted")
	}
}

// testSigner signs requests the way web-bot-auth does (the node test is
// the independent check of the format; this one drives the edge cases).
type testSigner struct {
	priv  ed25519.PrivateKey
	keyid string
	agent string
}

func newTestSigner(agent string, seed byte) testSigner {
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, 32))
	x := base64.RawURLEncoding.EncodeToString(priv.Public().(ed25519.PublicKey))
	return testSigner{priv: priv, keyid: thumbprint(x), agent: agent}
}

func (s testSigner) jwk() string {
	x := base64.RawURLEncoding.EncodeToString(s.priv.Public().(ed25519.PublicKey))
	return `{"kty":"OKP","crv":"Ed25519","x":"` + x + `"}`
}

func (s testSigner) sign(r *http.Request, created, expires time.Time, nonce string) {
	r.Header.Set("Signature-Agent", `"`+s.agent+`"`)
	params := fmt.Sprintf(`("@authority" "signature-agent");created=%d;expires=%d;keyid="%s";alg="ed25519";nonce="%s";tag="web-bot-auth"`,
		created.Unix(), expires.Unix(), s.keyid, nonce)
	r.Header.Set("Signature-Input", "sig1="+params)
	d, err := parseDictionary("sig1=" + params)
	if err != nil {
		panic(err)
	}
	base, err := signatureBase(r, &signedRequest{params: d[0]})
	if err != nil {
		panic(err)
	}
	r.Header.Set("Signature", "sig1=:"+base64.StdEncoding.EncodeToString(ed25519.Sign(s.priv, base))+":")
}

type dirServer struct {
	*httptest.Server
	stop  chan struct{} // ends a delayed answer when the test ends
	mu    sync.Mutex
	body  string
	ctype string
	delay time.Duration
	hits  atomic.Int64
}

func newDirServer(t *testing.T, body string) *dirServer {
	d := &dirServer{body: body, ctype: DirectoryMediaType, stop: make(chan struct{})}
	d.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.hits.Add(1)
		d.mu.Lock()
		body, ctype, delay := d.body, d.ctype, d.delay
		d.mu.Unlock()
		select {
		case <-time.After(delay):
		case <-d.stop:
		}
		w.Header().Set("Content-Type", ctype)
		io.WriteString(w, body)
	}))
	t.Cleanup(d.Close)
	t.Cleanup(func() { close(d.stop) }) // runs first
	return d
}

func (d *dirServer) set(body string, delay time.Duration) {
	d.mu.Lock()
	d.body, d.delay = body, delay
	d.mu.Unlock()
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func wbaVerifier(t *testing.T, d *dirServer, clk *clock) *Verifier {
	cfg := Defaults()
	cfg.DNSWait = Duration{Duration: 500 * time.Millisecond}
	cfg.InsecureDirectories = []string{d.URL}
	return newTestVerifier(t, cfg, Options{Now: clk.now})
}

func signRequest(s testSigner, created, expires time.Time, nonce string) *http.Request {
	r := httptest.NewRequest("GET", "http://site.example/page", nil)
	r.Header.Set("User-Agent", "SomeAgent/1.0")
	s.sign(r, created, expires, nonce)
	return r
}

func TestWebBotAuthEdgeCases(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	d := newDirServer(t, "")
	s := newTestSigner(d.URL, 1)
	d.set(`{"keys":[`+s.jwk()+`]}`, 0)
	host := strings.TrimPrefix(d.URL, "http://")
	for _, tc := range []struct {
		name             string
		created, expires time.Duration // from now
		want             Verified
	}{
		{"valid", 0, time.Minute, VerifiedSignature},
		{"created 30s ahead (skew)", 30 * time.Second, time.Minute, VerifiedSignature},
		{"created 2m ahead", 2 * time.Minute, 3 * time.Minute, VerifiedNo},
		{"expired", -2 * time.Minute, -time.Second, VerifiedNo},
		{"lives two days", 0, 48 * time.Hour, VerifiedNo},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &clock{t: start}
			v := wbaVerifier(t, d, clk)
			r := signRequest(s, start.Add(tc.created), start.Add(tc.expires), "n-"+tc.name)
			id := v.Identify(context.Background(), r, netip.MustParseAddr("192.0.2.1"))
			if id.Verified != tc.want || id.Name != host {
				t.Errorf("got %+v, want %s from %s", id, tc.want, host)
			}
		})
	}
	t.Run("replayed", func(t *testing.T) {
		clk := &clock{t: start}
		v := wbaVerifier(t, d, clk)
		r := signRequest(s, start, start.Add(time.Minute), "once")
		v.Identify(context.Background(), r, netip.Addr{})
		r2 := signRequest(s, start, start.Add(time.Minute), "once")
		if id := v.Identify(context.Background(), r2, netip.Addr{}); id.Verified != VerifiedNo {
			t.Errorf("replay: %+v", id)
		}
	})
	t.Run("not https", func(t *testing.T) {
		clk := &clock{t: start}
		cfg := Defaults()
		v := newTestVerifier(t, cfg, Options{Now: clk.now})
		if id := v.Identify(context.Background(), signRequest(s, start, start.Add(time.Minute), "x"), netip.Addr{}); id.Verified != VerifiedNo {
			t.Errorf("http directory not listed as insecure: %+v", id)
		}
	})
}

func TestKeyDirectoryMisbehaves(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	for _, tc := range []struct {
		name  string
		body  func(s testSigner) string
		ctype string
		delay time.Duration
	}{
		{"huge", func(s testSigner) string {
			return `{"keys":[` + s.jwk() + `], "pad":"` + strings.Repeat("x", maxDirectoryBytes) + `"}`
		}, DirectoryMediaType, 0},
		{"slow", func(s testSigner) string { return `{"keys":[` + s.jwk() + `]}` }, DirectoryMediaType, time.Minute},
		{"not JSON", func(testSigner) string { return `<html>keys</html>` }, DirectoryMediaType, 0},
		{"HTML media type", func(s testSigner) string { return `{"keys":[` + s.jwk() + `]}` }, "text/html", 0},
		{"other keys only", func(testSigner) string { return `{"keys":[` + newTestSigner("", 9).jwk() + `]}` }, DirectoryMediaType, 0},
		{"RSA only", func(testSigner) string { return `{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB"}]}` }, DirectoryMediaType, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDirServer(t, "")
			s := newTestSigner(d.URL, 1)
			d.set(tc.body(s), tc.delay)
			d.ctype = tc.ctype
			clk := &clock{t: start}
			v := wbaVerifier(t, d, clk)
			t0 := time.Now()
			id := v.Identify(context.Background(), signRequest(s, start, start.Add(time.Minute), "n"), netip.Addr{})
			if id.Verified != VerifiedNo {
				t.Errorf("got %+v, want no", id)
			}
			if el := time.Since(t0); el > 3*time.Second {
				t.Errorf("blocked %s, dns_wait is 500ms", el)
			}
		})
	}
	t.Run("changes keys", func(t *testing.T) {
		d := newDirServer(t, "")
		old, rotated := newTestSigner(d.URL, 1), newTestSigner(d.URL, 2)
		d.set(`{"keys":[`+old.jwk()+`]}`, 0)
		clk := &clock{t: start}
		v := wbaVerifier(t, d, clk)
		id := func(s testSigner, nonce string) Verified {
			now := clk.now()
			return v.Identify(context.Background(), signRequest(s, now, now.Add(time.Minute), nonce), netip.Addr{}).Verified
		}
		if got := id(old, "1"); got != VerifiedSignature {
			t.Fatalf("old key: %s", got)
		}
		d.set(`{"keys":[`+rotated.jwk()+`]}`, 0)
		if got := id(rotated, "2"); got != VerifiedNo {
			t.Errorf("new key within a minute of the last fetch: %s (refetches are rate-limited)", got)
		}
		clk.add(2 * time.Minute)
		if got := id(rotated, "3"); got != VerifiedSignature {
			t.Errorf("new key after the refetch: %s", got)
		}
		if got := id(old, "4"); got != VerifiedNo {
			t.Errorf("withdrawn key: %s", got)
		}
		if n := d.hits.Load(); n > 3 {
			t.Errorf("%d directory fetches", n)
		}
	})
}

func TestUnparseableSignatureHeaders(t *testing.T) {
	v := newTestVerifier(t, Defaults(), Options{})
	for _, h := range [][3]string{
		{"sig1=(", "sig1=:AAAA:", `"https://a.example"`},
		{`sig1=("@authority");tag="web-bot-auth"`, "sig1=:!!:", `"https://a.example"`},
		{`sig1=("@authority");tag="web-bot-auth";created=1;expires=99999999999;keyid="k"`, "sig1=:AAAA:", "not a string"},
		{`sig1=("@authority");tag="other"`, "sig1=:AAAA:", ""},
		{"", "sig1=:AAAA:", ""},
		{`sig1=("@authority");tag="web-bot-auth";created=1;expires=99999999999;keyid="k";alg="rsa-pss-sha512"`, "sig1=:AAAA:", `"https://a.example"`},
		{strings.Repeat("a", 20000), "", ""},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("User-Agent", "GPTBot/1.3")
		r.Header.Set("Signature-Input", h[0])
		r.Header.Set("Signature", h[1])
		if h[2] != "" {
			r.Header.Set("Signature-Agent", h[2])
		}
		id := v.Identify(context.Background(), r, netip.MustParseAddr("192.0.2.1"))
		if id.Verified != VerifiedNo || id.Name != "gptbot" {
			t.Errorf("%q: %+v, want gptbot no", h, id)
		}
	}
}

func TestReloadKeepsOldTableOnBadFile(t *testing.T) {
	dir := t.TempDir()
	good, _ := os.ReadFile("testdata/ranges/googlebot.json")
	os.WriteFile(filepath.Join(dir, "googlebot.json"), good, 0o644)
	cfg := Defaults()
	cfg.RangesDir = dir
	v := newTestVerifier(t, cfg, Options{Resolver: &fakeResolver{}})
	a := netip.MustParseAddr("127.66.249.5")
	check := func(when string, want Verified) {
		t.Helper()
		if id := v.Identify(context.Background(), googlebotRequest(), a); id.Verified != want {
			t.Errorf("%s: %s, want %s", when, id.Verified, want)
		}
	}
	check("start", VerifiedIP)
	os.WriteFile(filepath.Join(dir, "googlebot.json"), []byte(`{"prefixes":[{"ipv4Prefix":"nonsense"}]}`), 0o644)
	var re *RangesError
	if err := v.Reload(); !errors.As(err, &re) || re.Crawler != "googlebot" {
		t.Errorf("Reload: %v", err)
	}
	check("after a bad reload", VerifiedIP)
	if v.Stats().RangeReloadFailures.Load() != 1 {
		t.Error("reload failure not counted")
	}
	os.WriteFile(filepath.Join(dir, "googlebot.json"), []byte(`{"prefixes":[{"ipv4Prefix":"192.0.2.0/24"}]}`), 0o644)
	if err := v.Reload(); err != nil {
		t.Fatal(err)
	}
	check("after a good reload", VerifiedNo)
	// A bad file at start is an error (HG200).
	os.WriteFile(filepath.Join(dir, "bingbot.json"), []byte(`nope`), 0o644)
	if _, err := New(cfg, Options{}); err == nil {
		t.Error("New accepted a range file that does not parse")
	}
}

func TestRefreshKeepsLastGoodCopy(t *testing.T) {
	var body atomic.Value
	good, _ := os.ReadFile("testdata/ranges/gptbot.json")
	body.Store(string(good))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body.Load().(string)) }))
	defer srv.Close()
	cfg := Defaults()
	cfg.Crawler = []Crawler{{Name: "gptbot", RangesURL: srv.URL + "/gptbot.json"}}
	v := newTestVerifier(t, cfg, Options{Resolver: &fakeResolver{}})
	// Only gptbot's URL points at the test server; others would reach the
	// internet, so the test keeps to one entry.
	t2 := *v.tab.Load()
	t2.crawlers = slices.Clone(t2.crawlers)
	for i := range t2.crawlers {
		if t2.crawlers[i].Name != "gptbot" {
			t2.crawlers[i].RangesURL = ""
		}
	}
	v.tab.Store(&t2)
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("User-Agent", "GPTBot/1.3")
	a := netip.MustParseAddr("127.20.171.9")
	if err := v.RefreshNow(context.Background()); err != nil {
		t.Fatal(err)
	}
	if id := v.Identify(context.Background(), r, a); id.Verified != VerifiedIP {
		t.Errorf("after refresh: %+v", id)
	}
	body.Store("<html>maintenance</html>")
	if err := v.RefreshNow(context.Background()); err == nil {
		t.Error("a bad refresh returned no error")
	}
	if id := v.Identify(context.Background(), r, a); id.Verified != VerifiedIP {
		t.Errorf("after a bad refresh: %+v (the last good copy must stay)", id)
	}
	if v.Stats().RangeRefreshFailures.Load() != 1 {
		t.Error("refresh failure not counted")
	}
}

func TestKeyDirectoryNotFetchedFromPrivateAddresses(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	s := newTestSigner(srv.URL, 1) // https://127.0.0.1:port, not listed as insecure
	start := time.Unix(1_800_000_000, 0)
	clk := &clock{t: start}
	v := newTestVerifier(t, Defaults(), Options{Now: clk.now})
	id := v.Identify(context.Background(), signRequest(s, start, start.Add(time.Minute), "n"), netip.Addr{})
	if id.Verified != VerifiedNo {
		t.Errorf("%+v", id)
	}
	if hits.Load() != 0 {
		t.Error("a Signature-Agent header made headgate connect to a loopback address")
	}
}

// The later drafts make Signature-Agent a dictionary keyed by signature
// label and cover it with ;key.
func TestSignatureAgentDictionaryForm(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	d := newDirServer(t, "")
	s := newTestSigner(d.URL, 3)
	d.set(`{"keys":[`+s.jwk()+`]}`, 0)
	clk := &clock{t: start}
	v := wbaVerifier(t, d, clk)
	r := httptest.NewRequest("GET", "http://site.example/page", nil)
	r.Header.Set("Signature-Agent", `sig2="`+d.URL+`"`)
	params := fmt.Sprintf(`("@authority" "@method" "@path" "signature-agent";key="sig2");created=%d;expires=%d;keyid="%s";tag="web-bot-auth"`,
		start.Unix(), start.Add(time.Minute).Unix(), s.keyid)
	r.Header.Set("Signature-Input", "sig2="+params)
	dd, _ := parseDictionary("sig2=" + params)
	base, err := signatureBase(r, &signedRequest{params: dd[0]})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(base), `"signature-agent";key="sig2": "`+d.URL+`"`) {
		t.Errorf("base:\n%s", base)
	}
	r.Header.Set("Signature", "sig2=:"+base64.StdEncoding.EncodeToString(ed25519.Sign(s.priv, base))+":")
	if id := v.Identify(context.Background(), r, netip.Addr{}); id.Verified != VerifiedSignature {
		t.Errorf("%+v", id)
	}
	noDNS := newTestVerifier(t, Config{ReverseDNS: false}, Options{})
	if id := noDNS.IdentifyUA(context.Background(), "Googlebot/2.1", netip.MustParseAddr("192.0.2.1")); id.Name != "googlebot" || id.Verified != VerifiedUnverifiable {
		t.Errorf("IdentifyUA: %+v", id)
	}
}

// Signatures that verify cryptographically but break the Web Bot Auth
// profile are refused.
func TestWebBotAuthProfile(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	d := newDirServer(t, "")
	s := newTestSigner(d.URL, 4)
	d.set(`{"keys":[`+s.jwk()+`]}`, 0)
	for _, tc := range []struct {
		name, components, extra string
		want                    Verified
	}{
		{"covers @authority and signature-agent", `"@authority" "signature-agent"`, `;tag="web-bot-auth"`, VerifiedSignature},
		{"signature-agent present, not covered", `"@authority"`, `;tag="web-bot-auth"`, VerifiedNo},
		{"@authority not covered", `"@path" "signature-agent"`, `;tag="web-bot-auth"`, VerifiedNo},
		{"another tag", `"@authority" "signature-agent"`, `;tag="other"`, VerifiedNo},
		{"no tag", `"@authority" "signature-agent"`, ``, VerifiedNo},
		{"alg rsa", `"@authority" "signature-agent"`, `;alg="rsa-pss-sha512";tag="web-bot-auth"`, VerifiedNo},
		{"a derived component it cannot build", `"@authority" "signature-agent" "@status"`, `;tag="web-bot-auth"`, VerifiedNo},
		{"a covered header that is missing", `"@authority" "signature-agent" "x-missing"`, `;tag="web-bot-auth"`, VerifiedNo},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &clock{t: start}
			v := wbaVerifier(t, d, clk)
			r := httptest.NewRequest("GET", "http://site.example/page", nil)
			r.Header.Set("Signature-Agent", `"`+d.URL+`"`)
			params := fmt.Sprintf(`(%s);created=%d;expires=%d;keyid="%s"%s`, tc.components, start.Unix(), start.Add(time.Minute).Unix(), s.keyid, tc.extra)
			r.Header.Set("Signature-Input", "sig1="+params)
			dd, err := parseDictionary("sig1=" + params)
			if err != nil {
				t.Fatal(err)
			}
			// Sign whatever base can be built (the missing header's line
			// as empty), so only the profile can refuse it.
			base, err := signatureBase(r, &signedRequest{params: dd[0]})
			if err != nil {
				base = []byte("unbuildable")
			}
			r.Header.Set("Signature", "sig1=:"+base64.StdEncoding.EncodeToString(ed25519.Sign(s.priv, base))+":")
			if id := v.Identify(context.Background(), r, netip.Addr{}); id.Verified != tc.want {
				t.Errorf("%+v, want %s", id, tc.want)
			}
		})
	}
}

func TestKeyValidityWindow(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	for _, tc := range []struct {
		name     string
		nbf, exp int64
		want     Verified
	}{
		{"inside", start.Unix() - 10, start.Unix() + 10, VerifiedSignature},
		{"expired key", start.Unix() - 100, start.Unix() - 10, VerifiedNo},
		{"not yet valid", start.Unix() + 100, 0, VerifiedNo},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDirServer(t, "")
			s := newTestSigner(d.URL, 5)
			jwk := strings.TrimSuffix(s.jwk(), "}") + fmt.Sprintf(`,"nbf":%d,"exp":%d}`, tc.nbf, tc.exp)
			d.set(`{"keys":[`+jwk+`]}`, 0)
			v := wbaVerifier(t, d, &clock{t: start})
			if id := v.Identify(context.Background(), signRequest(s, start, start.Add(time.Minute), "n"), netip.Addr{}); id.Verified != tc.want {
				t.Errorf("%+v, want %s", id, tc.want)
			}
		})
	}
}

func TestNoncesBounded(t *testing.T) {
	n := nonces{seen: map[string]time.Time{}}
	now := time.Unix(1_800_000_000, 0)
	for i := range maxNonces {
		if !n.use(fmt.Sprint(i), now.Add(time.Minute), now) {
			t.Fatalf("nonce %d refused before the bound", i)
		}
	}
	if n.use("one more", now.Add(time.Minute), now) {
		t.Error("a nonce past the bound was remembered")
	}
	if n.use("0", now.Add(time.Minute), now.Add(time.Second)) {
		t.Error("a replay was accepted")
	}
	later := now.Add(2 * time.Minute) // every nonce expired
	if !n.use("fresh", later.Add(time.Minute), later) || len(n.seen) != 1 {
		t.Errorf("expired nonces not pruned: %d remembered", len(n.seen))
	}
}
