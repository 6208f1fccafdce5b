package pattern

import (
	"strings"

	"github.com/headgate/headgate/internal/pct"
)

// RespellPath spells the percent-encoding of an escaped path one way
// (SPEC §16.4, RFC 3986 §6.2.2): hex digits upper-case, and escapes of
// unreserved characters (letters, digits, - . _ ~) decoded, so that
// /%e6%9d%b1 and /%E6%9D%B1 are one address. A segment that decoding
// would turn into "." or ".." keeps its dots encoded: it names a file, not
// the directory above. Invalid escapes are left as they are (EscapePath
// encodes them first).
func RespellPath(p string) string {
	if pct.Index(p, pct.All, pct.Normal) < 0 {
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

// respellSegment writes seg with its escapes spelled as RespellPath says.
func respellSegment(b *strings.Builder, seg string) {
	out := pct.Encode(seg, pct.All, pct.Normal)
	if (out == "." || out == "..") && strings.Contains(seg, "%") {
		// Decoding made a dot segment: write its dots encoded again.
		out = strings.Repeat("%2E", len(out))
	}
	b.WriteString(out)
}

// RespellURLPath re-spells the path of a URL or path template's output:
// a path ("/…") or an absolute URL on origin; anything else is returned
// as it is.
func RespellURLPath(s, origin string) string {
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

// EscapeSegment percent-encodes a value for one path segment, in the
// spelling EscapePath gives a request path: the characters a segment may
// hold raw (RFC 3986 pchar: unreserved, sub-delimiters, ":" and "@") stay,
// every other byte is encoded with upper-case hex. So a sitemap <loc> and a
// templated path spell /wiki/Tea_(drink) as the browser's request and the
// "self" canonical do.
func EscapeSegment(s string) string { return pct.Encode(s, pct.Segment, pct.Plain) }
