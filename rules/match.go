package rules

import (
	"strings"
	"sync"
)

// Match is what the rules say about one request target: every rule that
// applies, in merge order, and their fields merged (§2.3). Page-derived
// values stay open until Render is given the upstream document's facts.
type Match struct {
	cfg     *Config
	Path    string // the request path as it arrived, percent-encoded
	Query   string // the raw query string, without "?"
	Locale  string // the locale in its configured spelling; "" when no localized rule matched
	Deny    bool   // some matching rule denies (also via the %2F-decoded path)
	Matched []Matched
	// Ignored are the matching rules less specific than one with
	// inherit = false: they do not apply (but their deny does).
	Ignored []Matched

	rest      string // the path after the locale segment: "/about", or "" for "/de"
	mdURL     string // MarkdownURL, once asked (markdown.go)
	mdDone    bool
	truncated bool // the span budget ran out: Matched may lack rules

	data *matchData // what the data tables say (datarender.go); nil: nothing

	exp     *Experiment // the experiment whose match covers the page; nil: none
	variant bool        // the page is in exp's variant group, now
	expPath string      // the path exp's group was decided by (groupPath)

	f merged
	// Inline buffers, so that a path that matches up to 8 rules binding up
	// to 16 parameters in all allocates nothing beyond the Match itself.
	mbuf  [8]Matched
	pbuf  [16]Param
	pused int
}

// ref is a merged template with the rule (and its parameters) it came from.
type ref struct {
	t *Template
	m *Matched
}

func (r ref) set() bool { return r.t != nil }

type merged struct {
	title, description, canonical ref
	keepQuery                     []string
	policy                        Policy
	robotsIndex, robotsFollow     *bool
	directives                    []string
	robotsSet                     bool

	og         bool
	ogTitle    ref
	ogDesc     ref
	ogType     ref
	ogURL      ref
	ogSiteName ref
	ogLocale   ref
	ogImage    []Image
	ogImageM   *Matched
	ogArticle  *Article
	ogArticleM *Matched

	tw        bool
	twCard    ref
	twSite    ref
	twCreator ref
	twTitle   ref
	twDesc    ref
	twURL     ref
	twImage   []TwitterImage
	twImageM  *Matched

	replaceJSON bool
	localized   bool
	rewrite     *bool
	signal      ContentSignal // content_signal, key by key (markdown.go)
}

// PooledMatch returns a Match from c's pool, for ResolveInto; Release
// gives it back. A Match carries inline buffers (1.4 KB) so that resolving
// allocates nothing else, and a pooled one makes the whole resolve
// allocation-free. The redirector's rule lookup draws from the same pool.
func (c *Config) PooledMatch() *Match { return getMatch(c.matches) }

// Release returns m to the pool of the Config it was last resolved with.
// Nothing may use m, or anything Render returned for it, afterwards.
func (m *Match) Release() {
	if m.cfg != nil {
		m.release(m.cfg.matches)
	}
}

func getMatch(p *sync.Pool) *Match {
	if p == nil {
		return new(Match)
	}
	return p.Get().(*Match)
}

// release clears m, so that the pool holds no request's strings or an old
// Config, and puts it in p.
func (m *Match) release(p *sync.Pool) {
	*m = Match{}
	if p != nil {
		p.Put(m)
	}
}

func (m *Match) record(r *Rule, stack []Param) {
	for _, x := range m.Matched {
		if x.Rule == r {
			return // a spanning parameter can match one rule more than one way
		}
	}
	if len(r.Query) > 0 {
		var qb [4]Param
		q, ok := m.queryParams(r, qb[:0])
		if !ok {
			return // its query conditions do not hold
		}
		stack = append(stack[:len(stack):len(stack)], q...)
	}
	var ps []Param
	if len(stack) > 0 {
		if m.pused+len(stack) <= len(m.pbuf) {
			ps = m.pbuf[m.pused : m.pused+len(stack) : m.pused+len(stack)]
			m.pused += len(stack)
		} else {
			ps = make([]Param, len(stack))
		}
		copy(ps, stack)
	}
	if m.Matched == nil {
		m.Matched = m.mbuf[:0]
	}
	m.Matched = append(m.Matched, Matched{Rule: r, Params: ps})
	if r.Deny {
		m.Deny = true
	}
}

