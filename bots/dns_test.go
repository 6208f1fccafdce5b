package bots

import (
	"context"
	"net"
	"net/http/httptest"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// dnsGate is a UDP relay on loopback in front of a real DNS server: it
// reports every query it takes, and while held it keeps the queries
// unanswered until release forwards them.
type dnsGate struct {
	pc       net.PacketConn
	upstream string
	asked    chan struct{} // one per query taken

	mu   sync.Mutex
	hold bool
	held []heldQuery
}

type heldQuery struct {
	b    []byte
	from net.Addr
}

func startDNSGate(t *testing.T, upstream string) *dnsGate {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &dnsGate{pc: pc, upstream: upstream, asked: make(chan struct{}, 64)}
	var wg sync.WaitGroup
	t.Cleanup(func() { pc.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			buf := make([]byte, 1500)
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			q := heldQuery{buf[:n], from}
			g.mu.Lock()
			if g.hold {
				g.held = append(g.held, q)
			} else {
				wg.Add(1)
				go func() { defer wg.Done(); g.forward(q) }()
			}
			g.mu.Unlock()
			select {
			case g.asked <- struct{}{}:
			default:
			}
		}
	}()
	return g
}

func (g *dnsGate) addr() string { return g.pc.LocalAddr().String() }

func (g *dnsGate) forward(q heldQuery) {
	c, err := net.Dial("udp", g.upstream)
	if err != nil {
		return
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(q.b); err != nil {
		return
	}
	buf := make([]byte, 1500)
	n, err := c.Read(buf)
	if err != nil {
		return
	}
	g.pc.WriteTo(buf[:n], q.from)
}

func (g *dnsGate) setHold() {
	g.mu.Lock()
	g.hold = true
	g.mu.Unlock()
}

func (g *dnsGate) release() {
	g.mu.Lock()
	held := g.held
	g.hold, g.held = false, nil
	g.mu.Unlock()
	for _, q := range held {
		go g.forward(q)
	}
}

func (g *dnsGate) heldCount() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.held)
}

// waitAsked waits for the gate to take a query.
func (g *dnsGate) waitAsked(t *testing.T) {
	t.Helper()
	select {
	case <-g.asked:
	case <-time.After(10 * time.Second):
		t.Fatal("no DNS query reached the server")
	}
}

// drainAsked forgets the queries reported so far.
func (g *dnsGate) drainAsked() {
	for {
		select {
		case <-g.asked:
		default:
			return
		}
	}
}

// startCrawlerDNS runs dnsmasq with one forward-confirmed Googlebot
// address, 127.66.249.5, behind a gate.
func startCrawlerDNS(t *testing.T) *dnsGate {
	addr := startDNSMasq(t,
		"--host-record=ready.test,127.0.0.9",
		"--local=/googlebot.com/", "--local=/66.127.in-addr.arpa/",
		"--ptr-record=5.249.66.127.in-addr.arpa,crawl-127-66-249-5.googlebot.com",
		"--host-record=crawl-127-66-249-5.googlebot.com,127.66.249.5",
	)
	return startDNSGate(t, addr)
}

func identifyTimed(v *Verifier, a netip.Addr) (Identity, time.Duration) {
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("User-Agent", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)")
	t0 := time.Now()
	id := v.Identify(context.Background(), r, a)
	return id, time.Since(t0)
}

// SPEC §18.1: "at most dns_wait on an address's first request". While
// the first request's lookup has no answer, a second request from the same
// address does not wait: it is not verified (verified=no). The first
// request, still waiting, gets the answer when it comes.
func TestReverseDNSOnlyTheFirstRequestWaits(t *testing.T) {
	g := startCrawlerDNS(t)
	g.setHold()
	cfg := Defaults()
	cfg.Resolver, cfg.DNSWait = g.addr(), Duration{Duration: 5 * time.Second}
	v := newTestVerifier(t, cfg, Options{})
	a := netip.MustParseAddr("127.66.249.5")
	first := make(chan Identity, 1)
	go func() {
		id, _ := identifyTimed(v, a)
		first <- id
	}()
	g.waitAsked(t) // the first request's lookup is in flight, unanswered
	for range 3 {
		// dns_wait is 5 s; a request that waited would take that long.
		if id, el := identifyTimed(v, a); id.Verified != VerifiedNo || el > time.Second {
			t.Errorf("a request while the first lookup runs: %s after %s, want no at once", id.Verified, el)
		}
	}
	if n := g.heldCount(); n != 1 {
		t.Errorf("%d queries for one address, want 1 (one lookup in flight)", n)
	}
	g.release()
	if id := <-first; id.Verified != VerifiedDNS {
		t.Errorf("the first request, answered within dns_wait: %s", id.Verified)
	}
	if id, _ := identifyTimed(v, a); id.Verified != VerifiedDNS {
		t.Errorf("after the answer: %s", id.Verified)
	}
	if n := v.Stats().DNSLate.Load(); n != 0 {
		t.Errorf("DNSLate = %d, no request gave up waiting", n)
	}
}

// SPEC §18.1: a verdict past cache_ttl is still served, without a wait,
// while its refresh runs in the background, one lookup for the address
// however many requests come; the refresh's answer replaces it.
func TestReverseDNSExpiredVerdictServedWhileRefreshing(t *testing.T) {
	g := startCrawlerDNS(t)
	var clock atomic.Int64
	clock.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	cfg := Defaults()
	cfg.Resolver, cfg.DNSWait = g.addr(), Duration{Duration: 5 * time.Second}
	v := newTestVerifier(t, cfg, Options{Now: func() time.Time { return time.Unix(0, clock.Load()) }})
	a := netip.MustParseAddr("127.66.249.5")
	if id, _ := identifyTimed(v, a); id.Verified != VerifiedDNS {
		t.Fatalf("first request: %s", id.Verified)
	}
	g.drainAsked()
	g.setHold()
	clock.Add(int64(cfg.CacheTTL.Duration + time.Second))
	if id, el := identifyTimed(v, a); id.Verified != VerifiedDNS || el > time.Second {
		t.Errorf("after cache_ttl: %s after %s, want the old verdict (dns) at once", id.Verified, el)
	}
	g.waitAsked(t) // the refresh
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if id, el := identifyTimed(v, a); id.Verified != VerifiedDNS || el > time.Second {
				t.Errorf("while the refresh runs: %s after %s", id.Verified, el)
			}
		}()
	}
	wg.Wait()
	if n := g.heldCount(); n != 1 {
		t.Errorf("%d queries held while refreshing one address, want 1", n)
	}
	v.dns.mu.Lock()
	e := v.dns.entries[a]
	done := e.done
	v.dns.mu.Unlock()
	if done == nil {
		t.Fatal("no refresh in flight")
	}
	g.release()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the refresh did not finish")
	}
	v.dns.mu.Lock()
	expires := e.expires
	v.dns.mu.Unlock()
	if want := time.Unix(0, clock.Load()).Add(cfg.CacheTTL.Duration); !expires.Equal(want) {
		t.Errorf("refreshed verdict expires %s, want %s", expires, want)
	}
	if n := v.Stats().DNSConfirmed.Load(); n != 2 {
		t.Errorf("DNSConfirmed = %d, want 2 (the first lookup and the refresh)", n)
	}
	if id, _ := identifyTimed(v, a); id.Verified != VerifiedDNS {
		t.Errorf("after the refresh: %s", id.Verified)
	}
}
