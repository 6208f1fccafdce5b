package bots

import (
	"container/list"
	"context"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// Resolver is what forward-confirmed reverse DNS needs; *net.Resolver has
// both methods.
type Resolver interface {
	LookupAddr(ctx context.Context, addr string) ([]string, error)
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// NewResolver returns a pure-Go resolver that asks server ("host:port")
// for every query; "" returns net.DefaultResolver (the system's).
func NewResolver(server string) Resolver {
	if server == "" {
		return net.DefaultResolver
	}
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, server)
		},
	}
}

const (
	maxPTRNames      = 8               // PTR names looked at per address; more is a flood
	maxForwardAddrs  = 64              // A/AAAA answers looked at per name
	dnsLookupTimeout = 5 * time.Second // one FCrDNS, PTR and forward together
	failedTTL        = time.Minute     // a lookup that failed (timeout, SERVFAIL) is retried after this
	defaultInflight  = 256
)

// dnsEntry is one address's verdict: the forward-confirmed PTR name, ""
// when none held. While a lookup runs, done is open; verdict says whether
// name and expires hold a finished lookup's answer (a refresh runs with the
// old verdict still served).
type dnsEntry struct {
	addr    netip.Addr
	name    string
	expires time.Time
	verdict bool
	done    chan struct{}
	elem    *list.Element
}

// dnsCache runs forward-confirmed reverse DNS: at most one lookup in flight
// per address, at most maxInflight in all, verdicts (positive and
// negative) remembered for ttl in an LRU of size entries, and served past
// ttl while their refresh runs.
type dnsCache struct {
	res         Resolver
	ttl         time.Duration
	size        int
	maxInflight int
	wanted      func(name string) bool // a PTR name worth a forward lookup
	now         func() time.Time
	stats       *Stats

	mu       sync.Mutex
	entries  map[netip.Addr]*dnsEntry
	lru      list.List // front = most recent
	inflight int
}

func newDNSCache(res Resolver, size int, ttl time.Duration, wanted func(string) bool, now func() time.Time, stats *Stats) *dnsCache {
	return &dnsCache{res: res, ttl: ttl, size: size, maxInflight: defaultInflight, wanted: wanted, now: now, stats: stats,
		entries: make(map[netip.Addr]*dnsEntry)}
}

// name returns the forward-confirmed PTR name of a, "" when none; ok is
// false when no verdict is had (SPEC §18.1). Only an address's first
// request waits, at most wait, for the lookup it starts; a request while
// that lookup still runs does not wait. A verdict older than ttl is still
// served while a refresh runs in the background; a late answer is cached
// when it arrives.
func (c *dnsCache) name(ctx context.Context, a netip.Addr, wait time.Duration) (name string, ok bool) {
	now := c.now()
	c.mu.Lock()
	if e := c.entries[a]; e != nil {
		c.lru.MoveToFront(e.elem)
		name, ok := e.name, e.verdict
		if ok && e.done == nil && !now.Before(e.expires) {
			c.start(e) // refresh; the old verdict meanwhile
		}
		c.mu.Unlock()
		return name, ok
	}
	e := &dnsEntry{addr: a}
	if !c.start(e) {
		c.mu.Unlock()
		return "", false
	}
	e.elem = c.lru.PushFront(e)
	c.entries[a] = e
	for len(c.entries) > c.size {
		// Evict the least recent entry with no lookup in flight.
		back := c.lru.Back()
		for back != nil && back.Value.(*dnsEntry).done != nil {
			back = back.Prev()
		}
		if back == nil {
			break
		}
		c.remove(back.Value.(*dnsEntry))
	}
	done := e.done
	c.mu.Unlock()
	if wait <= 0 {
		return "", false
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		c.stats.DNSLate.Add(1)
		return "", false
	case <-ctx.Done():
		return "", false
	}
	c.mu.Lock()
	name = e.name
	c.mu.Unlock()
	return name, true
}

// start begins a lookup for e, unless maxInflight are running (DNSBusy).
// c.mu is held.
func (c *dnsCache) start(e *dnsEntry) bool {
	if c.inflight >= c.maxInflight {
		c.stats.DNSBusy.Add(1)
		return false
	}
	c.inflight++
	e.done = make(chan struct{})
	go c.lookup(e)
	return true
}

func (c *dnsCache) remove(e *dnsEntry) {
	c.lru.Remove(e.elem)
	if c.entries[e.addr] == e {
		delete(c.entries, e.addr)
	}
}

func (c *dnsCache) lookup(e *dnsEntry) {
	ctx, cancel := context.WithTimeout(context.Background(), dnsLookupTimeout)
	defer cancel()
	name, failed := c.confirm(ctx, e.addr)
	ttl := c.ttl
	switch {
	case failed:
		ttl = min(ttl, failedTTL)
		c.stats.DNSFailed.Add(1)
	case name != "":
		c.stats.DNSConfirmed.Add(1)
	default:
		c.stats.DNSNotConfirmed.Add(1)
	}
	c.mu.Lock()
	e.name, e.verdict = name, true
	e.expires = c.now().Add(ttl)
	close(e.done)
	e.done = nil
	c.inflight--
	c.mu.Unlock()
}

// confirm is forward-confirmed reverse DNS: a PTR name of a that the
// directory cares about, whose A/AAAA records hold a. failed reports a
// resolver error (as opposed to an answer that does not confirm).
func (c *dnsCache) confirm(ctx context.Context, a netip.Addr) (name string, failed bool) {
	names, err := c.res.LookupAddr(ctx, a.String())
	if err != nil {
		var de *net.DNSError
		if asDNSError(err, &de) && de.IsNotFound {
			return "", false
		}
		return "", true
	}
	if len(names) > maxPTRNames {
		names = names[:maxPTRNames]
	}
	for _, n := range names {
		n = strings.ToLower(strings.TrimSuffix(n, "."))
		if n == "" || !c.wanted(n) {
			continue
		}
		addrs, err := c.res.LookupNetIP(ctx, "ip", n)
		if err != nil {
			var de *net.DNSError
			if !(asDNSError(err, &de) && de.IsNotFound) {
				failed = true
			}
			continue
		}
		if len(addrs) > maxForwardAddrs {
			addrs = addrs[:maxForwardAddrs]
		}
		for _, f := range addrs {
			if f.Unmap() == a {
				return n, false
			}
		}
	}
	return "", failed
}

// hasDomain reports whether name is one of domains or below one.
func hasDomain(name string, domains []string) bool {
	for _, d := range domains {
		if len(name) > len(d) && name[len(name)-len(d)-1] == '.' && strings.EqualFold(name[len(name)-len(d):], d) {
			return true
		}
		if strings.EqualFold(name, d) {
			return true
		}
	}
	return false
}
