package rules

import (
	"hash/maphash"
	"net/url"
	"sort"
	"strings"
)

// redirTable is one [[redirect_table]], compiled. It is built to hold a
// million rows in little memory and to answer a lookup in constant time:
// every string of every row lives in one byte arena; a row is a fixed-size
// record of offsets into it; an open-addressing hash of row numbers, keyed
// by the from path, finds the first row of a path, and the rows of one
// path are chained in the order they are tried (most query pairs first,
// then file order). No per-row allocation, no pointer the GC must scan.
type redirTable struct {
	file  string // the table's path, for file:line
	arena []byte
	rows  []trow
	slots []uint32 // row index + 1 of the first row of a path; 0 = empty
	seed  maphash.Seed
	heads int // paths in slots
	drop  bool
}

// trow is one row: 36 bytes.
type trow struct {
	key, keyLen     uint32 // the from path, normalized (§11.1) with upper-case hex
	pairs, pairsLen uint32 // the from query's pairs, decoded and sorted: k \0 v \0 …
	to, toLen       uint32 // the target: absolute URL, or path?query#fragment on the origin
	next            uint32 // index + 1 of the next row of the same path; 0 = none
	line            uint32
	status          uint16
	npairs          uint8
	flags           uint8
}

const (
	rowAbs  = 1 << iota // to is an absolute URL off the site's origin
	rowGone             // 410: no target
	rowDrop             // the request's query is not appended
)

func (t *redirTable) str(off, n uint32) string {
	return string(t.arena[off : off+n])
}

func (t *redirTable) keyOf(r *trow) []byte { return t.arena[r.key : r.key+r.keyLen] }

// head returns the index + 1 of the first row of path, or 0.
func (t *redirTable) head(path string) uint32 {
	if len(t.slots) == 0 {
		return 0
	}
	mask := uint64(len(t.slots) - 1)
	i := maphash.String(t.seed, path) & mask
	for {
		s := t.slots[i]
		if s == 0 {
			return 0
		}
		if string(t.keyOf(&t.rows[s-1])) == path {
			return s
		}
		i = (i + 1) & mask
	}
}

// insertHead makes row n (index + 1) the first of its path.
func (t *redirTable) insertHead(n uint32) {
	if (t.heads+1)*2 > len(t.slots) {
		t.grow()
	}
	mask := uint64(len(t.slots) - 1)
	i := maphash.Bytes(t.seed, t.keyOf(&t.rows[n-1])) & mask
	for t.slots[i] != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = n
	t.heads++
}

// replaceHead points path's slot at row n instead of old.
func (t *redirTable) replaceHead(old, n uint32) {
	mask := uint64(len(t.slots) - 1)
	i := maphash.Bytes(t.seed, t.keyOf(&t.rows[n-1])) & mask
	for t.slots[i] != old {
		i = (i + 1) & mask
	}
	t.slots[i] = n
}

