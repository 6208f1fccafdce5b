package rules

import (
	"fmt"
	"net/netip"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/headgate/headgate/rules/redirect"
	"github.com/headgate/headgate/rules/schema"
)

// Normalize is the [normalize] table (§11.1). Every key is off by default.
type Normalize struct {
	RedirectHosts []string // lower-case host names, without port
	HTTPS         bool     // plain-http requests → 301 to https
	TrailingSlash string   // "keep" (default), "strip" or "add"
	Lowercase     bool
	MergeSlashes  bool
}

// pathOn reports whether any path normalization is on.
func (n *Normalize) pathOn() bool {
	return n.Lowercase || n.MergeSlashes || n.TrailingSlash == "strip" || n.TrailingSlash == "add"
}

// RedirectRule is one [[redirect]] table (§11.2).
type RedirectRule struct {
	Index   int    // position among the file's [[redirect]] tables, from 0
	Line    int    // line of its [[redirect]] header
	From    string // the pattern as written
	Pattern *Pattern
	To      *Template // nil for a 410
	Status  int       // 301 (default), 302, 307, 308 or 410
	Drop    bool      // query = "drop"

	rule *Rule // the pattern as a rule of the redirect matcher
	// final is the collapsed target of a static rule (one whose to names
	// no variable but base_url), computed at load; nil for a templated one.
	final *target
	gone  bool // the collapsed chain ends in a 410
}

// RedirectTable is one [[redirect_table]] table.
type RedirectTable struct {
	Index  int
	Line   int
	File   string // as written
	Path   string // resolved against the config's directory
	Status int    // for rows without a status; default 301
	Drop   bool   // query = "drop"
	Rows   int    // rows loaded
	// Redundant counts the rows left out because [normalize] already sends
	// their from to their to (/About → /about under lowercase): kept, they
	// would read as a redirect to themselves.
	Redundant int

	t *redirect.Table
}

// redirect statuses a rule or row may name.
func validStatus(n int) bool {
	switch n {
	case 301, 302, 307, 308, 410:
		return true
	}
	return false
}

// redirects reads [normalize], [[redirect]] and [[redirect_table]] (the
// server reads server.trusted_proxies), then compiles them: chains collapsed, cycles
// refused (HG181), static canonicals that name a redirect source refused
// (HG182). It runs after the rules are read.
func (l *loader) redirects(tree map[string]any) {
	c := &l.cfg
	c.Normalize.TrailingSlash = "keep"
	if t := l.topTable(tree, normalizeFields.Name, false); t != nil {
		l.normalize(t)
	}
	for i, t := range l.topTables(tree, redirectFields.Name) {
		l.redirectRule(i, t)
	}
	for i, t := range l.topTables(tree, redirectTableFields.Name) {
		l.redirectTable(i, t)
	}
	l.compileRedirects()
}

