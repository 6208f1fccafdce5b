package rules

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/headgate/headgate/rules/pattern"
	"github.com/headgate/headgate/rules/schema"
)

// This file holds the SEO split tests of SPEC §21: [[experiment]].
//
// An experiment is one more rule in the matching tree: its variant's
// fields are a *Rule (decoded by ruleFields' own Read functions) whose
// pattern and query conditions are the experiment's match. Resolve walks
// it like any rule; the merge order puts it after every rule, and it is
// folded again after the page_table row, so that on a variant page the
// variant is the most specific layer (§21). On a control page, or outside
// start..end, it is dropped from the match and only recorded as the
// page's experiment, so that Match.Experiment names the group either way.

// The two groups (§24).
const (
	GroupControl = "control"
	GroupVariant = "variant"
)

// Experiment is one [[experiment]] table.
type Experiment struct {
	Name  string
	Line  int    // line of its [[experiment]] header
	Match string // the pattern as written
	Share int    // variant_share: percent of the pages in the variant, 1–99
	// Start and End bound when the variant is served, [Start, End); zero:
	// unbounded. A date or a local date-time (no offset) is read as UTC.
	// End is the first instant of control again: a date-only end (§21:
	// "end = 2027-01-10 # after it every page is control again") runs the
	// test through that whole day, so End is 00:00 UTC of the day after.
	Start, End time.Time
	endDay     bool // end was a date only: End is the day after it
	// Variant holds the variant's fields; its Pattern and Query are the
	// experiment's match.
	Variant *Rule
}

// Group returns the group of the page whose path is path at time now:
// GroupVariant when Bucket(e.Name, path) < Share×100 and now is within
// [Start, End), else GroupControl.
func (e *Experiment) Group(path string, now time.Time) string {
	if !e.Start.IsZero() && now.Before(e.Start) || !e.End.IsZero() && !now.Before(e.End) {
		return GroupControl
	}
	if Bucket(e.Name, path) < uint64(e.Share)*100 {
		return GroupVariant
	}
	return GroupControl
}

// EndText spells End for people: a date-only end as written, "through"
// it ("2027-01-10 (inclusive, UTC)"); a date-time end as the instant the
// test stops; "—" when there is none.
func (e *Experiment) EndText() string {
	switch {
	case e.End.IsZero():
		return "—"
	case e.endDay:
		return e.End.AddDate(0, 0, -1).Format(time.DateOnly) + " (inclusive, UTC)"
	}
	return e.End.Format(time.RFC3339) + " (exclusive)"
}

// Bucket is the page's bucket in 0..9999 for experiment name: the first 8
// bytes of SHA-256(name + "\x00" + path), read as a big-endian unsigned
// 64-bit integer, modulo 10 000. path is the page's path as GroupPath
// spells it. The formula is docs/experiments.md's; an analyst recomputes
// it with any SHA-256.
func Bucket(name, path string) uint64 {
	var buf [256]byte
	var sum [sha256.Size]byte
	if n := len(name) + 1 + len(path); n <= len(buf) {
		k := copy(buf[:], name)
		buf[k] = 0
		copy(buf[k+1:], path)
		sum = sha256.Sum256(buf[:n])
	} else {
		h := sha256.New() // a long path: one allocation
		h.Write([]byte(name))
		h.Write([]byte{0})
		h.Write([]byte(path))
		h.Sum(sum[:0])
	}
	return binary.BigEndian.Uint64(sum[:8]) % 10000
}

// GroupPath is the spelling of a request path that the assignment hashes:
// the path without its query, with percent-escapes' hex digits upper-cased
// (as page_table keys compare). It is what a sitemap <loc> holds for the
// page, so the export and the server agree.
func GroupPath(path string) string { return normPath(path) }

// Experiments lists the configuration's experiments in file order.
func (c *Config) Experiments() []*Experiment { return c.experiments }

// Experiment finds an experiment by name; nil when there is none.
func (c *Config) Experiment(name string) *Experiment {
	for _, e := range c.experiments {
		if e.Name == name {
			return e
		}
	}
	return nil
}

