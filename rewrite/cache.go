package rewrite

import (
	"bytes"
	"strconv"
	"strings"
	"sync"
)

// Cache remembers how the heads of recent responses were rewritten, so that
// the same head bytes for the same request and options are not scanned and
// rendered again: a popular page sends the same head on every request. An
// entry is used only when the bytes the scan examined (up to where it
// decided the region's end) are the same, byte for byte (a plan keeps a
// copy of them), and never when the decision depended on where the input
// ended. Safe for concurrent use; nil disables it. Build one per
// configuration: entries assume the rules they were made with.
type Cache struct {
	mu    sync.Mutex
	max   int
	bytes int // the plans' sizes, bounded by cacheBytes
	m     map[string]*plan
}

// cacheBytes bounds the memory of one cache's plans, the head bytes they
// keep included (about 600 plans of bbc.com's 28 KB head, 1,024 of heads
// under 16 KB); a plan larger than a sixteenth of it is not kept.
const cacheBytes = 16 << 20

// NewCache returns a cache of at most entries plans (one per request
// target, content type and CSP without its nonces); 0 means 1024.
func NewCache(entries int) *Cache {
	if entries <= 0 {
		entries = 1024
	}
	return &Cache{max: entries, m: make(map[string]*plan)}
}

// plan is a finished rewrite, replayable over the same head bytes.
type plan struct {
	head      []byte // the bytes the scan examined, compared byte for byte (faster than a hash of them, and exact)
	regionEnd int
	edits     []edit       // replacement bytes owned by the plan
	spans     []opaqueSpan // where head may differ and the plan still hold (nearmatch.go)
	nonce     string       // the CSP nonce the plan's written tags carry; "" none
	res       Result
	size      int // bytes the plan holds, roughly
	// misses counts the responses in a row whose head was not this plan's;
	// skip, the requests still to pass before the target is tried again
	// (both under Cache.mu).
	misses, skip int
}

// A target whose head changes on every request (a CSRF token, a nonce, a
// timestamp in a meta) would have its head hashed twice and a plan copied
// and stored for every response, never to be used. After missLimit misses
// in a row its heads are neither compared nor stored for a while: skip
// requests, doubling from minSkip to maxSkip while the misses go on, then
// one response is remembered again as a probe. A single hit resets it.
const (
	missLimit = 3
	minSkip   = 8
	maxSkip   = 256
)

// skipFor is how many requests a target that missed misses times in a row
// goes without the cache.
func skipFor(misses int) int {
	if misses < missLimit {
		return 0
	}
	return min(minSkip<<min(misses-missLimit, 8), maxSkip)
}

// appendKey appends the key of o's plan to b: a lookup with it allocates
// nothing (a map index by string(b) does not copy b); only a plan stored
// makes it a string.
func (c *Cache) appendKey(b []byte, o *Options) []byte {
	m := o.Match
	b = append(append(append(b, m.Path...), '?'), m.Query...)
	b = append(append(append(b, 0), o.ContentType...), 0)
	b = append(appendWithoutNonces(b, o.CSP), 0)
	b = strconv.AppendBool(b, o.CorrectUpstream)
	b = strconv.AppendBool(b, o.Shadow)
	return strconv.AppendInt(b, int64(o.MaxHeadBytes), 10)
}

// appendWithoutNonces appends a Content-Security-Policy with the values of
// its 'nonce-…' sources left out: a site with a strict policy sends a new
// nonce on every response, and a plan that did not write it (plan.nonce)
// holds whatever it is.
func appendWithoutNonces(b []byte, csp string) []byte {
	const src = "'nonce-"
	for {
		i := strings.IndexByte(csp, '\'')
		if i < 0 {
			return append(b, csp...)
		}
		if n := i + len(src); n <= len(csp) && strings.EqualFold(csp[i:n], src) {
			b, csp = append(b, csp[:n]...), csp[n:]
			if j := strings.IndexByte(csp, '\''); j >= 0 {
				csp = csp[j:] // the value's closing quote, read next as any other
			} else {
				csp = ""
			}
			continue
		}
		b, csp = append(b, csp[:i+1]...), csp[i+1:]
	}
}

