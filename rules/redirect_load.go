package rules

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/headgate/headgate/internal/datafile"
	"github.com/headgate/headgate/internal/pct"
	"github.com/headgate/headgate/rules/pattern"
	"github.com/headgate/headgate/rules/redirect"
)

// Bounds of one redirect table: a million rows of long URLs fit well
// within them; a file past them is refused whole (HG180), not cut.
const (
	maxRedirectRows        = 4_000_000
	maxRedirectRowProblems = 20 // per table; the rest are counted
	maxCycleProblems       = 10
)

// loadRedirectTable reads a [[redirect_table]]'s file. Every row is checked;
// a table with any bad row is reported (HG180, the table's file:line) and
// the config is refused, so a table is never in service half-loaded.
func (l *loader) loadRedirectTable(key string, rt *RedirectTable) {
	o := datafile.Options{MaxBytes: redirect.MaxFileBytes}
	switch strings.ToLower(filepath.Ext(rt.Path)) {
	case ".jsonl", ".ndjson", ".json":
		// Lines may leave out status, and carry columns of their own.
		o.Columns, o.IgnoreOther = []string{"from", "to", "status"}, true
	}
	r, err := datafile.Open(rt.Path, o)
	if err != nil {
		l.dataProblem(key, rt, err)
		return
	}
	defer r.Close()
	col := map[string]int{"from": -1, "to": -1, "status": -1}
	for i, c := range r.Columns() {
		c = strings.ToLower(c) // a spreadsheet's "From", "To"
		if j, ok := col[c]; ok && j < 0 {
			col[c] = i
		}
	}
	if col["from"] < 0 {
		l.probs = append(l.probs, Problem{Code: "HG180", File: rt.Path, Line: 1, Key: key,
			Message: fmt.Sprintf("the header row has no from column (columns: %s; a redirect table has from, to and an optional status)", strings.Join(r.Columns(), ", "))})
		return
	}
	if col["to"] < 0 && rt.Status != 410 {
		l.probs = append(l.probs, Problem{Code: "HG180", File: rt.Path, Line: 1, Key: key,
			Message: fmt.Sprintf("the header row has no to column (columns: %s)", strings.Join(r.Columns(), ", "))})
		return
	}
	origin := l.cfg.Site.BaseURL
	if origin == "" {
		origin = "https://base.invalid"
	}
	t := &redirect.Table{File: rt.Path, Origin: origin, Drop: rt.Drop}
	if fi, err := os.Stat(rt.Path); err == nil {
		t.Reserve(fi.Size())
	}
	bad := 0
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil && !datafile.RowError(err) {
			l.dataProblem(key, rt, err)
			return
		}
		if err != nil {
			// One row's problem: reported, and the rest is read, so that
			// one run lists every bad row (§3.1).
			if bad++; bad <= maxRedirectRowProblems {
				l.dataProblem(key, rt, err)
			}
			continue
		}
		if c, n := l.longCell(rec.Values); n > 0 || len(rec.Values) > col["to"] && col["to"] >= 0 && len(rec.Values[col["to"]]) > min(maxRedirectToBytes, l.cfg.TableLimits.MaxCellBytes) {
			msg := ""
			if n > 0 {
				msg = fmt.Sprintf("column %s holds %d bytes, over tables.max_cell_bytes (%d)", r.Columns()[c], n, l.cfg.TableLimits.MaxCellBytes)
			} else {
				msg = fmt.Sprintf("to holds %d bytes, over the %d a Location may (§23)", len(rec.Values[col["to"]]), min(maxRedirectToBytes, l.cfg.TableLimits.MaxCellBytes))
			}
			if bad++; bad <= maxRedirectRowProblems {
				l.probs = append(l.probs, Problem{Code: "HG180", File: rt.Path, Line: rec.Line, Key: key, Message: msg})
			}
			continue
		}
		cell := func(name string) string {
			if i := col[name]; i >= 0 && i < len(rec.Values) {
				return strings.Trim(rec.Values[i], " \t")
			}
			return ""
		}
		msg := l.addRedirectRow(t, rt, cell("from"), cell("to"), cell("status"), rec.Line)
		if msg == "" {
			if t.Len() > maxRedirectRows {
				l.probs = append(l.probs, Problem{Code: "HG180", File: rt.Path, Line: rec.Line, Key: key,
					Message: fmt.Sprintf("more than %d rows: split the table, or move the old URLs to a pattern", maxRedirectRows)})
				return
			}
			continue
		}
		bad++
		if bad <= maxRedirectRowProblems {
			l.probs = append(l.probs, Problem{Code: "HG180", File: rt.Path, Line: rec.Line, Key: key, Message: msg})
		}
	}
	if bad > maxRedirectRowProblems {
		l.probs = append(l.probs, Problem{Code: "HG180", File: rt.Path, Key: key,
			Message: fmt.Sprintf("%d more rows with problems (the first %d are listed)", bad-maxRedirectRowProblems, maxRedirectRowProblems)})
	}
	l.dataFile(rt.Path, r.Sum())
	if bad > 0 {
		return
	}
	rt.t, rt.Rows = t, t.Len()
}