func (l *loader) trustedProxies(key string, v any) {
	list, ok := l.strList(key, v)
	if !ok {
		return
	}
	for i, s := range list {
		key := fmt.Sprintf("%s[%d]", key, i)
		p, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil {
				l.add("HG141", key, "%q is not a CIDR range (such as 10.0.0.0/8) or an IP address", s)
				continue
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		l.cfg.Server.TrustedProxies = append(l.cfg.Server.TrustedProxies, p.Masked())
	}
}

// normalizeFields declares the keys of [normalize].
var normalizeFields = &schema.Fields[*loader]{Name: "normalize", List: []schema.Field[*loader]{
	{Key: "redirect_hosts", Read: (*loader).redirectHosts},
	{Key: "https", Read: func(l *loader, key string, v any) { l.boolean(key, v, &l.cfg.Normalize.HTTPS) }},
	{Key: "trailing_slash", Read: func(l *loader, key string, v any) {
		l.enum(key, v, &l.cfg.Normalize.TrailingSlash, "keep", "strip", "add")
	}},
	{Key: "lowercase", Read: func(l *loader, key string, v any) { l.boolean(key, v, &l.cfg.Normalize.Lowercase) }},
	{Key: "merge_slashes", Read: func(l *loader, key string, v any) { l.boolean(key, v, &l.cfg.Normalize.MergeSlashes) }},
}}

func (l *loader) redirectHosts(key string, v any) {
	list, ok := l.strList(key, v)
	if !ok {
		return
	}
	for i, h := range list {
		hk := fmt.Sprintf("%s[%d]", key, i)
		host := strings.ToLower(h)
		if hh, port, ok := strings.Cut(host, ":"); ok && !strings.Contains(port, ":") {
			host = hh // "www.example:8080": the port is ignored anyway
		}
		if strings.Contains(h, "/") || !validHostname(host) {
			l.add("HG141", hk, "%q is not a host name", h)
			continue
		}
		if host == baseHost(l.cfg.Site.BaseURL) {
			l.add("HG141", hk, "%q is site.base_url's own host: its requests would redirect to themselves", h)
			continue
		}
		l.cfg.Normalize.RedirectHosts = append(l.cfg.Normalize.RedirectHosts, host)
	}
}

func (l *loader) normalize(t map[string]any) {
	n := &l.cfg.Normalize
	decode(l, normalizeFields.Name, t, normalizeFields, l)
	base := l.cfg.Site.BaseURL
	if n.HTTPS && strings.HasPrefix(base, "http://") {
		l.add("HG141", "normalize.https", "site.base_url %s is http: every redirect to https would go back to http (use an https base_url)", base)
	}
}

// onSite reports whether a request to origin o (scheme://host[:port], as
// a target spells it) ends on site's origin: o is site's origin spelled
// another way (upper case, an explicit default port), or normalization
// answers every request there with a redirect to site (a redirect host;
// plain http on port 80 of site's host when https is on).
func (n *Normalize) onSite(o, site string) bool {
	t, err := url.Parse(o)
	if err != nil || t.User != nil || t.Host == "" {
		return false
	}
	s, err := url.Parse(site)
	if err != nil {
		return false
	}
	th := strings.ToLower(t.Hostname())
	if slices.Contains(n.RedirectHosts, th) {
		return true
	}
	if th != strings.ToLower(s.Hostname()) {
		return false
	}
	ts, ss := strings.ToLower(t.Scheme), strings.ToLower(s.Scheme)
	tp, sp := portOf(t.Port(), ts), portOf(s.Port(), ss)
	if ts == ss && tp == sp {
		return true
	}
	return n.HTTPS && ss == "https" && ts == "http" && tp == "80"
}

// portOf is a URL's port, or its scheme's default when it names none.
func portOf(port, scheme string) string {
	switch {
	case port != "":
		return port
	case scheme == "https":
		return "443"
	default:
		return "80"
	}
}

// baseHost is the lower-case host of an origin, without port.
func baseHost(origin string) string {
	_, h, ok := strings.Cut(origin, "://")
	if !ok {
		return ""
	}
	if strings.HasPrefix(h, "[") {
		if i := strings.IndexByte(h, ']'); i > 0 {
			return strings.ToLower(h[1:i])
		}
	}
	if i := strings.LastIndexByte(h, ':'); i >= 0 {
		h = h[:i]
	}
	return strings.ToLower(h)
}

func (l *loader) redirectStatus(key string, v any, dst *int) {
	n, ok := v.(int64)
	if !ok {
		l.add("HG180", key, "must be one of 301, 302, 307, 308, 410, not %s", typeName(v))
		return
	}
	if !validStatus(int(n)) {
		l.add("HG180", key, "%d is not one of 301, 302, 307, 308, 410", n)
		return
	}
	*dst = int(n)
}

// redirectDec is what the fields of one [[redirect]] read into.
type redirectDec struct {
	l     *loader
	r     *RedirectRule
	hasTo bool
}

// redirectFields declares the keys of [[redirect]]; to is read last, as
// it depends on from's parameters and on status.
var redirectFields = &schema.Fields[*redirectDec]{Name: "redirect", List: []schema.Field[*redirectDec]{
	{Key: "from", Early: true, Read: func(d *redirectDec, key string, v any) {
		r := d.r
		if d.l.str(key, v, &r.From) {
			p, err := ParsePattern(r.From)
			if err != nil {
				d.l.add("HG180", key, "%q: %v", r.From, err)
			} else {
				r.Pattern = p
			}
		}
	}, NeedCode: "HG180", Need: `has no from pattern (add from = "/old-path")`},
	{Key: "to", Read: func(d *redirectDec, key string, v any) {
		d.hasTo = true
		if d.r.Status == 410 {
			d.l.add("HG180", key, "a 410 (gone) has no target: remove to, or use another status")
			return
		}
		var s string
		if d.l.str(key, v, &s) {
			d.r.To = d.l.redirectTo(key, s, d.r.Pattern)
		}
	}},
	{Key: "status", Early: true, Read: func(d *redirectDec, key string, v any) { d.l.redirectStatus(key, v, &d.r.Status) }},
	{Key: "query", Early: true, Read: func(d *redirectDec, key string, v any) { d.r.Drop = d.l.queryDrop(key, v) }},
}}

func (l *loader) redirectRule(i int, t map[string]any) {
	path := fmt.Sprintf("redirect[%d]", i)
	r := &RedirectRule{Index: i, Line: schema.LineOf(l.lines, path), Status: 301}
	l.cfg.Redirects = append(l.cfg.Redirects, r)
	d := &redirectDec{l: l, r: r}
	decode(l, path, t, redirectFields, d)
	if r.Status != 410 && !d.hasTo {
		l.add("HG180", path, `has no to (a path such as "/new", or an absolute http(s) URL; status = 410 for gone)`)
	}
}

// queryDrop reads a redirect's query: "keep" or "drop".
func (l *loader) queryDrop(key string, v any) bool {
	var q string
	l.enum(key, v, &q, "keep", "drop")
	return q == "drop"
}

// redirectTo parses a [[redirect]] to: a template whose variables may be
// the pattern's parameters, {base_url} and {path}; whatever they hold, the
// origin of the target is fixed by its literal start.
func (l *loader) redirectTo(key, s string, p *Pattern) *Template {
	t, err := parseTemplate(s)
	if err != nil {
		l.add("HG180", key, "%v", err)
		return nil
	}
	for _, name := range t.Vars() {
		ok := name == "base_url" || name == "path"
		if p != nil {
			for _, pn := range p.Params() {
				ok = ok || pn == name
			}
		}
		if !ok {
			cands := []string{"base_url", "path"}
			if p != nil {
				cands = append(cands, p.Params()...)
			}
			msg := fmt.Sprintf("unknown template variable {%s} (a redirect target may use the pattern's parameters, {base_url} and {path})", name)
			if sg := schema.Suggest(name, cands); sg != "" {
				msg += " (did you mean {" + sg + "}?)"
			}
			l.add("HG180", key, "%s", msg)
			return nil
		}
	}
	origin := l.cfg.Site.BaseURL
	if origin == "" {
		origin = "https://base.invalid"
	}
	// The literal start, with {base_url} filled in, must fix the origin.
	var prefix strings.Builder
	next := ""
	for _, part := range t.parts {
		if part.v == "" {
			prefix.WriteString(part.lit)
			continue
		}
		if part.v == "base_url" {
			prefix.WriteString(origin)
			continue
		}
		next = part.v
		break
	}
	pre := prefix.String()
	if why := targetPrefix(pre, next); why != "" {
		l.add("HG180", key, "%q: %s", s, why)
		return nil
	}
	if t.Static() {
		full := t.render(&vars{baseURL: origin}, true)
		if _, why := parseTarget(origin, full); why != "" {
			l.add("HG180", key, "%q: %s", full, why)
			return nil
		}
	}
	return t
}

// targetPrefix checks the literal start of a templated target: it must be
// a path ("/" and not "//"), or an absolute http(s) URL up to the "/" after
// its host (or up to {path}, which starts with "/").
func targetPrefix(pre, next string) string {
	if pre == "" {
		return "a target starts with /, {base_url} or http(s)://host/: a variable can not decide where it points"
	}
	if pre[0] == '/' {
		if len(pre) > 1 && (pre[1] == '/' || pre[1] == '\\') {
			return `a target starting with // or /\ names another host`
		}
		return ""
	}
	scheme, rest, ok := cutScheme(pre)
	if !ok {
		return "a relative target must start with / (a path on site.base_url's origin): ../ and bare names are not allowed"
	}
	scheme = strings.ToLower(scheme)
	if scheme != "http" && scheme != "https" || !strings.HasPrefix(rest, "//") {
		return "only http: and https: URLs with // are redirect targets"
	}
	host := rest[2:]
	if i := strings.IndexAny(host, "/?#"); i >= 0 {
		if host[i] != '/' || i == 0 {
			return "an absolute target names its host, then a path"
		}
		return ""
	}
	if host == "" || next != "" && next != "path" {
		return "a variable can not be part of a target's host: write the host, then /"
	}
	return ""
}

// redirectTableFields declares the keys of [[redirect_table]]; the file
// is read, and loaded, after status and query, which its rows default to.
var redirectTableFields = &schema.Fields[*redirectTableDec]{Name: "redirect_table", List: []schema.Field[*redirectTableDec]{
	{Key: "file", Read: (*redirectTableDec).file},
	{Key: "status", Early: true, Read: func(d *redirectTableDec, key string, v any) { d.l.redirectStatus(key, v, &d.rt.Status) }},
	{Key: "query", Early: true, Read: func(d *redirectTableDec, key string, v any) { d.rt.Drop = d.l.queryDrop(key, v) }},
}}

type redirectTableDec struct {
	l       *loader
	path    string
	rt      *RedirectTable
	hasFile bool
}

func (l *loader) redirectTable(i int, t map[string]any) {
	path := fmt.Sprintf("redirect_table[%d]", i)
	rt := &RedirectTable{Index: i, Line: schema.LineOf(l.lines, path), Status: 301}
	l.cfg.RedirectTables = append(l.cfg.RedirectTables, rt)
	d := &redirectTableDec{l: l, path: path, rt: rt}
	decode(l, path, t, redirectTableFields, d)
	if !d.hasFile {
		l.add("HG180", path, `has no file (add file = "redirects.csv")`)
	}
}

func (d *redirectTableDec) file(key string, v any) {
	l, rt := d.l, d.rt
	d.hasFile = true
	if !l.str(key, v, &rt.File) {
		return
	}
	if rt.File == "" {
		l.add("HG180", key, "is empty")
		return
	}
	rt.Path = rt.File
	if !filepath.IsAbs(rt.Path) {
		rt.Path = filepath.Join(l.cfg.Dir, rt.Path)
	}
	l.loadRedirectTable(d.path, rt)
}
