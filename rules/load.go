package rules

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/headgate/headgate/rules/schema"
)

// Load reads, validates and compiles the configuration file at path, with
// the HEADGATE_* overrides from the process environment. On a bad
// configuration the error is a Problems listing every problem.
func Load(path string) (*Config, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, src, os.LookupEnv)
}

// Parse is Load for a configuration already in memory. name is used in
// problems and to find file: sources relative to it; env may be nil.
func Parse(name string, src []byte, env func(string) (string, bool)) (*Config, error) {
	l := &loader{file: name, cfg: defaults(), keys: newSchema()}
	l.cfg.File = name
	l.cfg.Dir = filepath.Dir(name)
	var tree map[string]any
	if _, err := toml.Decode(string(src), &tree); err != nil {
		line := 0
		var pe toml.ParseError
		if errors.As(err, &pe) {
			line = pe.Position.Line
			err = errors.New(pe.Message)
		}
		return nil, Problems{{Code: "HG100", File: name, Line: line, Message: "does not parse: " + err.Error()}}
	}
	l.lines = schema.KeyLines(src)
	h := sha256.New()
	h.Write(src)
	if env != nil {
		for _, e := range l.keys.Env {
			if v, ok := env(e.Env); ok && v != "" {
				sec, key, _ := strings.Cut(e.Key, ".")
				t, isTable := tree[sec].(map[string]any)
				if !isTable && tree[sec] != nil {
					continue // [server] or [site] of the wrong type: reported as such
				}
				if t == nil {
					t = map[string]any{}
					tree[sec] = t
				}
				t[key] = v
				l.fromEnv = append(l.fromEnv, e.Key)
				fmt.Fprintf(h, "\x00%s=%s", e.Env, v)
			}
		}
	}
	l.hash = h
	l.root(tree)
	if len(l.probs) > 0 {
		l.probs.Sort()
		return nil, l.probs
	}
	l.cfg.Hash = hex.EncodeToString(h.Sum(nil))[:16]
	cfg := l.cfg
	cfg.table = newTable(cfg.treeRules(), cfg.Site.Locales)
	cfg.base, _ = url.Parse(cfg.Site.BaseURL + "/")
	cfg.precompute()
	cfg.phases()
	cfg.matches = &sync.Pool{New: func() any { return new(Match) }}
	if cfg.redir != nil {
		cfg.redir.matches = cfg.matches
	}
	return &cfg, nil
}

type loader struct {
	file    string
	cfg     Config
	hash    hash.Hash // over the file, its overrides and its data files
	lines   map[string]int
	probs   Problems
	fromEnv []string
	data    *dataSet     // the data tables, loaded before the rules (dataload.go)
	keys    *schema.Keys // the keys of every table (fields.go)
}

func (l *loader) add(code, key, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	line := schema.LineOf(l.lines, key)
	for _, k := range l.fromEnv {
		if key == k {
			msg += " (from the environment)"
			line = 0
		}
	}
	l.probs = append(l.probs, Problem{Code: code, File: l.file, Line: line, Key: key, Message: msg})
}

// dataFile records a data file the config read (a table), with the
// SHA-256 of its bytes as read: a change to it reloads the config, and its
// content is part of Config.Hash, so rewritten ETags follow it.
func (l *loader) dataFile(name string, sum []byte) {
	l.cfg.Files = append(l.cfg.Files, name)
	fmt.Fprintf(l.hash, "\x00file=%s\x00", name)
	l.hash.Write(sum)
}

// sortedKeys returns t's keys in order: problems found while walking a
// table come out in the same order on every run.
func sortedKeys[V any](t map[string]V) []string {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func typeName(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case []any, []map[string]any:
		return "an array"
	case map[string]any:
		return "a table"
	case time.Time:
		return "a date-time"
	}
	return fmt.Sprintf("%T", v)
}

func (l *loader) wrongType(key string, v any, want string) {
	l.add("HG141", key, "must be %s, not %s", want, typeName(v))
}

func (l *loader) table(key string, v any) (map[string]any, bool) {
	t, ok := v.(map[string]any)
	if !ok {
		l.wrongType(key, v, "a table")
	}
	return t, ok
}

// tables reads an array of tables, written as [[key]] or as an inline array
// of inline tables (key = [{…}, {…}]).
func (l *loader) tables(key string, v any, want string) ([]map[string]any, bool) {
	switch x := v.(type) {
	case []map[string]any:
		return x, true
	case []any:
		out := make([]map[string]any, len(x))
		for i, e := range x {
			t, ok := e.(map[string]any)
			if !ok {
				l.wrongType(fmt.Sprintf("%s[%d]", key, i), e, "a table")
				return nil, false
			}
			out[i] = t
		}
		return out, true
	}
	l.wrongType(key, v, want)
	return nil, false
}

func (l *loader) str(key string, v any, dst *string) bool {
	s, ok := v.(string)
	if !ok {
		l.wrongType(key, v, "a string")
		return false
	}
	*dst = s
	return true
}

