package watch

import (
	"context"
	"errors"
	"hash/maphash"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/headgate/headgate/rewrite"
)

// Options configures a Watcher. The zero value of every field but Config
// works.
type Options struct {
	// Config is the checked `[watch]`; Enabled is not read.
	Config Config
	// Match reports whether a path is watched (the compiled Config.Match);
	// nil watches every path.
	Match func(path string) bool
	// BaseURL ("https://shop.example") is put before the path in events'
	// URL; "" leaves it a path.
	BaseURL string
	// Registerer gets headgate_upstream_changes_total (and the webhook's
	// counter); nil registers nothing.
	Registerer prometheus.Registerer
	// Logger gets a line per event; nil logs nothing.
	Logger *slog.Logger
	// Client sends the webhook; nil is a client with a 10 s timeout that
	// follows no redirect.
	Client *http.Client
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// WebhookTick says when the webhook's gathered events go out (tests
	// inject it); nil is every 10 s.
	WebhookTick <-chan time.Time
}

// Watcher remembers the upstream's signals per page and reports confirmed
// changes. Safe for concurrent use.
type Watcher struct {
	confirm uint8
	mask    [numSignals]bool
	match   func(string) bool
	base    string
	now     func() time.Time
	log     *slog.Logger
	count   [numSignals][2]prometheus.Counter // [signal][critical?]
	ring    ring
	names   names // the texts of canonicals, JSON-LD types, hreflang (names.go)
	hook    *Sender
	shards  [nShards]shard
}

// nShards spreads pages over locks: many goroutines observe at once.
const nShards = 64

var seed = maphash.MakeSeed() // set once: keys are hashed within one process

// New returns a Watcher of o.Config, which must have passed Check.
func New(o Options) (*Watcher, error) {
	c := o.Config
	if ps := c.Check(); len(ps) > 0 {
		return nil, errors.New("watch: " + ps[0].String())
	}
	w := &Watcher{confirm: uint8(c.Confirm), match: o.Match, base: o.BaseURL, now: o.Now, log: o.Logger}
	for _, n := range c.Signals {
		s, _ := ParseSignal(n)
		w.mask[s] = true
	}
	if w.now == nil {
		w.now = time.Now
	}
	for i := range w.shards {
		// The shards' shares add up to MaxPages (one at least each).
		per := max(c.MaxPages/nShards+b2i(i < c.MaxPages%nShards), 1)
		w.shards[i] = shard{max: per, head: -1, tail: -1}
	}
	vec := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "headgate_upstream_changes_total",
		Help: "Confirmed changes of the upstream's page signals (SPEC §20.2), by signal and severity.",
	}, []string{"signal", "severity"})
	for s := range numSignals {
		w.count[s][0] = vec.WithLabelValues(SignalNames[s], Info)
		w.count[s][1] = vec.WithLabelValues(SignalNames[s], Critical)
	}
	if o.Registerer != nil {
		if err := o.Registerer.Register(vec); err != nil {
			return nil, err
		}
	}
	if c.Webhook != "" {
		s, err := NewSender(SenderOptions{URL: c.Webhook, Format: c.WebhookFormat, Client: o.Client, Registerer: o.Registerer, Tick: o.WebhookTick})
		if err != nil {
			return nil, err
		}
		w.hook = s
	}
	return w, nil
}

// Close stops the webhook sender, sending what it holds until ctx ends.
func (w *Watcher) Close(ctx context.Context) error {
	if w.hook == nil {
		return nil
	}
	return w.hook.close(ctx)
}

