package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/headgate/headgate/rules/pattern"
	"github.com/headgate/headgate/rules/schema"
)

// ruleDec is what a rule's fields read into.
type ruleDec struct {
	l  *loader
	r  *Rule
	tc *tmplCtx
}

// ruleFields declares the keys of [[rule]]. The early ones are read first:
// the templates' checks depend on match's parameters, localized, the
// lookups and the query conditions.
var ruleFields = &schema.Fields[*ruleDec]{Name: "rule", List: []schema.Field[*ruleDec]{
	{Key: "match", Early: true, Read: (*ruleDec).match, NeedCode: "HG120", Need: `has no match pattern (add match = "/path")`},
	{Key: "title", Read: func(d *ruleDec, key string, v any) { d.r.Title = d.tc.tmpl(key, v) }},
	{Key: "description", Read: func(d *ruleDec, key string, v any) { d.r.Description = d.tc.tmpl(key, v) }},
	{Key: "canonical", Read: (*ruleDec).canonical},
	{Key: "keep_query", Read: func(d *ruleDec, key string, v any) {
		if list, ok := d.l.strList(key, v); ok {
			d.r.KeepQuery, d.r.keepQuery = list, true
		}
	}},
	{Key: "robots", Read: func(d *ruleDec, key string, v any) { d.r.Robots = d.l.robots(key, v) }},
	{Key: "open_graph", Read: func(d *ruleDec, key string, v any) { d.r.OpenGraph = d.tc.openGraph(key, v) }},
	{Key: "twitter", Read: func(d *ruleDec, key string, v any) { d.r.Twitter = d.tc.twitter(key, v) }},
	{Key: "json_ld", Read: (*ruleDec).jsonLD},
	{Key: "json_ld_file", Read: func(d *ruleDec, key string, v any) {
		var f string
		if d.l.str(key, v, &f) {
			d.r.JSONLD = append(d.r.JSONLD, d.tc.jsonFile(key, f)...)
		}
	}},
	{Key: "replace_json_ld", Early: true, Read: func(d *ruleDec, key string, v any) { d.l.boolean(key, v, &d.r.ReplaceJSON) }},
	{Key: "headers", Read: (*ruleDec).headers},
	{Key: "localized", Early: true, Read: func(d *ruleDec, key string, v any) {
		d.l.boolean(key, v, &d.r.Localized)
		if d.r.Localized && len(d.l.cfg.Site.Locales) == 0 {
			d.l.add("HG170", key, "localized = true needs site.locales")
		}
	}},
	{Key: "sitemap", Early: true, Read: func(d *ruleDec, key string, v any) { d.l.boolean(key, v, &d.r.Sitemap) }},
	{Key: "sitemap_source", Read: func(d *ruleDec, key string, v any) {
		if d.l.str(key, v, &d.r.SitemapSource) {
			d.l.checkSource(key, d.r.SitemapSource)
		}
	}},
	{Key: "sitemap_entries", Read: func(d *ruleDec, key string, v any) { d.r.SitemapEntries = d.l.entries(key, v) }},
	{Key: "policy", Read: func(d *ruleDec, key string, v any) {
		var p string
		d.l.enum(key, v, &p, "override", "fill")
		d.r.Policy = Policy(p)
	}},
	{Key: "deny", Early: true, Read: func(d *ruleDec, key string, v any) { d.l.boolean(key, v, &d.r.Deny) }},
	{Key: "lookup", Early: true, Read: func(d *ruleDec, key string, v any) { d.l.ruleLookups(key, v, d.r) }}, // dataload.go
	{Key: "rewrite", Early: true, Read: func(d *ruleDec, key string, v any) { d.r.Rewrite = d.l.optBool(key, v) }},
	{Key: "inherit", Early: true, Read: func(d *ruleDec, key string, v any) { d.r.Inherit = d.l.optBool(key, v) }},
	{Key: "content_signal", Read: (*ruleDec).contentSignal},                                               // markdown.go
	{Key: "query", Early: true, Read: func(d *ruleDec, key string, v any) { d.l.ruleQuery(key, v, d.r) }}, // cms.go
}}

