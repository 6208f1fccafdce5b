package bots

// Tests against real parts: range files as published and a client bound
// to a loopback source address; a real DNS server (dnsmasq); requests
// signed by Cloudflare's web-bot-auth package run with node.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// identityServer answers every request with the identity Identify gives
// it, from the peer address.
func identityServer(t *testing.T, v *Verifier) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ap, err := netip.ParseAddrPort(r.RemoteAddr)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		io.WriteString(w, v.Identify(r.Context(), r, ap.Addr()).Header())
	}))
	t.Cleanup(srv.Close)
	return srv
}

// getFrom sends GET url with user agent ua from source address src.
func getFrom(t *testing.T, src, url, ua string) string {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	c := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}, Timeout: 10 * time.Second}
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("User-Agent", ua)
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("from %s: %v", src, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

func TestPublishedRangesFromLoopbackClients(t *testing.T) {
	cfg := Defaults()
	cfg.Enabled, cfg.RangesDir, cfg.ReverseDNS = true, "testdata/ranges", false
	v, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := identityServer(t, v)
	const (
		googlebot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
		bingbot   = "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"
		gptbot    = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; GPTBot/1.3; +https://openai.com/gptbot"
		browser   = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
	)
	for _, tc := range []struct{ name, src, ua, want string }{
		{"googlebot in googlebot.json", "127.66.249.5", googlebot, "name=googlebot, category=search, verified=ip"},
		{"googlebot outside", "127.0.0.1", googlebot, "name=googlebot, category=search, verified=no"},
		{"googlebot from bing's range", "127.157.55.9", googlebot, "name=googlebot, category=search, verified=no"},
		{"bingbot in bingbot.json", "127.157.55.9", bingbot, "name=bingbot, category=search, verified=ip"},
		{"gptbot in gptbot.json", "127.20.171.200", gptbot, "name=gptbot, category=ai-training, verified=ip"},
		{"gptbot from google's range", "127.66.249.5", gptbot, "name=gptbot, category=ai-training, verified=no"},
		{"a browser from google's range", "127.66.249.5", browser, `name="-"`},
		// No file, no domains, no signature agent: nothing to check.
		{"bytespider", "127.0.0.1", "Mozilla/5.0 (compatible; Bytespider; spider-feedback@bytedance.com)", "name=bytespider, category=ai-training, verified=unverifiable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := getFrom(t, tc.src, srv.URL, tc.ua); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// startDNSMasq runs Debian's dnsmasq on a free loopback port with the
// given extra arguments and returns "127.0.0.1:port".
func startDNSMasq(t *testing.T, args ...string) string {
	t.Helper()
	addr, _ := startDNSMasqLog(t, args...)
	return addr
}

// startDNSMasqLog is startDNSMasq with --log-queries; log returns what
// dnsmasq has logged so far.
func startDNSMasqLog(t *testing.T, args ...string) (addr string, log func() string) {
	t.Helper()
	bin, err := exec.LookPath("dnsmasq")
	if err != nil {
		if _, e := os.Stat("/usr/sbin/dnsmasq"); e != nil {
			t.Skip("dnsmasq is not installed (apt-get install dnsmasq-base; test/run does)")
		}
		bin = "/usr/sbin/dnsmasq"
	}
	// A free port is found by binding and closing it; another process may
	// take it before dnsmasq binds (UDP and TCP), so a start that fails is
	// retried on a new port.
	for attempt := 0; ; attempt++ {
		addr, log, exited := startDNSMasqOnce(t, bin, args)
		if !exited {
			return addr, log
		}
		if attempt == 4 {
			t.Fatalf("dnsmasq did not start:\n%s", log())
		}
	}
}

func startDNSMasqOnce(t *testing.T, bin string, args []string) (addr string, log func() string, exited bool) {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := pc.LocalAddr().(*net.UDPAddr).Port
	pc.Close()
	base := []string{
		"--keep-in-foreground", "--conf-file=/dev/null", "--no-resolv", "--no-hosts",
		"--listen-address=127.0.0.1", "--bind-interfaces", fmt.Sprintf("--port=%d", port),
		"--pid-file=", "--user=" + currentUser(), "--log-facility=-",
	}
	cmd := exec.Command(bin, append(append(base, "--log-queries"), args...)...)
	out := new(lockedBuilder)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	addr = fmt.Sprintf("127.0.0.1:%d", port)
	res := NewResolver(addr)
	deadline := time.Now().Add(5 * time.Second)
	for {
		select {
		case <-done:
			return "", out.String, true
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		_, err := res.LookupNetIP(ctx, "ip4", "ready.test")
		cancel()
		if err == nil {
			return addr, out.String, false
		}
		if time.Now().After(deadline) {
			t.Fatalf("dnsmasq did not answer: %v\n%s", err, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func currentUser() string {
	if os.Getuid() == 0 {
		return "root"
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "nobody"
}

func TestReverseDNSWithDNSMasq(t *testing.T) {
	addr := startDNSMasq(t,
		"--host-record=ready.test,127.0.0.9",
		// authoritative for these: a name not listed is NXDOMAIN, not REFUSED
		"--local=/googlebot.com/", "--local=/search.msn.com/", "--local=/evil.example/",
		"--local=/66.127.in-addr.arpa/", "--local=/55.127.in-addr.arpa/",
		// a real crawler: PTR in googlebot.com, and back
		"--ptr-record=5.249.66.127.in-addr.arpa,crawl-127-66-249-5.googlebot.com",
		"--host-record=crawl-127-66-249-5.googlebot.com,127.66.249.5",
		// a liar: PTR in googlebot.com that resolves to another address
		"--ptr-record=6.249.66.127.in-addr.arpa,crawl-66-249-66-1.googlebot.com",
		"--host-record=crawl-66-249-66-1.googlebot.com,66.249.66.1",
		// a liar without forward record at all
		"--ptr-record=8.249.66.127.in-addr.arpa,no-such-host.googlebot.com",
		// PTR in the wrong domain that does resolve back
		"--ptr-record=7.249.66.127.in-addr.arpa,googlebot.com.evil.example",
		"--host-record=googlebot.com.evil.example,127.66.249.7",
		// bingbot, by the domain of Bing's page
		"--ptr-record=9.39.55.127.in-addr.arpa,msnbot-127-55-39-9.search.msn.com",
		"--host-record=msnbot-127-55-39-9.search.msn.com,127.55.39.9",
	)
	cfg := Defaults()
	cfg.Enabled, cfg.Resolver, cfg.DNSWait = true, addr, Duration{Duration: 2 * time.Second}
	v, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const googlebot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	for _, tc := range []struct{ name, ip, ua string }{
		{"forward-confirmed", "127.66.249.5", googlebot},
		{"PTR that resolves elsewhere", "127.66.249.6", googlebot},
		{"PTR with no forward record", "127.66.249.8", googlebot},
		{"PTR in the wrong domain", "127.66.249.7", googlebot},
		{"no PTR", "127.66.249.10", googlebot},
		{"bingbot", "127.55.39.9", "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"},
		{"bingbot's address claiming googlebot", "127.55.39.9", googlebot},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.Header.Set("User-Agent", tc.ua)
			got := v.Identify(context.Background(), r, netip.MustParseAddr(tc.ip))
			want := map[string]Verified{"forward-confirmed": VerifiedDNS, "bingbot": VerifiedDNS}[tc.name]
			if want == "" {
				want = VerifiedNo
			}
			if got.Verified != want {
				t.Errorf("%s: got %+v, want verified=%s", tc.ip, got, want)
			}
		})
	}
	s := v.Stats()
	if s.DNSConfirmed.Load() != 2 {
		t.Errorf("DNSConfirmed = %d, want 2 (one per confirmed address, the repeat from the cache)", s.DNSConfirmed.Load())
	}
	if s.DNSFailed.Load() != 0 {
		t.Errorf("DNSFailed = %d: dnsmasq answered every query", s.DNSFailed.Load())
	}
}

// nodeSigner returns a function that runs testdata/webbotauth/sign.mjs.
func nodeSigner(t *testing.T) func(url, agent, mode string) []string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the Web Bot Auth test signs with npm web-bot-auth")
	}
	dir := "testdata/webbotauth"
	if _, err := os.Stat(filepath.Join(dir, "node_modules/web-bot-auth/package.json")); err != nil {
		t.Skip("npm web-bot-auth is not installed: run npm ci in bots/testdata/webbotauth (test/run does)")
	}
	return func(url, agent, mode string) []string {
		cmd := exec.Command(node, "sign.mjs", url, agent, "ed25519.json", mode)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("node sign.mjs %s: %v\n%s", mode, err, out)
		}
		return strings.Split(strings.TrimSpace(string(out)), "\n")
	}
}

// keyDirectoryServer serves the public half of testdata's key (RFC 9421
// B.1.4) as a key directory.
func keyDirectoryServer(t *testing.T) *httptest.Server {
	t.Helper()
	var k struct{ Kty, Crv, X string }
	b, err := os.ReadFile("testdata/webbotauth/ed25519.json")
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(b, &k)
	dir, _ := json.Marshal(map[string]any{"keys": []map[string]string{{"kty": k.Kty, "crv": k.Crv, "x": k.X}}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != DirectoryPath {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", DirectoryMediaType)
		w.Header().Set("Cache-Control", "max-age=86400")
		w.Write(dir)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestWebBotAuthSignedByNPM(t *testing.T) {
	sign := nodeSigner(t)
	dir := keyDirectoryServer(t)
	other := keyDirectoryServer(t)
	cfg := Defaults()
	cfg.Enabled, cfg.DNSWait = true, Duration{Duration: 2 * time.Second}
	cfg.InsecureDirectories = []string{dir.URL, other.URL}
	cfg.Crawler = []Crawler{{Name: "example-agent", Tokens: []string{"ExampleAgent"}, Category: AIAssistant, SignatureAgent: dir.URL}}
	v, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := identityServer(t, v)
	otherHost := strings.TrimPrefix(other.URL, "http://")

	for _, tc := range []struct {
		name, agent, mode string
		want              []string
	}{
		{"known agent", dir.URL, "ok", []string{"name=example-agent, category=ai-assistant, verified=signature"}},
		{"unknown agent is named by host and port", other.URL, "ok", []string{`name="` + otherHost + `", verified=signature`}},
		{"expired", dir.URL, "expired", []string{"name=example-agent, category=ai-assistant, verified=no"}},
		{"replayed", dir.URL, "replay", []string{
			"name=example-agent, category=ai-assistant, verified=signature",
			"name=example-agent, category=ai-assistant, verified=no"}},
		{"signed for another authority", dir.URL, "tampered", []string{"name=example-agent, category=ai-assistant, verified=no"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := sign(srv.URL+"/page", tc.agent, tc.mode)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
	if n := v.Stats().SignatureReplayed.Load(); n != 1 {
		t.Errorf("SignatureReplayed = %d, want 1", n)
	}
}

// A PTR flood from a real server: 40 names in googlebot.com for one
// address, none resolving back. At most maxPTRNames are looked up forward,
// and the address is not verified.
func TestReverseDNSFloodWithDNSMasq(t *testing.T) {
	args := []string{"--host-record=ready.test,127.0.0.9", "--local=/googlebot.com/", "--local=/66.127.in-addr.arpa/"}
	for i := range 40 {
		name := fmt.Sprintf("flood-%02d.googlebot.com", i)
		args = append(args, "--ptr-record=20.249.66.127.in-addr.arpa,"+name, "--host-record="+name+",127.0.0.99")
	}
	addr, log := startDNSMasqLog(t, args...)
	cfg := Defaults()
	cfg.Resolver, cfg.DNSWait = addr, Duration{Duration: 3 * time.Second}
	v := newTestVerifier(t, cfg, Options{})
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("User-Agent", "Googlebot/2.1")
	if id := v.Identify(context.Background(), r, netip.MustParseAddr("127.66.249.20")); id.Verified != VerifiedNo {
		t.Errorf("%+v", id)
	}
	names := map[string]bool{}
	for _, line := range strings.Split(log(), "\n") {
		if i := strings.Index(line, "flood-"); i >= 0 && strings.Contains(line, "query[A") {
			names[strings.Fields(line[i:])[0]] = true
		}
	}
	if len(names) == 0 || len(names) > maxPTRNames {
		t.Errorf("%d names looked up forward, want 1..%d\n%s", len(names), maxPTRNames, log())
	}
}

// A resolver that takes queries and never answers: the request waits
// dns_wait, is unverified, and the verdict is not "verified" later either.
func TestReverseDNSResolverSilent(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	cfg := Defaults()
	cfg.Resolver, cfg.DNSWait = pc.LocalAddr().String(), Duration{Duration: 100 * time.Millisecond}
	v := newTestVerifier(t, cfg, Options{})
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("User-Agent", "Googlebot/2.1")
	t0 := time.Now()
	if id := v.Identify(context.Background(), r, netip.MustParseAddr("127.66.249.5")); id.Verified != VerifiedNo {
		t.Errorf("%+v", id)
	}
	if el := time.Since(t0); el > time.Second {
		t.Errorf("waited %s with dns_wait 100ms", el)
	}
	if v.Stats().DNSLate.Load() != 1 {
		t.Error("the late answer was not counted")
	}
}
