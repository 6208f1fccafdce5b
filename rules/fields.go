package rules

import (
	"slices"
	"strings"

	"github.com/headgate/headgate/rules/schema"
)

// A field is one key of a config table, declared once: its name, how its
// value is read, and what to say when a required key is absent. The
// tables of fields drive the reading of a table, the unknown-key check
// (HG140, with a "did you mean"), and through schema the documentation
// check; the line of a key comes from the document itself (keyLines).
type field[T any] struct {
	key string
	// early fields are read first, in the order of the table; the others
	// after them, in key order. A rule's match and booleans are early:
	// its templates' checks depend on them.
	early bool
	read  func(d T, key string, v any)
	// need, when set, makes the key required: its absence is reported at
	// the table's own key (at the key itself with needKey) with this code
	// and message.
	needCode, need string
	needKey        bool
	// env names the environment variable that overrides the key (§1).
	env string
}

// fields is the declaration of one table: name is its schema path
// ("rule.open_graph.image"). A fields value is never written after its
// declaration: the index of its keys is the schema's.
type fields[T any] struct {
	name string
	list []field[T]
}

func (fs *fields[T]) schemaName() string { return fs.name }

func (fs *fields[T]) indexKeys() map[string]int {
	index := make(map[string]int, len(fs.list))
	for i, f := range fs.list {
		index[f.key] = i
	}
	return index
}

func (fs *fields[T]) envs() (out []envKey) {
	for _, f := range fs.list {
		if f.env != "" {
			out = append(out, envKey{f.env, schema.Join(fs.name, f.key)})
		}
	}
	return out
}

func (fs *fields[T]) keys() []string {
	out := make([]string, len(fs.list))
	for i, f := range fs.list {
		out[i] = f.key
	}
	return out
}

// decode reads table t, at key path path, into d: unknown keys first
// (HG140), then the early fields in declaration order, then the rest in
// key order, so that problems come out in the same order on every run.
func decode[T any](l *loader, path string, t map[string]any, fs *fields[T], d T) {
	index, ok := l.schema.index[fs.name]
	if !ok {
		panic("rules: table " + fs.name + " is not declared (add it to newSchema in load.go)")
	}
	l.known(path, t, fs.name)
	for i := range fs.list {
		f := &fs.list[i]
		if !f.early {
			continue
		}
		v, ok := t[f.key]
		switch {
		case ok && f.read != nil:
			f.read(d, schema.Join(path, f.key), v)
		case !ok:
			f.required(l, path)
		}
	}
	late := make([]*field[T], 0, len(t))
	for k := range t {
		if i, ok := index[k]; ok && !fs.list[i].early {
			late = append(late, &fs.list[i])
		}
	}
	slices.SortFunc(late, func(a, b *field[T]) int { return strings.Compare(a.key, b.key) })
	for _, f := range late {
		if f.read != nil {
			f.read(d, schema.Join(path, f.key), t[f.key])
		}
	}
	for i := range fs.list {
		if f := &fs.list[i]; !f.early {
			if _, ok := t[f.key]; !ok {
				f.required(l, path)
			}
		}
	}
}

// required reports the absence of a required field of the table at path.
func (f *field[T]) required(l *loader, path string) {
	switch {
	case f.need == "":
	case f.needKey:
		l.add(f.needCode, schema.Join(path, f.key), "%s", f.need)
	default:
		l.add(f.needCode, path, "%s", f.need)
	}
}

// declaredTable is a table of fields of any type, for schema.
type declaredTable interface {
	schemaName() string
	keys() []string
	envs() []envKey
	indexKeys() map[string]int
}

// envKey is an environment override of §1: the variable and the key it sets.
type envKey struct{ env, key string }

// keySchema lists the keys each table accepts, by table path: "" is the
// document root, "rule" every [[rule]], "rule.open_graph.image" each image
// of a rule's open_graph. The tables not listed (headers, json_ld,
// sitemap_entries[].params) hold keys of the user's choosing. Every key the
// loader reads is here, and docs/configuration.md documents each one (a test
// checks both). It is built by newSchema from the tables of fields, where
// each key is declared: a top-level table's name is a key of "".
type keySchema struct {
	keys  map[string][]string
	index map[string]map[string]int // table → key → its place in the table's fields
	// env names the environment overrides of §1, in the order of the
	// fields that declare them (field.env): the order they enter Config.Hash.
	env []envKey
}

// newSchema builds the schema from the tables of fields. It is a pure
// function of declarations that never change, so each Parse builds its own
// (a few dozen small maps) rather than sharing package state.
func newSchema() *keySchema {
	s := &keySchema{keys: map[string][]string{}, index: map[string]map[string]int{}}
	// The order of the top-level tables is the order of keys[""], in
	// which "did you mean" looks.
	s.declare(serverFields, siteFields, sitemapFields, robotsFields, ruleFields, lookupTableFields, pageTableFields,
		hreflangTableFields, llmsFields, indexNowFields, normalizeFields, redirectFields, redirectTableFields)
	s.declare(ruleRobotsFields, ogFields, imageFields, articleFields, twitterFields, twitterImageFields, entryFields,
		contentSignalFields, groupFields, llmsSectionFields)
	return s
}

// declare adds the keys of tables to s, and their environment overrides to
// s.env; a top-level table's name is a key of the document root, "".
func (s *keySchema) declare(tables ...declaredTable) {
	for _, t := range tables {
		name := t.schemaName()
		if _, dup := s.keys[name]; dup {
			panic("rules: table " + name + " declared twice")
		}
		s.keys[name] = t.keys()
		s.index[name] = t.indexKeys()
		s.env = append(s.env, t.envs()...)
		if !strings.Contains(name, ".") {
			s.keys[""] = append(s.keys[""], name)
		}
	}
}
