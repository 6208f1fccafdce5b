package rules

import (
	"hash/maphash"
	"net/url"
	"sort"
	"strings"
	"unsafe"
)

// redirTable is one [[redirect_table]], compiled. It is built to hold a
// million rows in little memory and to answer a lookup in constant time:
// every string of every row lives in one byte arena; a row is a fixed-size
// record of offsets into it; an open-addressing hash of row numbers finds
// the first row of a key. No per-row allocation, no pointer the GC must
// scan.
//
// A row without a query is keyed by its path. A row with query pairs is
// keyed by its path and its first pair (in sorted order), "path \0 k \0 v":
// a request probes the key of each pair it carries, so a legacy table of
// 100,000 /index.php?id=N rows is 100,000 keys, not one long chain. Rows of
// one key are chained in the order they are tried: most pairs first, then
// file order.
type redirTable struct {
	file   string // the table's path, for file:line
	arena  []byte
	rows   []trow
	slots  []uint64 // fp << 32 | row index + 1 of the key's first row; 0 = empty
	seed   maphash.Seed
	heads  int  // keys in slots
	paired bool // some row has query pairs
	drop   bool
}

// trow is one row: 36 bytes.
type trow struct {
	key, keyLen     uint32 // path (normalized, upper-case hex), or path \0 k \0 v
	pairs, pairsLen uint32 // the from query's pairs, decoded and sorted: k \0 v \0 …
	to, toLen       uint32 // the target: absolute URL, or path?query#fragment on the origin
	next            uint32 // index + 1 of the next row of the same key; 0 = none
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

// str is a string of the arena, without a copy. Arena bytes are only ever
// appended, never changed, so the string stays valid (and keeps its
// backing array alive) even after the arena grows into a new one.
func (t *redirTable) str(off, n uint32) string {
	if n == 0 {
		return ""
	}
	return unsafe.String(&t.arena[off], int(n))
}

func (t *redirTable) keyOf(r *trow) []byte { return t.arena[r.key : r.key+r.keyLen] }

// path is a row's from path.
func (t *redirTable) path(r *trow) string {
	k := t.keyOf(r)
	if i := indexZero(k); i < len(k) {
		k = k[:i]
	}
	return string(k)
}

// slot packs a key's hash and its first row. The high 32 bits of the hash
// are its fingerprint and, masked, its home slot, so that a probe reads a
// row only when the fingerprints agree and growing rehashes nothing.
func slot(h uint64, n uint32) uint64 { return h&^0xffffffff | uint64(n) }

// head returns the index + 1 of the first row of key path, or 0.
func (t *redirTable) head(path string) uint32 {
	if len(t.slots) == 0 {
		return 0
	}
	h := maphash.String(t.seed, path)
	mask := uint64(len(t.slots) - 1)
	for i := (h >> 32) & mask; ; i = (i + 1) & mask {
		sl := t.slots[i]
		if sl == 0 {
			return 0
		}
		if sl>>32 == h>>32 && string(t.keyOf(&t.rows[uint32(sl)-1])) == path {
			return uint32(sl)
		}
	}
}

// head3 is head of the key path \0 k \0 v, without building it.
func (t *redirTable) head3(path, k, v string) uint32 {
	if len(t.slots) == 0 {
		return 0
	}
	var hh maphash.Hash
	hh.SetSeed(t.seed)
	hh.WriteString(path)
	hh.WriteByte(0)
	hh.WriteString(k)
	hh.WriteByte(0)
	hh.WriteString(v)
	h := hh.Sum64()
	mask := uint64(len(t.slots) - 1)
	n := len(path) + len(k) + len(v) + 2
	for i := (h >> 32) & mask; ; i = (i + 1) & mask {
		sl := t.slots[i]
		if sl == 0 {
			return 0
		}
		if sl>>32 != h>>32 {
			continue
		}
		key := t.keyOf(&t.rows[uint32(sl)-1])
		if len(key) == n && string(key[:len(path)]) == path && key[len(path)] == 0 &&
			string(key[len(path)+1:len(path)+1+len(k)]) == k && key[len(path)+1+len(k)] == 0 &&
			string(key[len(path)+2+len(k):]) == v {
			return uint32(sl)
		}
	}
}

// insertHead makes row n (index + 1) the first of its key, a new one.
func (t *redirTable) insertHead(n uint32) {
	if (t.heads+1)*2 > len(t.slots) {
		t.grow()
	}
	h := maphash.Bytes(t.seed, t.keyOf(&t.rows[n-1]))
	mask := uint64(len(t.slots) - 1)
	i := (h >> 32) & mask
	for t.slots[i] != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = slot(h, n)
	t.heads++
}

// replaceHead points the key's slot at row n instead of old.
func (t *redirTable) replaceHead(old, n uint32) {
	mask := uint64(len(t.slots) - 1)
	for i := (maphash.Bytes(t.seed, t.keyOf(&t.rows[n-1])) >> 32) & mask; ; i = (i + 1) & mask {
		if uint32(t.slots[i]) == old {
			t.slots[i] = t.slots[i]&^0xffffffff | uint64(n)
			return
		}
	}
}

// grow doubles the slots; the stored hashes place every key again.
func (t *redirTable) grow() {
	size := max(1024, 2*len(t.slots))
	old := t.slots
	t.slots = make([]uint64, size)
	mask := uint64(size - 1)
	for _, sl := range old {
		if sl == 0 {
			continue
		}
		i := (sl >> 32) & mask
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = sl
	}
}

// add appends a row whose from is already checked; pairs are sorted. It
// returns the line of an earlier row with the same from (path and pairs)
// and 0 when there is none; the row is then not added.
func (t *redirTable) add(path string, pairs []string, to string, status int, flags uint8, line int) int {
	if t.seed == (maphash.Seed{}) {
		t.seed = maphash.MakeSeed()
	}
	key := path
	if len(pairs) > 0 {
		key = path + "\x00" + pairs[0] + "\x00" + pairs[1]
		t.paired = true
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
		r.key, r.keyLen = t.rows[h-1].key, t.rows[h-1].keyLen // the key is stored once
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

// reserve sizes the arena and the rows for a file of size bytes, so that
// loading a large table does not copy them over and over as they grow:
// the arena holds little more than the file's from and to cells, and a
// row takes at least about 24 bytes of file.
func (t *redirTable) reserve(size int64) {
	if size <= 0 || size > maxRedirectTableBytes {
		return
	}
	t.arena = make([]byte, 0, size)
	t.rows = make([]trow, 0, size/24+16)
}

// finish trims the arena and the rows to their size when they hold much
// unused room.
func (t *redirTable) finish() {
	if cap(t.arena)-len(t.arena) > len(t.arena)/8 {
		t.arena = append([]byte(nil), t.arena...)
	}
	if cap(t.rows)-len(t.rows) > len(t.rows)/8 {
		t.rows = append([]trow(nil), t.rows...)
	}
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
	if q == "" {
		return nil, true
	}
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

// query is a request's query, decoded on first need. It holds no slice of
// its own array, so that it can live on the caller's stack.
type query struct {
	raw    string
	parsed bool
	n      int        // strings in buf and more: k, v, k, v …
	buf    [32]string // the first 16 pairs
	more   []string
}

func (q *query) kv(i int) string {
	if i < len(q.buf) {
		return q.buf[i]
	}
	return q.more[i-len(q.buf)]
}

func (q *query) push(s string) {
	if q.n < len(q.buf) {
		q.buf[q.n] = s
	} else {
		q.more = append(q.more, s)
	}
	q.n++
}

func (q *query) parse() {
	if q.parsed {
		return
	}
	q.parsed = true
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
		q.push(dk)
		q.push(dv)
	}
}

func (q *query) has(k, v string) bool {
	q.parse()
	for i := 0; i+1 < q.n; i += 2 {
		if q.kv(i) == k && q.kv(i+1) == v {
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

// maxProbes bounds the query pairs of one request that are looked up: a
// request with thousands of pairs costs no more than this many probes.
const maxProbes = 64

// lookup finds the row a request path (normalized, upper-case hex) with
// its query selects: the row with the most pairs that the query carries
// all of (then the first in the file), else the path's row without a
// query. It returns index + 1, or 0.
func (t *redirTable) lookup(path string, q *query) uint32 {
	best := uint32(0)
	if t.paired && q.raw != "" {
		q.parse()
		for i := 0; i+1 < q.n && i < 2*maxProbes; i += 2 {
			for s := t.head3(path, q.kv(i), q.kv(i+1)); s != 0; s = t.rows[s-1].next {
				r := &t.rows[s-1]
				if !t.matches(r, q) {
					continue
				}
				if b := &t.rows[max(best, 1)-1]; best == 0 || r.npairs > b.npairs || r.npairs == b.npairs && r.line < b.line {
					best = s
				}
				break // the chain is in try order: the first match is its best
			}
		}
		if best != 0 {
			return best
		}
	}
	return t.head(path)
}
