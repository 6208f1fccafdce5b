package audit

import (
	"net/url"
	"strings"
)

// site knows which URLs belong to the audited site. Inside the crawl a URL
// of the site is its key: the escaped path and the raw query ("/a?b=1"),
// without fragment. Reports name it on the first origin.
type site struct {
	origins        []string // the site's origins; the first is the one reports use
	livePath       string   // live mode: the path the Live URL names, when not "/"
	upstream       *url.URL // in-process mode: where pages are fetched
	upstreamOrigin string   // in-process mode: a Location on this origin is the site's
}

func (s *site) add(origin string) {
	for _, o := range s.origins {
		if o == origin {
			return
		}
	}
	s.origins = append(s.origins, origin)
}

func (s *site) has(origin string) bool {
	for _, o := range s.origins {
		if o == origin {
			return true
		}
	}
	return false
}

// url is the absolute URL reports give for a key.
func (s *site) url(key string) string { return s.origins[0] + key }

// parse returns the absolute URL of a key.
func (s *site) parse(key string) *url.URL {
	u, err := url.Parse(s.url(key))
	if err != nil {
		u, _ = url.Parse(s.origins[0] + "/")
	}
	return u
}

// keyOf returns the key of an absolute URL, and whether it is the site's.
func (s *site) keyOf(u *url.URL) (string, bool) {
	if u == nil || !s.has(originOf(u)) {
		return "", false
	}
	return pathQuery(u), true
}

// originOf is scheme://host, lower-case, without a default port.
func originOf(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Host)
	switch {
	case scheme == "http":
		host = strings.TrimSuffix(host, ":80")
	case scheme == "https":
		host = strings.TrimSuffix(host, ":443")
	}
	return scheme + "://" + host
}

func pathQuery(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return p
}

// norm is the form in which two absolute URLs compare: origin as originOf,
// "/" for an empty path, no fragment.
func norm(u *url.URL) string { return originOf(u) + pathQuery(u) }

// refKind says what an attribute value turned out to be.
type refKind int

const (
	refOK     refKind = iota
	refEmpty          // empty or only blanks
	refScheme         // a scheme other than http(s): javascript:, mailto:, tel:, data:…
	refBad            // does not parse as a URL
)

// stripURL removes what browsers remove from a URL attribute: leading and
// trailing ASCII whitespace, and tabs and newlines anywhere.
var urlStripper = strings.NewReplacer("\t", "", "\n", "", "\r", "")

// resolveRef resolves an attribute value against base, dropping the
// fragment and any dot segments.
func resolveRef(base *url.URL, raw string) (*url.URL, refKind) {
	raw = urlStripper.Replace(strings.Trim(raw, " \t\n\f\r"))
	if raw == "" {
		return nil, refEmpty
	}
	raw = backslashes(raw)
	u, err := url.Parse(raw)
	if err != nil {
		return nil, refBad
	}
	if u.Scheme != "" {
		sc := strings.ToLower(u.Scheme)
		if sc != "http" && sc != "https" {
			return nil, refScheme
		}
	}
	abs := base.ResolveReference(u)
	abs.Fragment, abs.RawFragment = "", ""
	if abs.Host == "" || abs.Opaque != "" {
		return nil, refBad
	}
	return abs, refOK
}

// backslashes reads a reference as the WHATWG URL parser does in a special
// scheme (http, https; a relative reference against an http(s) base): a
// "\" before the query is a "/", and any run of slashes after the scheme,
// or at the start of a reference that begins with two, leads to the host.
// So a Location of /\evil.example, \\evil.example, /\\evil.example or
// ///evil.example names the host evil.example in a browser, where net/url
// keeps it in the path. Other schemes are left as they are (resolveRef
// refuses them).
func backslashes(raw string) string {
	end := strings.IndexAny(raw, "?#")
	if end < 0 {
		end = len(raw)
	}
	head, tail := raw[:end], raw[end:]
	if !strings.Contains(head, "\\") && !strings.Contains(head, "///") && !strings.Contains(head, ":/") {
		return raw
	}
	scheme := ""
	if sc, rest, ok := strings.Cut(head, ":"); ok && isScheme(sc) {
		if !strings.EqualFold(sc, "http") && !strings.EqualFold(sc, "https") {
			return raw
		}
		scheme, head = sc+":", rest
	}
	head = strings.ReplaceAll(head, "\\", "/")
	switch {
	case scheme != "" && strings.HasPrefix(head, "/"), strings.HasPrefix(head, "//"):
		head = "//" + strings.TrimLeft(head, "/")
	}
	return scheme + head + tail
}

// isScheme reports whether s is a URL scheme: a letter, then letters,
// digits, "+", "-" or ".".
func isScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// isAbsolute reports whether an attribute value is an absolute http(s)
// URL, as a canonical or og:image must be ("//host/x" is not: it depends on
// the page's scheme).
func isAbsolute(raw string) bool {
	raw = strings.Trim(raw, " \t\n\f\r")
	i := strings.Index(raw, "://")
	if i <= 0 {
		return false
	}
	sc := strings.ToLower(raw[:i])
	return (sc == "http" || sc == "https") && len(raw) > i+3
}

// clip shortens s for a message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Do not cut a UTF-8 sequence in two.
	i := n
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}

// httpsTwin reports whether u is an http:// URL whose https:// twin is on
// the site: an internal link that drops to http (mixed-scheme).
func (s *site) httpsTwin(u *url.URL) bool {
	if !strings.EqualFold(u.Scheme, "http") {
		return false
	}
	v := *u
	v.Scheme = "https"
	return s.has(originOf(&v))
}

// https reports whether the site is served over https (base URL or live
// URL): mixed-scheme applies then (SPEC §17).
func (s *site) https() bool {
	for _, o := range s.origins {
		if strings.HasPrefix(o, "https://") {
			return true
		}
	}
	return false
}