// recordedAll reports whether every rule of rs has matched already.
func (m *Match) recordedAll(rs []*Rule) bool {
	if len(rs) == 0 || len(rs) > 32 {
		return false // no early stop for big subtrees: the memo bounds them
	}
	for _, r := range rs {
		found := false
		for i := range m.Matched {
			if m.Matched[i].Rule == r {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func pick(dst *ref, t *Template, mr *Matched) {
	if t != nil {
		*dst = ref{t, mr}
	}
}

// merge folds the matched rules, least specific first, so later rules win
// field by field and key by key.
func (m *Match) merge() {
	m.f.policy = Override
	for i := range m.Matched {
		m.fold(&m.Matched[i])
	}
}

// fold merges one layer over what is merged so far.
func (m *Match) fold(mr *Matched) {
	f := &m.f
	r := mr.Rule
	{
		pick(&f.title, r.Title, mr)
		pick(&f.description, r.Description, mr)
		pick(&f.canonical, r.Canonical, mr)
		if r.keepQuery {
			f.keepQuery = r.KeepQuery
		}
		if r.Policy != "" {
			f.policy = r.Policy
		}
		if rb := r.Robots; rb != nil {
			f.robotsSet = true
			if rb.Index != nil {
				f.robotsIndex = rb.Index
			}
			if rb.Follow != nil {
				f.robotsFollow = rb.Follow
			}
			if rb.directives {
				f.directives = rb.Directives
			}
		}
		if og := r.OpenGraph; og != nil {
			f.og = true
			pick(&f.ogTitle, og.Title, mr)
			pick(&f.ogDesc, og.Description, mr)
			pick(&f.ogType, og.Type, mr)
			pick(&f.ogURL, og.URL, mr)
			pick(&f.ogSiteName, og.SiteName, mr)
			pick(&f.ogLocale, og.Locale, mr)
			if og.Image != nil {
				f.ogImage, f.ogImageM = og.Image, mr
			}
			if og.Article != nil {
				f.ogArticle, f.ogArticleM = og.Article, mr
			}
		}
		if tw := r.Twitter; tw != nil {
			f.tw = true
			pick(&f.twCard, tw.Card, mr)
			pick(&f.twSite, tw.Site, mr)
			pick(&f.twCreator, tw.Creator, mr)
			pick(&f.twTitle, tw.Title, mr)
			pick(&f.twDesc, tw.Description, mr)
			pick(&f.twURL, tw.URL, mr)
			if tw.Image != nil {
				f.twImage, f.twImageM = tw.Image, mr
			}
		}
		if r.ReplaceJSON {
			f.replaceJSON = true
		}
		if r.Localized {
			f.localized = true
		}
		if r.Rewrite != nil {
			f.rewrite = r.Rewrite
		}
		f.mergeSignal(r)
	}
}

// Policy is the merged policy: override unless a rule says fill.
func (m *Match) Policy() Policy { return m.f.policy }

// Any reports whether any rule matched, or a data table (§12) applies.
func (m *Match) Any() bool { return len(m.Matched) > 0 || m.data != nil }

// Config returns the configuration the match was made with.
func (m *Match) Config() *Config { return m.cfg }

// Patterns lists the matched rules' patterns in merge order.
func (m *Match) Patterns() []string {
	ps := make([]string, len(m.Matched))
	for i, mr := range m.Matched {
		ps[i] = mr.Rule.Match
		if e := mr.Rule.exp; e != nil {
			ps[i] = "experiment " + e.Name + " (variant): " + mr.Rule.Match
		}
		if mr.Rule.Localized {
			ps[i] = "/{locale}" + strings.TrimSuffix(mr.Rule.Match, "/")
			if mr.Rule.Match == "/" {
				ps[i] += "/"
			}
		}
		ps[i] += mr.Rule.QueryLabel()
	}
	return ps
}
