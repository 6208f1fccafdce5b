package rules

import (
	"net/url"
	"sort"
	"strings"

	"github.com/headgate/headgate/rules/pattern"
)

// table is the compiled matcher: a tree of literal segments with parameter
// edges, so that resolving a path walks only the branches its segments
// select instead of trying every pattern.
type table struct {
	root       *node
	localeRoot *node             // localized patterns, below a locale segment
	locales    map[string]string // lower-case locale → configured spelling
	rank       []int             // rule index → position in merge order
	hasDeny    bool
	spans      bool // some pattern has a parameter that spans segments
}

type node struct {
	lits  map[string]*node
	edges []*edge
	wild  []*Rule // patterns ending in * here
	end   []*Rule // patterns ending here

	// minRest and maxRest bound how many path segments may be left after
	// this node for a rule below it to match (maxRest is unbounded below a
	// * or a spanning parameter). A spanning parameter tries only the spans
	// that leave its child such a rest.
	minRest, maxRest int
	// below is every rule at or under this node; set on the children of
	// spanning edges, whose search stops once all of them matched.
	below []*Rule
}

type edge struct {
	seg   pattern.Segment
	child *node
}

// unbounded is maxRest below a * or a spanning parameter.
const unbounded = 1 << 30

func newTable(rs []*Rule, locales []string) *table {
	t := &table{root: &node{}, localeRoot: &node{}, locales: map[string]string{}}
	for _, l := range locales {
		t.locales[strings.ToLower(l)] = l
	}
	for _, r := range rs {
		if r.Pattern == nil {
			continue
		}
		if r.Deny {
			t.hasDeny = true
		}
		n := t.root
		if r.Localized {
			n = t.localeRoot
		}
		n.insert(r, r.Pattern.Segments())
	}
	t.root.finish()
	t.localeRoot.finish()
	for _, r := range rs {
		if r.Pattern != nil {
			for _, s := range r.Pattern.Segments() {
				t.spans = t.spans || s.Spans
			}
		}
	}
	order := make([]*Rule, 0, len(rs))
	for _, r := range rs {
		if r.Pattern != nil {
			order = append(order, r)
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		if (order[i].exp == nil) != (order[j].exp == nil) {
			return order[j].exp != nil // an experiment's variant is the most specific layer (§21)
		}
		return compareRules(order[i], order[j]) < 0
	})
	t.rank = make([]int, len(rs))
	for i, r := range order {
		t.rank[r.Index] = i
	}
	return t
}

// compareRules orders by specificity (§2.3): segment by segment, literal >
// constrained parameter > plain parameter > *; then the longer pattern. A
// localized rule's locale segment counts as a constrained parameter. A
// trailing * is less specific than the end of a pattern, so that a page
// (/blog) is merged after the layout that also covers it (/blog/*).
func compareRules(a, b *Rule) int {
	ka, kb := kinds(a), kinds(b)
	n := min(len(ka), len(kb))
	for i := 0; i < n; i++ {
		if ka[i] != kb[i] {
			return int(ka[i]) - int(kb[i])
		}
	}
	switch {
	case len(ka) > n && ka[n] == pattern.SegWild:
		return -1
	case len(kb) > n && kb[n] == pattern.SegWild:
		return 1
	}
	if len(ka) != len(kb) {
		return len(ka) - len(kb)
	}
	// The same path pattern: query conditions make a rule more specific,
	// more conditions more so (§16.2).
	return len(a.Query) - len(b.Query)
}

func kinds(r *Rule) []pattern.SegKind {
	var ks []pattern.SegKind
	if r.Localized {
		ks = append(ks, pattern.SegRegex)
	}
	for _, s := range r.Pattern.Segments() {
		ks = append(ks, s.Kind)
	}
	return ks
}

func (n *node) insert(r *Rule, segs []pattern.Segment) {
	for _, s := range segs {
		switch s.Kind {
		case pattern.SegWild:
			n.wild = append(n.wild, r)
			return
		case pattern.SegLiteral:
			if n.lits == nil {
				n.lits = map[string]*node{}
			}
			c := n.lits[s.Lit]
			if c == nil {
				c = &node{}
				n.lits[s.Lit] = c
			}
			n = c
		default:
			var found *edge
			for _, e := range n.edges {
				if e.seg.Kind == s.Kind && e.seg.Name == s.Name && e.seg.Expr == s.Expr {
					found = e
					break
				}
			}
			if found == nil {
				found = &edge{seg: s, child: &node{}}
				n.edges = append(n.edges, found)
			}
			n = found.child
		}
	}
	n.end = append(n.end, r)
}

