package rules

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/headgate/headgate/rules/schema"
)

// Crawler policy (SPEC §13): [[robots.group]], robots.content_signal,
// robots.upstream_sitemaps, [llms_txt] and [indexnow].

// RobotsGroup is one [[robots.group]]: the agents it names and their rules.
type RobotsGroup struct {
	Line       int      // line of its [[robots.group]] header
	UserAgents []string // "@ai-training" expanded, in order, without duplicates
	Allow      []string
	Disallow   []string
}

// ContentSignal is robots.content_signal; "" is a key not set.
type ContentSignal struct {
	Search, AIInput, AITrain string // "yes" or "no"
}

// Line is the value of the Content-Signal line: only the keys set, in the
// order of the Content Signals policy ("search=yes, ai-input=yes,
// ai-train=no"); "" when none is set.
func (c *ContentSignal) Line() string {
	if c == nil {
		return ""
	}
	if i, ok := c.index(); ok {
		return signalLines[i] // every answer of a path under content_signal asks
	}
	return c.line()
}

func (c *ContentSignal) line() string {
	var parts []string
	for _, kv := range [][2]string{{"search", c.Search}, {"ai-input", c.AIInput}, {"ai-train", c.AITrain}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+"="+kv[1])
		}
	}
	return strings.Join(parts, ", ")
}

// signalValues are the values a checked content_signal key holds (HG190),
// by the index of signalLines and usageLines.
var signalValues = [3]string{"", "yes", "no"}

// signalLines and usageLines are Line and ContentUsage of every
// ContentSignal of checked values, made once.
var signalLines, usageLines = func() (l, u [27]string) {
	for i := range 27 {
		c := ContentSignal{Search: signalValues[i/9], AIInput: signalValues[i/3%3], AITrain: signalValues[i%3]}
		l[i], u[i] = c.line(), c.contentUsage()
	}
	return l, u
}()

// index is c's index in signalLines; false for a value HG190 refuses.
func (c *ContentSignal) index() (int, bool) {
	i := 0
	for _, v := range [3]string{c.Search, c.AIInput, c.AITrain} {
		k := 0
		switch v {
		case "":
		case "yes":
			k = 1
		case "no":
			k = 2
		default:
			return 0, false
		}
		i = 3*i + k
	}
	return i, true
}

// HasPolicy reports whether [robots] sets groups or a content signal:
// then headgate writes robots.txt in generate and append modes even
// without a sitemap rule (with no Sitemap line).
func (r *RobotsTxt) HasPolicy() bool {
	return len(r.Groups) > 0 || r.ContentSignal.Line() != ""
}

// KeepUpstreamSitemaps reports robots.upstream_sitemaps = "keep".
func (r *RobotsTxt) KeepUpstreamSitemaps() bool { return r.UpstreamSitemaps == "keep" }

// LLMSTxt is the [llms_txt] table (SPEC §13.2).
type LLMSTxt struct {
	Title    string
	Summary  string
	Sections []LLMSSection

	table *Config // the sections' patterns as rules, Index = section number
}

// LLMSSection is one [[llms_txt.section]].
type LLMSSection struct {
	Name     string
	Match    string
	Pattern  *Pattern
	MaxLinks int // default 1000
}

// DefaultMaxLinks is llms_txt.section.max_links when unset.
const DefaultMaxLinks = 1000

// Section returns the index of the first section (in file order) whose
// pattern matches path (percent-encoded, as a sitemap <loc> spells it), or
// -1.
func (t *LLMSTxt) Section(path string) int {
	if t == nil || t.table == nil {
		return -1
	}
	m := t.table.Resolve(path)
	best := -1
	for _, mr := range m.Matched {
		if best < 0 || mr.Rule.Index < best {
			best = mr.Rule.Index
		}
	}
	return best
}

// IndexNow is the [indexnow] table (SPEC §13.3).
type IndexNow struct {
	Key      string
	Endpoint string // default DefaultIndexNowEndpoint
}

// DefaultIndexNowEndpoint is indexnow.endpoint when unset.
const DefaultIndexNowEndpoint = "https://api.indexnow.org/indexnow"