func (l *loader) boolean(key string, v any, dst *bool) {
	b, ok := v.(bool)
	if !ok {
		l.wrongType(key, v, "a boolean (true or false)")
		return
	}
	*dst = b
}

func (l *loader) strList(key string, v any) ([]string, bool) {
	arr, ok := v.([]any)
	if !ok {
		l.wrongType(key, v, "an array of strings")
		return nil, false
	}
	out := make([]string, 0, len(arr))
	for i, x := range arr {
		s, ok := x.(string)
		if !ok {
			l.wrongType(fmt.Sprintf("%s[%d]", key, i), x, "a string")
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

func (l *loader) duration(key string, v any, dst *time.Duration) {
	s, ok := v.(string)
	if !ok {
		l.wrongType(key, v, `a duration string such as "30s"`)
		return
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		l.add("HG141", key, `%q is not a positive duration (use Go syntax such as "30s", "5m")`, s)
		return
	}
	*dst = d
}

func (l *loader) integer(key string, v any, lo, hi int64, dst *int) {
	n, ok := v.(int64)
	if !ok {
		l.wrongType(key, v, "an integer")
		return
	}
	if n < lo || n > hi {
		l.add("HG141", key, "%d is out of range (%d to %d)", n, lo, hi)
		return
	}
	*dst = int(n)
}

// size reads bytes as an integer or a string with a unit ("256KiB").
func (l *loader) size(key string, v any, lo, hi int64, dst *int) {
	var n int64
	switch x := v.(type) {
	case int64:
		n = x
	case string:
		var err error
		if n, err = parseSize(x); err != nil {
			l.add("HG141", key, "%v", err)
			return
		}
	default:
		l.wrongType(key, v, `a size (bytes, or a string such as "256KiB")`)
		return
	}
	if n < lo || n > hi {
		l.add("HG141", key, "%d bytes is out of range (%d to %d)", n, lo, hi)
		return
	}
	*dst = int(n)
}

func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a size (bytes, or a number with B, KB, KiB, MB, MiB, GB, GiB)", s)
	}
	units := map[string]int64{"": 1, "B": 1, "KB": 1000, "KIB": 1 << 10, "MB": 1000 * 1000, "MIB": 1 << 20, "GB": 1000 * 1000 * 1000, "GIB": 1 << 30}
	mul, ok := units[strings.ToUpper(strings.TrimSpace(t[i:]))]
	if !ok {
		return 0, fmt.Errorf("%q is not a size (bytes, or a number with B, KB, KiB, MB, MiB, GB, GiB)", s)
	}
	if n > (1<<62)/mul {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n * mul, nil
}

func (l *loader) enum(key string, v any, dst *string, allowed ...string) {
	var s string
	if !l.str(key, v, &s) {
		return
	}
	for _, a := range allowed {
		if s == a {
			*dst = s
			return
		}
	}
	l.add("HG141", key, "%q is not one of %s", s, strings.Join(quoteAll(allowed), ", "))
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

func (l *loader) root(tree map[string]any) {
	l.keys.Known(l, "", tree, "")
	// [server] and [site] are read even when absent: they have required keys.
	l.server(l.topTable(tree, serverFields.Name, true))
	l.site(l.topTable(tree, siteFields.Name, true))
	if t := l.topTable(tree, sitemapFields.Name, false); t != nil {
		l.sitemap(t)
	}
	if t := l.topTable(tree, robotsFields.Name, false); t != nil {
		l.crawlerPolicy(t)
	}
	l.dataTables(tree)
	for i, t := range l.topTables(tree, ruleFields.Name) {
		l.rule(i, t)
	}
	l.sameMatch()
	l.experiments(tree) // after the rules and tables its variants' templates name
	l.redirects(tree)
	l.crawl(tree)
	if t := l.topTable(tree, inspectorFields.Name, false); t != nil {
		decode(l, inspectorFields.Name, t, inspectorFields, l)
	}
	l.markdownTable(tree) // markdown.go
	if t := l.topTable(tree, botsFields.Name, false); t != nil {
		l.bots(t)
	}
	if t := l.topTable(tree, watchFields.Name, false); t != nil {
		l.watch(t) // watch_load.go
	}
}

// topTable returns the top-level table name of tree: nil when it is absent
// or not a table (reported), or with always an empty table then.
func (l *loader) topTable(tree map[string]any, name string, always bool) map[string]any {
	if v, ok := tree[name]; ok {
		if t, ok := l.table(name, v); ok {
			return t
		}
	}
	if always {
		return map[string]any{}
	}
	return nil
}

// topTables returns the top-level array of tables name of tree ([[name]]).
func (l *loader) topTables(tree map[string]any, name string) []map[string]any {
	v, ok := tree[name]
	if !ok {
		return nil
	}
	arr, _ := l.tables(name, v, "an array of tables ([["+name+"]])")
	return arr
}
