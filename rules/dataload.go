package rules

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/headgate/headgate/internal/datafile"
	"github.com/headgate/headgate/internal/pct"
	"github.com/headgate/headgate/rules/datatable"
	"github.com/headgate/headgate/rules/schema"
)

// maxTableBytes bounds one data table's file: a table is held in memory
// (compactly), so a file named by mistake (a dump, /dev/zero, a 2 GB log)
// is refused before a byte of it is read.
const maxTableBytes = datafile.DefaultMaxBytes

// maxRowProblems bounds the problems one table reports row by row; the
// rest are summed up in one more line.
const maxRowProblems = 20

// dataSet is every data table of a configuration.
type dataSet struct {
	tables   []*datatable.Table // [[table]], by name
	pages    []*pageTable
	hreflang []*hreflangTable
}

// The columns of a [[page_table]] besides path, in the order of §12.2.
const (
	pgTitle = iota
	pgDescription
	pgCanonical
	pgRobots
	pgOGTitle
	pgOGDescription
	pgOGImage
	pgOGType
	pgTwTitle
	pgTwDescription
	pgTwImage
	pgPolicy
	pgFields
)

var pageColumns = [pgFields]string{"title", "description", "canonical", "robots", "og_title",
	"og_description", "og_image", "og_type", "twitter_title", "twitter_description", "twitter_image", "policy"}

// pageTable is one [[page_table]]: column 0 of t is the path (spelled as
// normPath spells it), then the fields the file has.
type pageTable struct {
	t   *datatable.Table
	col [pgFields]int // column of t for each field; -1 when the file has none
	// m is the layer the rows apply as: its rule names the table, so that
	// a value the URL rules drop is logged as the table's.
	m Matched
}

// hreflangTable is one [[hreflang_table]]: t's columns are group,
// hreflang, url (url spelled as normURL spells it, and indexed).
type hreflangTable struct {
	t     *datatable.Table
	group []uint32 // row → group number
	order []uint32 // rows by group, in file order within one
	start []uint32 // group g's rows are order[start[g]:start[g+1]]
}

const (
	hlGroup = iota
	hlLang
	hlURL
)

// dataTables loads [[table]], [[page_table]] and [[hreflang_table]]; it
// runs before the rules, whose templates name the tables.
func (l *loader) dataTables(tree map[string]any) {
	if t := l.topTable(tree, tablesFields.Name, false); t != nil {
		decode(l, tablesFields.Name, t, tablesFields, l)
	}
	l.data = &dataSet{}
	for i, t := range l.topTables(tree, lookupTableFields.Name) {
		l.lookupTable(i, t)
	}
	for i, t := range l.topTables(tree, pageTableFields.Name) {
		l.pageTable(i, t)
	}
	for i, t := range l.topTables(tree, hreflangTableFields.Name) {
		l.hreflangTable(i, t)
	}
	if len(l.data.tables)+len(l.data.pages)+len(l.data.hreflang) > 0 {
		l.cfg.data = l.data
	}
}

// addRow reports a problem at a line of a table's file.
func (l *loader) addRow(code, file string, line int, key, format string, args ...any) {
	l.probs = append(l.probs, Problem{Code: code, File: file, Line: line, Key: key, Message: fmt.Sprintf(format, args...)})
}

// dataDec is what the fields of a [[table]], [[page_table]] or
// [[hreflang_table]] read into. The file is opened after the other keys are
// read (tableFile).
type dataDec struct {
	l               *loader
	name, key, file string
	hasFile, fileOK bool
}

// fileField is the file key every data table has.
var fileField = schema.Field[*dataDec]{Key: "file", Read: func(d *dataDec, key string, v any) {
	d.hasFile = true
	d.fileOK = d.l.str(key, v, &d.file)
}}

