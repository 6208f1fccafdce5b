package rules

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/headgate/headgate/internal/pct"
	"github.com/headgate/headgate/rules/redirect"
)

// RedirectRequest is what Config.Redirect needs of a request.
type RedirectRequest struct {
	// Method: only GET and HEAD (and "", taken as GET) are normalized.
	Method string
	// Host is the request's Host header; it is compared with
	// normalize.redirect_hosts, never copied into anything.
	Host string
	// HTTPS says the request arrived over https, as the proxy believes it
	// (server.trusted_proxies).
	HTTPS bool
	// Target is the path and query as they arrived, percent-encoded; the
	// caller has refused what CheckPath refuses.
	Target string
}

// Redirect is the answer headgate gives instead of forwarding a request.
type Redirect struct {
	Status   int    // 301, 302, 307, 308 or 410
	Location string // absolute; "" for a 410
	Source   string // the first hop's: "normalize", "rule" or "table"
	Steps    int    // rules and rows followed at request time (0 for normalization alone)

	// where names the first hop's rule or row, built only when asked
	// (Where): a redirect answered is written without it.
	rd  *redirector
	hit hit
}

// Where names where the first hop came from: "normalize", the rule's
// "headgate.toml:12", or "redirects.csv:42" — for explain and the log.
func (r *Redirect) Where() string {
	if r.rd == nil {
		return SourceNormalize
	}
	return r.rd.where(r.hit)
}

// The sources of a redirect, as headgate_redirects_total labels them.
const (
	SourceNormalize = "normalize"
	SourceRule      = "rule"
	SourceTable     = "table"
)

// maxSteps bounds the templated hops one request follows (§11.2).
const maxSteps = 10

// ErrRedirectLoop is wrapped by Redirect's error when following the
// templated targets of a request came back to an address already seen or
// went past 10 steps: the rules are ignored for that request (fail open).
var ErrRedirectLoop = errors.New("redirect loop")

// redirector is the compiled [normalize], [[redirect]] and
// [[redirect_table]] of a config.
type redirector struct {
	origin string
	file   string // the config file, for Where
	n      *Normalize
	tables []*RedirectTable
	rules  []*RedirectRule // by Index
	pt     *table          // the rules' patterns; nil when there are none
	hosts  map[string]bool
	// matches is the Config's pool of Matches, which a rule lookup
	// records into (set by Parse; nil: allocate).
	matches *sync.Pool

	templated bool // some rule's target is a template: chains go on at request time
}

// target is where a redirect points: on the site's origin (origin "") or
// on another (origin "https://other.example", as written).
type target struct {
	origin   string
	path     string // percent-encoded; on the site's origin normalized, upper-case hex
	query    string
	hasQuery bool
	frag     string // "#…" or ""
	// loc is the whole URL when a table stored it so (see redirect.Table);
	// "" when it is to be built.
	loc string
}

func (t target) url(site string) string {
	if t.loc != "" {
		return t.loc
	}
	o := t.origin
	if o == "" {
		o = site
	}
	n := len(o) + len(t.path) + len(t.query) + len(t.frag) + 1
	var b strings.Builder
	b.Grow(n)
	b.WriteString(o)
	b.WriteString(t.path)
	if t.hasQuery {
		b.WriteByte('?')
		b.WriteString(t.query)
	}
	b.WriteString(t.frag)
	return b.String()
}

// local is the target as a string on the site's origin: path?query#frag.
func (t target) local() string {
	if !t.hasQuery && t.frag == "" {
		return t.path
	}
	return t.url("")
}

