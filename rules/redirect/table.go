package redirect

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"net/url"
	"slices"
	"sort"
	"strings"
	"unsafe"
)

// Table is one [[redirect_table]], compiled. It is built to hold a
// million rows in little memory and to answer a lookup in constant time
// with as few cache misses as can be: a table is far larger than the
// processor's caches, and a lookup is dominated by the memory it touches.
//
// While the file is read (and chains are collapsed) a row is a fixed-size
// record (trow) of offsets into a byte arena, and an open-addressing hash
// of row numbers finds the first row of a key. finish then lays the table
// out for serving (the build structures are dropped):
//
//   - recs: every row as one record, its fixed header followed by its key,
//     its query pairs and its target, the target spelled as the whole
//     Location (origin included), so that a hit reads one place and an
//     answer is that string, neither built nor escaped per request;
//   - idx: the build slots, each key's row number replaced by its record's
//     offset: fingerprint << 32 | offset, at most half full.
//
// A miss reads one cache line of idx (nearly always), a hit that line and
// its record: two dependent reads from memory, where the build layout
// took three (slot, row, arena). No per-row allocation, no pointer the GC must scan.
//
// A row without a query is keyed by its path. A row with query pairs is
// keyed by its path and its first pair (in sorted order), "path \0 k \0 v":
// a request probes the key of each pair it carries, so a legacy table of
// 100,000 /index.php?id=N rows is 100,000 keys, not one long chain. Rows of
// one key are chained in the order they are tried: most pairs first, then
// file order. The path of such keys carries rowPairedPath (on its own row,
// or on a marker record when it has none), so that a request's query is
// decoded and probed only on a path some row with a query names: every
// other request costs one probe.
//
// A row is named by an id: its index + 1 while building, its record's
// offset in recs once served (0 is neither).
type Table struct {
	File   string // the table's path, for file:line
	Origin string // site.base_url's origin: the start of a local target's Location
	seed   maphash.Seed
	Drop   bool // the table's drop_query: no row's Location keeps the request's query

	// Building.
	arena  []byte
	rows   []trow
	slots  []uint64 // fp << 32 | row index + 1 of the key's first row; 0 = empty
	heads  int      // keys in slots
	paired bool     // some row has query pairs

	// The keys of the rows' first query pairs: a request's pair of another
	// key is no key of the table, and is not probed.
	firstKeys firstKeys

	// Serving (after finish).
	recs []byte
	idx  []uint64 // fp << 32 | record offset; 0 = empty
}

// MaxFileBytes bounds one redirect table's file: a million rows of long
// URLs fit well within it; a file past it is refused whole (HG180), not cut.
const MaxFileBytes = 256 << 20

// Len is the number of rows added so far (before Finish).
func (t *Table) Len() int { return len(t.rows) }

// FromPath is the from path of row id (before Finish), without its query.
func (t *Table) FromPath(id uint32) string { return t.path(&t.rows[id-1]) }

// SetTarget gives row id (before Finish) its final target, once chains
// are collapsed: to is an absolute URL when abs, else a local target; a
// gone row answers 410 and keeps no target.
func (t *Table) SetTarget(id uint32, to string, abs, gone bool) {
	r := &t.rows[id-1]
	if gone {
		r.flags |= RowGone
		return
	}
	r.flags &^= RowAbs
	if abs {
		r.flags |= RowAbs
	}
	if to != t.str(r.to, r.toLen) {
		r.to, r.toLen = t.push(to)
	}
}

// trow is one row while building: 36 bytes.
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
	RowAbs        = 1 << iota // to is an absolute URL off the site's origin
	RowGone                   // 410: no target
	RowDrop                   // the request's query is not appended
	rowPairedPath             // the key is a path that rows with query pairs share
	rowMarker                 // not a row: the rowPairedPath of a path without one
	RowBarePath               // to is a path on the origin, without query or fragment
)

