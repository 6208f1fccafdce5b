package rules

import (
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/headgate/headgate/markdown"
	"github.com/headgate/headgate/rules/schema"
)

// Markdown is the [markdown] table (SPEC §19.1): which pages have a
// Markdown version and how it is made. A Config without the table, or
// with enabled = false, has Markdown == nil.
type Markdown struct {
	Match    []string // patterns of the pages with a Markdown version; default ["/*"]
	Content  []string // content selectors; nil: markdown.DefaultContent
	Remove   []string // removed subtrees; nil: markdown.DefaultRemove
	Suffix   string   // the path form's suffix, default ".md"; "" = no path form
	MaxBytes int64    // the largest page converted, bytes; default 8 MiB

	// Converter is compiled once at load with the options above, its
	// base the site's origin and §4.6's URL check.
	Converter *markdown.Converter

	all   bool    // Match covers every path ("/*"): no lookup per request
	table *Config // the Match patterns as a rule table, when not all
}

// Covers reports whether the page at path (percent-encoded, no query) has
// a Markdown version. nil covers nothing.
func (md *Markdown) Covers(path string) bool {
	if md == nil {
		return false
	}
	if md.all {
		return true
	}
	m := md.table.PooledMatch()
	md.table.ResolveInto(m, path)
	ok := len(m.Matched) > 0
	m.Release()
	return ok
}

// PagePath maps a request path to the page it names in the suffix path
// form: "/notes/3.md" → "/notes/3", "/docs/index.md" → "/docs/". ok is
// false when path is not a path form (no suffix configured, or the path
// does not end with it, or nothing is left before it).
func (md *Markdown) PagePath(path string) (page string, ok bool) {
	if md == nil || md.Suffix == "" || !strings.HasSuffix(path, md.Suffix) {
		return "", false
	}
	page = path[:len(path)-len(md.Suffix)]
	if page == "" || strings.HasSuffix(page, "/") {
		return "", false // "/.md", "/docs/.md": no page is named
	}
	if rest, ok := strings.CutSuffix(page, "/index"); ok {
		return rest + "/", true
	}
	return page, true
}

// FormPath is PagePath's inverse: the path form of a page path ("/docs/"
// → "/docs/index.md"); the page path itself without a suffix.
func (md *Markdown) FormPath(page string) string {
	if md == nil || md.Suffix == "" {
		return page
	}
	if strings.HasSuffix(page, "/") {
		return page + "index" + md.Suffix
	}
	return page + md.Suffix
}

// DefaultMarkdownMaxBytes is markdown.max_bytes when unset.
const DefaultMarkdownMaxBytes = markdown.DefaultMaxBytes

// markdownFields declares the keys of [markdown].
var markdownFields = &schema.Fields[into[*mdDec]]{Name: "markdown", List: []schema.Field[into[*mdDec]]{
	{Key: "enabled", Early: true, Read: func(d into[*mdDec], key string, v any) { d.tc.l.boolean(key, v, &d.v.enabled) }},
	{Key: "match", Read: func(d into[*mdDec], key string, v any) {
		l := d.tc.l
		list, ok := l.strList(key, v)
		if !ok {
			return
		}
		if len(list) == 0 {
			l.add("HG230", key, "is empty: no page would have a Markdown version (remove the key for every page, or set enabled = false)")
			return
		}
		d.v.md.Match = list
	}},
	{Key: "content", Read: func(d into[*mdDec], key string, v any) {
		if list, ok := d.tc.l.strList(key, v); ok {
			if len(list) == 0 {
				d.tc.l.add("HG231", key, `is empty: name at least one selector (such as "main")`)
				return
			}
			d.v.md.Content = list
		}
	}},
	{Key: "remove", Read: func(d into[*mdDec], key string, v any) {
		if list, ok := d.tc.l.strList(key, v); ok {
			d.v.md.Remove = append([]string{}, list...) // empty, not nil: remove nothing
		}
	}},
	{Key: "suffix", Read: func(d into[*mdDec], key string, v any) {
		l := d.tc.l
		var s string
		if !l.str(key, v, &s) {
			return
		}
		if why := checkSuffix(s); why != "" {
			l.add("HG232", key, "%q %s", s, why)
			return
		}
		d.v.md.Suffix = s
	}},
	{Key: "max_bytes", Read: func(d into[*mdDec], key string, v any) {
		var n int
		d.tc.l.size(key, v, 1<<10, 1<<30, &n)
		if n > 0 {
			d.v.md.MaxBytes = int64(n)
		}
	}},
}}

// mdDec is what [markdown]'s fields read into.
type mdDec struct {
	enabled bool
	md      *Markdown
}

// checkSuffix says what is wrong with a path form suffix, or "".
func checkSuffix(s string) string {
	switch {
	case s == "":
		return ""
	case s[0] != '.':
		return `does not start with "." (such as ".md")`
	case len(s) < 2 || len(s) > 16:
		return "is not 2 to 16 characters long"
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == '_') {
			return "holds a character other than letters, digits, '.', '-' and '_'"
		}
	}
	return ""
}

