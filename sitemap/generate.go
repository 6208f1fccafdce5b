package sitemap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/klauspost/compress/flate"

	"github.com/headgate/headgate/internal/robotsmeta"
	"github.com/headgate/headgate/rules"
)

const (
	urlsetClose = "</urlset>\n"
	indexClose  = "</sitemapindex>\n"
)

// generation is one run over the rules and their sources. It writes each
// entry's <url> elements into the compressed file being built as soon as
// the entry is read; nothing but the current entry is held uncompressed.
type generation struct {
	s      *Sitemap
	ctx    context.Context
	fw     *flate.Writer // reused from part to part
	budget int64         // body bytes a part may hold

	cur     *part
	parts   []*file
	total   int  // URLs written
	capped  bool // max_urls or the file limit reached: the rest is left out
	leftOut int  // URLs left out once capped

	rule *rules.Rule
	rep  *report

	vers  []version // the current entry's language versions
	buf   []byte    // the current entry's rendered <url> elements
	links []byte    // the current entry's <xhtml:link> elements
	ends  []int     // end of each <url> in buf

	lastmods map[string]string // raw → normalised: sources repeat their dates

	params map[string]string // the current entry's parameters
	kept   []version         // the current entry's listed versions
	llms   *llmsBuilder      // nil without [llms_txt]
	each   func(loc, lastmod string)
	// §16.5 (upstream_sitemap.go): what the current rule's source yielded,
	// and the rules whose source yielded lines but no entry.
	lines, nlisted int
	empty          []string
}

// version is one address of an entry: one locale of a localized rule.
type version struct {
	lang string // the locale as configured; "" for a rule that is not localized
	path string // percent-encoded, from the origin's root
	loc  string // absolute
}

// report collects what one rule left out in one generation: it becomes one
// warning.
type report struct {
	counts map[string]int
	total  int
	first  string // the first problem, for the log
}

// add counts an entry left out; detail is called for the first only.
func (r *report) add(reason string, pos position, detail func() string) {
	if r.counts == nil {
		r.counts = map[string]int{}
	}
	r.counts[reason]++
	r.total++
	if r.first == "" {
		d := detail()
		if len(d) > 300 {
			d = strings.ToValidUTF8(d[:300], "") + "…"
		}
		r.first = pos.String() + ": " + d
	}
}

func (g *generation) logReport() {
	r := g.rep
	if r.total == 0 {
		return
	}
	reasons := make([]string, 0, len(r.counts))
	for k := range r.counts {
		reasons = append(reasons, k)
	}
	sort.Strings(reasons)
	attrs := make([]any, 0, len(reasons))
	for _, k := range reasons {
		attrs = append(attrs, slog.Int(k, r.counts[k]))
	}
	args := []any{"rule", g.rule.Match, "left_out", r.total, slog.Group("reasons", attrs...), "first", r.first}
	if g.rule.SitemapSource != "" {
		args = append(args, "source", g.rule.SitemapSource)
	}
	g.s.log.Warn("sitemap: entries left out", args...)
}

func (g *generation) run() (res *result, err error) {
	for _, r := range g.s.cfg.Rules {
		if !r.Sitemap || r.Pattern == nil {
			continue
		}
		if err := g.ctx.Err(); err != nil {
			return nil, err
		}
		g.rule, g.rep = r, &report{}
		g.lines, g.nlisted = 0, 0
		err := g.doRule()
		g.logReport()
		if err == nil {
			g.checkEmpty()
		}
		if err != nil {
			return nil, fmt.Errorf("rule %q: sitemap_source %q: %w", r.Match, r.SitemapSource, err)
		}
	}
	if g.cur != nil || len(g.parts) == 0 {
		if g.cur == nil {
			// No URL at all: an empty <urlset>, which crawlers read as an
			// empty sitemap (sitemap.xsd wants one <url>; see doc.go).
			g.cur = newPart(g.fw, g.s.urlsetPre)
		}
		g.finishPart()
	}
	if g.leftOut > 0 {
		// After the last part is finished: files counts every file written.
		g.s.log.Warn("sitemap: limit reached; the rest is left out",
			"max_urls", g.s.maxURLs, "files", len(g.parts), "urls_written", g.total, "urls_left_out", g.leftOut)
	}
	res = &result{urls: g.total, empty: g.empty}
	if len(g.parts) == 1 {
		res.main = g.parts[0]
		return res, nil
	}
	res.parts = g.parts
	res.main = g.index()
	return res, nil
}

