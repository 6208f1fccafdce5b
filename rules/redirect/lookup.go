package redirect

import (
	"net/url"
	"runtime"
	"strings"
)

// Query is a request's query, decoded on first need. It holds no slice of
// its own array, so that it can live on the caller's stack.
type Query struct {
	Raw    string // the query as it came, without "?"
	parsed bool
	n      int        // strings in buf and more: k, v, k, v …
	buf    [16]string // the first 8 pairs (a request's query rarely has more)
	more   []string
}

// stopBytes marks the bytes Query.parse stops at, & = % +: a constant
// table, one load per byte as the [256]bool it replaces (comparisons
// measured slower on hot queries), and no package state.
const stopBytes = "" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x01\x01\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"

func (q *Query) kv(i int) string {
	if i < len(q.buf) {
		return q.buf[i]
	}
	return q.more[i-len(q.buf)]
}

func (q *Query) push(s string) {
	if q.n < len(q.buf) {
		q.buf[q.n] = s
	} else {
		q.more = append(q.more, s)
	}
	q.n++
}

func (q *Query) parse() {
	if q.parsed {
		return
	}
	q.parsed = true
	// One pass over the bytes: a request's query is short, and a loop
	// costs less than a call to find each '&' and '='.
	s := q.Raw
	start, eq, plain := 0, -1, true
	for i := 0; i <= len(s); i++ {
		if i < len(s) {
			c := s[i]
			if stopBytes[c] == 0 {
				continue
			}
			switch c {
			case '=':
				if eq < 0 {
					eq = i
				}
				continue
			case '%', '+':
				plain = false
				continue
			}
		}
		if i > start {
			pk, pv := s[start:i], ""
			if eq >= 0 {
				pk, pv = s[start:eq], s[eq+1:i]
			}
			ok := true
			if !plain {
				var err1, err2 error
				pk, err1 = url.QueryUnescape(pk)
				pv, err2 = url.QueryUnescape(pv)
				ok = err1 == nil && err2 == nil
			}
			if ok {
				q.push(pk)
				q.push(pv)
			}
		}
		start, eq, plain = i+1, -1, true
	}
}

func (q *Query) has(k, v string) bool {
	q.parse()
	for i := 0; i+1 < q.n; i += 2 {
		if q.kv(i) == k && q.kv(i+1) == v {
			return true
		}
	}
	return false
}

