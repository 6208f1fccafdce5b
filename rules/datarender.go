package rules

import (
	"strings"

	"github.com/headgate/headgate/rules/datatable"
)

// matchData is what the data tables say about one request: the rows the
// matched rules looked up and the page_table row of the path. nil on a
// Match when no table applies.
type matchData struct {
	rows    []rowHit
	page    *pageTable
	pageRow int
	// hreflang: the page's own address is a url of an hreflang table, so
	// that a page no rule matches still gets its language versions.
	hreflang bool
}

// rowHit is one lookup of one matched rule; row is -1 when no row has the
// key.
type rowHit struct {
	mr  *Matched
	t   *datatable.Table
	key string
	row int
}

// DataRow names a table row that applied to a page, for explain and logs.
type DataRow struct {
	Kind  string // "table", "page_table" or "hreflang_table"
	Table string // the [[table]] name; "" for the other kinds
	File  string
	Line  int
	Key   string // the key looked up, the path, or the url
	Found bool   // false: a lookup found no row (Line is 0)
}

// resolveData adds what the data tables say to a match: after the rules
// are merged, so that a page_table row is the most specific layer.
func (c *Config) resolveData(m *Match) {
	d := c.data
	if d == nil {
		return
	}
	var md *matchData
	get := func() *matchData {
		if md == nil {
			md = &matchData{}
		}
		return md
	}
	for i := range m.Matched {
		mr := &m.Matched[i]
		for _, lk := range mr.Rule.lookups {
			v := vars{params: mr.Params, locale: m.Locale, path: EscapePath(m.Path), baseURL: c.Site.BaseURL}
			key := lk.key.render(&v, false)
			row := -1
			if lk.table.Indexed() {
				row = lk.table.Find(key)
			}
			x := get()
			x.rows = append(x.rows, rowHit{mr: mr, t: lk.table, key: key, row: row})
		}
	}
	if len(d.pages) > 0 {
		p := normPath(m.Path)
		for _, pt := range d.pages {
			if row := pt.t.Find(p); row >= 0 {
				x := get()
				x.page, x.pageRow = pt, row
				m.applyPageRow(pt, row)
				break
			}
		}
	}
	if len(d.hreflang) > 0 {
		if ht, _ := d.group(m.SelfURL(false)); ht != nil {
			get().hreflang = true
		}
	}
	m.data = md
}

// tableValue is the value of {TABLE.COLUMN} for the rule being rendered:
// "" when its lookup found no row. ok is false when name names no table
// the rule looked up.
func (v *vars) tableValue(name string) (string, bool) {
	tname, col, dot := strings.Cut(name, ".")
	if !dot {
		return "", false
	}
	for i := range v.data.rows {
		h := &v.data.rows[i]
		if h.mr != v.mr || h.t.Name != tname {
			continue
		}
		if h.row < 0 {
			return "", true
		}
		c := h.t.Column(col)
		if c < 0 {
			return "", true
		}
		return h.t.Cell(h.row, c), true
	}
	return "", false
}

// missing reports whether a template names a table cell that is empty or
// in a row that was not found: such a field is not written (§12.1).
func (t *Template) missing(v *vars) bool {
	if !t.data || v.data == nil {
		return t.data // a table template with no lookup data: nothing found
	}
	for _, p := range t.parts {
		if p.v == "" || hasDefault(p.filters) {
			continue // a default filter says what an empty cell or a missing row writes
		}
		if val, ok := v.tableValue(p.v); ok && val == "" {
			return true
		}
	}
	return false
}

// applyPageRow merges a page_table row over the rules: each non-empty
// cell sets its field (§12.2). Cells are text, never templates.
func (m *Match) applyPageRow(pt *pageTable, row int) {
	f := &m.f
	mr := &pt.m
	cell := func(field int) string {
		if c := pt.col[field]; c >= 0 {
			return pt.t.Cell(row, c)
		}
		return ""
	}
	set := func(dst *ref, field int) bool {
		s := cell(field)
		if s == "" {
			return false
		}
		*dst = ref{&Template{Raw: s, parts: []tpart{{lit: s}}}, mr}
		return true
	}
	set(&f.title, pgTitle)
	set(&f.description, pgDescription)
	set(&f.canonical, pgCanonical) // "self" is the literal self, as in a rule
	if s := cell(pgRobots); s != "" {
		words, _ := parseRobotsCell(s) // checked at load
		f.robotsSet, f.robotsIndex, f.robotsFollow, f.directives = true, nil, nil, nil
		for _, w := range words {
			// Each page gets its own *bool: a pointer shared by every
			// page would let one caller's write change them all.
			switch w {
			case "index":
				f.robotsIndex = new(true)
			case "noindex":
				f.robotsIndex = new(false)
			case "follow":
				f.robotsFollow = new(true)
			case "nofollow":
				f.robotsFollow = new(false)
			default:
				f.directives = append(f.directives, w)
			}
		}
	}
	og := set(&f.ogTitle, pgOGTitle)
	og = set(&f.ogDesc, pgOGDescription) || og
	og = set(&f.ogType, pgOGType) || og
	if s := cell(pgOGImage); s != "" {
		og = true
		f.ogImage, f.ogImageM = []Image{{URL: &Template{Raw: s, parts: []tpart{{lit: s}}}}}, mr
	}
	tw := set(&f.twTitle, pgTwTitle)
	tw = set(&f.twDesc, pgTwDescription) || tw
	if s := cell(pgTwImage); s != "" {
		tw = true
		f.twImage, f.twImageM = []TwitterImage{{URL: &Template{Raw: s, parts: []tpart{{lit: s}}}}}, mr
	}
	// A cell of either table sets it, as open_graph or twitter in a rule
	// would: the page's title and description become the defaults (§4.2).
	f.og = f.og || og
	f.tw = f.tw || tw
	if s := cell(pgPolicy); s != "" {
		f.policy = Policy(s)
	}
}