// lookupTableFields declares the keys of [[table]].
var lookupTableFields = &schema.Fields[*dataDec]{Name: "table", List: []schema.Field[*dataDec]{
	{Key: "name", Early: true, Read: func(d *dataDec, key string, v any) {
		l := d.l
		if !l.str(key, v, &d.name) {
			return
		}
		switch {
		case !validTableName(d.name):
			l.add("HG177", key, "%q is not a table name (lower-case letters, digits and _, starting with a letter; not page or a template variable)", d.name)
			d.name = ""
		case l.data.table(d.name) != nil:
			l.add("HG177", key, "a table named %q is declared twice", d.name)
			d.name = ""
		}
	}, NeedCode: "HG177", Need: `has no name (add name = "products")`},
	fileField,
	{Key: "key", Early: true, Read: func(d *dataDec, key string, v any) { d.l.str(key, v, &d.key) },
		NeedCode: "HG177", Need: `has no key (add key = "the column lookups compare with")`},
}}

// pageTableFields and hreflangTableFields declare the one key of
// [[page_table]] and of [[hreflang_table]].
var (
	pageTableFields     = &schema.Fields[*dataDec]{Name: "page_table", List: []schema.Field[*dataDec]{fileField}}
	hreflangTableFields = &schema.Fields[*dataDec]{Name: "hreflang_table", List: []schema.Field[*dataDec]{fileField}}
)

// tableFile reads table entry t (at path) and opens its file; nil when the
// entry or the file is wrong (reported).
func (l *loader) tableFile(path string, t map[string]any, fs *schema.Fields[*dataDec], code string) (*dataReader, string, *dataDec) {
	d := &dataDec{l: l}
	decode(l, path, t, fs, d)
	if !d.hasFile {
		l.add(code, path, `has no file (add file = "name.csv")`)
		return nil, "", d
	}
	if !d.fileOK {
		return nil, "", d
	}
	name := d.file
	if !filepath.IsAbs(name) {
		name = filepath.Join(l.cfg.Dir, name)
	}
	r, err := openData(name, maxTableBytes)
	if err != nil {
		l.dataErr(code, path, name, err)
		return nil, "", d
	}
	return r, name, d
}

// dataErr reports an error of the table reader at its file:line.
func (l *loader) dataErr(code, path, name string, err error) {
	var de *dataError
	if errors.As(err, &de) && de.Line > 0 {
		l.addRow(code, name, de.Line, path, "%s", de.Msg)
		return
	}
	// The file as a whole (missing, unreadable, too large): at the config's
	// line of its file key, as every config problem.
	msg := err.Error()
	if de != nil {
		msg = de.Msg
	}
	l.add(code, path+".file", "%s: %s", name, msg)
}

// columns maps the file's columns to want: the index of each wanted column
// in the file (-1 when absent). A column want lacks is reported with code.
func (l *loader) columns(code, path, name string, r *dataReader, want []string, what string) ([]int, bool) {
	idx := make([]int, len(want))
	for i := range idx {
		idx[i] = -1
	}
	ok := true
	for fi, c := range r.Columns() {
		found := false
		for wi, w := range want {
			if c == w {
				if idx[wi] >= 0 {
					l.addRow(code, name, 1, path, "column %q appears twice", c)
					ok = false
				}
				idx[wi], found = fi, true
			}
		}
		if !found {
			msg := fmt.Sprintf("column %q is not %s", c, what)
			if s := schema.Suggest(c, want); s != "" {
				msg += " (did you mean " + s + "?)"
			}
			l.addRow(code, name, 1, path, "%s", msg)
			ok = false
		}
	}
	return idx, ok
}

// errBadRow marks a row readRows has reported itself.
var errBadRow = errors.New("bad row")

