package rules

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestRedirectTableLayouts checks that the serving layout finish builds
// answers every lookup as the build layout does: the same row (by line)
// for paths with and without rows, with query pairs in any order, chains
// of rows sharing a first pair, marker paths, 410s and absolute targets,
// and that a record's stored Location is the one the build layout spells.
func TestRedirectTableLayouts(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	paths := []string{"/", "/a", "/b/c", "/index.php", "/p%C3%A9", "/only-pairs", "/x.html"}
	keys := []string{"id", "lang", "utm", "p"}
	vals := []string{"1", "2", "de", "x y", ""}
	const origin = "https://notes.example"
	tb := &redirTable{origin: origin}
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
		pairs, ok := splitPairs(strings.Join(q, "&"))
		if !ok {
			t.Fatal(q)
		}
		var flags uint8
		to, status := fmt.Sprintf("/to/%d", line), 301
		switch rng.IntN(6) {
		case 0:
			flags, to, status = rowGone, "", 410
		case 1:
			flags, to = rowAbs, fmt.Sprintf("https://other.example/%d?x=1#f", line)
		case 2:
			to += "?from=table#top"
		}
		if len(pairs) > 0 {
			flags |= rowDrop
		}
		tb.add(path, pairs, to, status, flags, line) // a duplicate from is not added
	}
	type probe struct{ path, query string }
	var probes []probe
	for _, p := range append(paths, "/none", "/index.php/x") {
		probes = append(probes, probe{p, ""})
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
			q := query{raw: p.query}
			id := tb.lookup(p.path, &q)
			if id == 0 {
				out = append(out, answer{})
				continue
			}
			r := tb.row(id)
			loc := r.loc
			if tb.recs == nil && r.flags&rowGone == 0 {
				loc = splitLocal(r.to, r.flags&rowAbs != 0).url(origin)
			}
			out = append(out, answer{true, r.line, r.status, loc})
		}
		return out
	}
	before := look()
	tb.finish()
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
	// A path with only rows with query pairs is a marker: no row of its own.
	q := query{}
	if id := tb.lookup("/only-pairs", &q); id != 0 {
		t.Errorf("/only-pairs without a query: row %+v", tb.row(id))
	}
}

// TestRedirectTableEmpty: a table file with a header and no rows serves
// misses.
func TestRedirectTableEmpty(t *testing.T) {
	tb := &redirTable{origin: "https://notes.example"}
	tb.finish()
	for _, raw := range []string{"", "id=1"} {
		q := query{raw: raw}
		if id := tb.lookup("/", &q); id != 0 {
			t.Errorf("?%s: row %d of an empty table", raw, id)
		}
	}
}

// TestPlainBytes checks the request fast path: a path or query of plain
// bytes is what the escaping functions would return unchanged.
func TestPlainBytes(t *testing.T) {
	for c := range 256 {
		s := "/a" + string([]byte{byte(c)}) + "b"
		if plainPathBytes[c] && canonHex(EscapePath(s)) != s {
			t.Errorf("%#x is plain in a path, but escapes to %q", c, canonHex(EscapePath(s)))
		}
		if plainQueryBytes[c] && escapeQuery(s) != s {
			t.Errorf("%#x is plain in a query, but escapes to %q", c, escapeQuery(s))
		}
		if c == '%' && (plainPathBytes[c] || plainQueryBytes[c]) {
			t.Error("% is plain: an escape's hex would not be upper-cased")
		}
	}
	// RedirectInto with a plain request and one that needs escaping.
	cfg, err := redirConfig(t, "[[redirect_table]]\nfile = \"r.csv\"\n", map[string]string{"r.csv": "from,to\n/a%22b,/q\n/%C3%A9,/e\n/plain,/p\n"})
	if err != nil {
		t.Fatal(err)
	}
	for target, want := range map[string]string{
		`/a"b`:        "https://notes.example/q",
		"/a%22b":      "https://notes.example/q",
		"/\xc3\xa9":   "https://notes.example/e",
		"/%c3%a9":     "https://notes.example/e",
		"/plain":      "https://notes.example/p",
		"/plain?x=\"": "https://notes.example/p?x=%22",
	} {
		var rd Redirect
		ok, _ := cfg.RedirectInto(RedirectRequest{Method: "GET", Host: "notes.example", HTTPS: true, Target: target}, &rd)
		if !ok || rd.Location != want {
			t.Errorf("%q: %v %q, want %q", target, ok, rd.Location, want)
		}
	}
}