// Experiment names the experiment whose match covers the page and the
// page's group ("control" or "variant"); "", "" when no experiment does.
func (m *Match) Experiment() (name, group string) {
	if m.exp == nil {
		return "", ""
	}
	if m.variant {
		return m.exp.Name, GroupVariant
	}
	return m.exp.Name, GroupControl
}

// decideExperiment runs in ResolveInto after the merge order is sorted:
// an experiment's rule, if one matched, is last. It keeps it on a variant
// page and drops it on a control page. The group is that of the page's
// canonical path (§21, groupPath), from the layers below the variant.
func (m *Match) decideExperiment() {
	n := len(m.Matched)
	if n == 0 || m.Matched[n-1].Rule.exp == nil {
		return
	}
	e := m.Matched[n-1].Rule.exp
	m.exp = e
	m.expPath = m.groupPath(m.Matched[:n-1])
	if m.cfg.now == nil {
		m.variant = e.Group(m.expPath, time.Now()) == GroupVariant
	} else {
		m.variant = e.Group(m.expPath, m.cfg.now()) == GroupVariant
	}
	if !m.variant {
		m.Matched = m.Matched[:n-1]
	}
}

// ExperimentPath is the path the page's group was decided by (GroupPath's
// spelling): its canonical's path, or the request path (groupPath); ""
// when no experiment covers the page.
func (m *Match) ExperimentPath() string { return m.expPath }

// groupPath is the path a page's group is a function of (§21: "the page's
// canonical path"): the path of the canonical the layers below the
// variant give the page (the rules, then its page_table row) when that
// canonical is on base_url and known from the request alone (a literal,
// {base_url}, {path}, {locale} and the rule's parameters); else the
// request path. The variant's own canonical is left out: the group picks
// the variant, so it cannot depend on it. A canonical read from the
// upstream page (upstream-or-self, {page.*}, a {TABLE.COLUMN} lookup or a
// filter) is not known before the upstream answers, and "self" is the
// request path: those pages are grouped by the request path.
func (m *Match) groupPath(layers []Matched) string {
	var t *Template
	var mr *Matched
	for i := len(layers) - 1; i >= 0; i-- {
		r := layers[i].Rule
		if r.Canonical != nil {
			t, mr = r.Canonical, &layers[i]
			break
		}
		if r.Inherit != nil && !*r.Inherit {
			break // inheritCut: what is less specific does not apply
		}
	}
	if d := m.cfg.data; d != nil && len(d.pages) > 0 {
		req := GroupPath(m.Path)
		for _, pt := range d.pages {
			if row := pt.t.Find(req); row >= 0 {
				if c := pt.col[pgCanonical]; c >= 0 {
					if s := pt.t.Cell(row, c); s != "" {
						return m.canonPath(s)
					}
				}
				break
			}
		}
	}
	if t == nil || t.Raw == "self" || t.Raw == UpstreamOrSelf || t.data {
		return GroupPath(m.Path)
	}
	if len(t.parts) == 1 && t.parts[0].v == "" {
		return m.canonPath(t.parts[0].lit)
	}
	v := vars{params: mr.Params, locale: m.Locale, baseURL: m.cfg.Site.BaseURL}
	for i := range t.parts {
		switch p := &t.parts[i]; {
		case p.v == "path":
			v.path = EscapePath(m.Path)
		case p.ext || isFixedVar(p.v) && p.v != "base_url" && p.v != "locale":
			return GroupPath(m.Path) // known only from the upstream's page
		}
	}
	// Spelled as the head will write it (render.url), so that the path is
	// the one a crawler requests.
	c := m.cfg.spellURLPath(pattern.RespellURLPath(t.render(&v, true), m.cfg.Site.BaseURL))
	return m.canonPath(c)
}

// canonPath is the path of the canonical s when s is a path or a URL on
// base_url, spelled as GroupPath spells it; else the request path's.
func (m *Match) canonPath(s string) string {
	base := m.cfg.Site.BaseURL
	switch {
	case len(s) > 0 && s[0] == '/' && (len(s) == 1 || s[1] != '/'):
	case base != "" && onBase(s, base) && (len(s) == len(base) || s[len(base)] == '/' || s[len(base)] == '?' || s[len(base)] == '#'):
		s = s[len(base):]
	default:
		return GroupPath(m.Path) // "self", a bare word or another origin
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '?' || s[i] == '#' {
			s = s[:i]
			break
		}
	}
	if s == "" {
		s = "/"
	}
	return GroupPath(s)
}

