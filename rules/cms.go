package rules

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/headgate/headgate/internal/pct"
	"github.com/headgate/headgate/rules/pattern"
)

// This file holds the rule fields of SPEC §16 (real upstreams): rewrite,
// inherit and query, and the canonical "upstream-or-self".

// UpstreamOrSelf is the canonical value that keeps the upstream's own
// canonical when it is on base_url's origin, re-spelled, and is "self"
// otherwise (§16.4).
const UpstreamOrSelf = "upstream-or-self"

// QueryCond is one condition of a rule's query table (§16.2): the request's
// query must hold Key, and its first value must match the segment.
type QueryCond struct {
	Key string
	Raw string // the value pattern as written: ":q", ":id{[0-9]+}", "edit"
	seg pattern.Segment
}

// ruleQuery reads a rule's query table (the rule reads rewrite and
// inherit). It runs before the rule's templates are parsed, so that they
// may name query parameters.
func (l *loader) ruleQuery(key string, v any, r *Rule) {
	qt, ok := l.table(key, v)
	if !ok {
		return
	}
	if len(qt) == 0 {
		l.add("HG120", key, "an empty query table matches every query; leave query out instead")
		return
	}
	seen := map[string]bool{}
	if r.Pattern != nil {
		for _, p := range r.Pattern.Params() {
			seen[p] = true
		}
	}
	for _, name := range sortedKeys(qt) {
		if name == "" {
			l.add("HG120", key+`.""`, "a query key can not be empty: name the parameter")
			continue
		}
		qk := key + "." + name
		var s string
		if !l.str(qk, qt[name], &s) {
			continue
		}
		sg, err := parseQuerySegment(s)
		if err != nil {
			l.add("HG120", qk, "%q: %v", s, err)
			continue
		}
		if sg.Name != "" {
			if seen[sg.Name] {
				l.add("HG120", qk, "%q: duplicate parameter name %q", s, sg.Name)
				continue
			}
			if isFixedVar(sg.Name) {
				l.add("HG120", qk, "%q: parameter name %q is reserved for a template variable", s, sg.Name)
				continue
			}
			seen[sg.Name] = true
		}
		r.Query = append(r.Query, QueryCond{Key: name, Raw: s, seg: sg})
	}
	if r.Sitemap && len(r.Query) > 0 {
		l.add("HG141", strings.TrimSuffix(key, ".query")+".sitemap", "a sitemap lists addresses without a query; a rule with query conditions can not be in it")
	}
}

// parseQuerySegment reads a query value pattern: ":name", ":name{regex}"
// or a literal, compared after decoding as a form value.
func parseQuerySegment(s string) (pattern.Segment, error) {
	if strings.HasPrefix(s, ":") {
		sg, err := pattern.ParseSegment(s)
		if err != nil {
			return pattern.Segment{}, err
		}
		sg.Spans = false // a query value is one value, whatever it holds
		return sg, nil
	}
	if s == "*" || strings.ContainsAny(s, "{}") {
		return pattern.Segment{}, fmt.Errorf("* and {} belong to parameters (use :name{regex})")
	}
	lit, err := url.QueryUnescape(s)
	if err != nil {
		return pattern.Segment{}, err
	}
	return pattern.Segment{Kind: pattern.SegLiteral, Lit: lit}, nil
}

// paramNames lists the names a rule binds: its pattern's, then its query's.
func (r *Rule) paramNames() []string {
	var out []string
	if r.Pattern != nil {
		out = append(out, r.Pattern.Params()...)
	}
	for _, q := range r.Query {
		if q.seg.Name != "" {
			out = append(out, q.seg.Name)
		}
	}
	return out
}

// queryValue returns the last value of key in a raw query, decoded as a
// form value (+ is a space): the one PHP, Rails and Django hand the app
// when a key is given twice. A value that does not decode, is not valid
// UTF-8 or holds a control character does not count: such a value can not
// match a condition, so it never reaches a template.
func queryValue(query, key string) (string, bool) {
	val, found := "", false
	for query != "" {
		var kv string
		kv, query, _ = strings.Cut(query, "&")
		k, v, _ := strings.Cut(kv, "=")
		if k != key {
			if strings.IndexAny(k, "%+") < 0 {
				continue
			}
			dk, err := url.QueryUnescape(k)
			if err != nil || dk != key {
				continue
			}
		}
		dv, err := url.QueryUnescape(v)
		if err != nil || !utf8.ValidString(dv) || hasControl(dv) {
			val, found = "", false
			continue
		}
		val, found = dv, true
	}
	return val, found
}