// dataProblem reports a datafile error: at the table's file:line for a
// row, at the config's file key for the file as a whole.
func (l *loader) dataProblem(key string, rt *RedirectTable, err error) {
	var de *datafile.Error
	if errors.As(err, &de) && de.Line > 0 {
		l.probs = append(l.probs, Problem{Code: "HG180", File: de.File, Line: de.Line, Key: key, Message: de.Msg})
		return
	}
	msg := err.Error()
	if de != nil {
		msg = de.Msg
	}
	l.add("HG180", key+".file", "%s: %s", rt.Path, msg)
}

// addRedirectRow checks one row and adds it; it returns what is wrong with it.
func (l *loader) addRedirectRow(t *redirect.Table, rt *RedirectTable, from, to, status string, line int) string {
	st := rt.Status
	if status != "" {
		n, err := strconv.Atoi(status)
		if err != nil || !validStatus(n) {
			return fmt.Sprintf("status %q is not one of 301, 302, 307, 308, 410", status)
		}
		st = n
	}
	if from == "" {
		return "from is empty"
	}
	if hasControl(from) {
		return fmt.Sprintf("from %q holds a control character", from)
	}
	origin := l.cfg.Site.BaseURL
	if origin == "" {
		origin = "https://base.invalid"
	}
	p := from
	if _, _, ok := cutScheme(p); ok {
		// A full URL, as crawl exports list them: it must be on the site.
		if len(p) < len(origin) || !strings.EqualFold(p[:len(origin)], origin) ||
			len(p) > len(origin) && !strings.ContainsRune("/?", rune(p[len(origin)])) {
			return fmt.Sprintf("from %q is not a path on site.base_url's origin %s", from, origin)
		}
		p = p[len(origin):]
		if p == "" || p[0] == '?' {
			p = "/" + p
		}
	}
	if p[0] != '/' || len(p) > 1 && (p[1] == '/' || p[1] == '\\') {
		return fmt.Sprintf("from %q is not a path (a request path starts with a single /)", from)
	}
	if strings.IndexByte(p, '#') >= 0 {
		return fmt.Sprintf("from %q holds a fragment (#…), which never reaches a server", from)
	}
	if strings.ContainsAny(p, " \t") {
		return fmt.Sprintf("from %q holds a space (percent-encode it as %%20)", from)
	}
	path, q, _ := strings.Cut(p, "?")
	if CheckPath(path) != nil {
		return fmt.Sprintf("from %q holds a dot segment, a NUL or bad percent-encoding: no request has that path", from)
	}
	key := l.cfg.Normalize.path(pct.CanonHex(EscapePath(path)))
	pairs, ok := redirect.SplitPairs(q)
	if !ok {
		return fmt.Sprintf("from %q: the query does not decode", from)
	}
	if len(pairs)/2 > 255 {
		return fmt.Sprintf("from %q has more than 255 query pairs", from)
	}
	for _, s := range pairs {
		if hasControl(s) {
			return fmt.Sprintf("from %q: the query holds a control character", from)
		}
	}
	var flags uint8
	if len(pairs) > 0 || rt.Drop {
		flags |= redirect.RowDrop
	}
	stored := ""
	switch {
	case st == 410 && to != "":
		return fmt.Sprintf("status 410 (gone) has no target, but to is %q", to)
	case st == 410:
		flags |= redirect.RowGone
	case to == "":
		return "to is empty (a path such as /new, an absolute http(s) URL, or status 410 for gone)"
	default:
		tg, why := parseTarget(origin, to)
		if why != "" {
			return fmt.Sprintf("to %q: %s", to, why)
		}
		tg = normTargetPath(&l.cfg.Normalize, origin, tg)
		if tg.origin != "" {
			flags |= redirect.RowAbs
			stored = tg.url("")
		} else {
			stored = tg.local()
		}
		if len(pairs) == 0 && tg.origin == "" && stored == key && pct.CanonHex(EscapePath(path)) != key {
			// Normalization makes the two one address (a row /About,/about
			// under lowercase, /about/,/about under strip): it redirects
			// such a request itself, and the row would only lead back to
			// where normalization ends. Not a cycle: left out, counted.
			rt.Redundant++
			return ""
		}
	}
	if prev := t.Add(key, pairs, stored, st, flags, line); prev != 0 {
		return fmt.Sprintf("from %q is also on line %d: each address is listed once (which target was meant can not be guessed)", from, prev)
	}
	return ""
}