func (g *generation) doRule() error {
	r := g.rule
	if !r.Pattern.HasParams() {
		// One entry; its lastmod is the latest date the entries and the
		// source give.
		latest := ""
		take := func(raw string, pos position) {
			if lm, ok := g.lastmod(raw, pos); ok && lm > latest {
				latest = lm
			}
		}
		for i, e := range r.SitemapEntries {
			take(e.Lastmod, position{posStatic, i})
		}
		if r.SitemapSource != "" {
			if err := g.source(func(rec *record) {
				if rec.Loc == "" || g.ownLoc(rec) {
					take(rec.Lastmod, rec.Pos)
				}
			}); err != nil {
				return err
			}
		}
		path, err := r.Pattern.Fill(nil)
		if err != nil {
			g.rep.add(reasonMissing, position{kind: posPattern}, err.Error)
			return nil
		}
		g.params = nil
		g.emit(path, latest, position{kind: posPattern})
		return nil
	}
	for i, e := range r.SitemapEntries {
		g.entry(e.Params, e.Lastmod, position{posStatic, i})
	}
	if r.SitemapSource != "" {
		return g.source(g.record)
	}
	return nil
}

// source streams the rule's source through fn, within SourceTimeout.
func (g *generation) source(fn func(*record)) error {
	ctx, cancel := context.WithTimeout(g.ctx, g.s.timeout)
	defer cancel()
	if path, ok := strings.CutPrefix(g.rule.SitemapSource, upstreamSitemapPrefix); ok {
		return g.upstreamSitemap(ctx, path, fn)
	}
	rc, err := g.s.openSource(ctx, g.rule.SitemapSource)
	if err != nil {
		return err
	}
	defer rc.Close()
	err = scan(rc, func(rec *record) { g.lines++; fn(rec) }, func(pos position, p problem) { g.lines++; g.rep.add(p.reason, pos, p.detail) })
	if err != nil && ctx.Err() == context.DeadlineExceeded && g.ctx.Err() == nil {
		err = fmt.Errorf("not read within %v: %w", g.s.timeout, err)
	}
	return err
}

// lastmod normalises a lastmod, counting a bad one.
func (g *generation) lastmod(raw string, pos position) (string, bool) {
	if lm, ok := g.lastmods[raw]; ok {
		return lm, true
	}
	lm, ok := parseLastmod(raw)
	if !ok {
		g.rep.add(reasonBadLastmod, pos, func() string {
			return fmt.Sprintf("lastmod %.60q is neither RFC 3339, YYYY-MM-DD HH:MM:SS nor YYYY-MM-DD: the URL is listed without it", raw)
		})
	} else {
		if g.lastmods == nil || len(g.lastmods) >= 4096 {
			g.lastmods = make(map[string]string)
		}
		g.lastmods[raw] = lm
	}
	return lm, ok
}

// entry lists one entry of a parameterised rule.
func (g *generation) entry(params map[string]string, rawLastmod string, pos position) {
	lm, _ := g.lastmod(rawLastmod, pos) // a bad date is dropped, not the URL (§16.5)
	path, err := g.rule.Pattern.Fill(params)
	if err != nil {
		g.rep.add(classify(err), pos, err.Error)
		return
	}
	g.params = params
	g.emit(path, lm, pos)
}

// classify names the reason Pattern.Fill refused params.
func classify(err error) string {
	var fe *rules.FillError
	if !errors.As(err, &fe) {
		return reasonConstraint
	}
	switch fe.Reason {
	case rules.FillMissing, rules.FillEmpty:
		return reasonMissing
	case rules.FillSlash:
		return reasonSlash
	case rules.FillDotOrNUL:
		if strings.IndexByte(fe.Value, 0) >= 0 {
			return reasonNUL
		}
		return reasonDot
	}
	return reasonConstraint
}

