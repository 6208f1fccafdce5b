package pattern

import (
	"fmt"
	"strings"

	"github.com/headgate/headgate/internal/pct"
)

// SafeChars are the characters Safe may leave raw besides the unreserved
// ones: RFC 3986's sub-delimiters, ":", "@" and "/" (what a path segment
// may hold unencoded). "?", "#", "[", "]", "%", space and non-ASCII bytes
// never are.
const SafeChars = "!$&'()*+,;=:@/"

// Safe is an app's own spelling of its paths (site.path_safe, SPEC §23):
// the app decodes a path whole before it routes it, so /wiki/C++ and
// /wiki/C%2B%2B are one page, and its links spell every path one way —
// letters, digits, "-._~" and the safe characters raw, every other byte
// percent-encoded (upper-case hex). MediaWiki's wfUrlencode is Safe
// ";@$!*(),/:" (and "~", unreserved anyway). A nil *Safe is §16.4's
// spelling: escapes of reserved characters are kept as they arrive.
type Safe struct {
	raw [256]bool
}

// NewSafe compiles the safe characters; a character that cannot be raw in
// a path (anything outside SafeChars and the unreserved ones) is an error.
func NewSafe(chars string) (*Safe, error) {
	s := &Safe{}
	for i := 0; i < 256; i++ {
		s.raw[i] = unreservedByte(byte(i))
	}
	for i := 0; i < len(chars); i++ {
		c := chars[i]
		if !unreservedByte(c) && strings.IndexByte(SafeChars, c) < 0 {
			return nil, fmt.Errorf("%q can not be raw in a path (only %s and letters, digits, -._~)", string(rune(c)), SafeChars)
		}
		s.raw[c] = true
	}
	return s, nil
}

// Spell writes an escaped path (no query) in the app's spelling: every
// valid escape decoded ("%2F" only when "/" is safe), then every byte that
// is neither unreserved nor safe encoded, a stray "%" as "%25". A segment
// that decoding turns into "." or ".." keeps its dots encoded: it names a
// page, not the directory above. Spell of its own result is that result.
// A nil s returns p unchanged.
func (s *Safe) Spell(p string) string {
	if s == nil || s.spelled(p) {
		return p
	}
	var b strings.Builder
	b.Grow(len(p) + 8)
	seg, escaped := 0, false // where the segment being written starts; whether an escape was decoded in it
	endSeg := func() {
		if w := b.String()[seg:]; escaped && (w == "." || w == "..") {
			out := b.String()[:seg] + strings.Repeat("%2E", len(w))
			b.Reset()
			b.WriteString(out)
		}
	}
	for i := 0; i < len(p); i++ {
		c, decoded := p[i], false
		if c == '%' && i+2 < len(p) && pct.IsHex(p[i+1]) && pct.IsHex(p[i+2]) {
			d := pct.Unhex(p[i+1])<<4 | pct.Unhex(p[i+2])
			i += 2
			escaped, decoded = true, true
			if d == '/' && !s.raw['/'] {
				b.WriteString("%2F")
				continue
			}
			c = d
		}
		if c == '/' {
			endSeg()
			b.WriteByte('/')
			// A segment a decoded %2F starts is as much the escape's making.
			seg, escaped = b.Len(), decoded
			continue
		}
		if s.raw[c] {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(upperHex[c>>4])
		b.WriteByte(upperHex[c&15])
	}
	endSeg()
	return b.String()
}

// spelled reports whether p is already in the app's spelling with no
// escape to decode: the common case, with no allocation.
func (s *Safe) spelled(p string) bool {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '%' {
			if i+2 >= len(p) || !pct.IsHex(p[i+1]) || !pct.IsHex(p[i+2]) {
				return false
			}
			d := pct.Unhex(p[i+1])<<4 | pct.Unhex(p[i+2])
			if s.raw[d] || isLowerHexByte(p[i+1]) || isLowerHexByte(p[i+2]) {
				return false
			}
			i += 2
			continue
		}
		if c != '/' && !s.raw[c] {
			return false
		}
	}
	return true
}

const upperHex = "0123456789ABCDEF"

func isLowerHexByte(c byte) bool { return 'a' <= c && c <= 'f' }

func unreservedByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}