// normTargetPath makes a target the address normalization would end at:
// one whose origin normalization sends to site (a redirect host, http
// when https is on, site's own origin with an explicit default port) is
// on the site; a path on the site is respelled and normalized. So a chain
// through normalization is collapsed like any other, and a target that
// comes back to its own source through it is a cycle (HG181).
func normTargetPath(n *Normalize, site string, t target) target {
	if t.origin != "" && n.onSite(t.origin, site) {
		t.origin = ""
	}
	if t.origin == "" {
		t.path = n.path(RespellPath(t.path))
	}
	return t
}

func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c == 0xc2 && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] <= 0x9f {
			return true
		}
	}
	return false
}

// compileRedirects builds the redirector, collapses chains (HG181 for a
// cycle) and checks that no static canonical or parameterless sitemap
// address is a redirect source (HG182).
func (l *loader) compileRedirects() {
	c := &l.cfg
	n := &c.Normalize
	if len(c.Redirects) == 0 && len(c.RedirectTables) == 0 && !n.HTTPS && len(n.RedirectHosts) == 0 && !n.pathOn() {
		return
	}
	origin := c.Site.BaseURL
	if origin == "" {
		origin = "https://base.invalid"
	}
	rd := &redirector{origin: origin, file: l.file, n: n, tables: c.RedirectTables, rules: c.Redirects}
	if len(n.RedirectHosts) > 0 {
		rd.hosts = map[string]bool{}
		for _, h := range n.RedirectHosts {
			rd.hosts[h] = true
		}
	}
	var pseudo []*Rule
	for _, r := range c.Redirects {
		if r.Pattern == nil {
			continue
		}
		if why := deadPattern(n, r.Pattern); why != "" {
			l.add("HG180", fmt.Sprintf("redirect[%d].from", r.Index), "%q %s", r.From, why)
		}
		// Index: the pattern table ranks its rules by a dense index; a
		// [[redirect]] refused above has none.
		r.rule = &Rule{Index: len(pseudo), Line: r.Line, Match: r.From, Pattern: r.Pattern}
		pseudo = append(pseudo, r.rule)
		rd.templated = rd.templated || r.To != nil && !r.To.Static()
		if r.To != nil && r.To.Static() {
			tg, why := parseTarget(origin, r.To.render(&vars{baseURL: origin}, true))
			if why == "" {
				tg = rd.normTarget(tg)
				r.final = &tg
			}
		}
	}
	if len(pseudo) > 0 {
		rd.pt = newTable(pseudo, nil)
	}
	c.redir = rd
	l.collapse(rd)
	for _, rt := range rd.tables {
		if rt.t != nil {
			rt.t.Finish() // after collapse, which may append targets
		}
	}
	l.checkRedirectSources()
}

// rnode is a static redirect source: a table row or a static rule.
type rnode struct {
	t   *RedirectTable
	row uint32 // index + 1
	r   *RedirectRule
}

// chains collapses chains at load.
type chains struct {
	l      *loader
	rd     *redirector
	tstate [][]uint8 // per table, per row: 0 new, 1 on the current chain, 2 done
	rstate []uint8
	stack  []rnode
	cycles int
}

func (ch *chains) state(n rnode) *uint8 {
	if n.r != nil {
		return &ch.rstate[n.r.Index]
	}
	return &ch.tstate[n.t.Index][n.row-1]
}

// targetOf is a node's target: its own before its chain is followed, its
// final one after.
func (ch *chains) targetOf(n rnode) (target, bool) {
	if n.r != nil {
		if n.r.To == nil || n.r.gone {
			return target{}, true
		}
		return *n.r.final, false
	}
	r := n.t.t.Row(n.row)
	if r.Flags&redirect.RowGone != 0 {
		return target{}, true
	}
	return splitLocal(r.To, r.Flags&redirect.RowAbs != 0), false
}