// emit writes the <url> elements of one entry whose path is filled: one
// per locale for a localized rule, each naming every version.
func (g *generation) emit(path, lastmod string, pos position) {
	s := g.s
	base := s.cfg.Site.BaseURL
	path = s.cfg.SpellPath(path) // site.path_safe: the app's spelling, as self writes it (§23)
	g.vers = g.vers[:0]
	if g.rule.Localized {
		for _, l := range s.cfg.Site.Locales {
			g.vers = append(g.vers, version{lang: l, path: "/" + l + path})
		}
	} else {
		g.vers = append(g.vers, version{path: path})
	}
	for i := range g.vers {
		v := &g.vers[i]
		v.loc = base + v.path
		if len(v.loc) > maxLoc {
			g.rep.add(reasonLocTooLong, pos, func() string {
				return fmt.Sprintf("<loc> of %d characters (at most %d): %.100s…", len(v.loc), maxLoc, v.loc)
			})
			return
		}
		if !printableASCII(v.loc) {
			g.rep.add(reasonUnsafe, pos, func() string {
				return fmt.Sprintf("<loc> %.100q holds bytes outside printable ASCII", v.loc)
			})
			return
		}
	}
	kept := g.vers[:0]
	for _, v := range g.vers {
		if why := g.check(v.path, true); why != "" || g.redirected(v.path, &why) {
			g.rep.add(why, pos, func() string { return whyText(why, v.loc) })
			continue
		}
		kept = append(kept, v)
	}
	if len(kept) == 0 {
		return
	}
	g.nlisted += len(kept)
	if g.capped || g.total+len(kept) > s.maxURLs {
		g.capped = true
		g.leftOut += len(kept)
		return
	}
	xdefault := ""
	if g.rule.Localized && s.cfg.Site.XDefault && g.check(path, false) == "" {
		xdefault = base + path
	}
	links := g.render(kept, lastmod, xdefault)
	g.kept = kept
	g.place(len(kept) > 0 && (g.rule.Localized || links), lastmod)
}