// queryParams checks a rule's query conditions against the request's
// query and appends the parameters they bind to ps.
func (m *Match) queryParams(r *Rule, ps []Param) ([]Param, bool) {
	for i := range r.Query {
		q := &r.Query[i]
		v, ok := queryValue(m.Query, q.Key)
		if !ok {
			return nil, false
		}
		switch q.seg.Kind {
		case pattern.SegLiteral:
			if v != q.seg.Lit {
				return nil, false
			}
		case pattern.SegParam:
			if v == "" {
				return nil, false
			}
			ps = append(ps, Param{Name: q.seg.Name, Value: v})
		case pattern.SegRegex:
			if v == "" || !q.seg.Re.MatchString(v) {
				return nil, false
			}
			ps = append(ps, Param{Name: q.seg.Name, Value: v})
		}
	}
	return ps, true
}

// QueryLabel is the rule's query conditions as explain shows them:
// "?p=:id{[0-9]+}&s=:q", keys sorted; "" without conditions.
func (r *Rule) QueryLabel() string {
	if len(r.Query) == 0 {
		return ""
	}
	parts := make([]string, len(r.Query))
	for i, q := range r.Query {
		parts[i] = q.Key + "=" + q.Raw
	}
	sort.Strings(parts)
	return "?" + strings.Join(parts, "&")
}

// inheritCut applies inherit = false (§16.1): the merge starts afresh at
// the most specific rule that says so. The rules before it are kept in
// Ignored, for explain; their deny was recorded already.
func (m *Match) inheritCut() {
	for i := len(m.Matched) - 1; i > 0; i-- {
		if in := m.Matched[i].Rule.Inherit; in != nil && !*in {
			m.Ignored = m.Matched[:i:i]
			m.Matched = m.Matched[i:]
			return
		}
	}
}

// Rewrite reports whether responses of this match may be rewritten: false
// when the most specific rule that sets rewrite says false (§16.1).
func (m *Match) Rewrite() bool {
	return m.f.rewrite == nil || *m.f.rewrite
}

// sameOrigin reports whether the absolute URL u is on origin (scheme and
// host, a default port ignored), and returns its path-and-query part.
func sameOrigin(u *url.URL, origin string) bool {
	scheme, host, _ := strings.Cut(origin, "://")
	if !strings.EqualFold(u.Scheme, scheme) {
		return false
	}
	h := strings.ToLower(u.Host)
	switch {
	case strings.EqualFold(scheme, "https"):
		h = strings.TrimSuffix(h, ":443")
	case strings.EqualFold(scheme, "http"):
		h = strings.TrimSuffix(h, ":80")
	}
	return h == host
}

// upstreamCanonical returns the upstream's canonical (absolute, as the
// rewriter read it) re-spelled on base_url's origin, or "" when it is
// absent or on another origin. Its path is spelled segment by segment as a
// sitemap <loc> is (Fill), so that a kept Tea_%28drink%29 is the
// Tea_(drink) the sitemap lists, byte for byte (§17).
func (c *Config) upstreamCanonical(abs string) string {
	if abs == "" {
		return ""
	}
	u, err := url.Parse(abs)
	if err != nil || u.Host == "" || !sameOrigin(u, c.Site.BaseURL) {
		return ""
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	s := c.Site.BaseURL + c.SpellPath(segmentSpelling(p))
	if u.RawQuery != "" {
		s += "?" + pct.CanonHex(u.RawQuery) // hex upper-case, as self writes it
	}
	return s
}

// segmentSpelling spells an escaped path as Fill spells the segments it
// builds: each segment decoded, then encoded by escapePathSegment (what a
// segment may hold raw stays raw, "%2F" and "%25" stay encoded, hex is
// upper-case). Dot segments are removed as a client resolves them (RFC 3986
// §5.2.4), encoded ones ("%2E%2E", ".%2e") too, as a browser's URL parser
// (the WHATWG URL standard) and so a crawler's resolves them. A stray "%"
// is "%25".
func segmentSpelling(p string) string {
	if !strings.Contains(p, "%") && !strings.Contains(p, "/.") {
		return EscapePath(p)
	}
	segs := strings.Split(p, "/")[1:] // p starts with "/"
	out := make([]string, 0, len(segs))
	for i, seg := range segs {
		last := i == len(segs)-1
		switch strings.ToLower(seg) {
		case ".", "%2e":
			if last {
				out = append(out, "")
			}
			continue
		case "..", ".%2e", "%2e.", "%2e%2e":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
			continue
		}
		// EscapePath first: a stray "%" becomes "%25", so that the segment
		// decodes, and a second pass spells it the same.
		if dec, err := url.PathUnescape(EscapePath(seg)); err != nil {
			out = append(out, EscapePath(seg))
		} else {
			out = append(out, pattern.EscapeSegment(dec))
		}
	}
	return "/" + strings.Join(out, "/")
}

// KeepsUpstreamCanonical reports whether the page's canonical is
// "upstream-or-self" (§16.4): the upstream's own canonical is kept when it
// is right, so a response headgate does not read (a PDF, a page under
// rewrite = false) takes its canonical from the upstream's Link header.
func (m *Match) KeepsUpstreamCanonical() bool {
	return m.f.canonical.set() && m.f.canonical.t.Raw == UpstreamOrSelf
}