// KeyPath is where the key file is served: "/{key}.txt".
func (n *IndexNow) KeyPath() string { return "/" + n.Key + ".txt" }

// EntryText renders a rule's title or description for one sitemap entry,
// as llms.txt writes it: with the entry's parameters, {path} the entry's
// percent-encoded path, {locale} its locale, {canonical} its address,
// {title} the rendered title (for a description), and no page values (no
// page is read), but the rule's table lookups (§12.1), made for the entry
// as the proxy makes them for its page. site.title_template is not
// applied. t nil, or a lookup that finds no row or an empty cell, gives "".
func (r *Rule) EntryText(t *Template, params map[string]string, locale, path, baseURL, title string) string {
	if t == nil {
		return ""
	}
	v := vars{locale: locale, path: path, baseURL: baseURL, canonical: baseURL + path, title: title}
	if r.Pattern != nil && len(r.Pattern.Params()) > 0 {
		v.params = make([]Param, 0, len(r.Pattern.Params()))
		for _, name := range r.Pattern.Params() {
			v.params = append(v.params, Param{Name: name, Value: params[name]})
		}
	}
	if len(r.lookups) > 0 {
		mr := &Matched{Rule: r, Params: v.params}
		md := &matchData{}
		kv := vars{params: v.params, locale: locale, path: path, baseURL: baseURL}
		for _, lk := range r.lookups {
			key := lk.key.render(&kv, false)
			row := -1
			if lk.table.Indexed() {
				row = lk.table.Find(key)
			}
			md.rows = append(md.rows, rowHit{mr: mr, t: lk.table, key: key, row: row})
		}
		v.data, v.mr = md, mr
	}
	if t.data && t.missing(&v) {
		return ""
	}
	return t.render(&v, false)
}

// validAgent reports whether s is a user-agent token as §17 reads RFC
// 9309: letters, digits, "-" and "_".
func validAgent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '-' || c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// robotsPath says what is wrong with an allow or disallow path, or "".
func robotsPath(p string) string {
	if p == "" {
		return "is empty: a path starts with / or * (an empty Disallow would allow everything)"
	}
	if p[0] != '/' && p[0] != '*' {
		return "does not start with / or *"
	}
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\r' || c == '\n':
			return "holds a CR or LF, which would end the robots.txt line"
		case c < 0x20 || c == 0x7f:
			return "holds a control character"
		case c == ' ' || c == '\t':
			return "holds white space (percent-encode it as %20)"
		case c == '#':
			return "holds #, which starts a robots.txt comment (percent-encode it as %23)"
		}
	}
	return ""
}

// robotsFields declares the keys of [robots] (§13.1, §16.6).
var robotsFields = &schema.Fields[*loader]{Name: "robots", List: []schema.Field[*loader]{
	{Key: "mode", Read: func(l *loader, key string, v any) {
		l.enum(key, v, &l.cfg.Robots.Mode, "generate", "append", "upstream")
	}},
	{Key: "group", Read: (*loader).robotsGroups},
	{Key: "content_signal", Read: (*loader).contentSignal},
	{Key: "upstream_sitemaps", Read: func(l *loader, key string, v any) {
		l.enum(key, v, &l.cfg.Robots.UpstreamSitemaps, "replace", "keep")
	}},
}}

// contentSignalFields declares the keys of robots.content_signal.
var contentSignalFields = &schema.Fields[into[*ContentSignal]]{Name: "robots.content_signal", List: []schema.Field[into[*ContentSignal]]{
	{Key: "search", Read: func(d into[*ContentSignal], key string, v any) { d.tc.l.signal(key, v, &d.v.Search) }},
	{Key: "ai_input", Read: func(d into[*ContentSignal], key string, v any) { d.tc.l.signal(key, v, &d.v.AIInput) }},
	{Key: "ai_train", Read: func(d into[*ContentSignal], key string, v any) { d.tc.l.signal(key, v, &d.v.AITrain) }},
}}