// lookup returns k's plan and the misses it has counted; nil and
// store=false while k is skipped, nil and store=true when there is none
// (or a skip just ended: the probe).
func (c *Cache) lookup(k []byte) (p *plan, misses int, store bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p = c.m[string(k)]
	if p == nil {
		return nil, 0, true
	}
	if p.skip > 0 {
		p.skip--
		if p.skip == 0 {
			return nil, p.misses, true // the probe: scan and remember
		}
		return nil, p.misses, false
	}
	return p, p.misses, true
}

// missed counts a response whose head was not p's. It reports whether the
// response's own plan is worth storing; when not, k is skipped for a while.
func (c *Cache) missed(p *plan) (misses int, store bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p.misses++
	if p.skip = skipFor(p.misses); p.skip > 0 {
		return p.misses, false
	}
	return p.misses, true
}

// hit notes that p answered: its target repeats after all.
func (c *Cache) hit(p *plan) {
	c.mu.Lock()
	p.misses = 0
	c.mu.Unlock()
}

func (c *Cache) put(k string, p *plan) {
	if p.size > cacheBytes/16 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[k]; ok {
		c.bytes -= old.size
		delete(c.m, k)
	}
	for old, op := range c.m { // evict any, until there is room
		if len(c.m) < c.max && c.bytes+p.size <= cacheBytes {
			break
		}
		c.bytes -= op.size
		delete(c.m, old)
	}
	c.m[k] = p
	c.bytes += p.size
}

// tryCached replays a cached plan when the head bytes are the same. It may
// read ahead into the buffer; on a miss the scan goes on from what is
// there. When it did not hit, misses is what remember carries on, and
// store whether to remember at all.
func (h *headScan) tryCached(c *Cache, k []byte) (hit bool, misses int, store bool) {
	p, misses, store := c.lookup(k)
	if p == nil {
		return false, misses, store
	}
	st := h.st
	if p.nonce != "" && cspNonce(h.r.opts.CSP) != p.nonce {
		// The plan wrote this policy's nonce of another response.
		misses, store = c.missed(p)
		return false, misses, store
	}
	for len(st.buf) < len(p.head) && !h.sc.eof {
		h.fill()
	}
	use := PlanHit
	if !bytes.HasPrefix(st.buf, p.head) {
		if !nearMatch(p.head, st.buf, p.spans) {
			misses, store = c.missed(p)
			return false, misses, store
		}
		use = PlanNear
	}
	if misses > 0 {
		c.hit(p)
	}
	r := h.r
	r.res = p.res
	r.res.Cached, r.res.Plan = true, use
	region := st.buf[:p.regionEnd]
	r.tail = st.buf[p.regionEnd:]
	if len(p.edits) == 0 || r.opts.Shadow {
		r.out = region
		return true, 0, false
	}
	segs, _ := assemble(st.segs[:0], region, p.edits)
	st.segs, r.segs = segs, segs
	return true, 0, false
}

// remember stores the plan of a finished scan, when it can be replayed;
// misses is carried over from the plan it replaces.
func (h *headScan) remember(c *Cache, kb []byte, misses int) {
	r, st := h.r, h.st
	if h.eofDecided || r.srcErr != nil || (r.res.Outcome != Rewritten && r.res.Outcome != Unchanged) {
		return
	}
	seen := max(h.sc.pos, h.lateSeen, h.regionEnd)
	if seen > len(st.buf) {
		return
	}
	k := string(kb)
	p := &plan{head: bytes.Clone(st.buf[:seen]), regionEnd: h.regionEnd, res: r.res, misses: misses, spans: h.keptSpans(seen), nonce: h.nonce}
	p.res.Duration = 0
	p.size = len(k) + seen + 256 + 20*len(p.spans)
	for _, e := range st.edits {
		p.edits = append(p.edits, edit{e.start, e.end, append([]byte(nil), e.repl...)})
		p.size += len(e.repl) + 32
	}
	for _, ch := range p.res.Changes {
		p.size += len(ch.Value) + len(ch.Reason) + 64
	}
	c.put(k, p)
}