// paramName is a path or query parameter's name in a pattern: two patterns
// that differ only there match the same requests.
var paramName = regexp.MustCompile(`:[A-Za-z_][A-Za-z0-9_]*`)

// sameMatch reports a rule whose match and query are an earlier rule's
// (HG113, §23): both match the same requests with the same specificity, so
// which one's fields apply would depend on file order alone.
func (l *loader) sameMatch() {
	first := map[string]*Rule{}
	for _, r := range l.cfg.Rules {
		if r.Pattern == nil {
			continue
		}
		k := paramName.ReplaceAllString(r.Match, ":")
		qs := make([]string, 0, len(r.Query))
		for _, q := range r.Query {
			qs = append(qs, q.Key+"="+paramName.ReplaceAllString(q.Raw, ":"))
		}
		sort.Strings(qs)
		k += "?" + strings.Join(qs, "&")
		if r.Localized { // its paths carry a locale prefix: other requests
			k = "localized " + k
		}
		if f, dup := first[k]; dup {
			what := "match"
			if len(qs) > 0 {
				what = "match and query"
			}
			l.add("HG113", fmt.Sprintf("rule[%d].match", r.Index), "%q has the %s of rule[%d] (line %d): which of the two applies would depend on file order (merge them into one rule)", r.Match, what, f.Index, f.Line)
			continue
		}
		first[k] = r
	}
}

func (l *loader) rule(i int, t map[string]any) {
	path := fmt.Sprintf("rule[%d]", i)
	r := &Rule{Index: i, Line: schema.LineOf(l.lines, path)}
	l.cfg.Rules = append(l.cfg.Rules, r)
	decode(l, path, t, ruleFields, &ruleDec{l: l, r: r, tc: &tmplCtx{l: l, rule: r}})
	l.checkSitemapRule(path, r)
}

func (d *ruleDec) match(key string, v any) {
	r := d.r
	if d.l.str(key, v, &r.Match) {
		p, err := ParsePattern(r.Match)
		if err != nil && pattern.IndexOutsideBraces(r.Match, "?") >= 0 {
			d.l.add("HG120", key, "%q: %v; a rule looks at the query with its query key (query = { page = \"2\" })", r.Match, err)
		} else if err != nil {
			d.l.add("HG120", key, "%q: %v", r.Match, err)
		} else {
			r.Pattern = p
		}
	}
}

func (d *ruleDec) canonical(key string, v any) {
	r := d.r
	if s, ok := v.(string); ok && s == UpstreamOrSelf {
		r.Canonical = &Template{Raw: UpstreamOrSelf, parts: []tpart{{lit: UpstreamOrSelf}}}
	} else if s, ok := v.(string); ok && s == "self" {
		r.Canonical = &Template{Raw: "self", parts: []tpart{{lit: "self"}}}
	} else if s, ok := v.(string); ok && bareWord(s) {
		msg := fmt.Sprintf("%q is neither a keyword (self, upstream-or-self) nor a path starting with / nor an absolute URL", s)
		if k := schema.Suggest(s, []string{"self", UpstreamOrSelf}); k != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", k)
		}
		d.l.add("HG111", key, "%s", msg)
	} else {
		r.Canonical = d.tc.urlTmpl(key, v)
	}
}

// bareWord says whether a URL field's value is a word alone: no template,
// no "/" and no scheme, which a URL field would otherwise resolve as a
// relative path ("slef" → https://base/slef) where the author meant a
// keyword or a path (§23: HG111).
func bareWord(s string) bool {
	return s != "" && !strings.ContainsAny(s, "/:{\\?#")
}

func (d *ruleDec) jsonLD(key string, v any) {
	arr, ok := d.l.tables(key, v, "an array of tables ([[rule.json_ld]])")
	if !ok {
		return
	}
	for j, block := range arr {
		bk := fmt.Sprintf("%s[%d]", key, j)
		if block["@type"] == nil && block["@graph"] == nil {
			d.l.add("HG160", bk, "a JSON-LD block needs @type or @graph")
		}
		d.r.JSONLD = append(d.r.JSONLD, d.tc.jsonTree(bk, block))
	}
}

