package rules

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/idna"

	"github.com/headgate/headgate/rules/pattern"
	"github.com/headgate/headgate/rules/schema"
)

// serverFields declares the keys of [server].
var serverFields = &schema.Fields[*loader]{Name: "server", List: []schema.Field[*loader]{
	{Key: "listen", Env: "HEADGATE_LISTEN", Read: func(l *loader, key string, v any) { l.listen(key, v, &l.cfg.Server.Listen) }},
	{Key: "admin_listen", Env: "HEADGATE_ADMIN_LISTEN", Read: func(l *loader, key string, v any) { l.listen(key, v, &l.cfg.Server.AdminListen) }},
	{Key: "upstream", Env: "HEADGATE_UPSTREAM", Read: (*loader).upstream,
		NeedCode: "HG102", Need: `is required: an http(s) URL or "builtin:demo"`, NeedKey: true},
	{Key: "preserve_host", Read: func(l *loader, key string, v any) { l.boolean(key, v, &l.cfg.Server.PreserveHost) }},
	{Key: "upstream_timeout", Read: func(l *loader, key string, v any) { l.duration(key, v, &l.cfg.Server.UpstreamTimeout) }},
	{Key: "max_head_bytes", Read: func(l *loader, key string, v any) { l.size(key, v, 1024, 64<<20, &l.cfg.Server.MaxHeadBytes) }},
	{Key: "shutdown_timeout", Read: func(l *loader, key string, v any) { l.duration(key, v, &l.cfg.Server.ShutdownTimeout) }},
	{Key: "compress", Read: (*loader).compress},
	{Key: "access_log", Read: func(l *loader, key string, v any) { l.boolean(key, v, &l.cfg.Server.AccessLog) }},
	{Key: "change_header", Read: func(l *loader, key string, v any) { l.boolean(key, v, &l.cfg.Server.ChangeHeader) }},
	{Key: "upstream_page_coding", Read: func(l *loader, key string, v any) {
		l.enum(key, v, &l.cfg.Server.UpstreamPageCoding, UpstreamPageIdentity, UpstreamPageClient)
	}},
	{Key: "max_idle_connections", Read: (*loader).maxIdleConnections}, // limits.go
	{Key: "trusted_proxies", Read: (*loader).trustedProxies},          // redirect.go
	{Key: "admin_hosts", Read: (*loader).adminHosts},
}}

// tablesFields declares the keys of [tables] (§23).
var tablesFields = &schema.Fields[*loader]{Name: "tables", List: []schema.Field[*loader]{
	{Key: "max_cell_bytes", Read: func(l *loader, key string, v any) { l.size(key, v, 64, 1<<20, &l.cfg.TableLimits.MaxCellBytes) }},
}}

// inspectorFields declares the keys of [inspector].
var inspectorFields = &schema.Fields[*loader]{Name: "inspector", List: []schema.Field[*loader]{
	{Key: "image_hosts", Read: (*loader).imageHosts},
}}

// adminHosts reads server.admin_hosts: DNS names (an IP literal and
// localhost are always answered), each an A-label, without scheme, port
// or path. HG104 otherwise.
func (l *loader) adminHosts(key string, v any) {
	list, ok := l.strList(key, v)
	if !ok {
		return
	}
	for i, s := range list {
		name := strings.TrimSuffix(strings.ToLower(s), ".")
		if msg := checkHostName(name); msg != "" {
			l.add("HG104", fmt.Sprintf("%s[%d]", key, i), "%q: %s", s, msg)
			continue
		}
		l.cfg.Server.AdminHosts = append(l.cfg.Server.AdminHosts, name)
	}
}