// parseTarget checks a redirect target (a path from "/", or an absolute
// http(s) URL) against the URL rules of §4.6 and splits it. why says in
// words what is wrong.
func parseTarget(origin, s string) (target, string) {
	var t target
	if s == "" {
		return t, "the target is empty"
	}
	if simplePath(s) {
		return target{path: s}, "" // the common case: nothing to check further
	}
	_, _, isAbs := cutScheme(s)
	if s[0] != '/' && !isAbs {
		return t, "a relative target must start with / (a path on site.base_url's origin): ../ and bare names are not allowed"
	}
	base, err := url.Parse(origin + "/")
	if err != nil {
		return t, "site.base_url does not parse"
	}
	if _, why := AbsURL(base, s); why != "" {
		return t, dropText(why)
	}
	if strings.ContainsAny(s, " \t") {
		return t, "it holds a space (percent-encode it as %20)"
	}
	rest := s
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		t.frag, rest = rest[i:], rest[:i]
	}
	if isAbs {
		i := strings.Index(rest, "//") + 2
		j := strings.IndexAny(rest[i:], "/?")
		if j < 0 {
			j = len(rest) - i
		}
		t.origin, rest = rest[:i+j], rest[i+j:]
		if strings.EqualFold(t.origin, origin) {
			t.origin = ""
		} else {
			// Another origin, spelled as base_url is (a Location holds
			// ASCII: an internationalized host is its A-label, a default
			// port none), and refused where a client would read another
			// host than the one written (user info) or no host at all.
			o, err := checkBaseURL(t.origin)
			if err != nil {
				return t, "its origin " + t.origin + ": " + err.Error()
			}
			if t.origin = o; o == origin {
				t.origin = ""
			}
		}
		if rest == "" || rest[0] == '?' {
			rest = "/" + rest
		}
	}
	t.path, t.query, t.hasQuery = strings.Cut(rest, "?")
	if t.origin == "" {
		if CheckPath(t.path) != nil {
			return t, "its path holds a dot segment (./ or ../), a NUL or bad percent-encoding"
		}
	}
	t.path = EscapePath(t.path)
	t.query = escapeQuery(t.query)
	t.frag = escapeQuery(t.frag)
	return t, ""
}

// escapeQuery percent-encodes the bytes a query or fragment may not hold
// (non-ASCII, quotes, angle brackets), keeping valid escapes.
func escapeQuery(q string) string { return pct.Encode(q, pct.Query, pct.Keep) }

// escapeRequestQuery percent-encodes the request's own query as a redirect
// keeps it (§11.1: the query kept byte for byte): every visible ASCII byte
// a browser sends raw (| { } ^ and ` included) stays, but those the WHATWG
// URL standard's query set encodes (" # < >, which never come from a
// browser raw and would break out of an attribute or end the URL), "\"
// (which some clients read as "/": no Location holds one) and "%" (a valid
// escape stays; a stray one is %25, so that the query decodes).
func escapeRequestQuery(q string) string { return pct.Encode(q, pct.RequestQuery, pct.Keep) }

// path applies the path normalizations to a path with upper-case hex:
// merge_slashes, then lowercase (outside percent-escapes), then
// trailing_slash. It returns p itself when nothing changes.
func (n *Normalize) path(p string) string {
	if !n.pathOn() || p == "" {
		return p
	}
	change := false
	last := strings.LastIndexByte(p, '/')
	for i := 0; i < len(p) && !change; i++ {
		switch c := p[i]; {
		case c == '%':
			i += 2
		case n.Lowercase && 'A' <= c && c <= 'Z':
			change = true
		case n.MergeSlashes && c == '/' && i > 0 && p[i-1] == '/':
			change = true
		}
	}
	switch n.TrailingSlash {
	case "strip":
		change = change || len(p) > 1 && p[len(p)-1] == '/'
	case "add":
		change = change || p != "/" && p[len(p)-1] != '/' && strings.IndexByte(p[last:], '.') < 0
	}
	if !change {
		return p
	}
	b := make([]byte, 0, len(p)+1)
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '%' && i+2 < len(p):
			b = append(b, p[i:i+3]...)
			i += 2
			continue
		case n.Lowercase && 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case n.MergeSlashes && c == '/' && len(b) > 0 && b[len(b)-1] == '/':
			continue
		}
		b = append(b, c)
	}
	switch n.TrailingSlash {
	case "strip":
		for len(b) > 1 && b[len(b)-1] == '/' {
			b = b[:len(b)-1]
		}
	case "add":
		l := 0
		for i := len(b) - 1; i >= 0; i-- {
			if b[i] == '/' {
				l = i
				break
			}
		}
		if len(b) > 1 && b[len(b)-1] != '/' && indexByte(b[l:], '.') < 0 {
			b = append(b, '/')
		}
	}
	return string(b)
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// hit is what one lookup found.
type hit struct {
	table *RedirectTable // or
	row   uint32         // index + 1 in table
	rule  *RedirectRule
	ps    []Param // the rule's parameters
}