func (d *ruleDec) headers(key string, v any) {
	l := d.l
	ht, ok := l.table(key, v)
	if !ok {
		return
	}
	for _, n := range sortedKeys(ht) {
		hk := key + "." + n
		lower := strings.ToLower(n)
		switch {
		case !isToken(n):
			l.add("HG130", hk, "%q is not a valid header name", n)
			continue
		case ownedHeaders[lower]:
			l.add("HG130", hk, "headgate owns the %s header; a rule can not set it", lower)
			continue
		}
		var s string
		if !l.str(hk, ht[n], &s) {
			continue
		}
		if badHeaderValue(s) {
			l.add("HG130", hk, "%q: a header value must not hold CR, LF, NUL or another control character", s)
			continue
		}
		if tm := d.tc.tmpl(hk, s); tm != nil {
			d.r.Headers = append(d.r.Headers, Header{Name: lower, Value: tm})
		}
	}
}

// optBool reads a boolean that may be left unset.
func (l *loader) optBool(key string, v any) *bool {
	var b bool
	l.boolean(key, v, &b)
	return &b
}

// badHeaderValue reports a value no response header may carry: CR, LF and
// NUL (header injection), and the other control characters RFC 9110 leaves
// out of a field value (HTAB is allowed).
func badHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return true
		}
	}
	return false
}