// onBase reports whether s starts with base: its scheme and host in any
// case (RFC 3986 §6.2.2.1: they are case-insensitive), any path of it
// exactly.
func onBase(s, base string) bool {
	if len(s) < len(base) {
		return false
	}
	origin := len(base)
	if i := strings.Index(base, "://"); i >= 0 {
		if j := strings.IndexByte(base[i+3:], '/'); j >= 0 {
			origin = i + 3 + j
		}
	}
	return strings.EqualFold(s[:origin], base[:origin]) && s[origin:len(base)] == base[origin:]
}

// refoldVariant folds the variant's fields once more after the page_table
// row: the variant is the most specific layer (§21).
func (m *Match) refoldVariant() {
	if m.variant && m.data != nil && m.data.page != nil {
		m.fold(&m.Matched[len(m.Matched)-1])
	}
}

// WithClock returns a copy of c whose Resolve reads the time from now, for
// tests and for `headgate experiment export -at`. c is unchanged.
func (c *Config) WithClock(now func() time.Time) *Config {
	cp := *c
	cp.now = now
	return &cp
}

var experimentName = regexp.MustCompile(`^[a-z0-9-]{1,40}$`)

// expDec is what an experiment's keys read into.
type expDec struct {
	l *loader
	e *Experiment
	d *ruleDec // the variant rule's decoder: match and query read into it
}

// experimentFields declares the keys of [[experiment]].
var experimentFields = &schema.Fields[*expDec]{Name: "experiment", List: []schema.Field[*expDec]{
	{Key: "name", Early: true, NeedCode: "HG211", Need: `has no name (add name = "title-test")`, Read: func(d *expDec, key string, v any) {
		if d.l.str(key, v, &d.e.Name) && !experimentName.MatchString(d.e.Name) {
			d.l.add("HG211", key, "%q is not an experiment name: 1 to 40 of a-z, 0-9 and -", d.e.Name)
		}
	}},
	{Key: "match", Early: true, NeedCode: "HG211", Need: `has no match pattern (add match = "/products/*")`, Read: func(d *expDec, key string, v any) {
		d.d.match(key, v)
		d.e.Match = d.d.r.Match
	}},
	{Key: "query", Early: true, Read: func(d *expDec, key string, v any) { d.l.ruleQuery(key, v, d.d.r) }},
	{Key: "variant_share", Early: true, NeedCode: "HG211", Need: "has no variant_share (percent of the pages in the variant, 1 to 99)", Read: func(d *expDec, key string, v any) {
		n, ok := v.(int64)
		if !ok {
			d.l.wrongType(key, v, "an integer (percent, 1 to 99)")
			return
		}
		if n < 1 || n > 99 {
			d.l.add("HG211", key, "%d is outside 1–99: a test needs pages in both groups (remove the experiment to stop it)", n)
			return
		}
		d.e.Share = int(n)
	}},
	{Key: "start", Early: true, Read: func(d *expDec, key string, v any) { d.e.Start, _ = d.l.expTime(key, v) }},
	{Key: "end", Early: true, Read: func(d *expDec, key string, v any) {
		d.e.End, d.e.endDay = d.l.expTime(key, v)
		if d.e.endDay {
			d.e.End = d.e.End.AddDate(0, 0, 1) // the end day runs the test
		}
		if !d.e.End.IsZero() && !d.e.Start.IsZero() && !d.e.End.After(d.e.Start) {
			if d.e.endDay {
				d.l.add("HG211", key, "%s is before start (%s)", d.e.EndText()[:len(time.DateOnly)], d.e.Start.Format(time.RFC3339))
			} else {
				d.l.add("HG211", key, "%s is not after start (%s)", d.e.End.Format(time.RFC3339), d.e.Start.Format(time.RFC3339))
			}
		}
	}},
	{Key: "variant", NeedCode: "HG211", Need: "has no [experiment.variant] table (the fields variant pages get)", Read: (*expDec).variant},
}}