func (h hit) found() bool { return h.table != nil || h.rule != nil }

// lookup finds the table row, else the most specific [[redirect]] rule,
// for a path on the site's origin (normalized, upper-case hex).
func (rd *redirector) lookup(path string, q *redirect.Query) hit {
	for _, t := range rd.tables {
		if t.t == nil {
			continue
		}
		if s := t.t.Lookup(path, q); s != 0 {
			return hit{table: t, row: s}
		}
	}
	if rd.pt == nil {
		return hit{}
	}
	r, ps := rd.match(path)
	if r == nil {
		return hit{}
	}
	return hit{rule: r, ps: ps}
}

// match returns the most specific rule whose pattern matches path (file
// order between equals) and its parameters.
func (rd *redirector) match(path string) (*RedirectRule, []Param) {
	m := getMatch(rd.matches)
	defer m.release(rd.matches)
	var segBuf [16]string
	var offBuf [17]int
	var stack [8]Param
	w, joined := rd.pt.walker(path, segBuf[:0], offBuf[:0], stack[:0], spanBudget)
	w.walk(m, joined, rd.pt.root, 0, w.stack)
	var best *Matched
	for i := range m.Matched {
		c := &m.Matched[i]
		if best == nil {
			best = c
			continue
		}
		switch d := compareRules(best.Rule, c.Rule); {
		case d < 0, d == 0 && c.Rule.Index < best.Rule.Index:
			best = c
		}
	}
	if best == nil {
		return nil, nil
	}
	return rd.rules[best.Rule.Index], append([]Param(nil), best.Params...)
}

// step is one hop's outcome: where it goes, with what status.
type step struct {
	status int
	gone   bool
	next   target
	source string
}

// follow turns a hit into the next target, with the request's query
// appended unless the hop drops it. It fails for a templated target that
// comes out invalid.
func (rd *redirector) follow(h hit, cur target) (step, error) {
	var st step
	drop := false
	switch {
	case h.table != nil:
		r := h.table.t.Row(h.row)
		st.status, st.source = int(r.Status), SourceTable
		if r.Flags&redirect.RowGone != 0 {
			st.gone = true
			return st, nil
		}
		if r.Flags&redirect.RowBarePath != 0 {
			st.next = target{path: r.To, loc: r.Loc}
		} else {
			st.next = splitLocal(r.To, r.Flags&redirect.RowAbs != 0)
			st.next.loc = r.Loc
		}
		drop = r.Flags&redirect.RowDrop != 0
	default:
		r := h.rule
		st.status, st.source, drop = r.Status, SourceRule, r.Drop
		switch {
		case r.gone || r.To == nil:
			st.gone = true
			return st, nil
		case r.final != nil:
			st.next = *r.final
		default:
			s := onOwnHost(r.To.render(&vars{params: h.ps, path: cur.path, baseURL: rd.origin}, true))
			t, why := parseTarget(rd.origin, s)
			if why != "" {
				return st, fmt.Errorf("redirect %s:%d: target %q: %s", rd.file, r.Line, s, why)
			}
			st.next = rd.normTarget(t)
		}
	}
	if !drop && cur.hasQuery && cur.query != "" {
		st.next.loc = ""
		if st.next.hasQuery && st.next.query != "" {
			st.next.query += "&" + cur.query
		} else {
			st.next.query, st.next.hasQuery = cur.query, true
		}
	}
	return st, nil
}