var ownedHeaders = map[string]bool{
	"content-length": true, "content-type": true, "content-encoding": true, "transfer-encoding": true,
	"connection": true, "link": true, "location": true, "set-cookie": true,
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// into is what the fields of a rule's inner tables read into: the value
// being built, and the rule's template context (tc.l is the loader).
type into[T any] struct {
	tc *tmplCtx
	v  T
}

// ruleRobotsFields declares the keys of a rule's robots table.
var ruleRobotsFields = &schema.Fields[into[*Robots]]{Name: "rule.robots", List: []schema.Field[into[*Robots]]{
	{Key: "index", Early: true, Read: func(d into[*Robots], key string, v any) { d.v.Index = d.tc.l.optBool(key, v) }},
	{Key: "follow", Early: true, Read: func(d into[*Robots], key string, v any) { d.v.Follow = d.tc.l.optBool(key, v) }},
	{Key: "directives", Early: true, Read: func(d into[*Robots], key string, v any) {
		l := d.tc.l
		if list, ok := l.strList(key, v); ok {
			for i, s := range list {
				if s == "" || strings.ContainsAny(s, ",<>\"\r\n\x00") {
					l.add("HG141", fmt.Sprintf("%s[%d]", key, i), "%q is not a robots directive", s)
				}
			}
			d.v.Directives, d.v.directives = list, true
		}
	}},
}}

func (l *loader) robots(key string, v any) *Robots {
	t, ok := l.table(key, v)
	if !ok {
		return nil
	}
	r := &Robots{}
	decode(l, key, t, ruleRobotsFields, into[*Robots]{&tmplCtx{l: l}, r})
	return r
}

func (l *loader) checkSource(key, src string) {
	switch {
	case strings.HasPrefix(src, "upstream:/") || strings.HasPrefix(src, "upstream-sitemap:/"):
		if strings.ContainsAny(src, " \r\n\x00") {
			l.add("HG114", key, "%q: an upstream path holds no spaces or control characters", src)
		}
	case strings.HasPrefix(src, "file:") && len(src) > 5:
		p := src[5:]
		if !filepath.IsAbs(p) {
			p = filepath.Join(l.cfg.Dir, p)
		}
		if st, err := os.Stat(p); err != nil || st.IsDir() {
			l.add("HG114", key, "%q: no such file (%s)", src, p)
		}
	default:
		l.add("HG114", key, `%q is neither "upstream:/path", "upstream-sitemap:/path" nor "file:path"`, src)
	}
}

// entryFields declares the keys of one of a rule's sitemap_entries.
var entryFields = &schema.Fields[into[*Entry]]{Name: "rule.sitemap_entries", List: []schema.Field[into[*Entry]]{
	{Key: "params", Early: true, Read: func(d into[*Entry], key string, v any) {
		l := d.tc.l
		pt, ok := l.table(key, v)
		if !ok {
			return
		}
		for _, name := range sortedKeys(pt) {
			val := pt[name]
			switch x := val.(type) {
			case string:
				d.v.Params[name] = x
			case int64:
				d.v.Params[name] = strconv.FormatInt(x, 10)
			default:
				l.wrongType(key+"."+name, val, "a string")
			}
		}
	}},
	{Key: "lastmod", Early: true, Read: func(d into[*Entry], key string, v any) {
		switch x := v.(type) {
		case string:
			d.v.Lastmod = x
		case time.Time:
			d.v.Lastmod = tomlTime(x)
		default:
			d.tc.l.wrongType(key, v, "a date (RFC 3339 or YYYY-MM-DD)")
		}
	}},
}}

func (l *loader) entries(key string, v any) []Entry {
	arr, ok := l.tables(key, v, `an array of tables ({ params = {…}, lastmod = "…" })`)
	if !ok {
		return nil
	}
	var out []Entry
	for i, t := range arr {
		e := Entry{Params: map[string]string{}}
		decode(l, fmt.Sprintf("%s[%d]", key, i), t, entryFields, into[*Entry]{&tmplCtx{l: l}, &e})
		out = append(out, e)
	}
	return out
}

func (l *loader) checkSitemapRule(path string, r *Rule) {
	if !r.Sitemap {
		return
	}
	if r.Pattern != nil && r.Pattern.HasParams() && r.SitemapSource == "" && len(r.SitemapEntries) == 0 {
		l.add("HG110", path+".sitemap", "a rule with parameters (or *) needs sitemap_source or sitemap_entries to list its pages")
	}
	if r.Robots != nil && r.Robots.Index != nil && !*r.Robots.Index {
		l.add("HG111", path+".sitemap", "a sitemap lists pages to index, but this rule says robots.index = false")
	}
	if r.Canonical != nil && r.Canonical.Raw != "self" && r.Canonical.Raw != UpstreamOrSelf {
		l.add("HG112", path+".sitemap", "a page whose canonical names another address is no sitemap entry (use canonical = \"self\")")
	}
	if r.Deny {
		l.add("HG113", path+".sitemap", "a denied path can not be in the sitemap")
	}
}

// tmplCtx parses a rule's templates, checking the names they use.
type tmplCtx struct {
	l    *loader
	rule *Rule
}

func (tc *tmplCtx) tmpl(key string, v any) *Template {
	var s string
	if !tc.l.str(key, v, &s) {
		return nil
	}
	t, err := parseTemplate(s)
	if err != nil {
		tc.l.add("HG121", key, "%v", err)
		return nil
	}
	tc.l.notePageVars(t)
	for _, name := range t.Vars() {
		if isFixedVar(name) {
			continue
		}
		if known, ok := tc.dataVar(key, t, name); known {
			if !ok {
				return nil
			}
			continue
		}
		known := pageVarName(name)
		for _, p := range tc.rule.paramNames() {
			known = known || p == name
		}
		if !known {
			msg := fmt.Sprintf("unknown template variable {%s}", name)
			cands := []string{"locale", "path", "base_url", "canonical", "title", "description", "page.title", "page.description",
				"page.canonical", "page.lang", "page.og.image"}
			cands = append(cands, tc.rule.paramNames()...)
			if s := schema.Suggest(name, cands); s != "" {
				msg += " (did you mean {" + s + "}?)"
			}
			tc.l.add("HG121", key, "%s", msg)
			return nil
		}
	}
	return t
}

// urlTmpl parses a URL-valued template; a static one must already pass the
// URL rules.
func (tc *tmplCtx) urlTmpl(key string, v any) *Template {
	if s, ok := v.(string); ok && bareWord(s) {
		tc.l.add("HG111", key, "%q is neither a path starting with / nor an absolute URL (a bare word would be written as a path under base_url)", s)
		return nil
	}
	t := tc.tmpl(key, v)
	if t != nil && t.Static() {
		s := t.render(&vars{baseURL: tc.l.cfg.Site.BaseURL}, true)
		origin := tc.l.cfg.Site.BaseURL
		if origin == "" {
			origin = "https://base.invalid"
		}
		if why := ValidURL(origin, s); why != "" {
			tc.l.add("HG150", key, "%q is not a URL headgate writes: %s (use an absolute http(s) URL or a path starting with /)", s, dropText(why))
			return nil
		}
	}
	return t
}