func (ch *chains) setFinal(n rnode, t target, gone bool) {
	if n.r != nil {
		n.r.gone = gone
		if !gone {
			// Copies: a target read from a table aliases its arena, which
			// finish replaces.
			f := target{origin: strings.Clone(t.origin), path: strings.Clone(t.path), query: strings.Clone(t.query), hasQuery: t.hasQuery, frag: strings.Clone(t.frag)}
			n.r.final = &f
		}
		return
	}
	if gone {
		n.t.t.SetTarget(n.row, "", false, true)
		return
	}
	if t.origin != "" {
		n.t.t.SetTarget(n.row, t.url(""), true, false)
		return
	}
	n.t.t.SetTarget(n.row, t.local(), false, false)
}

func (ch *chains) where(n rnode) (string, int) {
	if n.r != nil {
		return ch.l.file, n.r.Line
	}
	return n.t.Path, int(n.t.t.Row(n.row).Line)
}

func (ch *chains) from(n rnode) string {
	if n.r != nil {
		return n.r.From
	}
	r := n.t.t.Row(n.row)
	s := n.t.t.FromPath(n.row)
	if r.NPairs > 0 {
		parts := strings.Split(strings.TrimSuffix(r.Pairs, "\x00"), "\x00")
		for i := 0; i+1 < len(parts); i += 2 {
			sep := "&"
			if i == 0 {
				sep = "?"
			}
			s += sep + url.QueryEscape(parts[i]) + "=" + url.QueryEscape(parts[i+1])
		}
	}
	return s
}

// next finds the static node a target leads to; ok is false when it leads
// nowhere (or to a templated rule, followed at request time).
func (ch *chains) next(t target) (rnode, bool) {
	if t.origin != "" {
		return rnode{}, false
	}
	q := redirect.Query{Raw: t.query}
	h := ch.rd.lookup(t.path, &q)
	switch {
	case h.table != nil:
		return rnode{t: h.table, row: h.row}, true
	case h.rule != nil && (h.rule.final != nil || h.rule.To == nil):
		return rnode{r: h.rule}, true
	}
	return rnode{}, false
}

func (ch *chains) resolve(start rnode) {
	ch.stack = append(ch.stack[:0], start)
	*ch.state(start) = 1
	cur, gone := ch.targetOf(start)
	for !gone {
		n, ok := ch.next(cur)
		if !ok {
			break
		}
		st := ch.state(n)
		if *st == 2 {
			cur, gone = ch.targetOf(n)
			break
		}
		if *st == 1 {
			ch.cycle(n)
			for _, s := range ch.stack {
				*ch.state(s) = 2
			}
			return
		}
		*st = 1
		ch.stack = append(ch.stack, n)
		cur, gone = ch.targetOf(n)
	}
	for _, s := range ch.stack {
		ch.setFinal(s, cur, gone)
		*ch.state(s) = 2
	}
}

func (ch *chains) cycle(at rnode) {
	ch.cycles++
	if ch.cycles > maxCycleProblems {
		return
	}
	i := 0
	for i < len(ch.stack) && ch.stack[i] != at {
		i++
	}
	loop := ch.stack[i:]
	var names, places []string
	for j, n := range loop {
		if j == 6 {
			names = append(names, "…")
			break
		}
		names = append(names, ch.from(n))
		f, line := ch.where(n)
		places = append(places, fmt.Sprintf("%s:%d", f, line))
	}
	names = append(names, ch.from(at))
	f, line := ch.where(at)
	key := ""
	if at.r != nil {
		key = fmt.Sprintf("redirect[%d]", at.r.Index)
	} else {
		key = fmt.Sprintf("redirect_table[%d]", at.t.Index)
	}
	ch.l.probs = append(ch.l.probs, Problem{Code: "HG181", File: f, Line: line, Key: key,
		Message: fmt.Sprintf("redirect cycle: %s (%s)", strings.Join(names, " → "), strings.Join(places, ", "))})
}

func (l *loader) collapse(rd *redirector) {
	ch := &chains{l: l, rd: rd, tstate: make([][]uint8, len(rd.tables)), rstate: make([]uint8, len(rd.rules))}
	for _, rt := range rd.tables {
		if rt.t != nil {
			ch.tstate[rt.Index] = make([]uint8, rt.t.Len())
		}
	}
	for _, r := range rd.rules {
		if r.rule != nil && (r.final != nil || r.To == nil) && ch.rstate[r.Index] == 0 {
			ch.resolve(rnode{r: r})
		}
	}
	for _, rt := range rd.tables {
		if rt.t == nil {
			continue
		}
		for i := range rt.t.Len() {
			if ch.tstate[rt.Index][i] == 0 {
				ch.resolve(rnode{t: rt, row: uint32(i + 1)})
			}
		}
	}
	if ch.cycles > maxCycleProblems {
		l.probs = append(l.probs, Problem{Code: "HG181", File: l.file,
			Message: fmt.Sprintf("%d more redirect cycles", ch.cycles-maxCycleProblems)})
	}
}