// Observe remembers the signals of one upstream response for the page at
// path and query (the request target as the proxy normalized it) and
// reports the changes it confirms. Call it after the head was read, for a
// GET of a page; it never blocks on anything but a shard's lock, and
// allocates nothing unless a change is confirmed. A 304 or 1xx response
// says nothing of the page and is ignored. A page is remembered from its
// first 2xx response with a head read (its baseline, no event); a
// response without one (a redirect, an error, an image) is compared only
// for a page already remembered, so that assets take no room.
func (w *Watcher) Observe(path, query string, r Response) {
	if r.Status == http.StatusNotModified || r.Status < 200 {
		return
	}
	if w.match != nil && !w.match(path) {
		return
	}
	var h maphash.Hash
	h.SetSeed(seed)
	h.WriteString(path)
	if query != "" {
		h.WriteByte('?')
		h.WriteString(query)
	}
	key := h.Sum64()
	v := valuesOf(&r, w.base, path, query)
	compare := w.mask
	if !r.headRead() {
		compare = [numSignals]bool{Status: w.mask[Status]}
	}
	sh := &w.shards[key%nShards]
	var ch changes
	sh.mu.Lock()
	var head *rewrite.HeadFacts
	if r.headRead() {
		head = r.Head
	}
	sh.observe(key, &v, &compare, w.confirm, head, &ch)
	sh.mu.Unlock()
	if ch.baseline || ch.n > 0 {
		w.names.remember(&v, head) // before emit: a change back shows them
	}
	if ch.n > 0 {
		w.emit(path, query, &ch, r.Head)
	}
}

// changes are the changes one Observe confirmed.
type changes struct {
	baseline bool // the page's first: its values are the entry's
	n        int
	of       [numSignals]struct {
		s             Signal
		before, after uint64
	}
	title, desc prefix // the start of the title and description before
}

// shard is a part of the pages, an LRU list over entries in chunks,
// found by their key through an index of their own (slots) rather than a
// map: a probe reads one 8-byte slot, often in the cache line of the last,
// and touches an entry only when the key's tag matches, where a map of
// this size reads its directory, its table and a group first.
type shard struct {
	mu         sync.Mutex
	max        int
	slots      []slot // open addressing, linear probing; a power of two ≥ 2 × n
	chunks     []*[chunk]entry
	n          int32 // entries in use
	head, tail int32 // most and least recently seen; -1 none
}

// slot is an index entry: the key's tag (tagOf; 0 is an empty slot) and
// the entry.
type slot struct {
	tag uint32
	i   int32
}

// tagOf is the key's bits that slots keep: the upper half, never 0. The
// lower half places the key (home): its shard is key % nShards.
func tagOf(key uint64) uint32 { return uint32(key>>32) | 1 }

func (s *shard) home(key uint64) int { return int(key/nShards) & (len(s.slots) - 1) }

// find is the slot of key, or the empty slot where it would go.
func (s *shard) find(key uint64) (pos int, ok bool) {
	if len(s.slots) == 0 {
		s.grow()
	}
	tag, mask := tagOf(key), len(s.slots)-1
	for pos = s.home(key); ; pos = (pos + 1) & mask {
		switch sl := s.slots[pos]; {
		case sl.tag == 0:
			return pos, false
		case sl.tag == tag && s.at(sl.i).key == key:
			return pos, true
		}
	}
}

// grow doubles slots (16 at first) and places every entry again.
func (s *shard) grow() {
	old := s.slots
	s.slots = make([]slot, max(2*len(old), 16))
	for _, sl := range old {
		if sl.tag != 0 {
			key := s.at(sl.i).key
			pos, _ := s.find(key)
			s.slots[pos] = sl
		}
	}
}

// unindex empties slot pos and moves back the slots after it that
// probing would no longer reach (backward shift: no tombstones).
func (s *shard) unindex(pos int) {
	mask := len(s.slots) - 1
	for j := pos; ; {
		s.slots[pos] = slot{}
		for {
			j = (j + 1) & mask
			sl := s.slots[j]
			if sl.tag == 0 {
				return
			}
			// sl stays unless its home lies cyclically outside (pos, j].
			h := s.home(s.at(sl.i).key)
			if (j > pos && (h <= pos || h > j)) || (j < pos && h <= pos && h > j) {
				s.slots[pos] = sl
				pos = j
				break
			}
		}
	}
}

// chunk is how many entries are allocated at once: a shard grows by
// 256 × 136 B, not by doubling a slice.
const chunk = 256