// notVariant are the rule keys a variant may not set: what selects the
// pages is the experiment's, and the rest would change which pages exist,
// are listed or denied rather than their heads.
var notVariant = map[string]string{
	"match":           "the experiment's match selects the pages",
	"query":           "the experiment's query selects the pages",
	"localized":       "a variant changes heads, not which addresses exist",
	"sitemap":         "a variant changes heads, not the sitemap",
	"sitemap_source":  "a variant changes heads, not the sitemap",
	"sitemap_entries": "a variant changes heads, not the sitemap",
	"deny":            "a variant changes heads, not which pages are served",
	"inherit":         "the variant always merges over the page's rules",
	"rewrite":         "a variant changes heads; rewrite = false would leave them alone",
}

// variantFields declares the keys of [experiment.variant]: the keys of
// [[rule]] with the same Read functions, less notVariant.
var variantFields = &schema.Fields[*ruleDec]{Name: "experiment.variant", List: slices.DeleteFunc(slices.Clone(ruleFields.List), func(f schema.Field[*ruleDec]) bool {
	_, no := notVariant[f.Key]
	return no
})}

// variant reads [experiment.variant] with the rule decoder. An unknown key
// is HG211 (with a "did you mean" among rule fields), not HG140: it is the
// experiment that is wrong.
func (d *expDec) variant(key string, v any) {
	l := d.l
	t, ok := l.table(key, v)
	if !ok {
		return
	}
	known := make([]string, 0, len(variantFields.List))
	for _, f := range variantFields.List {
		known = append(known, f.Key)
	}
	clean := make(map[string]any, len(t))
	for _, k := range sortedKeys(t) {
		if why, no := notVariant[k]; no {
			l.add("HG211", key+"."+k, "is not a variant field: %s", why)
			continue
		}
		if !slices.Contains(known, k) {
			msg := "unknown variant field"
			if s := schema.Suggest(k, known); s != "" {
				msg += " (did you mean " + s + "?)"
			}
			l.add("HG211", key+"."+k, "%s", msg)
			continue
		}
		clean[k] = t[k]
	}
	decode(l, key, clean, variantFields, d.d)
}

// expTime reads start or end: a TOML date, date-time or local date-time
// (read as UTC), or an RFC 3339 / YYYY-MM-DD string.
// expTime reads start or end: a date (dateOnly) or a date-time, in UTC.
func (l *loader) expTime(key string, v any) (t time.Time, dateOnly bool) {
	switch x := v.(type) {
	case time.Time:
		switch x.Location().String() {
		case "date-local", "datetime-local":
			dateOnly = x.Location().String() == "date-local"
			t = time.Date(x.Year(), x.Month(), x.Day(), x.Hour(), x.Minute(), x.Second(), x.Nanosecond(), time.UTC)
		case "time-local":
			l.add("HG211", key, "a time of day is no date: write 2026-12-10 or 2026-12-10T09:00:00Z")
			return time.Time{}, false
		default:
			t = x.UTC()
		}
	case string:
		var err error
		if t, err = time.Parse(time.RFC3339, x); err != nil {
			if t, err = time.Parse(time.DateOnly, x); err != nil {
				l.add("HG211", key, "%q is not a date (2026-12-10) or an RFC 3339 date-time", x)
				return time.Time{}, false
			}
			dateOnly = true
		}
		t = t.UTC()
	default:
		l.wrongType(key, v, "a date (2026-12-10) or date-time")
	}
	return t, dateOnly
}

// experiments reads every [[experiment]] and checks that no two can cover
// one page (HG210).
func (l *loader) experiments(tree map[string]any) {
	for i, t := range l.topTables(tree, experimentFields.Name) {
		path := fmt.Sprintf("experiment[%d]", i)
		line := schema.LineOf(l.lines, path)
		r := &Rule{Line: line}
		e := &Experiment{Line: line, Variant: r}
		r.exp = e
		decode(l, path, t, experimentFields, &expDec{l: l, e: e, d: &ruleDec{l: l, r: r, tc: &tmplCtx{l: l, rule: r}}})
		for j, o := range l.cfg.experiments {
			switch {
			case o.Name == e.Name && e.Name != "":
				l.add("HG211", path+".name", "%q is the name of experiment[%d] too", e.Name, j)
			case o.Variant.Pattern != nil && r.Pattern != nil && mayOverlap(o.Variant, r):
				l.add("HG210", path+".match", "%q and experiment %s's %q (%s:%d) can match the same page: a page is in one experiment at most",
					e.Match, o.Name, o.Match, l.file, o.Line)
			}
		}
		l.cfg.experiments = append(l.cfg.experiments, e)
	}
}

