package redirect

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// TestRedirectTableLayouts checks that the serving layout finish builds
// answers every lookup as the build layout does: the same row (by line)
// for paths with and without rows, with query pairs in any order, chains
// of rows sharing a first pair, paths only rows with pairs name, 410s and
// absolute targets, and that a record's stored Location is the one the
// build layout spells.
func TestRedirectTableLayouts(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	paths := []string{"/", "/a", "/b/c", "/index.php", "/p%C3%A9", "/only-pairs", "/x.html"}
	keys := []string{"id", "lang", "utm", "p"}
	vals := []string{"1", "2", "de", "x y", ""}
	const origin = "https://notes.example"
	tb := &Table{Origin: origin}
	line := 1
	for range 400 {
		line++
		path := paths[rng.IntN(len(paths))]
		var q []string
		if path == "/only-pairs" || rng.IntN(3) > 0 {
			for range 1 + rng.IntN(3) {
				q = append(q, keys[rng.IntN(len(keys))]+"="+vals[rng.IntN(len(vals))])
			}
		}
		pairs, ok := SplitPairs(strings.Join(q, "&"))
		if !ok {
			t.Fatal(q)
		}
		var flags uint8
		to, status := fmt.Sprintf("/to/%d", line), 301
		switch rng.IntN(6) {
		case 0:
			flags, to, status = RowGone, "", 410
		case 1:
			flags, to = RowAbs, fmt.Sprintf("https://other.example/%d?x=1#f", line)
		case 2:
			to += "?from=table#top"
		}
		if len(pairs) > 0 {
			flags |= RowDrop
		}
		tb.Add(path, pairs, to, status, flags, line) // a duplicate from is not added
	}
	type probe struct{ path, query string }
	var probes []probe
	for _, p := range append(paths, "/none", "/index.php/x") {
		// A query that holds no pair, and one whose pairs no row names.
		probes = append(probes, probe{p, ""}, probe{p, "&"}, probe{p, "&&=&"}, probe{p, "zz=1"})
		for range 30 {
			var q []string
			for range rng.IntN(5) {
				q = append(q, keys[rng.IntN(len(keys))]+"="+strings.ReplaceAll(vals[rng.IntN(len(vals))], " ", "+"))
			}
			probes = append(probes, probe{p, strings.Join(q, "&")})
		}
	}
	type answer struct {
		found  bool
		line   uint32
		status uint16
		loc    string
	}
	look := func() []answer {
		var out []answer
		for _, p := range probes {
			q := Query{Raw: p.query}
			id := tb.Lookup(p.path, &q)
			if id == 0 {
				out = append(out, answer{})
				continue
			}
			r := tb.Row(id)
			loc := r.Loc
			if tb.recs == nil && r.Flags&RowGone == 0 {
				loc = r.To // the Location a local target makes: the origin, then the target
				if r.Flags&RowAbs == 0 {
					loc = origin + r.To
				}
			}
			out = append(out, answer{true, r.Line, r.Status, loc})
		}
		return out
	}
	before := look()
	tb.Finish()
	if tb.recs == nil {
		t.Fatal("finish did not lay the table out")
	}
	after := look()
	hits := 0
	for i, p := range probes {
		if before[i] != after[i] {
			t.Errorf("%s?%s: build layout %+v, serving layout %+v", p.path, p.query, before[i], after[i])
		}
		if before[i].found {
			hits++
		}
	}
	if hits < len(probes)/4 {
		t.Errorf("only %d of %d probes hit a row: the test does not test much", hits, len(probes))
	}
	// A path that only rows with query pairs name has no row of its own.
	q := Query{}
	if id := tb.Lookup("/only-pairs", &q); id != 0 {
		t.Errorf("/only-pairs without a query: row %+v", tb.Row(id))
	}
}

// TestRedirectTableEmpty: a table file with a header and no rows serves
// misses.
func TestRedirectTableEmpty(t *testing.T) {
	tb := &Table{Origin: "https://notes.example"}
	tb.Finish()
	for _, raw := range []string{"", "id=1"} {
		q := Query{Raw: raw}
		if id := tb.Lookup("/", &q); id != 0 {
			t.Errorf("?%s: row %d of an empty table", raw, id)
		}
	}
}