// finish computes the rest bounds of n and its subtree and returns the
// rules at or under n.
func (n *node) finish() []*Rule {
	lo, hi := unbounded, -1
	widen := func(a, b int) {
		lo, hi = min(lo, a), max(hi, b)
	}
	var all []*Rule
	all = append(all, n.wild...)
	all = append(all, n.end...)
	if len(n.wild) > 0 {
		widen(0, unbounded)
	}
	if len(n.end) > 0 {
		widen(0, 0)
	}
	for _, c := range n.lits {
		all = append(all, c.finish()...)
		widen(c.minRest+1, min(c.maxRest+1, unbounded))
	}
	for _, e := range n.edges {
		below := e.child.finish()
		all = append(all, below...)
		if e.seg.Spans {
			e.child.below = below
			widen(e.child.minRest+1, unbounded)
		} else {
			widen(e.child.minRest+1, min(e.child.maxRest+1, unbounded))
		}
	}
	if hi < 0 { // no rule below: nothing can match
		lo, hi = unbounded, -1
	}
	n.minRest, n.maxRest = lo, hi
	return all
}

// Matched is one rule that applies to a path, with its parameters.
type Matched struct {
	Rule   *Rule
	Params []Param
}

// spanBudget bounds the bytes one Resolve feeds to spanning parameters'
// regexes. The rest bounds, the memo and the early stop keep real patterns
// far below it; a hostile path against patterns such as /:a{.+}/:b{.+}
// could otherwise cost time quadratic in its length.
const spanBudget = 256 << 10

// Resolve matches a request target (a path as it arrives, percent-encoded,
// optionally with "?query") against every rule and merges the ones that
// apply. It never fails: a path CheckPath refuses still resolves, matching
// what its raw segments match; callers refuse it first.
//
// Deny rules are also matched against the spellings upstreams resolve the
// path to (denyForms: %2F, "\" and %5C as "/", ";parameters" cut off,
// empty segments and a trailing "/" removed), and deny when any form
// matches. A path so long that matching its spanning parameters would pass
// the regex budget is denied when the configuration has any deny rule
// (fail closed), and otherwise matches what was found within the budget.
func (c *Config) Resolve(target string) *Match {
	m := new(Match)
	c.ResolveInto(m, target)
	return m
}

// ResolveInto is Resolve into a Match the caller owns, for a server that
// reuses one Match per request instead of allocating 1.4 KB (its inline
// buffers) for each. Whatever m held is overwritten; nothing Resolve
// returned before for m may be used after.
func (c *Config) ResolveInto(m *Match, target string) {
	path, query, _ := strings.Cut(target, "?")
	*m = Match{cfg: c, Path: path, Query: query, rest: path}
	t := c.table
	if t == nil {
		return
	}
	// The walk's buffers are locals, not walker fields: a struct holding
	// slices of its own arrays would escape to the heap.
	var segBuf [16]string
	var offBuf [17]int
	var stack [8]Param
	w, joined := t.walker(path, segBuf[:0], offBuf[:0], stack[:0], spanBudget)
	if t.match(&w, m, joined) {
		m.rest = path[1+len(rawFirstSegment(path)):]
	}
	if t.hasDeny && !m.Deny && w.budget >= 0 {
		var probe *Match // one for all forms: most paths have one or two
		for _, alt := range pattern.DenyForms(path) {
			if probe == nil {
				probe = &Match{cfg: c, Query: query} // a deny with query conditions sees the query too
			} else {
				*probe = Match{cfg: c, Query: query}
			}
			pw, joined := t.walker(alt, segBuf[:0], offBuf[:0], stack[:0], w.budget)
			t.match(&pw, probe, joined)
			for _, mr := range probe.Matched {
				if mr.Rule.Deny {
					m.Deny = true
				}
			}
			w.budget = pw.budget
			if m.Deny || w.budget < 0 {
				break
			}
		}
	}
	if w.budget < 0 {
		m.truncated = true
		if t.hasDeny {
			m.Deny = true
		}
	}
	// Merge order: least specific first, file order between equals.
	ms := m.Matched
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && t.rank[ms[j].Rule.Index] < t.rank[ms[j-1].Rule.Index]; j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
	m.decideExperiment()
	m.inheritCut()
	m.merge()
	c.resolveData(m)
	m.refoldVariant()
}

// walker prepares a walk of path in the given (empty) buffers. With
// spanning parameters it also returns the segments joined by "/".
func (t *table) walker(path string, segBuf []string, offBuf []int, stack []Param, budget int) (walker, string) {
	w := walker{segs: splitPath(path, segBuf), stack: stack, budget: budget}
	joined := ""
	if t.spans {
		joined, w.offs = joinSegments(path, w.segs, offBuf)
	}
	return w, joined
}

// joinSegments returns the segments joined by "/", and where each starts in
// that string (one more offset marks the end), for spanning values.
func joinSegments(path string, segs []string, offs []int) (string, []int) {
	joined := strings.TrimPrefix(path, "/") // the segments as they are, unless decoded
	if strings.IndexByte(path, '%') >= 0 {
		joined = strings.Join(segs, "/")
	}
	off := 0
	for _, s := range segs {
		offs = append(offs, off)
		off += len(s) + 1
	}
	return joined, append(offs, off)
}