// A record in recs: next u32 (the offset of the key's next row; 0 none),
// line u32, key, pairs and location lengths u32, status u16, npairs u8,
// flags u8; then the key, pairs and location bytes.
const recHeader = 24

// firstKeys is the set of the keys of a table's rows' first query pairs.
type firstKeys struct {
	list []string
	set  map[string]struct{}
	all  bool // too many to keep: every key may be one
}

// Row is one row as lookup and follow read it, from either layout.
type Row struct {
	Key, Pairs string
	To         string // the target as stored while building: absolute, or local
	Loc        string // the whole Location ("" while building, and for a 410)
	Next, Line uint32
	Status     uint16
	NPairs     uint8
	Flags      uint8
}

// row reads row id.
func (t *Table) Row(id uint32) Row {
	if t.recs == nil {
		r := &t.rows[id-1]
		return Row{Key: t.str(r.key, r.keyLen), Pairs: t.str(r.pairs, r.pairsLen), To: t.str(r.to, r.toLen),
			Next: r.next, Line: r.line, Status: r.status, NPairs: r.npairs, Flags: r.flags}
	}
	h := t.recs[id : id+recHeader]
	kl, pl, tl := binary.LittleEndian.Uint32(h[8:]), binary.LittleEndian.Uint32(h[12:]), binary.LittleEndian.Uint32(h[16:])
	v := Row{Next: binary.LittleEndian.Uint32(h[0:]), Line: binary.LittleEndian.Uint32(h[4:]),
		Status: binary.LittleEndian.Uint16(h[20:]), NPairs: h[22], Flags: h[23]}
	o := id + recHeader
	v.Key = recStr(t.recs, o, kl)
	v.Pairs = recStr(t.recs, o+kl, pl)
	v.Loc = recStr(t.recs, o+kl+pl, tl)
	v.To = v.Loc
	if v.Flags&RowAbs == 0 && len(v.Loc) >= len(t.Origin) {
		v.To = v.Loc[len(t.Origin):]
	}
	return v
}

// recKey is the key of the record at off.
func (t *Table) recKey(off uint32) string {
	return recStr(t.recs, off+recHeader, binary.LittleEndian.Uint32(t.recs[off+8:]))
}

func recStr(b []byte, off, n uint32) string {
	if n == 0 {
		return ""
	}
	return unsafe.String(&b[off], int(n))
}

// str is a string of the arena, without a copy. Arena bytes are only ever
// appended, never changed, so the string stays valid (and keeps its
// backing array alive) even after the arena grows into a new one.
func (t *Table) str(off, n uint32) string {
	if n == 0 {
		return ""
	}
	return unsafe.String(&t.arena[off], int(n))
}

func (t *Table) keyOf(r *trow) []byte { return t.arena[r.key : r.key+r.keyLen] }