// entry is one page: 136 B (TestEntryLayout), ≤ 256 B with its share of
// the map and of its chunk (TestEntrySize, TestMillionPages). Hashes, and
// of the texts only the start of the confirmed title and description,
// for the events' before, in the bytes the layout would pad anyway.
type entry struct {
	key        uint64
	prev, next int32
	cur        values // confirmed
	// pend is the low half of the candidate of each signal that differs:
	// the count of responses in a row that showed it is all it serves
	// for, and a confirmed change takes the response's whole value. (Two
	// candidates alike in their low 32 bits would count as one.)
	pend  [numSignals]uint32
	count [numSignals]uint8 // responses in a row that showed pend
	title [titleKept + 1]byte
	desc  [descKept + 1]byte
}

// titleKept and descKept are the bytes of the confirmed title and
// description an entry keeps (29 with their lengths: what is left of
// 136 B).
const (
	titleKept = 16
	descKept  = 11
)

func (s *shard) at(i int32) *entry { return &s.chunks[i/chunk][i%chunk] }

// observe compares v with the page's entry; head is the response's head
// when page (its signals count), else nil.
func (s *shard) observe(key uint64, v *values, compare *[numSignals]bool, confirm uint8, head *rewrite.HeadFacts, ch *changes) {
	page := head != nil
	pos, ok := s.find(key)
	if !ok {
		if !page {
			return // not known as a page: an image, a script, a 404 of one
		}
		e := s.add(key)
		e.cur = *v // the baseline
		e.keepTexts(head)
		ch.baseline = true
		return
	}
	i := s.slots[pos].i
	s.touch(i)
	e := s.at(i)
	for sg := range numSignals {
		if !compare[sg] {
			continue
		}
		switch {
		case v[sg] == e.cur[sg]:
			e.count[sg] = 0
		case e.count[sg] > 0 && uint32(v[sg]) == e.pend[sg]:
			e.count[sg]++
		default:
			e.pend[sg], e.count[sg] = uint32(v[sg]), 1
		}
		if e.count[sg] >= confirm {
			c := &ch.of[ch.n]
			c.s, c.before, c.after = sg, e.cur[sg], v[sg]
			switch sg {
			case Title:
				ch.title = prefixOf(e.title[:])
				keep(e.title[:], &head.Title)
			case Description:
				ch.desc = prefixOf(e.desc[:])
				keep(e.desc[:], &head.Description)
			}
			ch.n++
			e.cur[sg], e.count[sg] = v[sg], 0
		}
	}
}

// add makes an entry for key, the least recently seen one's when the
// shard is full, and puts it first.
func (s *shard) add(key uint64) *entry {
	var i int32
	if int(s.n) >= s.max {
		i = s.tail
		s.unlink(i)
		old, _ := s.find(s.at(i).key)
		s.unindex(old)
	} else {
		i = s.n
		if int(i)/chunk == len(s.chunks) {
			s.chunks = append(s.chunks, new([chunk]entry))
		}
		s.n++
		if 2*int(s.n) > len(s.slots) {
			s.grow()
		}
	}
	e := s.at(i)
	*e = entry{key: key, prev: -1, next: -1}
	pos, _ := s.find(key) // after unindex and grow, which move slots
	s.slots[pos] = slot{tag: tagOf(key), i: i}
	s.pushFront(i)
	return e
}

func (s *shard) touch(i int32) {
	if s.head == i {
		return
	}
	s.unlink(i)
	s.pushFront(i)
}

func (s *shard) unlink(i int32) {
	e := s.at(i)
	if e.prev >= 0 {
		s.at(e.prev).next = e.next
	} else {
		s.head = e.next
	}
	if e.next >= 0 {
		s.at(e.next).prev = e.prev
	} else {
		s.tail = e.prev
	}
	e.prev, e.next = -1, -1
}

func (s *shard) pushFront(i int32) {
	e := s.at(i)
	e.prev, e.next = -1, s.head
	if s.head >= 0 {
		s.at(s.head).prev = i
	}
	s.head = i
	if s.tail < 0 {
		s.tail = i
	}
}

// Pages returns how many pages are remembered.
func (w *Watcher) Pages() int {
	n := 0
	for i := range w.shards {
		s := &w.shards[i]
		s.mu.Lock()
		n += int(s.n)
		s.mu.Unlock()
	}
	return n
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
