package watch

import (
	"strconv"
	"sync"

	"github.com/headgate/headgate/rewrite"
)

// A page's entry keeps its signals as hashes; an event's before of a
// canonical, JSON-LD types or hreflang is their text all the same (SPEC
// §24: only a title or description may show as a hash). Two ways:
//
//   - A canonical that names the page itself (most do) is kept as a
//     value of its own, selfAbsolute (base, path and query) or
//     selfRelative (path and query), which reads back as the page's URL:
//     nothing stored.
//   - Other canonicals, JSON-LD type sets (a site has few) and hreflang
//     sets go into names, one table per Watcher, when a response shows
//     them at a baseline or a confirmed change: at most namesMax values,
//     the oldest dropped first.
//
// A before shows as a hash only when its text is gone from names (over
// namesMax other values came since) or never was there (longer than
// rewrite.FactTextMax, of which the response keeps the hash alone).

// The canonical values of a page that names itself.
const (
	selfAbsolute uint64 = 1<<64 - 2
	selfRelative uint64 = 1<<64 - 3
)

// canonicalValue is the value of a canonical f on the page at base, path
// and query: selfAbsolute or selfRelative when it names the page, else
// its hash. No allocation.
func canonicalValue(f *rewrite.Fact, base, path, query string) uint64 {
	t := f.TextBytes()
	n := len(path)
	if query != "" {
		n += 1 + len(query)
	}
	switch len(t) {
	case n:
		if isURL(t, path, query) {
			return selfRelative
		}
	case len(base) + n:
		if base != "" && string(t[:len(base)]) == base && isURL(t[len(base):], path, query) {
			return selfAbsolute
		}
	}
	return f.Hash
}

// isURL reports whether t is path, then "?" and query when there is one
// (t's length checked by the caller).
func isURL(t []byte, path, query string) bool {
	if string(t[:len(path)]) != path {
		return false
	}
	return query == "" || t[len(path)] == '?' && string(t[len(path)+1:]) == query
}

// pageURL is the page an event is of: base, then key (path and query).
type pageURL struct{ base, key string }

// namesMax bounds names: with values up to rewrite.FactTextMax (80 B) and
// a map's share, under 160 B each, ≤ 640 KiB a Watcher.
const namesMax = 4096

// nameKey is a value of a signal.
type nameKey struct {
	s Signal
	v uint64
}

// names is the shared table of the texts of hashed values (see above).
type names struct {
	mu   sync.Mutex
	m    map[nameKey]string
	fifo [namesMax]nameKey // the order they came in; next is the oldest once full
	next int
}

// named are the signals whose values names keeps.
var named = [...]Signal{Canonical, JSONLDTypes, Hreflang}

// remember keeps the texts of v's values that head carries, for the
// events' befores of later changes. It allocates only for a value new to
// the table.
func (n *names) remember(v *values, head *rewrite.HeadFacts) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, s := range named {
		k := nameKey{s, v[s]}
		if k.v == 0 || k.v == selfAbsolute || k.v == selfRelative {
			continue
		}
		if _, ok := n.m[k]; ok {
			continue
		}
		t := text(s, k.v, head, pageURL{})
		if t == hashText(k.v) {
			continue // no text to keep: too long
		}
		if n.m == nil {
			n.m = make(map[nameKey]string)
		}
		if len(n.m) >= namesMax {
			delete(n.m, n.fifo[n.next])
		}
		n.m[k] = t
		n.fifo[n.next] = k
		n.next = (n.next + 1) % namesMax
	}
}

// lookup returns the text remembered for s's value v.
func (n *names) lookup(s Signal, v uint64) (string, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	t, ok := n.m[nameKey{s, v}]
	return t, ok
}

func alternates(n uint16) string { return " (" + strconv.Itoa(int(n)) + " alternates)" }