// markdownTable reads [markdown] (SPEC §19.1) after [site], whose origin
// the converter resolves links on.
func (l *loader) markdownTable(tree map[string]any) {
	t := l.topTable(tree, markdownFields.Name, false)
	if t == nil {
		return
	}
	d := &mdDec{md: &Markdown{Suffix: ".md", MaxBytes: DefaultMarkdownMaxBytes, Match: []string{"/*"}}}
	decode(l, markdownFields.Name, t, markdownFields, into[*mdDec]{&tmplCtx{l: l}, d})
	if !d.enabled {
		return
	}
	md := d.md
	var fake []*Rule
	for i, s := range md.Match {
		if s == "/*" {
			md.all = true
		}
		p, err := ParsePattern(s)
		if err != nil {
			l.add("HG120", fmt.Sprintf("markdown.match[%d]", i), "%q: %v", s, err)
			continue
		}
		fake = append(fake, &Rule{Index: i, Match: s, Pattern: p})
	}
	if !md.all {
		md.table = &Config{table: newTable(fake, nil), matches: &sync.Pool{New: func() any { return new(Match) }}}
	}
	origin := l.cfg.Site.BaseURL
	base, _ := url.Parse(origin + "/")
	conv, err := markdown.New(markdown.Options{
		Content: md.Content, Remove: md.Remove, MaxBytes: md.MaxBytes, Base: base,
		Resolve: markdownResolver(base),
	})
	if err != nil {
		for _, e := range unjoin(err) {
			l.add("HG231", "markdown.content", "%s", strings.TrimPrefix(e.Error(), "markdown: "))
		}
		return
	}
	md.Converter = conv
	l.cfg.Markdown = md
}

// markdownResolver is the Markdown converter's link and image resolver:
// a URL the upstream wrote, resolved on the page's URL as a browser
// resolves it (WHATWG, SPEC §23) and kept by §4.6's rules on site, the
// site's base URL, in one pass (AbsUpstreamURL). A page URL on another
// origin than the site's (a canonical elsewhere) resolves there, and the
// result must pass the rules on the site's origin too.
func markdownResolver(site *url.URL) func(*url.URL, string) (string, bool) {
	if site == nil {
		return nil
	}
	origin := site.Scheme + "://" + site.Host
	var last atomic.Pointer[pageHref]
	return func(page *url.URL, ref string) (string, bool) {
		var abs, why string
		if len(ref) > 0 && ref[0] == '#' && plainFragment(ref[1:]) {
			// Half a page's links are "#…" (a table of contents, notes):
			// the page's own URL, WHATWG-serialized once per page, and
			// the fragment as it is, which WHATWG would not encode.
			abs, why = fragmentHref(&last, page, ref)
		} else {
			abs, why = AbsUpstreamURL(page, ref)
		}
		if why != "" {
			return "", false
		}
		if page.Scheme != site.Scheme || page.Host != site.Host {
			return abs, ValidURL(origin, abs) == ""
		}
		return abs, true
	}
}

// pageHref is a page URL as net/url writes it (key) and as the WHATWG URL
// Standard does without its fragment (href; "" when it does not parse).
type pageHref struct{ key, href string }

// fragmentHref resolves ref, "#" and a plainFragment, on page, through
// last: the href of the page converted most recently.
func fragmentHref(last *atomic.Pointer[pageHref], page *url.URL, ref string) (string, string) {
	key := page.String()
	c := last.Load()
	if c == nil || c.key != key {
		c = &pageHref{key: key}
		if u, err := ResolveURL(key, ""); err == nil && (strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://")) {
			c.href = u
		}
		last.Store(c)
	}
	if c.href == "" {
		return AbsUpstreamURL(page, ref)
	}
	return c.href + ref, ""
}

// plainFragment reports whether s, a fragment, is printable ASCII that
// the WHATWG URL Standard's fragment percent-encode set leaves alone (no
// space, ", <, > or `).
func plainFragment(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '"' || c == '<' || c == '>' || c == '`' {
			return false
		}
	}
	return true
}

// unjoin lists the errors of an errors.Join, or err itself.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, unjoin(e)...)
		}
		return out
	}
	return []error{err}
}

// ContentUsage is the IETF aipref Content-Usage field value for the same
// preferences (draft-ietf-aipref-attach-05 §4: an RFC 9651 dictionary;
// draft-ietf-aipref-vocab-05 §3: the categories): ai_train is train-ai,
// search is search, y for "yes" and n for "no". The vocabulary has no
// category for ai_input (Content Signals' "use as input to AI answers"),
// so it only goes into Content-Signal. "" when neither is set.
func (c *ContentSignal) ContentUsage() string {
	if c == nil {
		return ""
	}
	if i, ok := c.index(); ok {
		return usageLines[i]
	}
	return c.contentUsage()
}