func (t *redirTable) grow() {
	size := max(1024, 2*len(t.slots))
	old := t.slots
	t.slots = make([]uint32, size)
	mask := uint64(size - 1)
	for _, s := range old {
		if s == 0 {
			continue
		}
		i := maphash.Bytes(t.seed, t.keyOf(&t.rows[s-1])) & mask
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
}

// add appends a row whose from is already checked. It returns the line of
// an earlier row with the same from (path and pairs) and 0 when there is
// none; the row is then not added.
func (t *redirTable) add(key string, pairs []string, to string, status int, flags uint8, line int) int {
	if t.seed == (maphash.Seed{}) {
		t.seed = maphash.MakeSeed()
	}
	enc := encodePairs(pairs)
	h := t.head(key)
	for s := h; s != 0; s = t.rows[s-1].next {
		r := &t.rows[s-1]
		if int(r.npairs) == len(pairs)/2 && t.str(r.pairs, r.pairsLen) == enc {
			return int(r.line)
		}
	}
	r := trow{line: uint32(line), status: uint16(status), npairs: uint8(len(pairs) / 2), flags: flags}
	if h != 0 {
		r.key, r.keyLen = t.rows[h-1].key, t.rows[h-1].keyLen // the path is stored once
	} else {
		r.key, r.keyLen = t.push(key)
	}
	r.pairs, r.pairsLen = t.push(enc)
	r.to, r.toLen = t.push(to)
	t.rows = append(t.rows, r)
	n := uint32(len(t.rows))
	if h == 0 {
		t.insertHead(n)
		return 0
	}
	// Chain in try order: more pairs first; equal pairs keep file order.
	if t.rows[h-1].npairs < r.npairs {
		t.rows[n-1].next = h
		t.replaceHead(h, n)
		return 0
	}
	prev := h
	for {
		nx := t.rows[prev-1].next
		if nx == 0 || t.rows[nx-1].npairs < r.npairs {
			t.rows[n-1].next = nx
			t.rows[prev-1].next = n
			return 0
		}
		prev = nx
	}
}

func (t *redirTable) push(s string) (uint32, uint32) {
	off := uint32(len(t.arena))
	t.arena = append(t.arena, s...)
	return off, uint32(len(s))
}

// finish trims the arena and the rows to their size.
func (t *redirTable) finish() {
	t.arena = append([]byte(nil), t.arena...)
	t.rows = append([]trow(nil), t.rows...)
}

// encodePairs writes sorted decoded pairs as k \0 v \0 ….
func encodePairs(pairs []string) string {
	if len(pairs) == 0 {
		return ""
	}
	var b strings.Builder
	for _, p := range pairs {
		b.WriteString(p)
		b.WriteByte(0)
	}
	return b.String()
}

// splitPairs reads a from's query into sorted decoded key, value pairs
// (flattened). ok is false for a query that does not decode.
func splitPairs(q string) ([]string, bool) {
	type kv struct{ k, v string }
	var kvs []kv
	for _, part := range strings.Split(q, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		dk, err1 := url.QueryUnescape(k)
		dv, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil || dk == "" {
			return nil, false
		}
		kvs = append(kvs, kv{dk, dv})
	}
	sort.SliceStable(kvs, func(i, j int) bool {
		if kvs[i].k != kvs[j].k {
			return kvs[i].k < kvs[j].k
		}
		return kvs[i].v < kvs[j].v
	})
	out := make([]string, 0, 2*len(kvs))
	for i, p := range kvs {
		if i > 0 && p == kvs[i-1] {
			continue
		}
		out = append(out, p.k, p.v)
	}
	return out, true
}

// query is a request's query, decoded on first need.
type query struct {
	raw    string
	parsed bool
	kvs    []string // k, v, k, v …
	buf    [16]string
}

func (q *query) has(k, v string) bool {
	if !q.parsed {
		q.parsed = true
		q.kvs = q.buf[:0]
		for part := range strings.SplitSeq(q.raw, "&") {
			if part == "" {
				continue
			}
			pk, pv, _ := strings.Cut(part, "=")
			dk, err1 := url.QueryUnescape(pk)
			dv, err2 := url.QueryUnescape(pv)
			if err1 != nil || err2 != nil {
				continue
			}
			q.kvs = append(q.kvs, dk, dv)
		}
	}
	for i := 0; i+1 < len(q.kvs); i += 2 {
		if q.kvs[i] == k && q.kvs[i+1] == v {
			return true
		}
	}
	return false
}

// matches reports whether the request's query carries every pair of r.
func (t *redirTable) matches(r *trow, q *query) bool {
	if r.npairs == 0 {
		return true
	}
	enc := t.arena[r.pairs : r.pairs+r.pairsLen]
	for len(enc) > 0 {
		i := indexZero(enc)
		k := string(enc[:i])
		enc = enc[i+1:]
		j := indexZero(enc)
		v := string(enc[:j])
		enc = enc[j+1:]
		if !q.has(k, v) {
			return false
		}
	}
	return true
}

func indexZero(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return len(b)
}

// lookup finds the row a request path (normalized, upper-case hex) with
// its query selects: index + 1, or 0.
func (t *redirTable) lookup(path string, q *query) uint32 {
	for s := t.head(path); s != 0; s = t.rows[s-1].next {
		if t.matches(&t.rows[s-1], q) {
			return s
		}
	}
	return 0
}