// crawlerPolicy reads [robots] (§13.1, §16.6).
func (l *loader) crawlerPolicy(t map[string]any) {
	r := &l.cfg.Robots
	decode(l, robotsFields.Name, t, robotsFields, l)
	if r.Mode == "upstream" && r.HasPolicy() {
		l.add("HG190", "robots.mode", `mode = "upstream" forwards the upstream's robots.txt untouched: robots.group and robots.content_signal would never be written (use "generate" or "append")`)
	}
}

func (l *loader) contentSignal(key string, v any) {
	ct, ok := l.table(key, v)
	if !ok {
		return
	}
	cs := &ContentSignal{}
	decode(l, key, ct, contentSignalFields, into[*ContentSignal]{&tmplCtx{l: l}, cs})
	if cs.Line() != "" {
		l.cfg.Robots.ContentSignal = cs
	}
}

// signal reads one content signal: "yes" or "no".
func (l *loader) signal(key string, v any, dst *string) {
	var s string
	if !l.str(key, v, &s) {
		return
	}
	if s != "yes" && s != "no" {
		l.add("HG190", key, `%q is not "yes" or "no"`, s)
		return
	}
	*dst = s
}

func (l *loader) robotsGroups(key string, v any) {
	r := &l.cfg.Robots
	arr, _ := l.tables(key, v, "an array of tables ([[robots.group]])")
	explicit := map[string]string{} // lower-case agent → the key that names it
	var listed []map[string]bool    // per group: the agents @ai-training added
	for i, gt := range arr {
		listed = append(listed, l.robotsGroup(i, gt, explicit))
	}
	// An agent named in a group of its own leaves the @ai-training
	// expansions: the group that names it decides for it.
	for gi := range r.Groups {
		g := &r.Groups[gi]
		kept := g.UserAgents[:0]
		for _, a := range g.UserAgents {
			if k, ok := explicit[strings.ToLower(a)]; ok && !strings.HasPrefix(k, fmt.Sprintf("robots.group[%d].", gi)) && listed[gi][strings.ToLower(a)] {
				continue
			}
			kept = append(kept, a)
		}
		g.UserAgents = kept
	}
}

// groupDec is what the fields of one [[robots.group]] read into.
type groupDec struct {
	l        *loader
	g        *RobotsGroup
	listed   map[string]bool   // the agents @ai-training added (lower-case)
	explicit map[string]string // of every group: lower-case agent → the key that names it
}

// groupFields declares the keys of [[robots.group]].
var groupFields = &schema.Fields[*groupDec]{Name: "robots.group", List: []schema.Field[*groupDec]{
	{Key: "user_agents", Early: true, Read: (*groupDec).userAgents,
		NeedCode: "HG190", Need: `has no user_agents (add user_agents = ["@ai-training"] or a crawler's token)`},
	{Key: "allow", Early: true, Read: func(d *groupDec, key string, v any) { d.paths(key, v, &d.g.Allow) }},
	{Key: "disallow", Early: true, Read: func(d *groupDec, key string, v any) { d.paths(key, v, &d.g.Disallow) }},
}}

// robotsGroup reads one [[robots.group]]; it returns the agents that
// @ai-training added to it (lower-case).
func (l *loader) robotsGroup(i int, t map[string]any, explicit map[string]string) map[string]bool {
	path := fmt.Sprintf("robots.group[%d]", i)
	g := RobotsGroup{Line: schema.LineOf(l.lines, path)}
	d := &groupDec{l: l, g: &g, listed: map[string]bool{}, explicit: explicit}
	decode(l, path, t, groupFields, d)
	l.cfg.Robots.Groups = append(l.cfg.Robots.Groups, g)
	return d.listed
}