func (c *ContentSignal) contentUsage() string {
	var b strings.Builder
	for _, kv := range [...][2]string{{"train-ai", c.AITrain}, {"search", c.Search}} {
		if kv[1] == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(kv[0])
		if kv[1] == "yes" {
			b.WriteString("=y")
		} else {
			b.WriteString("=n")
		}
	}
	return b.String()
}

// ruleContentSignal reads a rule's content_signal table (§19.2), with the
// same keys and HG190 as robots.content_signal.
func (d *ruleDec) contentSignal(key string, v any) {
	ct, ok := d.l.table(key, v)
	if !ok {
		return
	}
	cs := &ContentSignal{}
	decode(d.l, key, ct, contentSignalFields, into[*ContentSignal]{d.tc, cs})
	if cs.Line() != "" {
		d.r.ContentSignal = cs
	}
}

// ContentSignal is the merged content_signal of the matching rules, key by
// key, the later rule winning (§2.3); nil when no rule sets one. It lives
// in m: valid until m is released.
func (m *Match) ContentSignal() *ContentSignal {
	if m.f.signal == (ContentSignal{}) {
		return nil
	}
	return &m.f.signal
}

// mergeSignal folds rule r's content_signal into f.
func (f *merged) mergeSignal(r *Rule) {
	cs := r.ContentSignal
	if cs == nil {
		return
	}
	if cs.Search != "" {
		f.signal.Search = cs.Search
	}
	if cs.AIInput != "" {
		f.signal.AIInput = cs.AIInput
	}
	if cs.AITrain != "" {
		f.signal.AITrain = cs.AITrain
	}
}

// signalSets reports whether rule r sets content_signal key ("search",
// "ai_input", "ai_train", or "" for any), for SetBy.
func signalSets(r *Rule, key string) bool {
	cs := r.ContentSignal
	if cs == nil {
		return false
	}
	switch key {
	case "search":
		return cs.Search != ""
	case "ai_input", "ai-input":
		return cs.AIInput != ""
	case "ai_train", "ai-train":
		return cs.AITrain != ""
	}
	return true
}

// MarkdownURL is the absolute URL of the Markdown version of m's page
// (§24: on base_url, the path form when markdown.suffix is set, else the
// page's own path); "" when the page has none: no [markdown], a path
// outside markdown.match, or rewrite = false.
func (m *Match) MarkdownURL() string {
	link := m.MarkdownLink()
	if link == "" {
		return ""
	}
	return link[1 : len(link)-len(markdownLinkTail)]
}

// MarkdownLink is the Link header value that names the page's Markdown
// version (`<URL>; rel="alternate"; type="text/markdown"`); "" when it has
// none. Made once per Match, in one allocation with MarkdownURL.
func (m *Match) MarkdownLink() string {
	if !m.mdDone {
		m.mdDone = true
		if path, index, ok := m.markdownParts(); ok {
			m.mdURL = "<" + m.cfg.Site.BaseURL + path + index + m.cfg.Markdown.Suffix + markdownLinkTail
		}
	}
	return m.mdURL
}

// markdownParts are the escaped path of the page's Markdown URL on
// base_url and what comes between it and markdown.suffix ("index" for a
// path ending in "/", when there is a suffix); false when the page has
// none.
func (m *Match) markdownParts() (path, index string, ok bool) {
	if !m.HasMarkdown() {
		return "", "", false
	}
	path = m.cfg.SpellPath(EscapePath(m.Path)) // as self spells it
	if m.cfg.Markdown.Suffix != "" && strings.HasSuffix(path, "/") {
		index = "index"
	}
	return path, index, true
}

const markdownLinkTail = `>; rel="alternate"; type="text/markdown"`

// HasMarkdown reports whether m's page has a Markdown version: [markdown]
// is on, the path is under markdown.match, and rewrite is not false.
func (m *Match) HasMarkdown() bool {
	c := m.cfg
	return c != nil && c.Markdown != nil && m.Rewrite() && c.Markdown.Covers(m.Path)
}

// WithMarkdown returns c when it has [markdown], else a copy of c with
// [markdown]'s defaults enabled (`headgate rewrite -markdown` on a config
// without the table).
func (c *Config) WithMarkdown() *Config {
	if c.Markdown != nil {
		return c
	}
	origin := c.Site.BaseURL
	base, _ := url.Parse(origin + "/")
	conv, err := markdown.New(markdown.Options{Base: base, Resolve: markdownResolver(base)})
	if err != nil {
		return c // the defaults compile: not reached
	}
	d := *c
	d.Markdown = &Markdown{Match: []string{"/*"}, Suffix: ".md", MaxBytes: DefaultMarkdownMaxBytes, Converter: conv, all: true}
	return &d
}