// readRows reads every row of r into b, each mapped through idx (the
// file's column for each of b's columns). check may refuse a row. It
// reports whether the whole file was read, and whether no row was
// refused; the rows of a file read whole are checked further (duplicates)
// even when some were refused, so that one run reports every problem.
func (l *loader) readRows(code, path, name string, r *dataReader, b *datatable.Builder, idx []int, check func(line int, cells []string) bool) (read, clean bool) {
	cells := make([]string, len(idx))
	bad := 0
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil && !datafile.RowError(err) {
			l.dataErr(code, path, name, err)
			return false, false
		}
		if err == nil && len(rec.Values) != len(r.Columns()) {
			l.addRow(code, name, rec.Line, path, "%d cells where the header has %d", len(rec.Values), len(r.Columns()))
			err = errBadRow
		}
		if err != nil {
			// One row's problem (a ragged row, a quote out of place, a bad
			// JSON line): reported, and the rest of the file is read, so
			// that one run lists every bad row (§3.1).
			if err != errBadRow {
				l.dataErr(code, path, name, err)
			}
			if bad++; bad >= maxRowProblems {
				l.addRow(code, name, rec.Line, path, "too many bad rows: the rest of the file is not checked")
				return false, false
			}
			continue
		}
		if c, n := l.longCell(rec.Values); n > 0 {
			l.addRow(code, name, rec.Line, path, "column %s holds %d bytes, over tables.max_cell_bytes (%d): a value a page writes is short text or a URL", r.Columns()[c], n, l.cfg.TableLimits.MaxCellBytes)
			if bad++; bad >= maxRowProblems {
				l.addRow(code, name, rec.Line, path, "too many bad rows: the rest of the file is not checked")
				return false, false
			}
			continue
		}
		for i, fi := range idx {
			cells[i] = ""
			if fi >= 0 {
				cells[i] = rec.Values[fi]
			}
		}
		if check != nil && !check(rec.Line, cells) {
			if bad++; bad >= maxRowProblems {
				l.addRow(code, name, rec.Line, path, "too many bad rows: the rest of the file is not checked")
				return false, false
			}
			continue
		}
		b.Add(rec.Line, cells)
		if b.TooLarge() {
			l.addRow(code, name, rec.Line, path, "the table is too large for headgate to hold")
			return false, false
		}
	}
	return true, bad == 0
}

// longCell finds the first cell over tables.max_cell_bytes: its index
// and length, or n == 0 (§23).
func (l *loader) longCell(vals []string) (c, n int) {
	for i, v := range vals {
		if len(v) > l.cfg.TableLimits.MaxCellBytes {
			return i, len(v)
		}
	}
	return 0, 0
}

// reportDups reports rows whose key repeats an earlier row's.
func (l *loader) reportDups(code, path, name string, t *datatable.Table, dups [][2]int, what string) {
	for i, d := range dups {
		if i == maxRowProblems {
			l.addRow(code, name, int(t.Line(d[1])), path, "%d more duplicates", len(dups)-i)
			return
		}
		l.addRow(code, name, int(t.Line(d[1])), path, "duplicate %s %q (first on line %d)", what, clip(t.Cell(d[1], t.Key)), t.Line(d[0]))
	}
}

// clip shortens a cell quoted in a problem.
func clip(s string) string {
	if len(s) > 80 {
		return strings.ToValidUTF8(s[:80], "") + "…"
	}
	return s
}

func validTableName(s string) bool {
	if s == "" || s == "page" || !('a' <= s[0] && s[0] <= 'z') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return !isFixedVar(s)
}

// lookupTable loads one [[table]].
func (l *loader) lookupTable(i int, t map[string]any) {
	path := fmt.Sprintf("table[%d]", i)
	r, name, d := l.tableFile(path, t, lookupTableFields, "HG177")
	tname, key := d.name, d.key
	if r == nil || tname == "" || key == "" {
		if r != nil {
			r.Close()
		}
		if tname != "" {
			// Declared, so that templates naming it are not also reported.
			l.data.tables = append(l.data.tables, &datatable.Table{Kind: "table", Name: tname})
		}
		return
	}
	defer r.Close()
	dt := &datatable.Table{Kind: "table", Name: tname, File: name, Cols: r.Columns(), Key: -1}
	l.data.tables = append(l.data.tables, dt)
	idx := make([]int, len(dt.Cols))
	seen := map[string]bool{}
	for c, col := range dt.Cols {
		idx[c] = c
		if seen[col] {
			l.addRow("HG177", name, 1, path, "column %q appears twice", col)
			dt.Cols = nil
			return
		}
		seen[col] = true
		if col == key {
			dt.Key = c
		}
	}
	if dt.Key < 0 {
		l.add("HG177", path+".key", "%q is not a column of %s (columns: %s)", key, name, strings.Join(dt.Cols, ", "))
		dt.Cols = nil
		return
	}
	b := datatable.NewBuilder(dt, fileSize(name))
	read, clean := l.readRows("HG177", path, name, r, b, idx, func(line int, cells []string) bool {
		if cells[dt.Key] == "" {
			l.addRow("HG177", name, line, path, "the key cell (%s) is empty", key)
			return false
		}
		return true
	})
	if !read {
		return
	}
	dups := b.Finish()
	l.reportDups("HG177", path, name, dt, dups, "key")
	if clean && len(dups) == 0 {
		l.dataFile(name, r.Sum())
	}
}