func (d *groupDec) userAgents(key string, v any) {
	l, g, listed, explicit := d.l, d.g, d.listed, d.explicit
	seen := map[string]bool{}
	agents, ok := l.strList(key, v)
	if !ok {
		return
	}
	if len(agents) == 0 {
		l.add("HG190", key, "names no agent")
	}
	for j, a := range agents {
		key := fmt.Sprintf("%s[%d]", key, j)
		switch {
		case a == aiTrainingList:
			if prev, dup := explicit[aiTrainingList]; dup {
				l.add("HG190", key, "%q is in %s already: its agents would be in two groups, and crawlers merge every group that names them", a, prev)
				continue
			}
			explicit[aiTrainingList] = key
			for _, x := range AITrainingAgents() {
				if !seen[strings.ToLower(x)] {
					seen[strings.ToLower(x)] = true
					listed[strings.ToLower(x)] = true
					g.UserAgents = append(g.UserAgents, x)
				}
			}
			continue
		case strings.HasPrefix(a, "@"):
			l.add("HG190", key, "%q is no list headgate knows (the one list is %q)", a, aiTrainingList)
			continue
		case a == "*":
			l.add("HG190", key, `"*" is headgate's own group (it writes User-agent: * first); name crawlers here`)
			continue
		case !validAgent(a):
			l.add("HG190", key, "%q is not a user-agent token: letters, digits, - and _ only (the product name, such as GPTBot, without a version)", a)
			continue
		}
		low := strings.ToLower(a)
		if prev, dup := explicit[low]; dup {
			l.add("HG190", key, "%q names the agent of %s again: name each agent once (crawlers merge every group that names it)", a, prev)
			continue
		}
		explicit[low] = key
		delete(listed, low)
		if !seen[low] {
			seen[low] = true
			g.UserAgents = append(g.UserAgents, a)
		}
	}
}

// paths reads a group's allow or disallow list.
func (d *groupDec) paths(key string, v any, dst *[]string) {
	list, ok := d.l.strList(key, v)
	if !ok {
		return
	}
	for j, p := range list {
		if why := robotsPath(p); why != "" {
			d.l.add("HG190", fmt.Sprintf("%s[%d]", key, j), "%q %s", p, why)
			continue
		}
		*dst = append(*dst, p)
	}
}

// llmsFields declares the keys of [llms_txt].
var llmsFields = &schema.Fields[into[*LLMSTxt]]{Name: "llms_txt", List: []schema.Field[into[*LLMSTxt]]{
	{Key: "title", Early: true, Read: func(d into[*LLMSTxt], key string, v any) {
		if l := d.tc.l; l.str(key, v, &d.v.Title) {
			if strings.TrimSpace(d.v.Title) == "" {
				l.add("HG191", key, "is empty")
			} else if strings.ContainsAny(d.v.Title, "\r\n") {
				l.add("HG191", key, "holds a line break: the H1 is one line")
			}
		}
	}, NeedCode: "HG191", Need: `has no title (the llms.txt H1, such as title = "Notes")`},
	{Key: "summary", Early: true, Read: func(d into[*LLMSTxt], key string, v any) { d.tc.l.str(key, v, &d.v.Summary) }},
	{Key: "section", Early: true, Read: func(d into[*LLMSTxt], key string, v any) { d.tc.l.llmsSections(key, v, d.v) }},
}}

// llmsSectionFields declares the keys of [[llms_txt.section]].
var llmsSectionFields = &schema.Fields[into[*LLMSSection]]{Name: "llms_txt.section", List: []schema.Field[into[*LLMSSection]]{
	{Key: "name", Early: true, Read: func(d into[*LLMSSection], key string, v any) {
		if l := d.tc.l; l.str(key, v, &d.v.Name) {
			if strings.TrimSpace(d.v.Name) == "" {
				l.add("HG191", key, "is empty")
			} else if strings.ContainsAny(d.v.Name, "\r\n") {
				l.add("HG191", key, "holds a line break: the H2 is one line")
			}
		}
	}, NeedCode: "HG191", Need: `has no name (the section's H2, such as name = "Docs")`},
	{Key: "match", Early: true, Read: func(d into[*LLMSSection], key string, v any) {
		s := d.v
		if l := d.tc.l; l.str(key, v, &s.Match) {
			p, err := ParsePattern(s.Match)
			if err != nil {
				l.add("HG120", key, "%q: %v", s.Match, err)
			} else {
				s.Pattern = p
			}
		}
	}, NeedCode: "HG191", Need: `has no match (the sitemap URLs it lists, such as match = "/docs/*")`},
	{Key: "max_links", Early: true, Read: func(d into[*LLMSSection], key string, v any) {
		d.tc.l.integer(key, v, 1, 50000, &d.v.MaxLinks)
	}},
}}

