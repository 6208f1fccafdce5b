package rules

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"
	"golang.org/x/net/idna"
)

// Load reads, validates and compiles the configuration file at path, with
// the HEADGATE_* overrides from the process environment. On a bad
// configuration the error is a Problems listing every problem.
func Load(path string) (*Config, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, src, os.LookupEnv)
}

// Parse is Load for a configuration already in memory. name is used in
// problems and to find file: sources relative to it; env may be nil.
func Parse(name string, src []byte, env func(string) (string, bool)) (*Config, error) {
	l := &loader{file: name, cfg: defaults(), schema: newSchema()}
	l.cfg.File = name
	l.cfg.Dir = filepath.Dir(name)
	var tree map[string]any
	if _, err := toml.Decode(string(src), &tree); err != nil {
		line := 0
		var pe toml.ParseError
		if errors.As(err, &pe) {
			line = pe.Position.Line
			err = errors.New(pe.Message)
		}
		return nil, Problems{{Code: "HG100", File: name, Line: line, Message: "does not parse: " + err.Error()}}
	}
	l.lines = keyLines(src)
	h := sha256.New()
	h.Write(src)
	if env != nil {
		for _, e := range l.schema.env {
			if v, ok := env(e.env); ok && v != "" {
				sec, key, _ := strings.Cut(e.key, ".")
				t, isTable := tree[sec].(map[string]any)
				if !isTable && tree[sec] != nil {
					continue // [server] or [site] of the wrong type: reported as such
				}
				if t == nil {
					t = map[string]any{}
					tree[sec] = t
				}
				t[key] = v
				l.fromEnv = append(l.fromEnv, e.key)
				fmt.Fprintf(h, "\x00%s=%s", e.env, v)
			}
		}
	}
	l.hash = h
	l.root(tree)
	if len(l.probs) > 0 {
		l.probs.sort()
		return nil, l.probs
	}
	l.cfg.Hash = hex.EncodeToString(h.Sum(nil))[:16]
	cfg := l.cfg
	cfg.table = newTable(cfg.Rules, cfg.Site.Locales)
	cfg.base, _ = url.Parse(cfg.Site.BaseURL + "/")
	cfg.precompute()
	cfg.matches = &sync.Pool{New: func() any { return new(Match) }}
	if cfg.redir != nil {
		cfg.redir.matches = cfg.matches
	}
	return &cfg, nil
}

type loader struct {
	file    string
	cfg     Config
	hash    hash.Hash // over the file, its overrides and its data files
	lines   map[string]int
	probs   Problems
	fromEnv []string
	data    *dataSet // the data tables, loaded before the rules (dataload.go)
	schema  *schema  // the keys of every table (fields.go)
}

func (l *loader) add(code, key, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	line := lineOf(l.lines, key)
	for _, k := range l.fromEnv {
		if key == k {
			msg += " (from the environment)"
			line = 0
		}
	}
	l.probs = append(l.probs, Problem{Code: code, File: l.file, Line: line, Key: key, Message: msg})
}

// dataFile records a data file the config read (a table), with the
// SHA-256 of its bytes as read: a change to it reloads the config, and its
// content is part of Config.Hash, so rewritten ETags follow it.
func (l *loader) dataFile(name string, sum []byte) {
	l.cfg.Files = append(l.cfg.Files, name)
	fmt.Fprintf(l.hash, "\x00file=%s\x00", name)
	l.hash.Write(sum)
}

// known reports the keys of table t (at key path path) that the schema of
// table does not list, with a "did you mean".
func (l *loader) known(path string, t map[string]any, table string) {
	keys, ok := l.schema.keys[table]
	if !ok {
		panic("rules: no schema for table " + strconv.Quote(table))
	}
	for _, k := range sortedKeys(t) {
		ok := false
		for _, want := range keys {
			if k == want {
				ok = true
				break
			}
		}
		if !ok {
			msg := "unknown key"
			if s := suggest(k, keys); s != "" {
				msg += " (did you mean " + s + "?)"
			}
			l.add("HG140", sub(path, k), "%s", msg)
		}
	}
}