// table returns the [[table]] named name, or nil.
func (d *dataSet) table(name string) *datatable.Table {
	for _, t := range d.tables {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// pageTable loads one [[page_table]].
func (l *loader) pageTable(i int, t map[string]any) {
	path := fmt.Sprintf("page_table[%d]", i)
	r, name, _ := l.tableFile(path, t, pageTableFields, "HG176")
	if r == nil {
		return
	}
	defer r.Close()
	want := append([]string{"path"}, pageColumns[:]...)
	idx, ok := l.columns("HG176", path, name, r, want, "a page_table column (path, "+strings.Join(pageColumns[:], ", ")+")")
	if !ok {
		return
	}
	if idx[0] < 0 {
		l.addRow("HG176", name, 1, path, "has no path column")
		return
	}
	pt := &pageTable{}
	dt := &datatable.Table{Kind: "page_table", File: name, Cols: []string{"path"}}
	cidx := []int{idx[0]}
	for f := range pgFields {
		pt.col[f] = -1
		if idx[f+1] >= 0 {
			pt.col[f] = len(dt.Cols)
			dt.Cols = append(dt.Cols, pageColumns[f])
			cidx = append(cidx, idx[f+1])
		}
	}
	pt.t = dt
	pt.m = Matched{Rule: &Rule{Index: -1, Match: "page_table " + name}}
	b := datatable.NewBuilder(dt, fileSize(name))
	read, clean := l.readRows("HG176", path, name, r, b, cidx, func(line int, cells []string) bool {
		p := cells[0]
		switch {
		case p == "":
			l.addRow("HG176", name, line, path, "the path cell is empty")
			return false
		case strings.ContainsAny(p, "?#") || CheckPath(p) != nil || strings.ContainsAny(p, " \t\r\n"):
			l.addRow("HG176", name, line, path, "path %q is not a request path (a path starting with /, percent-encoded, without query or dot segments)", clip(p))
			return false
		}
		cells[0] = normPath(escapeNonASCII(p))
		for _, f := range []int{pgCanonical, pgOGImage, pgTwImage} {
			c := pt.col[f]
			if c < 0 || cells[c] == "" || f == pgCanonical && (cells[c] == "self" || cells[c] == UpstreamOrSelf) || !bareWord(cells[c]) {
				continue
			}
			msg := fmt.Sprintf("%s %q is neither a path starting with / nor an absolute URL", pageColumns[f], clip(cells[c]))
			if k := schema.Suggest(cells[c], []string{"self", UpstreamOrSelf}); f == pgCanonical && k != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", k)
			}
			l.addRow("HG176", name, line, path, "%s", msg)
			return false
		}
		if c := pt.col[pgRobots]; c >= 0 && cells[c] != "" {
			if _, err := parseRobotsCell(cells[c]); err != "" {
				l.addRow("HG176", name, line, path, "robots %q: %s", clip(cells[c]), err)
				return false
			}
		}
		if c := pt.col[pgPolicy]; c >= 0 && cells[c] != "" && cells[c] != "override" && cells[c] != "fill" {
			l.addRow("HG176", name, line, path, `policy %q is neither "override" nor "fill"`, clip(cells[c]))
			return false
		}
		return true
	})
	if !read {
		return
	}
	dups := b.Finish()
	l.reportDups("HG176", path, name, dt, dups, "path")
	if !clean || len(dups) > 0 {
		return
	}
	for _, other := range l.data.pages {
		for row := range dt.Rows() {
			if o := other.t.Find(dt.Cell(row, 0)); o >= 0 {
				l.addRow("HG176", name, int(dt.Line(row)), path, "path %q is also on line %d of %s", clip(dt.Cell(row, 0)), other.t.Line(o), other.t.File)
				return
			}
		}
	}
	l.data.pages = append(l.data.pages, pt)
	l.dataFile(name, r.Sum())
}

// parseRobotsCell reads a robots cell in <meta name=robots> syntax:
// directives separated by commas. It returns the directives, or why the
// cell is refused.
func parseRobotsCell(s string) ([]string, string) {
	var out []string
	for _, d := range strings.Split(s, ",") {
		d = strings.TrimSpace(d)
		if d == "" {
			return nil, "an empty directive"
		}
		for i := 0; i < len(d); i++ {
			if c := d[i]; c < 0x21 || c > 0x7e || strings.IndexByte(`<>"'\`, c) >= 0 {
				if c != ' ' {
					return nil, "a directive holds a character robots directives never hold"
				}
			}
		}
		out = append(out, strings.ToLower(d))
	}
	return out, ""
}

func fileSize(name string) int64 {
	if st, err := statFile(name); err == nil {
		return st
	}
	return 0
}

// ruleLookups reads a rule's lookup table: the tables its templates may
// name, each with the template of the key to look up.
func (l *loader) ruleLookups(key string, v any, r *Rule) {
	lt, ok := l.table(key, v)
	if !ok {
		return
	}
	for _, name := range sortedKeys(lt) {
		lk := key + "." + name
		dt := l.data.table(name)
		if dt == nil {
			msg := fmt.Sprintf("no [[table]] is named %q", name)
			var names []string
			for _, x := range l.data.tables {
				names = append(names, x.Name)
			}
			if s := schema.Suggest(name, names); s != "" {
				msg += " (did you mean " + s + "?)"
			}
			l.add("HG121", lk, "%s", msg)
			continue
		}
		var s string
		if !l.str(lk, lt[name], &s) {
			continue
		}
		tm, err := parseTemplate(s)
		if err != nil {
			l.add("HG121", lk, "%v", err)
			continue
		}
		bad := false
		for _, n := range tm.Vars() {
			known := n == "locale" || n == "path" || n == "base_url"
			if r.Pattern != nil {
				for _, p := range r.Pattern.Params() {
					known = known || p == n
				}
			}
			if !known {
				l.add("HG121", lk, "a lookup key may name the rule's parameters, {locale}, {path} and {base_url}, not {%s}", n)
				bad = true
			}
		}
		if !bad {
			r.lookups = append(r.lookups, lookup{table: dt, key: tm})
		}
	}
}

// lookup is one entry of a rule's lookup table.
type lookup struct {
	table *datatable.Table
	key   *Template
}

// dataVar checks a template variable that names a table column,
// {TABLE.COLUMN}. known reports whether name is of that form with a
// declared table; ok whether it may be used (a problem is reported when
// not).
func (tc *tmplCtx) dataVar(key string, t *Template, name string) (known, ok bool) {
	tname, col, dot := strings.Cut(name, ".")
	if !dot || tc.l.data == nil {
		return false, false
	}
	dt := tc.l.data.table(tname)
	if dt == nil {
		return false, false
	}
	t.data = true
	has := false
	for _, lk := range tc.rule.lookups {
		has = has || lk.table == dt
	}
	if !has {
		tc.l.add("HG121", key, "{%s} names table %s, but the rule has no lookup = { %s = \"…\" }", name, tname, tname)
		return true, false
	}
	if dt.Cols != nil && dt.Column(col) < 0 {
		msg := fmt.Sprintf("{%s}: %s has no column %q", name, dt.File, col)
		if s := schema.Suggest(col, dt.Cols); s != "" {
			msg += " (did you mean {" + tname + "." + s + "}?)"
		}
		tc.l.add("HG121", key, "%s", msg)
		return true, false
	}
	return true, true
}

func statFile(name string) (int64, error) {
	st, err := os.Stat(name)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// escapeNonASCII percent-encodes the bytes of s that are not ASCII: a
// spreadsheet's /über is the /%C3%BCber a request arrives as.
func escapeNonASCII(s string) string { return pct.Encode(s, pct.ASCII, pct.Plain) }

// normPath spells a path as §11.2 compares it: percent-escapes with
// upper-case hex. It allocates only for a path with a lower-case escape.
func normPath(p string) string { return pct.CanonHex(p) }