// imageHosts reads inspector.image_hosts: "name" or "name:port". HG105
// otherwise.
func (l *loader) imageHosts(key string, v any) {
	list, ok := l.strList(key, v)
	if !ok {
		return
	}
	for i, s := range list {
		h := strings.ToLower(s)
		if strings.ContainsAny(h, "/@?#*[] \\%") {
			l.add("HG105", fmt.Sprintf("%s[%d]", key, i), "%q: a host or host:port only, without scheme, path, user info or wildcard", s)
			continue
		}
		name, port := h, ""
		if n, p, err := net.SplitHostPort(h); err == nil {
			name, port = n, p
		}
		name = strings.TrimSuffix(name, ".")
		msg := checkHostName(name)
		if msg == "" && port != "" {
			if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || port[0] == '0' {
				msg = "the port is not a number from 1 to 65535"
			}
		}
		if msg != "" {
			l.add("HG105", fmt.Sprintf("%s[%d]", key, i), "%q: %s", s, msg)
			continue
		}
		if port != "" {
			name = net.JoinHostPort(name, port)
		}
		l.cfg.Inspector.ImageHosts = append(l.cfg.Inspector.ImageHosts, name)
	}
}

// checkHostName says what keeps name (lower case, no trailing dot) from
// being a DNS name written as A-labels, or "".
func checkHostName(name string) string {
	switch {
	case name == "":
		return "empty"
	case strings.ContainsAny(name, "/:@?#*[] \\%"):
		return "a host name only, without scheme, port, path, user info or wildcard"
	case !isASCII(name):
		return "a non-ASCII name is written as its A-label (xn--…)"
	case !validHostname(name):
		return "not a DNS name"
	}
	return ""
}

func (l *loader) server(t map[string]any) {
	decode(l, serverFields.Name, t, serverFields, l)
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
	if u == BuiltinDemo || u == BuiltinNext {
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
var siteFields = &schema.Fields[*loader]{Name: "site", List: []schema.Field[*loader]{
	{Key: "base_url", Env: "HEADGATE_BASE_URL", Read: (*loader).baseURL,
		NeedCode: "HG101", Need: "is required: the public origin of the site, such as https://www.example.com", NeedKey: true},
	{Key: "mode", Read: func(l *loader, key string, v any) {
		var m string
		l.enum(key, v, &m, "production", "staging", "shadow")
		if m != "" {
			l.cfg.Site.Mode = Mode(m)
		}
	}},
	{Key: "title_template", Read: (*loader).titleTemplate},
	{Key: "locales", Read: (*loader).locales},
	{Key: "x_default", Read: func(l *loader, key string, v any) { l.boolean(key, v, &l.cfg.Site.XDefault) }},
	{Key: "correct_upstream", Read: func(l *loader, key string, v any) { l.boolean(key, v, &l.cfg.Site.CorrectUpstream) }},
	{Key: "og_url_from_canonical", Read: func(l *loader, key string, v any) { l.boolean(key, v, &l.cfg.Site.OGURLFromCanonical) }},
	{Key: "path_safe", Read: (*loader).pathSafe},
}}

// pathSafe reads site.path_safe: the characters the app writes raw in its
// paths (§23). HG106 for one a path can not hold raw.
func (l *loader) pathSafe(key string, v any) {
	var chars string
	if !l.str(key, v, &chars) {
		return
	}
	safe, err := pattern.NewSafe(chars)
	if err != nil {
		l.add("HG106", key, "%q: %v", chars, err)
		return
	}
	l.cfg.Site.PathSafe = safe
}

func (l *loader) site(t map[string]any) { decode(l, siteFields.Name, t, siteFields, l) }

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
var sitemapFields = &schema.Fields[*loader]{Name: "sitemap", List: []schema.Field[*loader]{
	{Key: "cache_ttl", Read: func(l *loader, key string, v any) { l.duration(key, v, &l.cfg.Sitemap.CacheTTL) }},
	{Key: "retry_after", Read: func(l *loader, key string, v any) { l.duration(key, v, &l.cfg.Sitemap.RetryAfter) }},
	{Key: "max_urls_per_file", Read: func(l *loader, key string, v any) { l.integer(key, v, 1, 50000, &l.cfg.Sitemap.MaxURLsPerFile) }},
	{Key: "max_urls", Read: func(l *loader, key string, v any) { l.integer(key, v, 1, 1<<40, &l.cfg.Sitemap.MaxURLs) }},
}}

func (l *loader) sitemap(t map[string]any) { decode(l, sitemapFields.Name, t, sitemapFields, l) }