// mayOverlap reports whether some request could match both rules'
// patterns and query conditions. It is conservative: it says false only
// when a segment proves them apart — two different literals at one
// position, a literal that the other's {regex} refuses, lengths that no
// path can have for both (neither ends in * or has a spanning parameter),
// or one literal query value against another for the same key. Two
// parameters with regexes are taken to overlap (RE2 can not intersect
// them), and so is anything after a spanning parameter.
func mayOverlap(a, b *Rule) bool {
	sa, sb := a.Pattern.Segments(), b.Pattern.Segments()
	for i := 0; ; i++ {
		if i == len(sa) || i == len(sb) {
			// One ran out: they meet only if the other ends here or with *.
			rest := sa[i:]
			if i == len(sa) {
				rest = sb[i:]
			}
			if len(rest) > 0 && rest[0].Kind != pattern.SegWild {
				return false
			}
			break
		}
		x, y := sa[i], sb[i]
		if x.Kind == pattern.SegWild || y.Kind == pattern.SegWild || x.Spans || y.Spans {
			break
		}
		if !segsMeet(x, y) {
			return false
		}
	}
	for _, qa := range a.Query {
		for _, qb := range b.Query {
			if qa.Key == qb.Key && !segsMeet(qa.seg, qb.seg) {
				return false
			}
		}
	}
	return true
}

// segsMeet reports whether one segment value could match both x and y.
func segsMeet(x, y pattern.Segment) bool {
	switch {
	case x.Kind == pattern.SegLiteral && y.Kind == pattern.SegLiteral:
		return x.Lit == y.Lit
	case x.Kind == pattern.SegLiteral && y.Re != nil:
		return y.Re.MatchString(x.Lit)
	case y.Kind == pattern.SegLiteral && x.Re != nil:
		return x.Re.MatchString(y.Lit)
	}
	return true
}

// treeRules is every rule the matching tree holds: the file's rules, then
// each experiment's variant, numbered after them (Rule.Index).
func (c *Config) treeRules() []*Rule {
	if len(c.experiments) == 0 {
		return c.Rules
	}
	rs := slices.Clip(c.Rules)
	for i, e := range c.experiments {
		e.Variant.Index = len(c.Rules) + i
		rs = append(rs, e.Variant)
	}
	return rs
}

// ETagHash is the hash headgate puts in the ETags of rewritten responses
// now: Hash, changed each time an experiment's start or end passes, so
// that a cached copy of a page (a crawler's If-None-Match) made before a
// test started, or before it ended, is not confirmed with a 304 when the
// page's head has changed since.
func (c *Config) ETagHash() string {
	if len(c.phaseHashes) == 0 {
		return c.Hash
	}
	now := time.Now()
	if c.now != nil {
		now = c.now()
	}
	n := 0
	for _, e := range c.experiments {
		if !e.Start.IsZero() && !now.Before(e.Start) {
			n++
		}
		if !e.End.IsZero() && !now.Before(e.End) {
			n++
		}
	}
	return c.phaseHashes[n]
}

// phases computes ETagHash's values, once at load: Hash for no boundary
// passed, and one more 16-hex value per boundary.
func (c *Config) phases() {
	n := 0
	for _, e := range c.experiments {
		if !e.Start.IsZero() {
			n++
		}
		if !e.End.IsZero() {
			n++
		}
	}
	if n == 0 {
		return
	}
	c.phaseHashes = []string{c.Hash}
	for i := 1; i <= n; i++ {
		sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00experiment-phase\x00%d", c.Hash, i))
		c.phaseHashes = append(c.phaseHashes, hex.EncodeToString(sum[:8]))
	}
}
