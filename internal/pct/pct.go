package pct

import "strings"

// Set names the bytes an encoding writes raw; a byte outside it is written
// as "%XX" with upper-case hex. The sets are bits of table.
type Set uint8

const (
	// Path is RFC 3986's pchar and "/": unreserved, sub-delims, ":", "@".
	Path Set = 1 << iota
	// Segment is Path without "/": one path segment.
	Segment
	// Query is Path with "?" and "#": a query or fragment headgate writes.
	Query
	// RequestQuery is the request's own query as a redirect keeps it: every
	// visible ASCII byte but " # < > \ and %.
	RequestQuery
	// URL is every visible ASCII byte but " < > \ ^ ` { | } and %.
	URL
	// ASCII is every byte below 0x80.
	ASCII
	// Robots is every visible ASCII byte, "%" included (RFC 9309 §2.2.2).
	Robots
	// All is every byte: only the Mode's respelling of escapes applies.
	All
)

// Mode says what a valid escape ("%" and two hex digits) in the input
// becomes.
type Mode uint8

const (
	// Plain has no escapes: "%" is a byte like any other, raw only if the
	// Set holds it.
	Plain Mode = iota
	// Keep writes a valid escape as it came.
	Keep
	// Upper writes a valid escape with upper-case hex.
	Upper
	// Normal writes a valid escape of an unreserved byte (letters, digits,
	// - . _ ~) decoded and any other with upper-case hex (RFC 3986 §6.2.2).
	Normal
)

const hexDigits = "0123456789ABCDEF"

// Has reports whether set writes c raw.
func (set Set) Has(c byte) bool { return table[c]&byte(set) != 0 }

// Encode returns s percent-encoded: bytes in set raw, valid escapes as m
// says, every other byte as "%XX". It returns s itself, with no
// allocation, when nothing changes.
func Encode(s string, set Set, m Mode) string {
	i := Index(s, set, m)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for ; i < len(s); i++ {
		c := s[i]
		if m != Plain && c == '%' && i+2 < len(s) && IsHex(s[i+1]) && IsHex(s[i+2]) {
			writeEscape(&b, s[i:i+3], m)
			i += 2
			continue
		}
		if table[c]&byte(set) != 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

func writeEscape(b *strings.Builder, e string, m Mode) {
	switch m {
	case Keep:
		b.WriteString(e)
	case Upper:
		b.WriteByte('%')
		b.WriteByte(UpperHex(e[1]))
		b.WriteByte(UpperHex(e[2]))
	default:
		d := Unhex(e[1])<<4 | Unhex(e[2])
		if unreserved(d) {
			b.WriteByte(d)
			return
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[d>>4])
		b.WriteByte(hexDigits[d&15])
	}
}

// Index returns the index of the first byte of s that Encode would change,
// or -1 if Encode returns s as it is.
func Index(s string, set Set, m Mode) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if m != Plain && c == '%' && i+2 < len(s) && IsHex(s[i+1]) && IsHex(s[i+2]) {
			switch m {
			case Upper:
				if isLowerHex(s[i+1]) || isLowerHex(s[i+2]) {
					return i
				}
			case Normal:
				if isLowerHex(s[i+1]) || isLowerHex(s[i+2]) || unreserved(Unhex(s[i+1])<<4|Unhex(s[i+2])) {
					return i
				}
			}
			i += 2
			continue
		}
		if table[c]&byte(set) == 0 {
			return i
		}
	}
	return -1
}

// unreserved reports whether c is one of RFC 3986's unreserved bytes.
func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// IsHex reports whether c is a hex digit.
func IsHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isLowerHex(c byte) bool { return 'a' <= c && c <= 'f' }

// Unhex is the value of the hex digit c (which IsHex holds).
func Unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// UpperHex is c with a lower-case hex letter made upper-case.
func UpperHex(c byte) byte {
	if isLowerHex(c) {
		return c - 'a' + 'A'
	}
	return c
}

// CanonHex spells the hex digits of the escapes in p upper-case (§16.4),
// so that /%e6 and /%E6 are one path. It looks no further than "%" and
// the two bytes after it, valid or not, and returns p itself, with no
// allocation, when no escape has a lower-case digit.
func CanonHex(p string) string {
	i := 0
	for ; i+2 < len(p); i++ {
		if p[i] == '%' && (isLowerHex(p[i+1]) || isLowerHex(p[i+2])) {
			break
		}
	}
	if i+2 >= len(p) {
		return p
	}
	b := []byte(p)
	for ; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = UpperHex(b[i+1]), UpperHex(b[i+2])
			i += 2
		}
	}
	return string(b)
}