// checkRedirectSources refuses a static canonical, or the address of a
// parameterless sitemap rule, that would itself be redirected (HG182): a
// canonical must name the final address.
func (l *loader) checkRedirectSources() {
	c := &l.cfg
	origin := c.Site.BaseURL
	if origin == "" {
		return
	}
	base, err := url.Parse(origin + "/")
	if err != nil {
		return
	}
	for i, r := range c.Rules {
		path := fmt.Sprintf("rule[%d]", i)
		if ct := r.Canonical; ct != nil && ct.Raw != "self" && ct.Static() {
			s := ct.render(&vars{baseURL: origin}, true)
			if abs, why := AbsURL(base, s); why == "" && strings.HasPrefix(abs, origin+"/") {
				if c.WouldRedirect(abs[len(origin):]) {
					l.add("HG182", path+".canonical", "%q is redirected: a canonical names the final address", s)
				}
			} else if o := originOf(abs); why == "" && o != "" {
				switch {
				case (&Normalize{}).onSite(o, origin):
					// The site's own origin spelled another way (":443",
					// an upper-case host): its path is what a request
					// for it would be redirected by.
					p := abs[len(o):]
					if !strings.HasPrefix(p, "/") {
						p = "/" + p
					}
					if c.WouldRedirect(p) {
						l.add("HG182", path+".canonical", "%q is redirected: a canonical names the final address", s)
					}
				case c.Normalize.onSite(o, origin):
					// Another origin that normalization sends to this one
					// (a redirect host, http with https on): redirected too.
					l.add("HG182", path+".canonical", "%q is redirected by [normalize] to %s: a canonical names the final address", s, origin)
				}
			}
		}
		if r.Sitemap && r.Pattern != nil && !r.Pattern.HasParams() {
			p, err := r.Pattern.Fill(nil)
			if err != nil {
				continue
			}
			paths := []string{p}
			if r.Localized {
				paths = paths[:0]
				for _, loc := range c.Site.Locales {
					paths = append(paths, "/"+loc+p)
				}
			}
			for _, p := range paths {
				if c.WouldRedirect(p) {
					l.add("HG182", path+".sitemap", "%s is redirected: the sitemap lists final addresses only", p)
					break
				}
			}
		}
	}
}

// deadPattern says why a [[redirect]] pattern can never match a GET or
// HEAD: patterns see the normalized path, so a literal that normalization
// always changes names no address a browser arrives at.
func deadPattern(n *Normalize, p *Pattern) string {
	segs := p.Segments()
	if n.Lowercase {
		for _, s := range segs {
			if s.Kind == pattern.SegLiteral && strings.ToLower(s.Lit) != s.Lit {
				return "has upper-case letters, but [normalize] lowercase = true lowercases every path first: write it in lower case"
			}
		}
	}
	if len(segs) == 0 {
		return ""
	}
	last := segs[len(segs)-1]
	if last.Kind == pattern.SegRegex && n.TrailingSlash == "add" && !last.Spans && !pattern.CanMatchRune(last.Expr, '.') {
		// "/old-notes/:id{[0-9]+}": every value it takes is a path that
		// normalization gives a slash first, which the pattern then misses.
		return `ends with :` + last.Name + `{` + last.Expr + `}, which never holds a dot, but [normalize] trailing_slash = "add" adds a / to every such path first: end the pattern with /`
	}
	if last.Kind != pattern.SegLiteral {
		return ""
	}
	switch {
	case n.TrailingSlash == "strip" && last.Lit == "" && len(segs) > 1:
		return `ends with /, but [normalize] trailing_slash = "strip" removes it from every path first`
	case n.TrailingSlash == "add" && last.Lit != "" && !strings.Contains(last.Lit, "."):
		return `does not end with /, but [normalize] trailing_slash = "add" adds one to every such path first: write it with the slash`
	}
	return ""
}

// originOf is the scheme://host[:port] of an absolute URL; "" for another
// string.
func originOf(u string) string {
	i := strings.Index(u, "://")
	if i < 0 {
		return ""
	}
	j := strings.IndexAny(u[i+3:], "/?#")
	if j < 0 {
		return u
	}
	return u[:i+3+j]
}