// match walks the plain patterns, then the localized ones below a locale
// segment; it reports whether a localized rule matched.
func (t *table) match(w *walker, m *Match, joined string) bool {
	w.walk(m, joined, t.root, 0, w.stack)
	if len(t.locales) == 0 {
		return false
	}
	loc, ok := t.locale(w.segs[0])
	if !ok {
		return false
	}
	before := len(m.Matched)
	w.walk(m, joined, t.localeRoot, 1, w.stack)
	if len(m.Matched) > before {
		m.Locale = loc
		return true
	}
	return false
}

// locale finds a path segment's locale, compared case-insensitively.
func (t *table) locale(seg string) (string, bool) {
	var buf [16]byte
	if len(seg) > len(buf) {
		return "", false
	}
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	loc, ok := t.locales[string(buf[:len(seg)])]
	return loc, ok
}

func rawFirstSegment(path string) string {
	s := path[1:]
	if i := strings.IndexByte(s, '/'); i >= 0 {
		return s[:i]
	}
	return s
}

// splitPath splits on literal '/' and percent-decodes each segment.
func splitPath(path string, buf []string) []string {
	s := strings.TrimPrefix(path, "/")
	for {
		i := strings.IndexByte(s, '/')
		seg := s
		if i >= 0 {
			seg = s[:i]
		}
		if strings.IndexByte(seg, '%') >= 0 {
			if d, err := url.PathUnescape(seg); err == nil {
				seg = d
			}
		}
		buf = append(buf, seg)
		if i < 0 {
			return buf
		}
		s = s[i+1:]
	}
}

// walker is one walk of the tree over one path's segments. It lives on
// Resolve's stack. The *Match the walk records into and the joined
// segments that spanning values are cut from are passed alongside, not
// kept in it: escape analysis does not tell a struct's fields apart, and
// would move every buffer the walker points to to the heap.
type walker struct {
	segs   []string
	budget int // regex bytes left for spanning parameters; < 0: exhausted

	// Only with spanning parameters: where each segment starts in the
	// joined segments (offs[len(segs)] is one past the end).
	offs  []int
	seen  map[visit]bool
	stack []Param // empty, with room for the parameters being bound
}

type visit struct {
	n *node
	i int
}

func (w *walker) walk(m *Match, joined string, n *node, i int, stack []Param) {
	for _, r := range n.wild {
		m.record(r, stack)
	}
	if i == len(w.segs) {
		for _, r := range n.end {
			m.record(r, stack)
		}
		return
	}
	seg := w.segs[i]
	if c := n.lits[seg]; c != nil {
		w.walk(m, joined, c, i+1, stack)
	}
	for _, e := range n.edges {
		s := &e.seg
		switch {
		case s.Kind == pattern.SegParam:
			if seg != "" && strings.IndexByte(seg, '/') < 0 {
				w.walk(m, joined, e.child, i+1, append(stack, Param{Name: s.Name, Value: seg}))
			}
		case !s.Spans:
			if seg != "" && strings.IndexByte(seg, '/') < 0 && s.Re.MatchString(seg) {
				w.walk(m, joined, e.child, i+1, append(stack, Param{Name: s.Name, Value: seg}))
			}
		default:
			w.span(m, joined, e, i, stack)
		}
	}
}

// span tries a spanning parameter on segments i… : longest span first, as a
// greedy regex would, and only spans after which its child can still match.
func (w *walker) span(m *Match, joined string, e *edge, i int, stack []Param) {
	c := e.child
	left := len(w.segs) - i
	for k := min(left, left-c.minRest); k >= max(1, left-c.maxRest); k-- {
		if w.budget < 0 || m.recordedAll(c.below) {
			return
		}
		next := i + k
		if !w.mayContinue(c, next) || w.seen[visit{c, next}] {
			continue
		}
		v := w.segs[i]
		if k > 1 {
			v = joined[w.offs[i] : w.offs[i+k]-1]
		}
		if v == "" {
			continue
		}
		if w.budget -= len(v); w.budget < 0 {
			return
		}
		if !e.seg.Re.MatchString(v) {
			continue
		}
		if w.seen == nil {
			w.seen = map[visit]bool{}
		}
		// Whatever matches below (c, next) is found the first time: a rule
		// is recorded once, with its first parameters.
		w.seen[visit{c, next}] = true
		w.walk(m, joined, c, next, append(stack, Param{Name: e.seg.Name, Value: v}))
	}
}

// mayContinue is a cheap test that node n has something to try at segment
// i, to spare the regex of spans that lead nowhere.
func (w *walker) mayContinue(n *node, i int) bool {
	if len(n.wild) > 0 {
		return true
	}
	if i == len(w.segs) {
		return len(n.end) > 0
	}
	return len(n.edges) > 0 || n.lits[w.segs[i]] != nil
}