// onOwnHost keeps a rendered path target on base_url's host: a parameter
// that decodes to "//evil.example" (sent as %2F%2F) fills "/{dest}" as
// "///evil.example", which read alone names another host. The slashes and
// backslashes after the first are the value's, so they are percent-encoded
// as such (§11.2: per segment), and the redirect answers with
// /%2F%2Fevil.example on base_url's host instead of being refused and the
// request served.
func onOwnHost(s string) string {
	if len(s) < 2 || s[0] != '/' || s[1] != '/' && s[1] != '\\' {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteByte('/')
	i := 1
	for ; i < len(s) && (s[i] == '/' || s[i] == '\\'); i++ {
		if s[i] == '/' {
			b.WriteString("%2F")
		} else {
			b.WriteString("%5C")
		}
	}
	b.WriteString(s[i:])
	return b.String()
}

// splitLocal reads a stored target back.
func splitLocal(s string, abs bool) target {
	var t target
	if abs {
		i := strings.Index(s, "//") + 2
		j := strings.IndexAny(s[i:], "/?#")
		if j < 0 {
			j = len(s) - i
		}
		t.origin, s = s[:i+j], s[i+j:]
	}
	if i := strings.IndexByte(s, '#'); i >= 0 {
		t.frag, s = s[i:], s[:i]
	}
	t.path, t.query, t.hasQuery = strings.Cut(s, "?")
	return t
}

// normTarget spells a target on the site's origin as every URL headgate
// builds from a path (§16.4: upper-case hex, unreserved characters
// decoded), then normalizes it, so that it is the address a canonical
// names and no second hop.
func (rd *redirector) normTarget(t target) target {
	return normTargetPath(rd.n, rd.origin, t)
}

func (rd *redirector) where(h hit) string {
	if h.table != nil {
		return h.table.Path + ":" + strconv.Itoa(int(h.table.t.Row(h.row).Line))
	}
	return rd.file + ":" + strconv.Itoa(h.rule.Line)
}

// Redirect says whether headgate answers a request with a redirect
// (§11.2): normalization, then table rows, then [[redirect]] patterns,
// followed to the final target, one hop. It returns nil when the request
// is to be served. A non-nil error reports a loop or a templated target
// that came out invalid: it is for the log; the rules are then ignored for
// this request and only normalization (if any) answers.
func (c *Config) Redirect(req RedirectRequest) (*Redirect, error) {
	var rd Redirect
	ok, err := c.RedirectInto(req, &rd)
	if !ok {
		return nil, err
	}
	out := rd
	return &out, err
}

// requestSpelling is a request target's own spelling, path and query, with
// what a URL may not hold raw (a quote, a non-ASCII byte a client sent
// unencoded) percent-encoded: the no-op for what browsers send, checked in
// one pass that also finds the query.
func requestSpelling(tg string) (reqPath, reqQuery string, hasQ bool) {
	i := 0
	for ; i+4 <= len(tg); i += 4 { // four at a time: the loads overlap
		if !pct.Path.Has(tg[i]) || !pct.Path.Has(tg[i+1]) || !pct.Path.Has(tg[i+2]) || !pct.Path.Has(tg[i+3]) {
			break
		}
	}
	for i < len(tg) && pct.Path.Has(tg[i]) {
		i++
	}
	reqPath, rawQuery := tg, ""
	switch {
	case i == len(tg):
	case tg[i] == '?':
		reqPath, rawQuery, hasQ = tg[:i], tg[i+1:], true
	default:
		var rawPath string
		rawPath, rawQuery, hasQ = strings.Cut(tg, "?")
		reqPath = pct.CanonHex(EscapePath(rawPath))
	}
	return reqPath, escapeRequestQuery(rawQuery), hasQ
}

// RedirectInto is Redirect writing the answer into *dst (which it
// overwrites) and reporting whether there is one: the proxy keeps dst on
// its stack, so that a request that is served allocates nothing, nor does
// a redirect by a table row (its Location is stored whole); one by a rule
// or normalization allocates its Location.
func (c *Config) RedirectInto(req RedirectRequest, dst *Redirect) (bool, error) {
	rd := c.redir
	if rd == nil {
		return false, nil
	}
	reqPath, reqQuery, hasQ := requestSpelling(req.Target)
	path := reqPath
	norm := false
	if req.Method == "GET" || req.Method == "HEAD" || req.Method == "" {
		if len(rd.hosts) > 0 {
			// A redirect host, or the site's own host spelled with a
			// final dot: one host, one address.
			if h := hostOnly(req.Host); rd.hosts[h] || strings.HasSuffix(req.Host, ".") && h == baseHost(rd.origin) ||
				strings.Contains(req.Host, ".:") && h == baseHost(rd.origin) {
				norm = true
			}
		}
		if rd.n.HTTPS && !req.HTTPS {
			norm = true
		}
		if np := rd.n.path(path); np != path {
			norm, path = true, np
		}
	}
	cur := target{path: path, query: reqQuery, hasQuery: hasQ}
	found := norm
	*dst = Redirect{}
	if norm {
		*dst = Redirect{Status: 301, Source: SourceNormalize}
	}
	final, gone, steps := cur, false, 0
	var seen [maxSteps + 1]string
	var err error
	if len(rd.tables) > 0 || rd.pt != nil {
		for {
			q := redirect.Query{Raw: cur.query}
			h := rd.lookup(cur.path, &q)
			if !h.found() {
				break
			}
			st, ferr := rd.follow(h, cur)
			if ferr != nil {
				err = ferr
				break
			}
			if steps == 0 && !found {
				*dst = Redirect{Status: st.status, Source: st.source, rd: rd, hit: h}
				found = true
			}
			steps++
			if st.gone {
				gone = true
				break
			}
			final = st.next
			if final.origin != "" || !rd.templated && h.rule == nil || h.rule != nil && h.rule.final != nil && !rd.templated {
				// Off the site, or a target collapsed at load that no
				// templated rule can take further: final.
				break
			}
			// Only a templated chain goes on: the addresses it has been
			// at are spelled out for the loop check.
			seen[steps-1] = cur.local()
			loc := final.local()
			if loc == seen[steps-1] {
				// A rule that maps the address to itself: the chain ends
				// there (no redirect at all when it is the first step).
				break
			}
			loop := steps > maxSteps
			for _, s := range seen[:steps] {
				loop = loop || s == loc
			}
			if loop {
				err = fmt.Errorf("%w: %s → … → %s after %d steps", ErrRedirectLoop, seen[0], loc, steps)
				break
			}
			cur = final
		}
		if err != nil {
			// Fail open: as if no rule matched.
			final, gone, steps = target{path: path, query: reqQuery, hasQuery: hasQ}, false, 0
			*dst, found = Redirect{}, norm
			if norm {
				*dst = Redirect{Status: 301, Source: SourceNormalize}
			}
		}
	}
	if !found {
		return false, err
	}
	dst.Steps = steps
	if gone {
		dst.Status = 410
		return true, err
	}
	if final.origin == "" && final.loc == "" {
		// site.path_safe: a target on the site is spelled as its page's
		// canonical, so the redirect leads to that address (§23).
		final.path = c.SpellPath(final.path)
	}
	if !norm && final.origin == "" && final.path == reqPath && final.hasQuery == hasQ && final.query == reqQuery {
		*dst = Redirect{}
		return false, err // the rules lead back to the request itself
	}
	dst.Location = final.url(rd.origin)
	return true, err
}

// hostOnly is a Host header's host, lower-case, without port.
func hostOnly(h string) string {
	if strings.HasPrefix(h, "[") {
		if i := strings.IndexByte(h, ']'); i > 0 {
			return strings.ToLower(h[1:i])
		}
	}
	if i := strings.LastIndexByte(h, ':'); i >= 0 {
		h = h[:i]
	}
	// A fully qualified name's final dot names the same host
	// (www.notes.example. is www.notes.example).
	h = strings.TrimSuffix(h, ".")
	for i := 0; i < len(h); i++ {
		if 'A' <= h[i] && h[i] <= 'Z' {
			return strings.ToLower(h)
		}
	}
	return h
}

// WouldRedirect reports whether a GET of target on site.base_url's own host
// and scheme would be redirected: the sitemap leaves such addresses out.
func (c *Config) WouldRedirect(target string) bool {
	if c.redir == nil {
		return false
	}
	rd, _ := c.Redirect(RedirectRequest{Method: "GET", Host: baseHost(c.Site.BaseURL), HTTPS: strings.HasPrefix(c.Site.BaseURL, "https:"), Target: target})
	return rd != nil
}

// HasRedirects reports whether the config redirects anything: some
// normalization is on, or there are redirect rules or tables.
func (c *Config) HasRedirects() bool { return c.redir != nil }