// group finds the hreflang group of an absolute URL: its table and group
// number, or nil.
func (d *dataSet) group(u string) (*hreflangTable, int) {
	if d == nil || len(d.hreflang) == 0 {
		return nil, -1
	}
	k := canonKey(u)
	for _, ht := range d.hreflang {
		if row := ht.t.Find(k); row >= 0 {
			return ht, int(ht.group[row])
		}
	}
	return nil, -1
}

// rowsOf returns the rows of group g in table order.
func (ht *hreflangTable) rowsOf(g int) []uint32 { return ht.order[ht.start[g]:ht.start[g+1]] }

// Alternates returns the language versions of the page whose canonical is
// u, from the hreflang tables (§12.3): every row of its group, in table
// order; nil when u is in no group. The head, the sitemap and the Link
// headers of non-HTML responses all write these, so they never disagree.
func (c *Config) Alternates(u string) []Alternate {
	ht, g := c.data.group(u)
	if ht == nil {
		return nil
	}
	rows := ht.rowsOf(g)
	out := make([]Alternate, len(rows))
	for i, r := range rows {
		out[i] = Alternate{ht.t.Cell(int(r), hlLang), ht.t.Cell(int(r), hlURL)}
	}
	return out
}

// hreflangRender is what an hreflang table gives a page whose canonical
// is canon: the alternates and the page's own language, or ok = false.
func (m *Match) hreflangRender(canon string) (alts []Alternate, own string, ok bool) {
	ht, g := m.cfg.data.group(canon)
	if ht == nil {
		return nil, "", false
	}
	k := canonKey(canon)
	rows := ht.rowsOf(g)
	alts = make([]Alternate, 0, len(rows))
	for _, r := range rows {
		lang, u := ht.t.Cell(int(r), hlLang), ht.t.Cell(int(r), hlURL)
		alts = append(alts, Alternate{lang, u})
		if u == k && (own == "" || strings.EqualFold(own, "x-default")) {
			own = lang
		}
	}
	if strings.EqualFold(own, "x-default") {
		own = ""
	}
	return alts, own, true
}

// DataRows lists the table rows that applied to a page whose head h is:
// the rows its rules looked up (and the lookups that found none), its
// page_table row, and the rows of its hreflang group. For explain and
// tests; the request path never needs them.
func (m *Match) DataRows(h *Head) []DataRow {
	var out []DataRow
	if md := m.data; md != nil {
		out = m.dataRows(out)
	}
	if h != nil && h.HreflangTable {
		if ht, g := m.cfg.data.group(h.hreflangKey); ht != nil {
			for _, r := range ht.rowsOf(g) {
				out = append(out, DataRow{Kind: "hreflang_table", File: ht.t.File, Line: ht.t.Line(int(r)), Key: ht.t.Cell(int(r), hlURL), Found: true})
			}
		}
	}
	return out
}

// dataRows appends the lookup and page_table rows of a match.
func (m *Match) dataRows(out []DataRow) []DataRow {
	md := m.data
	for _, h := range md.rows {
		r := DataRow{Kind: "table", Table: h.t.Name, File: h.t.File, Key: h.key, Found: h.row >= 0}
		if h.row >= 0 {
			r.Line = int(h.t.Line(h.row))
		}
		out = append(out, r)
	}
	if md.page != nil {
		out = append(out, DataRow{Kind: "page_table", File: md.page.t.File, Line: int(md.page.t.Line(md.pageRow)), Key: md.page.t.Cell(md.pageRow, 0), Found: true})
	}
	return out
}

// PageTables reports whether the config has a [[page_table]]: any path
// may then have a row that sets its robots or canonical.
func (c *Config) PageTables() bool { return c.data != nil && len(c.data.pages) > 0 }

// HreflangTables reports whether the config has an [[hreflang_table]].
func (c *Config) HreflangTables() bool { return c.data != nil && len(c.data.hreflang) > 0 }

// Data reports whether a data table applies to the match: a lookup, a
// page_table row, or an hreflang group of the page's own address.
func (m *Match) Data() bool { return m.data != nil }

// TableInfo describes one loaded data table, for headgate check.
type TableInfo struct {
	Kind string // "table", "page_table" or "hreflang_table"
	Name string // the [[table]] name; "" for the other kinds
	File string
	Rows int
}

// Tables lists the data tables the config loaded, in file order by kind.
func (c *Config) Tables() []TableInfo {
	if c.data == nil {
		return nil
	}
	var out []TableInfo
	for _, t := range c.data.tables {
		out = append(out, TableInfo{t.Kind, t.Name, t.File, t.Rows()})
	}
	for _, p := range c.data.pages {
		out = append(out, TableInfo{p.t.Kind, "", p.t.File, p.t.Rows()})
	}
	for _, h := range c.data.hreflang {
		out = append(out, TableInfo{h.t.Kind, "", h.t.File, h.t.Rows()})
	}
	return out
}

func hasDefault(fs []filter) bool {
	for _, f := range fs {
		if f.kind == fDefault {
			return true
		}
	}
	return false
}