// llmsTxt reads [llms_txt].
func (l *loader) llmsTxt(t map[string]any) {
	x := &LLMSTxt{}
	decode(l, llmsFields.Name, t, llmsFields, into[*LLMSTxt]{&tmplCtx{l: l}, x})
	l.cfg.LLMSTxt = x
}

func (l *loader) llmsSections(key string, v any, x *LLMSTxt) {
	arr, _ := l.tables(key, v, "an array of tables ([[llms_txt.section]])")
	var fake []*Rule
	for i, st := range arr {
		s := LLMSSection{MaxLinks: DefaultMaxLinks}
		decode(l, fmt.Sprintf("%s[%d]", key, i), st, llmsSectionFields, into[*LLMSSection]{&tmplCtx{l: l}, &s})
		x.Sections = append(x.Sections, s)
		fake = append(fake, &Rule{Index: i, Match: s.Match, Pattern: s.Pattern})
	}
	x.table = &Config{table: newTable(fake, nil)}
}

// indexNowFields declares the keys of [indexnow].
var indexNowFields = &schema.Fields[into[*IndexNow]]{Name: "indexnow", List: []schema.Field[into[*IndexNow]]{
	{Key: "key", Early: true, Read: func(d into[*IndexNow], key string, v any) {
		if l := d.tc.l; l.str(key, v, &d.v.Key) {
			if why := checkIndexNowKey(d.v.Key); why != "" {
				l.add("HG192", key, "%s", why)
			}
		}
	}, NeedCode: "HG192", Need: "has no key (8 to 128 of a-z, A-Z, 0-9 and -; headgate serves it at /{key}.txt)"},
	{Key: "endpoint", Early: true, Read: func(d into[*IndexNow], key string, v any) {
		x, l := d.v, d.tc.l
		if !l.str(key, v, &x.Endpoint) {
			return
		}
		u, err := url.Parse(x.Endpoint)
		switch {
		case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
			l.add("HG192", key, "%q is not an http(s) URL", x.Endpoint)
		case u.User != nil || u.Fragment != "":
			l.add("HG192", key, "%q: an endpoint has no user info or fragment", x.Endpoint)
		}
	}},
}}

// indexNow reads [indexnow].
func (l *loader) indexNow(t map[string]any) {
	x := &IndexNow{Endpoint: DefaultIndexNowEndpoint}
	decode(l, indexNowFields.Name, t, indexNowFields, into[*IndexNow]{&tmplCtx{l: l}, x})
	l.cfg.IndexNow = x
}

// checkIndexNowKey says what is wrong with an IndexNow key, or "".
func checkIndexNowKey(k string) string {
	if len(k) < 8 || len(k) > 128 {
		return fmt.Sprintf("a key is 8 to 128 characters, not %d", len(k))
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '-' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return fmt.Sprintf("%q holds %q: a key is only a-z, A-Z, 0-9 and -", k, string(rune(c)))
		}
	}
	return ""
}

// crawlChecks are the checks across tables, made once every table is read.
func (l *loader) crawlChecks() {
	for _, r := range l.cfg.Rules {
		if r.Sitemap {
			return
		}
	}
	if l.cfg.LLMSTxt != nil {
		l.add("HG191", "llms_txt", "llms.txt lists the sitemap's URLs, but no rule has sitemap = true")
	}
	if l.cfg.IndexNow != nil {
		l.add("HG192", "indexnow", "headgate indexnow submits the sitemap's URLs, but no rule has sitemap = true")
	}
}

// crawl reads the top-level tables of §13.2 and §13.3.
func (l *loader) crawl(tree map[string]any) {
	if t := l.topTable(tree, llmsFields.Name, false); t != nil {
		l.llmsTxt(t)
	}
	if t := l.topTable(tree, indexNowFields.Name, false); t != nil {
		l.indexNow(t)
	}
	l.crawlChecks()
}