// path is a row's from path.
func (t *Table) path(r *trow) string {
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

// head returns the id of the first row of key path, or 0.
func (t *Table) head(path string) uint32 {
	if t.recs != nil {
		h := maphash.String(t.seed, path)
		mask := uint64(len(t.idx) - 1)
		for i := (h >> 32) & mask; ; i = (i + 1) & mask {
			e := t.idx[i]
			if e == 0 {
				return 0
			}
			if e>>32 == h>>32 && t.recKey(uint32(e)) == path {
				return uint32(e)
			}
		}
	}
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
func (t *Table) head3(path, k, v string) uint32 {
	if len(t.slots) == 0 && t.recs == nil {
		return 0
	}
	h := t.hash3(path, k, v)
	if t.recs != nil {
		return t.probe3(h, path, k, v)
	}
	n := len(path) + len(k) + len(v) + 2
	mask := uint64(len(t.slots) - 1)
	for i := (h >> 32) & mask; ; i = (i + 1) & mask {
		sl := t.slots[i]
		if sl == 0 {
			return 0
		}
		if sl>>32 != h>>32 {
			continue
		}
		if key := t.keyOf(&t.rows[uint32(sl)-1]); len(key) == n && isKey3(unsafe.String(&key[0], len(key)), path, k, v) {
			return uint32(sl)
		}
	}
}

// probe3 finds the record of key path \0 k \0 v, of hash h.
func (t *Table) probe3(h uint64, path, k, v string) uint32 {
	mask := uint64(len(t.idx) - 1)
	for i := (h >> 32) & mask; ; i = (i + 1) & mask {
		e := t.idx[i]
		if e == 0 {
			return 0
		}
		if e>>32 == h>>32 && isKey3(t.recKey(uint32(e)), path, k, v) {
			return uint32(e)
		}
	}
}

// hash3 is the hash of the key path \0 k \0 v: as maphash.Bytes of it.
func (t *Table) hash3(path, k, v string) uint64 {
	var buf [192]byte
	if n := len(path) + len(k) + len(v) + 2; n <= len(buf) {
		b := append(buf[:0], path...)
		b = append(b, 0)
		b = append(b, k...)
		b = append(b, 0)
		b = append(b, v...)
		return maphash.Bytes(t.seed, b)
	}
	var hh maphash.Hash
	hh.SetSeed(t.seed)
	hh.WriteString(path)
	hh.WriteByte(0)
	hh.WriteString(k)
	hh.WriteByte(0)
	hh.WriteString(v)
	return hh.Sum64()
}

// isKey3 reports whether key is path \0 k \0 v.
func isKey3(key, path, k, v string) bool {
	return len(key) == len(path)+len(k)+len(v)+2 && key[:len(path)] == path && key[len(path)] == 0 &&
		key[len(path)+1:len(path)+1+len(k)] == k && key[len(path)+1+len(k)] == 0 &&
		key[len(path)+2+len(k):] == v
}

// insertHead makes row n (index + 1) the first of its key, a new one.
func (t *Table) insertHead(n uint32) {
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
func (t *Table) replaceHead(old, n uint32) {
	mask := uint64(len(t.slots) - 1)
	for i := (maphash.Bytes(t.seed, t.keyOf(&t.rows[n-1])) >> 32) & mask; ; i = (i + 1) & mask {
		if uint32(t.slots[i]) == old {
			t.slots[i] = t.slots[i]&^0xffffffff | uint64(n)
			return
		}
	}
}

// grow doubles the slots; the stored hashes place every key again.
func (t *Table) grow() {
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
func (t *Table) Add(path string, pairs []string, to string, status int, flags uint8, line int) int {
	if t.seed == (maphash.Seed{}) {
		t.seed = maphash.MakeSeed()
	}
	key := path
	if len(pairs) > 0 {
		key = path + "\x00" + pairs[0] + "\x00" + pairs[1]
		t.paired = true
		t.noteFirstKey(pairs[0])
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

func (t *Table) push(s string) (uint32, uint32) {
	off := uint32(len(t.arena))
	t.arena = append(t.arena, s...)
	return off, uint32(len(s))
}

// reserve sizes the arena and the rows for a file of size bytes, so that
// loading a large table does not copy them over and over as they grow:
// the arena holds little more than the file's from and to cells, and a
// row takes at least about 24 bytes of file.
func (t *Table) Reserve(size int64) {
	if size <= 0 || size > MaxFileBytes {
		return
	}
	t.arena = make([]byte, 0, size)
	t.rows = make([]trow, 0, size/24+16)
}

// finish lays the table out for serving (see Table) once its rows
// are final, chains collapsed, and drops the build structures.
func (t *Table) Finish() {
	if t.recs != nil {
		return
	}
	if t.seed == (maphash.Seed{}) {
		t.seed = maphash.MakeSeed() // a table without rows: probes still hash
	}
	t.markPairedPaths()
	// The records, in file order: reading the rows and the arena from
	// start to end, and writing recs so, costs no cache miss per row.
	offs := make([]uint32, len(t.rows)) // the record of each row
	size := int64(1)                    // offset 0 names no record
	for i := range t.rows {
		r := &t.rows[i]
		offs[i] = uint32(size)
		size += int64(recHeader + int(r.keyLen) + int(r.pairsLen) + t.locLen(r))
	}
	if size > min(math.MaxUint32, math.MaxInt) {
		// Past what a record offset names (a very long base_url on
		// millions of rows), or what an int holds on a 32-bit platform:
		// the build layout serves, slower but right. (size is an int64
		// so that it does not wrap there first.)
		t.arena = slices.Clip(t.arena)
		t.rows = slices.Clip(t.rows)
		return
	}
	recs := make([]byte, 1, int(size))
	for i := range t.rows {
		r := &t.rows[i]
		next := uint32(0)
		if r.next != 0 {
			next = offs[r.next-1]
		}
		fl := r.flags
		if fl&(RowAbs|RowGone|rowMarker) == 0 && strings.IndexAny(t.str(r.to, r.toLen), "?#") < 0 {
			fl |= RowBarePath
		}
		recs = binary.LittleEndian.AppendUint32(recs, next)
		recs = binary.LittleEndian.AppendUint32(recs, r.line)
		recs = binary.LittleEndian.AppendUint32(recs, r.keyLen)
		recs = binary.LittleEndian.AppendUint32(recs, r.pairsLen)
		recs = binary.LittleEndian.AppendUint32(recs, uint32(t.locLen(r)))
		recs = binary.LittleEndian.AppendUint16(recs, r.status)
		recs = append(recs, r.npairs, fl)
		recs = append(recs, t.keyOf(r)...)
		recs = append(recs, t.arena[r.pairs:r.pairs+r.pairsLen]...)
		if t.locLen(r) > 0 {
			if r.flags&RowAbs == 0 {
				recs = append(recs, t.Origin...)
			}
			recs = append(recs, t.arena[r.to:r.to+r.toLen]...)
		}
	}
	// The index is the build slots, each key's row number replaced by its
	// record's offset: same hash, same place, nothing rehashed.
	idx := t.slots
	if len(idx) == 0 {
		idx = make([]uint64, 8)
	}
	for i, sl := range idx {
		if sl != 0 {
			idx[i] = sl&^0xffffffff | uint64(offs[uint32(sl)-1])
		}
	}
	t.recs, t.idx = recs, idx
	t.arena, t.rows, t.slots = nil, nil, nil
}

// locLen is the length of a row's whole Location, as the record stores
// it: 0 for a 410 (and a marker), else the absolute URL, or the origin and
// the local target.
func (t *Table) locLen(r *trow) int {
	switch {
	case r.flags&(RowGone|rowMarker) != 0:
		return 0
	case r.flags&RowAbs != 0:
		return int(r.toLen)
	}
	return len(t.Origin) + int(r.toLen)
}

// markPairedPaths sets rowPairedPath on the key of every path that rows
// with query pairs share, adding a marker row for a path that has no row
// of its own.
func (t *Table) markPairedPaths() {
	if !t.paired {
		return
	}
	var heads []uint32
	for _, sl := range t.slots {
		if sl != 0 && t.rows[uint32(sl)-1].npairs > 0 {
			heads = append(heads, uint32(sl))
		}
	}
	for _, n := range heads {
		key := t.keyOf(&t.rows[n-1])
		plen := uint32(indexZero(key))
		if h := t.head(string(key[:plen])); h != 0 {
			t.rows[h-1].flags |= rowPairedPath
			continue
		}
		// The marker's key is the start of the paired key's bytes.
		t.rows = append(t.rows, trow{key: t.rows[n-1].key, keyLen: plen, flags: rowMarker | rowPairedPath})
		t.insertHead(uint32(len(t.rows)))
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
func SplitPairs(q string) ([]string, bool) {
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
