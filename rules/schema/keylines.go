package schema

import (
	"sort"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// KeyLines maps every key path of a TOML document to the line where the key
// stands. BurntSushi/toml, which decodes the values, keeps key positions
// private, and headgate names the line of every problem, so go-toml's
// parser reads the document once more for its keys (docs/dependencies.md
// says why this parser and not a scanner of our own). It never fails: a
// document the parser stops on is one toml.Decode already rejected with
// its own position.
//
// Paths are spelled as Problem.Key spells them: "server.listen",
// "rule[2].open_graph.image", "rule[0].sitemap_entries[1].params.id".
func KeyLines(data []byte) map[string]int {
	starts := []int{0}
	for i, c := range data {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	// The parser's own Shape counts lines from the start of the document
	// on every call; a table of line starts answers in O(log n).
	lineAt := func(off uint32) int { return sort.SearchInts(starts, int(off)+1) }
	k := &keyPos{lines: map[string]int{}, arrays: map[string]int{}, lineAt: lineAt}
	var p unstable.Parser
	p.Reset(data)
	ctx := ""
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.KeyValue:
			k.keyValue(ctx, e)
		case unstable.Table, unstable.ArrayTable:
			ctx = k.header(e)
		}
	}
	return k.lines
}

type keyPos struct {
	// lines is the result: key path → line; arrays holds each array of
	// tables' current index, as [[rule]] headers open rule[0], rule[1] …
	lines  map[string]int
	arrays map[string]int
	lineAt func(uint32) int
}

func (k *keyPos) record(path string, line int) {
	if _, ok := k.lines[path]; !ok {
		k.lines[path] = line
	}
}

func (k *keyPos) keyValue(ctx string, e *unstable.Node) {
	path, line := ctx, 0
	it := e.Key()
	for it.Next() {
		n := it.Node()
		if line == 0 {
			line = k.lineAt(n.Raw.Offset)
		}
		path = Join(path, string(n.Data))
	}
	k.record(path, line)
	k.value(path, e.Value())
}

func (k *keyPos) value(path string, v *unstable.Node) {
	switch v.Kind {
	case unstable.InlineTable:
		it := v.Children()
		for it.Next() {
			if c := it.Node(); c.Kind == unstable.KeyValue {
				k.keyValue(path, c)
			}
		}
	case unstable.Array:
		it := v.Children()
		for n := 0; it.Next(); {
			c := it.Node()
			if c.Kind == unstable.Comment {
				continue
			}
			p := path + "[" + strconv.Itoa(n) + "]"
			if line := k.firstLine(c); line > 0 {
				k.record(p, line)
			}
			k.value(p, c)
			n++
		}
	}
}

// firstLine is the line where a value starts; an array has no position of
// its own, so it is its first element's.
func (k *keyPos) firstLine(v *unstable.Node) int {
	for v != nil && v.Kind == unstable.Array {
		v = v.Child()
		for v != nil && v.Kind == unstable.Comment {
			v = v.Next()
		}
	}
	if v == nil {
		return 0
	}
	return k.lineAt(v.Raw.Offset)
}

// header reads "[a.b]" or "[[a.b]]" and returns the context path it opens:
// every component that is an array of tables refers to its last element.
func (k *keyPos) header(e *unstable.Node) string {
	array := e.Kind == unstable.ArrayTable
	var parts []string
	line := 0
	it := e.Key()
	for it.Next() {
		n := it.Node()
		if line == 0 {
			line = k.lineAt(n.Raw.Offset)
		}
		parts = append(parts, string(n.Data))
	}
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
		if n, ok := k.arrays[b.String()]; ok && !(array && i == len(parts)-1) {
			b.WriteString("[" + strconv.Itoa(n) + "]")
		}
	}
	path := b.String()
	if array {
		n := 0
		if c, ok := k.arrays[path]; ok {
			n = c + 1
		}
		k.arrays[path] = n
		k.record(path, line)
		path += "[" + strconv.Itoa(n) + "]"
	}
	k.record(path, line)
	return path
}

// LineOf finds the line of path or, failing that, of its nearest parent.
func LineOf(lines map[string]int, path string) int {
	for path != "" {
		if l, ok := lines[path]; ok {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			return 0
		}
		path = path[:i]
	}
	return 0
}