// matches reports whether the request's query carries every pair of r
// but its first: the pair of r's key, which the query carries (it was
// found by probing that pair).
func matches(r *Row, q *Query) bool {
	if r.NPairs <= 1 {
		return true
	}
	enc := r.Pairs
	enc = enc[strings.IndexByte(enc, 0)+1:]
	enc = enc[strings.IndexByte(enc, 0)+1:]
	for len(enc) > 0 {
		i := strings.IndexByte(enc, 0)
		k := enc[:i]
		enc = enc[i+1:]
		j := strings.IndexByte(enc, 0)
		v := enc[:j]
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
// query. It returns the row's id, or 0.
func (t *Table) Lookup(path string, q *Query) uint32 {
	if t.recs != nil {
		return t.serve(path, q)
	}
	if t.paired && q.Raw != "" {
		q.parse()
		best := rowPick{}
		for i := 0; i+1 < q.n && i < 2*maxProbes; i += 2 {
			best.chain(t, t.head3(path, q.kv(i), q.kv(i+1)), q)
		}
		if best.id != 0 {
			return best.id
		}
	}
	return t.head(path)
}

// serve is lookup once the table is laid out for serving. The path's key
// says whether any row with query pairs shares the path; only then is the
// query decoded, and the keys of those of its pairs that can be keys (see
// firstKeys) hashed, their home slots read, and then the records their
// fingerprints name, each round side by side before any key is compared,
// so that the lookup waits for memory twice however many pairs it probes.
func (t *Table) serve(path string, q *Query) uint32 {
	p := t.head(path)
	if p == 0 {
		return 0
	}
	if fl := t.recs[p+23]; fl&rowPairedPath == 0 || q.Raw == "" {
		if fl&rowMarker != 0 {
			return 0
		}
		return p
	}
	q.parse()
	var cand [maxProbes]uint32 // the pairs worth a probe
	nc := 0
	for j := 0; j < q.n/2 && nc < maxProbes; j++ {
		if t.firstKeys.all || t.isFirstKey(q.kv(2*j)) {
			cand[nc] = uint32(j)
			nc++
		}
	}
	mask := uint64(len(t.idx) - 1)
	best := rowPick{}
	const batch = 8
	var hs, home [batch]uint64
	for j0 := 0; j0 < nc; j0 += batch {
		nb := min(batch, nc-j0)
		for j := range nb {
			c := int(cand[j0+j])
			hs[j] = t.hash3(path, q.kv(2*c), q.kv(2*c+1))
		}
		// Every hash first, then every read: a read waits for memory,
		// and the processor starts the next one meanwhile only if the
		// work between them is short.
		for j := range nb {
			home[j] = t.idx[(hs[j]>>32)&mask]
		}
		var touch byte
		for j := range nb {
			if e := home[j]; e != 0 && e>>32 == hs[j]>>32 {
				touch |= t.recs[uint32(e)]
			}
		}
		runtime.KeepAlive(touch)
		for j := range nb {
			if home[j] != 0 { // an empty home slot: no such key
				c := int(cand[j0+j])
				best.chain(t, t.probe3(hs[j], path, q.kv(2*c), q.kv(2*c+1)), q)
			}
		}
	}
	if best.id != 0 {
		return best.id
	}
	if t.recs[p+23]&rowMarker != 0 {
		return 0
	}
	return p
}

// isFirstKey reports whether some row's first query pair has key k.
func (t *Table) isFirstKey(k string) bool {
	if t.firstKeys.set != nil {
		_, ok := t.firstKeys.set[k]
		return ok
	}
	for _, f := range t.firstKeys.list {
		if f == k {
			return true
		}
	}
	return false
}

// The set of first pair keys is a list while it is short (a legacy table
// has one or a few: id, p, page_id), a map past that, and nothing at all
// (every pair probed) past maxFirstKeys.
const (
	maxFirstKeyList = 8
	maxFirstKeys    = 1024
)

// noteFirstKey adds a row's first pair key to the set.
func (t *Table) noteFirstKey(k string) {
	fk := &t.firstKeys
	if fk.all || t.isFirstKey(k) {
		return
	}
	k = strings.Clone(k)
	switch n := len(fk.list) + len(fk.set); {
	case n == maxFirstKeys:
		*fk = firstKeys{all: true}
	case fk.set != nil:
		fk.set[k] = struct{}{}
	case n < maxFirstKeyList:
		fk.list = append(fk.list, k)
	default:
		fk.set = make(map[string]struct{}, 2*maxFirstKeyList)
		for _, f := range fk.list {
			fk.set[f] = struct{}{}
		}
		fk.set[k] = struct{}{}
		fk.list = nil
	}
}

// rowPick is the best row among those whose pairs a query carries: the most
// pairs, then the first in the file.
type rowPick struct {
	id    uint32
	pairs uint8
	line  uint32
}

// chain considers the first row of the chain from id, a key the query
// carries the pair of, that the query matches: the chain is in try order,
// so it is the chain's best.
func (b *rowPick) chain(t *Table, id uint32, q *Query) {
	for id != 0 {
		r := t.Row(id)
		if !matches(&r, q) {
			id = r.Next
			continue
		}
		if b.id == 0 || r.NPairs > b.pairs || r.NPairs == b.pairs && r.Line < b.line {
			*b = rowPick{id, r.NPairs, r.Line}
		}
		return
	}
}
