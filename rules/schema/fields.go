package schema

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Reporter takes the problems Decode finds: the loader, which knows the
// file and the line of each key.
type Reporter interface {
	Add(code, key, format string, args ...any)
}

// A Field is one key of a config table, declared once: its name, how its
// value is read, and what to say when a required key is absent. The
// tables of fields drive the reading of a table, the unknown-key check
// (HG140, with a "did you mean"), and through Keys the documentation
// check; the line of a key comes from the document itself (KeyLines).
type Field[T any] struct {
	Key string
	// Early fields are read first, in the order of the table; the others
	// after them, in key order. A rule's match and booleans are early:
	// its templates' checks depend on them.
	Early bool
	Read  func(d T, key string, v any)
	// Need, when set, makes the key required: its absence is reported at
	// the table's own key (at the key itself with NeedKey) with this code
	// and message.
	NeedCode, Need string
	NeedKey        bool
	// Env names the environment variable that overrides the key (§1).
	Env string
}

// Fields is the declaration of one table: Name is its path in Keys
// ("rule.open_graph.image"). A Fields value is never written after its
// declaration: the index of its keys is the Keys'.
type Fields[T any] struct {
	Name string
	List []Field[T]
}

// Table is a table of Fields of any type, for NewKeys.
type Table interface {
	table() (name string, keys []string, envs []EnvKey, index map[string]int)
}

func (fs *Fields[T]) table() (string, []string, []EnvKey, map[string]int) {
	keys := make([]string, len(fs.List))
	index := make(map[string]int, len(fs.List))
	var envs []EnvKey
	for i, f := range fs.List {
		keys[i] = f.Key
		index[f.Key] = i
		if f.Env != "" {
			envs = append(envs, EnvKey{f.Env, Join(fs.Name, f.Key)})
		}
	}
	return fs.Name, keys, envs, index
}

// EnvKey is an environment override of §1: the variable and the key it
// sets.
type EnvKey struct{ Env, Key string }

// Keys lists the keys each table accepts, by table path: "" is the
// document root, "rule" every [[rule]], "rule.open_graph.image" each image
// of a rule's open_graph. The tables not listed (headers, json_ld,
// sitemap_entries[].params) hold keys of the user's choosing.
type Keys struct {
	Tables map[string][]string
	index  map[string]map[string]int // table → key → its place in the table's fields
	// Env names the environment overrides of §1, in the order of the
	// fields that declare them (Field.Env): the order they enter
	// Config.Hash.
	Env []EnvKey
}

// NewKeys builds the Keys of tables, in order: a top-level table's name is
// a key of the document root "", and the order of the top-level tables is
// the order of Tables[""], in which "did you mean" looks. It is a pure
// function of declarations that never change.
func NewKeys(tables ...Table) *Keys {
	ks := &Keys{Tables: map[string][]string{}, index: map[string]map[string]int{}}
	for _, t := range tables {
		name, keys, envs, index := t.table()
		if _, dup := ks.Tables[name]; dup {
			panic("schema: table " + name + " declared twice")
		}
		ks.Tables[name], ks.index[name] = keys, index
		ks.Env = append(ks.Env, envs...)
		if !strings.Contains(name, ".") {
			ks.Tables[""] = append(ks.Tables[""], name)
		}
	}
	return ks
}

// Known reports to r the keys of table t (at key path path) that the
// table's declaration does not list (HG140), with a "did you mean".
func (ks *Keys) Known(r Reporter, path string, t map[string]any, table string) {
	keys, ok := ks.Tables[table]
	if !ok {
		panic("schema: no table " + strconv.Quote(table))
	}
	for _, k := range slices.Sorted(maps.Keys(t)) {
		if slices.Contains(keys, k) {
			continue
		}
		msg := "unknown key"
		if s := Suggest(k, keys); s != "" {
			msg += " (did you mean " + s + "?)"
		}
		r.Add("HG140", Join(path, k), "%s", msg)
	}
}

// Decode reads table t, at key path path, into d: unknown keys first
// (HG140), then the early fields in declaration order, then the rest in
// key order, so that problems come out in the same order on every run.
func Decode[T any](r Reporter, ks *Keys, path string, t map[string]any, fs *Fields[T], d T) {
	index, ok := ks.index[fs.Name]
	if !ok {
		panic("schema: table " + fs.Name + " is not declared (add it to NewKeys's tables)")
	}
	ks.Known(r, path, t, fs.Name)
	for i := range fs.List {
		f := &fs.List[i]
		if !f.Early {
			continue
		}
		v, ok := t[f.Key]
		switch {
		case ok && f.Read != nil:
			f.Read(d, Join(path, f.Key), v)
		case !ok:
			f.required(r, path)
		}
	}
	late := make([]*Field[T], 0, len(t))
	for k := range t {
		if i, ok := index[k]; ok && !fs.List[i].Early {
			late = append(late, &fs.List[i])
		}
	}
	slices.SortFunc(late, func(a, b *Field[T]) int { return strings.Compare(a.Key, b.Key) })
	for _, f := range late {
		if f.Read != nil {
			f.Read(d, Join(path, f.Key), t[f.Key])
		}
	}
	for i := range fs.List {
		if f := &fs.List[i]; !f.Early {
			if _, ok := t[f.Key]; !ok {
				f.required(r, path)
			}
		}
	}
}

// required reports the absence of a required field of the table at path.
func (f *Field[T]) required(r Reporter, path string) {
	switch {
	case f.Need == "":
	case f.NeedKey:
		r.Add(f.NeedCode, Join(path, f.Key), "%s", f.Need)
	default:
		r.Add(f.NeedCode, path, "%s", f.Need)
	}
}