// sortedKeys returns t's keys in order: problems found while walking a
// table come out in the same order on every run.
func sortedKeys[V any](t map[string]V) []string {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sub(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// suggest returns the known key closest to k, if it is close enough.
func suggest(k string, keys []string) string {
	best, bestD := "", 1<<30
	for _, c := range keys {
		if d := editDistance(strings.ToLower(k), c); d < bestD {
			best, bestD = c, d
		}
	}
	if bestD <= max(2, len(k)/3) {
		return best
	}
	return ""
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func typeName(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case []any, []map[string]any:
		return "an array"
	case map[string]any:
		return "a table"
	case time.Time:
		return "a date-time"
	}
	return fmt.Sprintf("%T", v)
}

func (l *loader) wrongType(key string, v any, want string) {
	l.add("HG141", key, "must be %s, not %s", want, typeName(v))
}

func (l *loader) table(key string, v any) (map[string]any, bool) {
	t, ok := v.(map[string]any)
	if !ok {
		l.wrongType(key, v, "a table")
	}
	return t, ok
}

// tables reads an array of tables, written as [[key]] or as an inline array
// of inline tables (key = [{…}, {…}]).
func (l *loader) tables(key string, v any, want string) ([]map[string]any, bool) {
	switch x := v.(type) {
	case []map[string]any:
		return x, true
	case []any:
		out := make([]map[string]any, len(x))
		for i, e := range x {
			t, ok := e.(map[string]any)
			if !ok {
				l.wrongType(fmt.Sprintf("%s[%d]", key, i), e, "a table")
				return nil, false
			}
			out[i] = t
		}
		return out, true
	}
	l.wrongType(key, v, want)
	return nil, false
}

func (l *loader) str(key string, v any, dst *string) bool {
	s, ok := v.(string)
	if !ok {
		l.wrongType(key, v, "a string")
		return false
	}
	*dst = s
	return true
}

func (l *loader) boolean(key string, v any, dst *bool) {
	b, ok := v.(bool)
	if !ok {
		l.wrongType(key, v, "a boolean (true or false)")
		return
	}
	*dst = b
}

func (l *loader) strList(key string, v any) ([]string, bool) {
	arr, ok := v.([]any)
	if !ok {
		l.wrongType(key, v, "an array of strings")
		return nil, false
	}
	out := make([]string, 0, len(arr))
	for i, x := range arr {
		s, ok := x.(string)
		if !ok {
			l.wrongType(fmt.Sprintf("%s[%d]", key, i), x, "a string")
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

func (l *loader) duration(key string, v any, dst *time.Duration) {
	s, ok := v.(string)
	if !ok {
		l.wrongType(key, v, `a duration string such as "30s"`)
		return
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		l.add("HG141", key, `%q is not a positive duration (use Go syntax such as "30s", "5m")`, s)
		return
	}
	*dst = d
}

func (l *loader) integer(key string, v any, lo, hi int64, dst *int) {
	n, ok := v.(int64)
	if !ok {
		l.wrongType(key, v, "an integer")
		return
	}
	if n < lo || n > hi {
		l.add("HG141", key, "%d is out of range (%d to %d)", n, lo, hi)
		return
	}
	*dst = int(n)
}

// size reads bytes as an integer or a string with a unit ("256KiB").
func (l *loader) size(key string, v any, lo, hi int64, dst *int) {
	var n int64
	switch x := v.(type) {
	case int64:
		n = x
	case string:
		var err error
		if n, err = parseSize(x); err != nil {
			l.add("HG141", key, "%v", err)
			return
		}
	default:
		l.wrongType(key, v, `a size (bytes, or a string such as "256KiB")`)
		return
	}
	if n < lo || n > hi {
		l.add("HG141", key, "%d bytes is out of range (%d to %d)", n, lo, hi)
		return
	}
	*dst = int(n)
}

func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a size (bytes, or a number with B, KB, KiB, MB, MiB, GB, GiB)", s)
	}
	units := map[string]int64{"": 1, "B": 1, "KB": 1000, "KIB": 1 << 10, "MB": 1000 * 1000, "MIB": 1 << 20, "GB": 1000 * 1000 * 1000, "GIB": 1 << 30}
	mul, ok := units[strings.ToUpper(strings.TrimSpace(t[i:]))]
	if !ok {
		return 0, fmt.Errorf("%q is not a size (bytes, or a number with B, KB, KiB, MB, MiB, GB, GiB)", s)
	}
	if n > (1<<62)/mul {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n * mul, nil
}

func (l *loader) enum(key string, v any, dst *string, allowed ...string) {
	var s string
	if !l.str(key, v, &s) {
		return
	}
	for _, a := range allowed {
		if s == a {
			*dst = s
			return
		}
	}
	l.add("HG141", key, "%q is not one of %s", s, strings.Join(quoteAll(allowed), ", "))
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

func (l *loader) root(tree map[string]any) {
	l.known("", tree, "")
	// [server] and [site] are read even when absent: they have required keys.
	l.server(l.topTable(tree, serverFields.name, true))
	l.site(l.topTable(tree, siteFields.name, true))
	if t := l.topTable(tree, sitemapFields.name, false); t != nil {
		l.sitemap(t)
	}
	if t := l.topTable(tree, robotsFields.name, false); t != nil {
		l.crawlerPolicy(t)
	}
	l.dataTables(tree)
	for i, t := range l.topTables(tree, ruleFields.name) {
		l.rule(i, t)
	}
	l.redirects(tree)
	l.crawl(tree)
}

// topTable returns the top-level table name of tree: nil when it is absent
// or not a table (reported), or with always an empty table then.
func (l *loader) topTable(tree map[string]any, name string, always bool) map[string]any {
	if v, ok := tree[name]; ok {
		if t, ok := l.table(name, v); ok {
			return t
		}
	}
	if always {
		return map[string]any{}
	}
	return nil
}

// topTables returns the top-level array of tables name of tree ([[name]]).
func (l *loader) topTables(tree map[string]any, name string) []map[string]any {
	v, ok := tree[name]
	if !ok {
		return nil
	}
	arr, _ := l.tables(name, v, "an array of tables ([["+name+"]])")
	return arr
}

// serverFields declares the keys of [server].
var serverFields = &fields[*loader]{name: "server", list: []field[*loader]{
	{key: "listen", env: "HEADGATE_LISTEN", read: func(l *loader, key string, v any) { l.listen(key, v, &l.cfg.Server.Listen) }},
	{key: "admin_listen", env: "HEADGATE_ADMIN_LISTEN", read: func(l *loader, key string, v any) { l.listen(key, v, &l.cfg.Server.AdminListen) }},
	{key: "upstream", env: "HEADGATE_UPSTREAM", read: (*loader).upstream,
		needCode: "HG102", need: `is required: an http(s) URL or "builtin:demo"`, needKey: true},
	{key: "preserve_host", read: func(l *loader, key string, v any) { l.boolean(key, v, &l.cfg.Server.PreserveHost) }},
	{key: "upstream_timeout", read: func(l *loader, key string, v any) { l.duration(key, v, &l.cfg.Server.UpstreamTimeout) }},
	{key: "max_head_bytes", read: func(l *loader, key string, v any) { l.size(key, v, 1024, 64<<20, &l.cfg.Server.MaxHeadBytes) }},
	{key: "shutdown_timeout", read: func(l *loader, key string, v any) { l.duration(key, v, &l.cfg.Server.ShutdownTimeout) }},
	{key: "compress", read: (*loader).compress},
	{key: "access_log", read: func(l *loader, key string, v any) { l.boolean(key, v, &l.cfg.Server.AccessLog) }},
	{key: "change_header", read: func(l *loader, key string, v any) { l.boolean(key, v, &l.cfg.Server.ChangeHeader) }},
	{key: "max_idle_connections", read: (*loader).maxIdleConnections}, // limits.go
	{key: "trusted_proxies", read: (*loader).trustedProxies},          // redirect.go
}}

func (l *loader) server(t map[string]any) {
	decode(l, serverFields.name, t, serverFields, l)
	if s := &l.cfg.Server; s.Listen != "" && s.Listen == s.AdminListen {
		l.add("HG103", "server.admin_listen", "must differ from server.listen: the admin endpoints never share the public port")
	}
}

func (l *loader) listen(key string, v any, dst *string) {
	var a string
	if l.str(key, v, &a) {
		if err := checkListen(a); err != nil {
			l.add("HG103", key, "%q: %v", a, err)
		} else {
			*dst = a
		}
	}
}

func (l *loader) upstream(key string, v any) {
	var u string
	if l.str(key, v, &u) {
		if err := checkUpstream(u); err != nil {
			l.add("HG102", key, "%q: %v", u, err)
		} else {
			l.cfg.Server.Upstream = u
		}
	}
}

func (l *loader) compress(key string, v any) {
	s := &l.cfg.Server
	if list, ok := l.strList(key, v); ok {
		s.Compress = nil
		for i, c := range list {
			switch c {
			case "zstd", "br", "gzip", "deflate":
				s.Compress = append(s.Compress, c)
			default:
				l.add("HG141", fmt.Sprintf("%s[%d]", key, i), `%q is not one of "zstd", "br", "gzip", "deflate"`, c)
			}
		}
	}
}

func checkListen(a string) error {
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		return errors.New(`not a listen address (host:port, such as ":8080" or "127.0.0.1:9090")`)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return errors.New("the port must be a number from 0 to 65535")
	}
	if host != "" && host != "localhost" && net.ParseIP(host) == nil && !validHostname(host) {
		return errors.New("the host is not an IP address or a host name")
	}
	return nil
}

func validHostname(h string) bool {
	for _, part := range strings.Split(h, ".") {
		if part == "" || len(part) > 63 {
			return false
		}
		for i := 0; i < len(part); i++ {
			c := part[i]
			if !(c == '-' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
				return false
			}
		}
	}
	return true
}

func checkUpstream(u string) error {
	if u == BuiltinDemo {
		return nil
	}
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return errors.New(`not an http(s) URL or "builtin:demo"`)
	}
	if p.User != nil || p.RawQuery != "" || p.Fragment != "" {
		return errors.New("an upstream URL has no user info, query or fragment")
	}
	return nil
}

// siteFields declares the keys of [site].
var siteFields = &fields[*loader]{name: "site", list: []field[*loader]{
	{key: "base_url", env: "HEADGATE_BASE_URL", read: (*loader).baseURL,
		needCode: "HG101", need: "is required: the public origin of the site, such as https://www.example.com", needKey: true},
	{key: "mode", read: func(l *loader, key string, v any) {
		var m string
		l.enum(key, v, &m, "production", "staging", "shadow")
		if m != "" {
			l.cfg.Site.Mode = Mode(m)
		}
	}},
	{key: "title_template", read: (*loader).titleTemplate},
	{key: "locales", read: (*loader).locales},
	{key: "x_default", read: func(l *loader, key string, v any) { l.boolean(key, v, &l.cfg.Site.XDefault) }},
	{key: "correct_upstream", read: func(l *loader, key string, v any) { l.boolean(key, v, &l.cfg.Site.CorrectUpstream) }},
	{key: "og_url_from_canonical", read: func(l *loader, key string, v any) { l.boolean(key, v, &l.cfg.Site.OGURLFromCanonical) }},
}}

func (l *loader) site(t map[string]any) { decode(l, siteFields.name, t, siteFields, l) }

func (l *loader) baseURL(key string, v any) {
	var b string
	if l.str(key, v, &b) {
		if o, err := checkBaseURL(b); err != nil {
			l.add("HG101", key, "%q: %v", b, err)
		} else {
			l.cfg.Site.BaseURL = o
		}
	}
}

func (l *loader) titleTemplate(key string, v any) {
	s := &l.cfg.Site
	if l.str(key, v, &s.TitleTemplate) {
		if n := strings.Count(strings.ReplaceAll(s.TitleTemplate, "%%", ""), "%s"); n != 1 {
			l.add("HG141", key, "%q must hold %%s exactly once (the rule's title; %%%% for a percent sign)", s.TitleTemplate)
		}
	}
}

func (l *loader) locales(key string, v any) {
	s := &l.cfg.Site
	if list, ok := l.strList(key, v); ok {
		seen := map[string]bool{}
		for i, loc := range list {
			if !validLocale(loc) {
				l.add("HG170", fmt.Sprintf("%s[%d]", key, i), "%q is not a BCP 47 language tag (such as en, de-AT, zh-Hant)", loc)
				continue
			}
			if seen[strings.ToLower(loc)] {
				l.add("HG170", fmt.Sprintf("%s[%d]", key, i), "%q is listed twice", loc)
				continue
			}
			seen[strings.ToLower(loc)] = true
			s.Locales = append(s.Locales, loc)
		}
	}
}

// checkBaseURL returns the origin of a valid base URL.
func checkBaseURL(b string) (string, error) {
	u, err := url.Parse(b)
	switch {
	case err != nil:
		return "", errors.New("not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return "", errors.New("must be an http or https URL")
	case u.Host == "" || strings.ContainsAny(u.Host, `\ `):
		return "", errors.New("has no host")
	case u.User != nil:
		return "", errors.New("must not hold user info")
	case u.RawQuery != "" || u.ForceQuery:
		return "", errors.New("must not hold a query")
	case u.Fragment != "" || strings.Contains(b, "#"):
		return "", errors.New("must not hold a fragment")
	}
	// One spelling of the origin, as clients compare it: a default port
	// is no port, and an internationalized host is its A-label (a
	// Location header and a sitemap's <loc> hold ASCII only).
	host, port := u.Hostname(), u.Port()
	if strings.Contains(host, "%") {
		return "", errors.New("must not hold an IPv6 zone: it names an interface of one machine")
	}
	if port != "" {
		// url.Parse has checked the digits; ":0443" is port 443.
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("port %s is not a TCP port", port)
		}
		port = strconv.Itoa(n)
	}
	if portOf(port, u.Scheme) == portOf("", u.Scheme) {
		port = ""
	}
	if !isASCII(host) {
		a, err := idna.Lookup.ToASCII(host)
		if err != nil {
			return "", fmt.Errorf("its host is not a valid domain name: %v", err)
		}
		host = a
	}
	host = strings.ToLower(host)
	if strings.Contains(host, ":") {
		host = "[" + host + "]" // an IPv6 literal
	}
	if port != "" {
		host += ":" + port
	}
	return u.Scheme + "://" + host, nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// validLocale accepts BCP 47 tags as sites spell them in URLs: a 2–3 (or
// 4–8) letter language, then subtags of 1–8 letters or digits.
func validLocale(s string) bool {
	parts := strings.Split(s, "-")
	for i, p := range parts {
		if len(p) < 1 || len(p) > 8 {
			return false
		}
		for j := 0; j < len(p); j++ {
			c := p[j] | 0x20
			digit := p[j] >= '0' && p[j] <= '9'
			if !(c >= 'a' && c <= 'z') && !(digit && i > 0) {
				return false
			}
		}
		if i == 0 && (len(p) < 2 || len(p) == 4) {
			return false
		}
	}
	return true
}

// sitemapFields declares the keys of [sitemap].
var sitemapFields = &fields[*loader]{name: "sitemap", list: []field[*loader]{
	{key: "cache_ttl", read: func(l *loader, key string, v any) { l.duration(key, v, &l.cfg.Sitemap.CacheTTL) }},
	{key: "retry_after", read: func(l *loader, key string, v any) { l.duration(key, v, &l.cfg.Sitemap.RetryAfter) }},
	{key: "max_urls_per_file", read: func(l *loader, key string, v any) { l.integer(key, v, 1, 50000, &l.cfg.Sitemap.MaxURLsPerFile) }},
	{key: "max_urls", read: func(l *loader, key string, v any) { l.integer(key, v, 1, 1<<40, &l.cfg.Sitemap.MaxURLs) }},
}}

func (l *loader) sitemap(t map[string]any) { decode(l, sitemapFields.name, t, sitemapFields, l) }

// ruleDec is what a rule's fields read into.
type ruleDec struct {
	l  *loader
	r  *Rule
	tc *tmplCtx
}

// ruleFields declares the keys of [[rule]]. The early ones are read first:
// the templates' checks depend on match's parameters, localized, the
// lookups and the query conditions.
var ruleFields = &fields[*ruleDec]{name: "rule", list: []field[*ruleDec]{
	{key: "match", early: true, read: (*ruleDec).match, needCode: "HG120", need: `has no match pattern (add match = "/path")`},
	{key: "title", read: func(d *ruleDec, key string, v any) { d.r.Title = d.tc.tmpl(key, v) }},
	{key: "description", read: func(d *ruleDec, key string, v any) { d.r.Description = d.tc.tmpl(key, v) }},
	{key: "canonical", read: (*ruleDec).canonical},
	{key: "keep_query", read: func(d *ruleDec, key string, v any) {
		if list, ok := d.l.strList(key, v); ok {
			d.r.KeepQuery, d.r.keepQuery = list, true
		}
	}},
	{key: "robots", read: func(d *ruleDec, key string, v any) { d.r.Robots = d.l.robots(key, v) }},
	{key: "open_graph", read: func(d *ruleDec, key string, v any) { d.r.OpenGraph = d.tc.openGraph(key, v) }},
	{key: "twitter", read: func(d *ruleDec, key string, v any) { d.r.Twitter = d.tc.twitter(key, v) }},
	{key: "json_ld", read: (*ruleDec).jsonLD},
	{key: "json_ld_file", read: func(d *ruleDec, key string, v any) {
		var f string
		if d.l.str(key, v, &f) {
			d.r.JSONLD = append(d.r.JSONLD, d.tc.jsonFile(key, f)...)
		}
	}},
	{key: "replace_json_ld", early: true, read: func(d *ruleDec, key string, v any) { d.l.boolean(key, v, &d.r.ReplaceJSON) }},
	{key: "headers", read: (*ruleDec).headers},
	{key: "localized", early: true, read: func(d *ruleDec, key string, v any) {
		d.l.boolean(key, v, &d.r.Localized)
		if d.r.Localized && len(d.l.cfg.Site.Locales) == 0 {
			d.l.add("HG170", key, "localized = true needs site.locales")
		}
	}},
	{key: "sitemap", early: true, read: func(d *ruleDec, key string, v any) { d.l.boolean(key, v, &d.r.Sitemap) }},
	{key: "sitemap_source", read: func(d *ruleDec, key string, v any) {
		if d.l.str(key, v, &d.r.SitemapSource) {
			d.l.checkSource(key, d.r.SitemapSource)
		}
	}},
	{key: "sitemap_entries", read: func(d *ruleDec, key string, v any) { d.r.SitemapEntries = d.l.entries(key, v) }},
	{key: "policy", read: func(d *ruleDec, key string, v any) {
		var p string
		d.l.enum(key, v, &p, "override", "fill")
		d.r.Policy = Policy(p)
	}},
	{key: "deny", early: true, read: func(d *ruleDec, key string, v any) { d.l.boolean(key, v, &d.r.Deny) }},
	{key: "lookup", early: true, read: func(d *ruleDec, key string, v any) { d.l.ruleLookups(key, v, d.r) }}, // dataload.go
	{key: "rewrite", early: true, read: func(d *ruleDec, key string, v any) { d.r.Rewrite = d.l.optBool(key, v) }},
	{key: "inherit", early: true, read: func(d *ruleDec, key string, v any) { d.r.Inherit = d.l.optBool(key, v) }},
	{key: "query", early: true, read: func(d *ruleDec, key string, v any) { d.l.ruleQuery(key, v, d.r) }}, // cms.go
}}

func (l *loader) rule(i int, t map[string]any) {
	path := fmt.Sprintf("rule[%d]", i)
	r := &Rule{Index: i, Line: lineOf(l.lines, path)}
	l.cfg.Rules = append(l.cfg.Rules, r)
	decode(l, path, t, ruleFields, &ruleDec{l: l, r: r, tc: &tmplCtx{l: l, rule: r}})
	l.checkSitemapRule(path, r)
}

func (d *ruleDec) match(key string, v any) {
	r := d.r
	if d.l.str(key, v, &r.Match) {
		p, err := ParsePattern(r.Match)
		if err != nil && indexOutsideBraces(r.Match, "?") >= 0 {
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
	} else {
		r.Canonical = d.tc.urlTmpl(key, v)
	}
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
var ruleRobotsFields = &fields[into[*Robots]]{name: "rule.robots", list: []field[into[*Robots]]{
	{key: "index", early: true, read: func(d into[*Robots], key string, v any) { d.v.Index = d.tc.l.optBool(key, v) }},
	{key: "follow", early: true, read: func(d into[*Robots], key string, v any) { d.v.Follow = d.tc.l.optBool(key, v) }},
	{key: "directives", early: true, read: func(d into[*Robots], key string, v any) {
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
var entryFields = &fields[into[*Entry]]{name: "rule.sitemap_entries", list: []field[into[*Entry]]{
	{key: "params", early: true, read: func(d into[*Entry], key string, v any) {
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
	{key: "lastmod", early: true, read: func(d into[*Entry], key string, v any) {
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
		if fixedVars[name] {
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
			if s := suggest(name, cands); s != "" {
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

// ogFields declares the keys of a rule's open_graph table.
var ogFields = &fields[into[*OpenGraph]]{name: "rule.open_graph", list: []field[into[*OpenGraph]]{
	{key: "title", read: func(d into[*OpenGraph], key string, v any) { d.v.Title = d.tc.tmpl(key, v) }},
	{key: "description", read: func(d into[*OpenGraph], key string, v any) { d.v.Description = d.tc.tmpl(key, v) }},
	{key: "type", read: func(d into[*OpenGraph], key string, v any) { d.v.Type = d.tc.tmpl(key, v) }},
	{key: "url", read: func(d into[*OpenGraph], key string, v any) { d.v.URL = d.tc.urlTmpl(key, v) }},
	{key: "site_name", read: func(d into[*OpenGraph], key string, v any) { d.v.SiteName = d.tc.tmpl(key, v) }},
	{key: "locale", read: func(d into[*OpenGraph], key string, v any) { d.v.Locale = d.tc.tmpl(key, v) }},
	{key: "image", read: func(d into[*OpenGraph], key string, v any) {
		d.v.Image = []Image{}
		for i, item := range listOf(v) {
			ik := key
			if _, isArr := v.([]any); isArr {
				ik = fmt.Sprintf("%s[%d]", key, i)
			} else if _, isArr := v.([]map[string]any); isArr {
				ik = fmt.Sprintf("%s[%d]", key, i)
			}
			if img, ok := d.tc.image(ik, item); ok {
				d.v.Image = append(d.v.Image, img)
			}
		}
	}},
	{key: "article", read: func(d into[*OpenGraph], key string, v any) { d.v.Article = d.tc.article(key, v) }},
}}

func (tc *tmplCtx) openGraph(key string, v any) *OpenGraph {
	t, ok := tc.l.table(key, v)
	if !ok {
		return nil
	}
	og := &OpenGraph{}
	decode(tc.l, key, t, ogFields, into[*OpenGraph]{tc, og})
	return og
}

func listOf(x any) []any {
	switch a := x.(type) {
	case []any:
		return a
	case []map[string]any:
		out := make([]any, len(a))
		for i := range a {
			out[i] = a[i]
		}
		return out
	}
	return []any{x}
}

// imageFields declares the keys of an Open Graph image table.
var imageFields = &fields[into[*Image]]{name: "rule.open_graph.image", list: []field[into[*Image]]{
	{key: "url", early: true, read: func(d into[*Image], key string, v any) { d.v.URL = d.tc.urlTmpl(key, v) },
		needCode: "HG141", need: "an image table needs url"},
	{key: "width", early: true, read: func(d into[*Image], key string, v any) { d.tc.l.integer(key, v, 1, 100000, &d.v.Width) }},
	{key: "height", early: true, read: func(d into[*Image], key string, v any) { d.tc.l.integer(key, v, 1, 100000, &d.v.Height) }},
	{key: "alt", early: true, read: func(d into[*Image], key string, v any) { d.v.Alt = d.tc.tmpl(key, v) }},
	{key: "type", early: true, read: func(d into[*Image], key string, v any) { d.v.Type = d.tc.tmpl(key, v) }},
	{key: "secure_url", early: true, read: func(d into[*Image], key string, v any) { d.v.SecureURL = d.tc.urlTmpl(key, v) }},
}}

func (tc *tmplCtx) image(key string, x any) (Image, bool) {
	if s, ok := x.(string); ok {
		t := tc.urlTmpl(key, s)
		return Image{URL: t}, t != nil
	}
	t, ok := tc.l.table(key, x)
	if !ok {
		return Image{}, false
	}
	var img Image
	decode(tc.l, key, t, imageFields, into[*Image]{tc, &img})
	return img, img.URL != nil
}

// articleFields declares the keys of a rule's open_graph.article table.
var articleFields = &fields[into[*Article]]{name: "rule.open_graph.article", list: []field[into[*Article]]{
	{key: "published_time", read: func(d into[*Article], key string, v any) { d.v.PublishedTime = d.tc.timeTmpl(key, v) }},
	{key: "modified_time", read: func(d into[*Article], key string, v any) { d.v.ModifiedTime = d.tc.timeTmpl(key, v) }},
	{key: "expiration_time", read: func(d into[*Article], key string, v any) { d.v.ExpirationTime = d.tc.timeTmpl(key, v) }},
	{key: "authors", read: func(d into[*Article], key string, v any) { d.v.Authors = d.tc.tmplList(key, v, d.v.Authors) }},
	{key: "section", read: func(d into[*Article], key string, v any) { d.v.Section = d.tc.tmpl(key, v) }},
	{key: "tags", read: func(d into[*Article], key string, v any) { d.v.Tags = d.tc.tmplList(key, v, d.v.Tags) }},
}}

func (tc *tmplCtx) article(key string, x any) *Article {
	t, ok := tc.l.table(key, x)
	if !ok {
		return nil
	}
	a := &Article{}
	decode(tc.l, key, t, articleFields, into[*Article]{tc, a})
	return a
}

// timeTmpl reads a template that may be written as a TOML date-time.
func (tc *tmplCtx) timeTmpl(key string, v any) *Template {
	if tm, ok := v.(time.Time); ok {
		v = tomlTime(tm)
	}
	return tc.tmpl(key, v)
}

// tmplList reads an array of templates; on a value that is not an array of
// strings it reports the problem and keeps old.
func (tc *tmplCtx) tmplList(key string, v any, old []*Template) []*Template {
	list, ok := tc.l.strList(key, v)
	if !ok {
		return old
	}
	var ts []*Template
	for i, s := range list {
		if tm := tc.tmpl(fmt.Sprintf("%s[%d]", key, i), s); tm != nil {
			ts = append(ts, tm)
		}
	}
	return ts
}

// twitterFields declares the keys of a rule's twitter table.
var twitterFields = &fields[into[*Twitter]]{name: "rule.twitter", list: []field[into[*Twitter]]{
	{key: "card", read: func(d into[*Twitter], key string, v any) {
		var c string
		d.tc.l.enum(key, v, &c, "summary", "summary_large_image", "app", "player")
		if c != "" {
			d.v.Card = &Template{Raw: c, parts: []tpart{{lit: c}}}
		}
	}},
	{key: "site", read: func(d into[*Twitter], key string, v any) { d.v.Site = d.tc.tmpl(key, v) }},
	{key: "creator", read: func(d into[*Twitter], key string, v any) { d.v.Creator = d.tc.tmpl(key, v) }},
	{key: "title", read: func(d into[*Twitter], key string, v any) { d.v.Title = d.tc.tmpl(key, v) }},
	{key: "description", read: func(d into[*Twitter], key string, v any) { d.v.Description = d.tc.tmpl(key, v) }},
	{key: "image", read: func(d into[*Twitter], key string, v any) {
		d.v.Image = []TwitterImage{}
		_, isArr := v.([]any)
		_, isTArr := v.([]map[string]any)
		for i, item := range listOf(v) {
			ik := key
			if isArr || isTArr {
				ik = fmt.Sprintf("%s[%d]", key, i)
			}
			if img, ok := d.tc.twitterImage(ik, item); ok {
				d.v.Image = append(d.v.Image, img)
			}
		}
	}},
	{key: "url", read: func(d into[*Twitter], key string, v any) { d.v.URL = d.tc.urlTmpl(key, v) }},
}}

// twitterImageFields declares the keys of a twitter image table.
var twitterImageFields = &fields[into[*TwitterImage]]{name: "rule.twitter.image", list: []field[into[*TwitterImage]]{
	{key: "url", early: true, read: func(d into[*TwitterImage], key string, v any) { d.v.URL = d.tc.urlTmpl(key, v) },
		needCode: "HG141", need: "an image table needs url"},
	{key: "alt", early: true, read: func(d into[*TwitterImage], key string, v any) { d.v.Alt = d.tc.tmpl(key, v) }},
}}

func (tc *tmplCtx) twitter(key string, v any) *Twitter {
	t, ok := tc.l.table(key, v)
	if !ok {
		return nil
	}
	tw := &Twitter{}
	decode(tc.l, key, t, twitterFields, into[*Twitter]{tc, tw})
	return tw
}

// twitterImage reads one twitter image: a URL, or a table with url and alt.
func (tc *tmplCtx) twitterImage(key string, item any) (TwitterImage, bool) {
	if s, ok := item.(string); ok {
		u := tc.urlTmpl(key, s)
		return TwitterImage{URL: u}, u != nil
	}
	it, ok := tc.l.table(key, item)
	if !ok {
		return TwitterImage{}, false
	}
	var img TwitterImage
	decode(tc.l, key, it, twitterImageFields, into[*TwitterImage]{tc, &img})
	return img, img.URL != nil
}

// jsonTree turns a TOML or JSON value into a JSON-LD tree whose strings are
// templates.
func (tc *tmplCtx) jsonTree(key string, v any) any {
	switch x := v.(type) {
	case string:
		if t := tc.tmpl(key, x); t != nil {
			return t
		}
		return x
	case time.Time:
		return tomlTime(x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			tc.l.add("HG160", key, "JSON has no NaN or infinity")
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for _, k := range sortedKeys(x) {
			out[k] = tc.jsonTree(key+"."+k, x[k])
		}
		return out
	case []map[string]any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = tc.jsonTree(fmt.Sprintf("%s[%d]", key, i), val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = tc.jsonTree(fmt.Sprintf("%s[%d]", key, i), val)
		}
		return out
	}
	return v
}

// maxJSONLDFile bounds a json_ld_file: its blocks go into every page.
const maxJSONLDFile = 1 << 20

// readSmallFile reads a regular file of at most limit bytes. A device or a
// FIFO named by mistake (/dev/zero, a pipe) must not hang or fill memory.
func readSmallFile(name string, limit int64) ([]byte, error) {
	// Stat before Open: opening a FIFO blocks until someone writes to it.
	st, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return data, nil
}

// tomlTime writes a TOML date-time as it was written: RFC 3339 with its
// offset, and the local forms (no offset) without one, rather than claiming
// UTC for them.
func tomlTime(t time.Time) string {
	// BurntSushi/toml marks the local forms with these zone names (and the
	// machine's offset, which must not leak into what headgate writes).
	switch t.Location().String() {
	case "date-local":
		return t.Format(time.DateOnly)
	case "time-local":
		return t.Format("15:04:05.999999999")
	case "datetime-local":
		return t.Format("2006-01-02T15:04:05.999999999")
	}
	return t.Format(time.RFC3339Nano)
}

func (tc *tmplCtx) jsonFile(key, name string) []any {
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(tc.l.cfg.Dir, p)
	}
	data, err := readSmallFile(p, maxJSONLDFile)
	if err != nil {
		tc.l.add("HG160", key, "can not read %s: %v", p, err)
		return nil
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		tc.l.add("HG160", key, "%s is not JSON: %v", p, err)
		return nil
	}
	var blocks []any
	switch x := v.(type) {
	case map[string]any:
		blocks = []any{x}
	case []any:
		blocks = x
	default:
		tc.l.add("HG160", key, "%s must hold a JSON object or an array of objects", p)
		return nil
	}
	var out []any
	for i, b := range blocks {
		obj, ok := b.(map[string]any)
		if !ok || obj["@type"] == nil && obj["@graph"] == nil {
			tc.l.add("HG160", key, "%s: block %d needs @type or @graph", p, i)
			continue
		}
		out = append(out, tc.jsonTree(key, obj))
	}
	return out
}