// TestRedirectTableFirstKeys: a request's pair is probed only when its key
// is some row's first pair key; past maxFirstKeys such keys, every pair is
// probed. Either way every row is found, and a pair of another key with a
// row's path still finds the path's own row.
func TestRedirectTableFirstKeys(t *testing.T) {
	for _, keys := range []int{3, maxFirstKeyList + 1, maxFirstKeys + 5} {
		tb := &Table{Origin: "https://notes.example"}
		tb.Add("/p", nil, "/own", 301, 0, 1)
		for i := range keys {
			pairs, _ := SplitPairs(fmt.Sprintf("k%d=v&zz=1", i))
			tb.Add("/p", pairs, fmt.Sprintf("/to/%d", i), 301, 0, i+2)
		}
		tb.Finish()
		fk := tb.firstKeys
		if all := keys > maxFirstKeys; fk.all != all || !all && len(fk.list)+len(fk.set) != keys || (fk.set != nil) != (keys > maxFirstKeyList && !all) {
			t.Fatalf("%d keys: all %v, a list of %d, a set of %d", keys, fk.all, len(fk.list), len(fk.set))
		}
		for i := range keys {
			q := Query{Raw: fmt.Sprintf("a=b&zz=1&k%d=v", i)}
			if r := tb.Row(tb.Lookup("/p", &q)); r.Line != uint32(i+2) {
				t.Fatalf("%d keys, ?%s: line %d", keys, q.Raw, r.Line)
			}
		}
		// The pair that matches, after more pairs of other keys than a
		// uint16 counts. (Past maxFirstKeys every pair is a candidate, and
		// only the first maxProbes are probed: a bound on the work.)
		if q := (Query{Raw: strings.Repeat("a=b&", 70000) + "k1=v&zz=1"}); keys <= maxFirstKeys && tb.Row(tb.Lookup("/p", &q)).Line != 3 {
			t.Errorf("%d keys: the pair after 70,000 others is not found", keys)
		}
		for _, raw := range []string{"a=b", "zz=1", "k0=w"} {
			q := Query{Raw: raw}
			if r := tb.Row(tb.Lookup("/p", &q)); r.Line != 1 {
				t.Errorf("%d keys, ?%s: line %d, want the path's own row", keys, raw, r.Line)
			}
		}
	}
}

// TestQueryParse checks query.parse's one pass against the plain reading
// of a query: split at '&', skip empty parts, cut at the first '=', and
// decode both sides unless the part holds no '%' and no '+' (a pair that
// does not decode is left out).
func TestQueryParse(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const alphabet = "ab=&%2F+%zz"
	raws := []string{"", "&", "=", "a", "a=", "=b", "a=b=c", "a&&b", "id=1&id=2", "%41=%42", "a+b=c+d", "%zz=1&b=2"}
	for range 20000 {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		raws = append(raws, string(b))
	}
	for range 50 { // more pairs than query.buf holds
		raws = append(raws, strings.Repeat("k=v&", 10+rng.IntN(30)))
	}
	for _, raw := range raws {
		checkQueryParse(t, raw)
	}
}

// checkQueryParse fails t when query.parse reads raw otherwise than
// plainQueryReading.
func checkQueryParse(t *testing.T, raw string) {
	t.Helper()
	q := Query{Raw: raw}
	q.parse()
	var got []string
	for i := range q.n {
		got = append(got, q.kv(i))
	}
	if w := plainQueryReading(raw); !slices.Equal(got, w) {
		t.Fatalf("%q: parsed %q, want %q", raw, got, w)
	}
}

// plainQueryReading is a query's pairs as the plain reading gives them.
func plainQueryReading(raw string) []string {
	var out []string
	for _, part := range strings.Split(raw, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		if strings.ContainsAny(part, "%+") {
			var err1, err2 error
			k, err1 = url.QueryUnescape(k)
			v, err2 = url.QueryUnescape(v)
			if err1 != nil || err2 != nil {
				continue
			}
		}
		out = append(out, k, v)
	}
	return out
}

// FuzzQueryParse holds query.parse to the plain reading on any bytes.
func FuzzQueryParse(f *testing.F) {
	for _, s := range []string{"", "&", "a=b&c=d", "%zz=1&b=%41", "a+b=c%2B", "k=v&" + strings.Repeat("x=1&", 40)} {
		f.Add(s)
	}
	f.Fuzz(checkQueryParse)
}
