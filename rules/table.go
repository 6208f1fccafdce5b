package rules

import (
	"errors"
	"net/url"
	"sort"
	"strings"
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
}

type node struct {
	lits  map[string]*node
	edges []*edge
	wild  []*Rule // patterns ending in * here
	end   []*Rule // patterns ending here
}

type edge struct {
	seg   segment
	child *node
}

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
		n.insert(r, r.Pattern.segs)
	}
	order := make([]*Rule, 0, len(rs))
	for _, r := range rs {
		if r.Pattern != nil {
			order = append(order, r)
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return compareRules(order[i], order[j]) < 0 })
	t.rank = make([]int, len(rs))
	for i, r := range order {
		t.rank[r.Index] = i
	}
	return t
}

// compareRules orders by specificity; a localized rule's locale segment
// counts as a constrained parameter.
func compareRules(a, b *Rule) int {
	ka, kb := kinds(a), kinds(b)
	for i := 0; i < len(ka) && i < len(kb); i++ {
		if ka[i] != kb[i] {
			return int(ka[i]) - int(kb[i])
		}
	}
	return len(ka) - len(kb)
}

func kinds(r *Rule) []segKind {
	var ks []segKind
	if r.Localized {
		ks = append(ks, segRegex)
	}
	for _, s := range r.Pattern.segs {
		ks = append(ks, s.kind)
	}
	return ks
}

func (n *node) insert(r *Rule, segs []segment) {
	for _, s := range segs {
		switch s.kind {
		case segWild:
			n.wild = append(n.wild, r)
			return
		case segLiteral:
			if n.lits == nil {
				n.lits = map[string]*node{}
			}
			c := n.lits[s.lit]
			if c == nil {
				c = &node{}
				n.lits[s.lit] = c
			}
			n = c
		default:
			var found *edge
			for _, e := range n.edges {
				if e.seg.kind == s.kind && e.seg.name == s.name && e.seg.expr == s.expr {
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

// Param is one bound path parameter; Value is percent-decoded.
type Param struct {
	Name, Value string
}

// Matched is one rule that applies to a path, with its parameters.
type Matched struct {
	Rule   *Rule
	Params []Param
}

// ErrBadPath is returned by CheckPath for a path headgate refuses (§2.2).
var ErrBadPath = errors.New("bad request path")

// CheckPath rejects what browsers never send and what could lead an
// upstream around a deny: a "." or ".." segment (also percent-encoded), a
// NUL (raw or %00), invalid percent-encoding, or a path that does not start
// with "/".
func CheckPath(path string) error {
	if !strings.HasPrefix(path, "/") {
		return ErrBadPath
	}
	for i := 0; i < len(path); i++ {
		switch path[i] {
		case 0:
			return ErrBadPath
		case '%':
			if i+2 >= len(path) || !ishex(path[i+1]) || !ishex(path[i+2]) {
				return ErrBadPath
			}
			if path[i+1] == '0' && path[i+2] == '0' {
				return ErrBadPath
			}
		}
	}
	for _, seg := range strings.Split(path[1:], "/") {
		if len(seg) > 6 || strings.IndexByte(seg, '.') < 0 && !strings.Contains(seg, "%2") {
			continue
		}
		d := strings.ToLower(seg)
		d = strings.ReplaceAll(d, "%2e", ".")
		if d == "." || d == ".." {
			return ErrBadPath
		}
	}
	return nil
}

func ishex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// Resolve matches a request target (a path as it arrives, percent-encoded,
// optionally with "?query") against every rule and merges the ones that
// apply. It never fails: a path CheckPath refuses still resolves, matching
// what its raw segments match; callers refuse it first.
func (c *Config) Resolve(target string) *Match {
	path, query, _ := strings.Cut(target, "?")
	m := &Match{cfg: c, Path: path, Query: query, rest: path}
	t := c.table
	if t == nil {
		return m
	}
	segs := splitPath(path, m.segBuf[:0])
	t.walk(t.root, segs, 0, m, m.stack[:0])
	if len(t.locales) > 0 && len(segs) > 0 {
		if loc, ok := t.locales[strings.ToLower(segs[0])]; ok {
			before := len(m.Matched)
			t.walk(t.localeRoot, segs[1:], 0, m, m.stack[:0])
			if len(m.Matched) > before {
				m.Locale = loc
				m.rest = path[1+len(rawFirstSegment(path)):]
				if m.rest == "" {
					m.rest = "/"
				}
			}
		}
	}
	if t.hasDeny && !m.denied() && strings.Contains(strings.ToLower(path), "%2f") {
		// deny rules also see the path with every %2F as a separator.
		alt := strings.NewReplacer("%2F", "/", "%2f", "/").Replace(path)
		probe := &Match{cfg: c}
		t.walk(t.root, splitPath(alt, probe.segBuf[:0]), 0, probe, probe.stack[:0])
		for _, mr := range probe.Matched {
			if mr.Rule.Deny {
				m.Deny = true
			}
		}
	}
	// Merge order: least specific first, file order between equals.
	ms := m.Matched
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && t.rank[ms[j].Rule.Index] < t.rank[ms[j-1].Rule.Index]; j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
	m.merge()
	return m
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

func (t *table) walk(n *node, segs []string, i int, m *Match, stack []Param) {
	for _, r := range n.wild {
		m.record(r, stack)
	}
	if i == len(segs) {
		for _, r := range n.end {
			m.record(r, stack)
		}
		return
	}
	seg := segs[i]
	if c := n.lits[seg]; c != nil {
		t.walk(c, segs, i+1, m, stack)
	}
	for _, e := range n.edges {
		s := &e.seg
		switch {
		case s.kind == segParam:
			if seg != "" && strings.IndexByte(seg, '/') < 0 {
				t.walk(e.child, segs, i+1, m, append(stack, Param{s.name, seg}))
			}
		case !s.spans:
			if strings.IndexByte(seg, '/') < 0 && s.re.MatchString(seg) {
				t.walk(e.child, segs, i+1, m, append(stack, Param{s.name, seg}))
			}
		default:
			// Longest span first, as a greedy regex would.
			for k := len(segs) - i; k >= 1; k-- {
				v := seg
				if k > 1 {
					v = strings.Join(segs[i:i+k], "/")
				}
				if s.re.MatchString(v) {
					t.walk(e.child, segs, i+k, m, append(stack, Param{s.name, v}))
				}
			}
		}
	}
}