func whyText(why, loc string) string {
	switch why {
	case reasonDenied:
		return "a deny rule matches " + loc
	case reasonNoindex:
		return "the rules make " + loc + " noindex"
	case reasonRedirected:
		return loc + " is redirected (§11): the sitemap lists final addresses"
	}
	return "the rules give " + loc + " another canonical"
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// check says why an address must not be listed: a deny rule matches it
// or, when full, the merged rules make it noindex or name another
// canonical. "" when it may be listed.
func (g *generation) check(path string, full bool) string {
	s := g.s
	if !s.resolve {
		return ""
	}
	if s.prefixes != nil {
		d := path
		if strings.IndexByte(d, '%') >= 0 {
			var err error
			if d, err = url.PathUnescape(d); err != nil {
				d = path
			}
		}
		d = collapse(d)
		hit := false
		for _, p := range s.prefixes {
			if hit = mayMatch(d, p); hit {
				break
			}
		}
		if !hit {
			return ""
		}
	}
	m := s.cfg.Resolve(path)
	if m.Deny {
		return reasonDenied
	}
	if full && s.checkHead && m.Any() {
		h := m.Render(rules.Page{})
		if h.Robots != nil && robotsmeta.Noindex(*h.Robots) {
			return reasonNoindex
		}
		if h.Canonical != nil {
			c, _, _ := strings.Cut(*h.Canonical, "?")
			if c != s.cfg.Site.BaseURL+path {
				return reasonCanonical
			}
		}
	}
	return ""
}

// render writes the entry's <url> elements into g.buf. Every <url> of a
// localized entry carries the same links: they are rendered once. A <url>
// whose address is in an hreflang table's group carries that group's
// links instead (§12.3); render reports whether any did.
func (g *generation) render(kept []version, lastmod, xdefault string) (tableLinks bool) {
	b, ends, links := g.buf[:0], g.ends[:0], g.links[:0]
	if g.rule.Localized {
		for _, a := range kept {
			links = appendLink(links, a.lang, a.loc)
		}
		if xdefault != "" {
			links = appendLink(links, "x-default", xdefault)
		}
	}
	for _, v := range kept {
		b = append(b, "<url>\n  <loc>"...)
		b = appendEscaped(b, v.loc)
		b = append(b, "</loc>\n"...)
		if lastmod != "" {
			b = append(b, "  <lastmod>"...)
			b = append(b, lastmod...)
			b = append(b, "</lastmod>\n"...)
		}
		if alts := g.s.cfg.Alternates(v.loc); alts != nil {
			for _, a := range alts {
				b = appendLink(b, a.Hreflang, a.Href)
			}
			tableLinks = true
		} else {
			b = append(b, links...)
		}
		b = append(b, "</url>\n"...)
		ends = append(ends, len(b))
	}
	g.buf, g.ends, g.links = b, ends, links
	return tableLinks
}

func appendLink(b []byte, lang, href string) []byte {
	b = append(b, `  <xhtml:link rel="alternate" hreflang="`...)
	b = appendEscaped(b, lang)
	b = append(b, `" href="`...)
	b = appendEscaped(b, href)
	return append(b, "\"/>\n"...)
}

// appendEscaped appends s escaped for XML text and attribute values.
func appendEscaped(b []byte, s string) []byte {
	last := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c > '>' || c != '&' && c != '<' && c != '>' && c != '"' && c != '\'' {
			continue
		}
		var esc string
		switch c {
		case '&':
			esc = "&amp;"
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '"':
			esc = "&quot;"
		default:
			esc = "&apos;"
		}
		b = append(b, s[last:i]...)
		b = append(b, esc...)
		last = i + 1
	}
	return append(b, s[last:]...)
}

// place puts the rendered entry into the current file. An entry whose
// versions do not all fit starts the next file; one larger than a whole
// file (more locales than max_urls_per_file) is spread over files.
func (g *generation) place(links bool, lastmod string) {
	n := len(g.ends)
	if g.cur != nil && (g.cur.urls+n > g.s.perFile || g.cur.size+int64(len(g.buf)) > g.budget) {
		g.finishPart()
	}
	start := 0
	for i, end := range g.ends {
		u := g.buf[start:end]
		start = end
		if g.cur != nil && (g.cur.urls+1 > g.s.perFile || g.cur.size+int64(len(u)) > g.budget) {
			g.finishPart()
		}
		if g.cur == nil {
			if len(g.parts) == maxFiles {
				g.capped = true
				g.leftOut += n - i
				return
			}
			g.cur = newPart(g.fw, g.s.urlsetPre)
		}
		g.cur.write(u)
		g.cur.urls++
		g.cur.links = g.cur.links || links
		if lastmod > g.cur.lastmod {
			g.cur.lastmod = lastmod
		}
		g.total++
		g.listed(i, lastmod)
	}
}

func (g *generation) finishPart() {
	which := 0
	if g.cur.links {
		which = 1
	}
	g.parts = append(g.parts, g.cur.finish(urlsetClose, which))
	g.cur = nil
}

// index builds the <sitemapindex> naming every part.
func (g *generation) index() *file {
	p := newPart(g.fw, g.s.indexPre)
	var b []byte
	for i, f := range g.parts {
		b = append(b[:0], "<sitemap>\n  <loc>"...)
		b = appendEscaped(b, g.s.cfg.Site.BaseURL+"/sitemap-"+strconv.Itoa(i+1)+".xml")
		b = append(b, "</loc>\n"...)
		if f.lastmod != "" {
			b = append(b, "  <lastmod>"...)
			b = append(b, f.lastmod...)
			b = append(b, "</lastmod>\n"...)
		}
		b = append(b, "</sitemap>\n"...)
		p.write(b)
		p.urls++
	}
	return p.finish(indexClose, 0)
}
