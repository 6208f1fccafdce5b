package schema

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/BurntSushi/toml"
)

// keyLines finds the line of every key, as Problem.Key spells it, in every
// way TOML can write one. The hand-written scanner it replaced agreed on
// every config of testdata (273 files) but spelled "q\u00e9" as qu00e9.
func TestKeyLines(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want map[string]int
	}{
		{"[server]\nlisten = \":8080\"\n\n[site]\nbase_url = \"x\"\n",
			map[string]int{"server": 1, "server.listen": 2, "site": 4, "site.base_url": 5}},
		{"[[rule]]\nmatch = \"/a\"\n[rule.open_graph]\ntitle = \"t\"\n[[rule]]\n[[rule.open_graph.image]]\nurl = \"/i\"\n[[rule.open_graph.image]]\nurl = \"/j\"\n",
			map[string]int{"rule": 1, "rule[0]": 1, "rule[0].match": 2, "rule[0].open_graph": 3, "rule[0].open_graph.title": 4,
				"rule[1]": 5, "rule[1].open_graph.image": 6, "rule[1].open_graph.image[0]": 6, "rule[1].open_graph.image[0].url": 7,
				"rule[1].open_graph.image[1]": 8, "rule[1].open_graph.image[1].url": 9}},
		// dotted, quoted and escaped keys
		{"\"q\\u00e9\" = 1\n'lit.key' = 2\n a . b = 3\n[a.\"b.c\".d]\ne = 1\n",
			map[string]int{"qé": 1, "lit.key": 2, "a.b": 3, "a.b.c.d": 4, "a.b.c.d.e": 5}},
		// inline tables and arrays, over lines, with comments
		{"t = { a = { b = [ { c = 1 },\n { d = 2 } ] } }\nx = [ # c\n 1, # d\n [2,\n 3], { k = 1 },\n]\n",
			map[string]int{"t": 1, "t.a": 1, "t.a.b": 1, "t.a.b[0]": 1, "t.a.b[0].c": 1, "t.a.b[1]": 2, "t.a.b[1].d": 2,
				"x": 3, "x[0]": 4, "x[1]": 5, "x[1][0]": 5, "x[1][1]": 6, "x[2]": 6, "x[2].k": 6}},
		// what looks like a key inside a string is none
		{"a = \"\"\"\nx = 1\n[b]\n\"\"\"\nc = 2\narr = [\n  '''\n[[x]]\n''',\n]\nz = 1\n",
			map[string]int{"a": 1, "c": 5, "arr": 6, "arr[0]": 7, "z": 11}},
		// TOML 1.1: an inline table over lines, with a trailing comma
		{"t = {\n a = 1,\n b = 2,\n}\nz = 1\n", map[string]int{"t": 1, "t.a": 2, "t.b": 3, "z": 5}},
	} {
		if got := KeyLines([]byte(tc.src)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("KeyLines(%q)\n got %v\nwant %v", tc.src, got, tc.want)
		}
	}
}

// Every key of a document toml.Decode accepts has a line.
func FuzzKeyLines(f *testing.F) {
	files, _ := filepath.Glob("../testdata/problems/*/*.toml")
	for _, fn := range append(files, "../../config.example.toml") {
		if src, err := os.ReadFile(fn); err == nil {
			f.Add(src)
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		var tree map[string]any
		md, err := toml.Decode(string(src), &tree)
		if err != nil {
			return
		}
		lines := KeyLines(src)
		for _, k := range md.Keys() {
			if len(k) == 1 && lines[k[0]] == 0 {
				t.Errorf("key %q has no line: %v", k[0], lines)
			}
		}
	})
}
