package markdown

import "strings"

// Prefers reports whether an Accept header ranks text/markdown strictly above
// text/html under RFC 9110 §12.5.1: each representation takes the q-value of
// the most specific media range that matches it (type/subtype with
// parameters, then type/subtype, then type/*, then */*); a representation no
// range matches has q=0, and q=0 means "not acceptable". Ties go to HTML, so
// `*/*` alone, `text/*` and `text/markdown, text/html` all answer false.
//
// A malformed header (a range without a slash, a bad q-value) answers false:
// the caller serves HTML, which every client can read. A media-range
// parameter other than charset makes the range specific to a representation
// headgate does not have, so it matches neither; charset must be utf-8.
func Prefers(accept string) bool {
	md, html, ok := rank(accept)
	return ok && md > html
}

// rank returns the q-values, in thousandths, of text/markdown and text/html.
func rank(accept string) (md, html int, ok bool) {
	mdSpec, htmlSpec := -1, -1
	for r := range strings.SplitSeq(accept, ",") {
		r = strings.TrimSpace(r)
		if r == "" {
			continue // RFC 9110 §5.6.1: empty list elements are ignored
		}
		typ, params, _ := strings.Cut(r, ";")
		typ = strings.ToLower(strings.TrimSpace(typ))
		main, sub, found := strings.Cut(typ, "/")
		if !found || !token(main) || !token(sub) || (main == "*" && sub != "*") {
			return 0, 0, false
		}
		q, spec, match := 1000, 0, true
		for p := range strings.SplitSeq(params, ";") {
			p = strings.TrimSpace(p)
			if p == "" {
				continue
			}
			k, v, found := strings.Cut(p, "=")
			k = strings.ToLower(strings.TrimSpace(k))
			v = strings.TrimSpace(v)
			if !found || !token(k) || v == "" {
				return 0, 0, false
			}
			if k == "q" {
				if q, found = qvalue(v); !found {
					return 0, 0, false
				}
				break // what follows q is accept-ext, not media-type parameters
			}
			spec = 1
			v = strings.Trim(v, `"`)
			if k != "charset" || !strings.EqualFold(v, "utf-8") {
				match = false
			}
		}
		if !match {
			continue
		}
		switch {
		case main == "*":
			spec += 0
		case sub == "*":
			spec += 2
		default:
			spec += 4
		}
		if (main == "*" || main == "text") && (sub == "*" || sub == "markdown") && spec > mdSpec {
			md, mdSpec = q, spec
		}
		if (main == "*" || main == "text") && (sub == "*" || sub == "html") && spec > htmlSpec {
			html, htmlSpec = q, spec
		}
	}
	return md, html, true
}

// qvalue parses RFC 9110's weight: "0" ["." 0*3DIGIT] / "1" ["." 0*3("0")].
func qvalue(s string) (int, bool) {
	if s == "" || len(s) > 5 || (s[0] != '0' && s[0] != '1') {
		return 0, false
	}
	n := int(s[0]-'0') * 1000
	if len(s) == 1 {
		return n, true
	}
	if s[1] != '.' {
		return 0, false
	}
	scale := 100
	for _, c := range []byte(s[2:]) {
		if c < '0' || c > '9' || (n == 1000 && c != '0') {
			return 0, false
		}
		n += int(c-'0') * scale
		scale /= 10
	}
	return n, true
}

// token reports whether s is an RFC 9110 token (or "*").
func token(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}
