package rules

import "strings"

// RespellPath spells the percent-encoding of an escaped path one way
// (SPEC §16.4, RFC 3986 §6.2.2): hex digits upper-case, and escapes of
// unreserved characters (letters, digits, - . _ ~) decoded, so that
// /%e6%9d%b1 and /%E6%9D%B1 are one address. A segment that decoding
// would turn into "." or ".." keeps its dots encoded: it names a file, not
// the directory above. Invalid escapes are left as they are (EscapePath
// encodes them first).
func RespellPath(p string) string {
	i := strings.IndexByte(p, '%')
	if i < 0 {
		return p
	}
	if !needsRespell(p[i:]) {
		return p
	}
	var b strings.Builder
	b.Grow(len(p))
	for seg := range strings.SplitSeq(p, "/") {
		respellSegment(&b, seg)
		b.WriteByte('/')
	}
	s := b.String()
	return s[:len(s)-1]
}

// needsRespell reports whether an escaped path has a lower-case hex digit
// in an escape or an escaped unreserved character.
func needsRespell(p string) bool {
	for i := 0; i+2 < len(p); i++ {
		if p[i] != '%' || !ishex(p[i+1]) || !ishex(p[i+2]) {
			continue
		}
		if isLowerHex(p[i+1]) || isLowerHex(p[i+2]) || unreserved(unhex(p[i+1])<<4|unhex(p[i+2])) {
			return true
		}
		i += 2
	}
	return false
}

func respellSegment(b *strings.Builder, seg string) {
	const hex = "0123456789ABCDEF"
	start := b.Len()
	dots, other := 0, false
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		if c == '%' && i+2 < len(seg) && ishex(seg[i+1]) && ishex(seg[i+2]) {
			d := unhex(seg[i+1])<<4 | unhex(seg[i+2])
			if unreserved(d) {
				b.WriteByte(d)
				if d == '.' {
					dots++
				} else {
					other = true
				}
			} else {
				b.WriteByte('%')
				b.WriteByte(hex[d>>4])
				b.WriteByte(hex[d&15])
				other = true
			}
			i += 2
			continue
		}
		if c == '.' {
			dots++
		} else {
			other = true
		}
		b.WriteByte(c)
	}
	if !other && (dots == 1 || dots == 2) && strings.Contains(seg, "%") {
		// Decoding made a dot segment: write its dots encoded again.
		s := b.String()[:start]
		b.Reset()
		b.WriteString(s)
		b.WriteString(strings.Repeat("%2E", dots))
	}
}

func isLowerHex(c byte) bool { return 'a' <= c && c <= 'f' }

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// respellURLPath re-spells the path of a URL or path template's output:
// a path ("/…") or an absolute URL on origin; anything else is returned
// as it is.
func respellURLPath(s, origin string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	prefix := ""
	rest := s
	switch {
	case strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "//"):
	case origin != "" && strings.HasPrefix(s, origin+"/"):
		prefix, rest = origin, s[len(origin):]
	default:
		return s
	}
	end := strings.IndexAny(rest, "?#")
	if end < 0 {
		end = len(rest)
	}
	return prefix + RespellPath(rest[:end]) + rest[end:]
}

// escapePathSegment percent-encodes a value for one path segment, in the
// spelling EscapePath gives a request path: the characters a segment may
// hold raw (RFC 3986 pchar: unreserved, sub-delimiters, ":" and "@") stay,
// every other byte is encoded with upper-case hex. So a sitemap <loc> and a
// templated path spell /wiki/Tea_(drink) as the browser's request and the
// "self" canonical do.
func escapePathSegment(s string) string {
	clean := true
	for i := 0; i < len(s) && clean; i++ {
		clean = segmentByte(s[i])
	}
	if clean {
		return s
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if segmentByte(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

func segmentByte(c byte) bool { return c != '/' && pathByte(c) }
