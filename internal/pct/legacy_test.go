package pct

import "strings"

// The encoders this package replaced, as they were (rules/urls.go,
// rules/redirect_resolve.go, rules/spelling.go, rules/dataload.go,
// rules/data.go, audit/robots.go at a415c6f), kept as the oracle of
// FuzzLegacy. Each is the encoding loop alone, without its caller's
// surroundings.

func ishex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

func upperHex(c byte) byte {
	if isLowerHex(c) {
		return c - 'a' + 'A'
	}
	return c
}

func legacyUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// legacyEscapePath is rules.EscapePath before its RespellPath.
func legacyEscapePath(p string) string {
	clean := true
	for i := 0; i < len(p) && clean; i++ {
		clean = pathByte(p[i]) || p[i] == '%' && i+2 < len(p) && ishex(p[i+1]) && ishex(p[i+2])
	}
	if clean {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '%' && i+2 < len(p) && ishex(p[i+1]) && ishex(p[i+2]) || pathByte(c) {
			b.WriteByte(c)
			continue
		}
		const hex = "0123456789ABCDEF"
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

func queryByte(c byte) bool { return pathByte(c) || c == '?' || c == '#' }

func legacyEscapeQuery(q string) string {
	clean := true
	for i := 0; i < len(q) && clean; i++ {
		clean = queryByte(q[i]) || q[i] == '%' && i+2 < len(q) && ishex(q[i+1]) && ishex(q[i+2])
	}
	if clean {
		return q
	}
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		c := q[i]
		if queryByte(c) || c == '%' && i+2 < len(q) && ishex(q[i+1]) && ishex(q[i+2]) {
			b.WriteByte(c)
			continue
		}
		const hex = "0123456789ABCDEF"
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

func requestQueryByte(c byte) bool {
	return c > ' ' && c < 0x7f && c != '"' && c != '#' && c != '<' && c != '>' && c != '%' && c != '\\'
}

func legacyEscapeRequestQuery(q string) string {
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		c := q[i]
		if requestQueryByte(c) || c == '%' && i+2 < len(q) && ishex(q[i+1]) && ishex(q[i+2]) {
			b.WriteByte(c)
			continue
		}
		const hex = "0123456789ABCDEF"
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

func legacyCanonHex(p string) string {
	i := 0
	for ; i < len(p); i++ {
		if p[i] == '%' && i+2 < len(p) && (isLowerHex(p[i+1]) || isLowerHex(p[i+2])) {
			break
		}
	}
	if i == len(p) {
		return p
	}
	b := []byte(p)
	for ; i < len(b); i++ {
		if b[i] == '%' && i+2 < len(b) {
			b[i+1], b[i+2] = upperHex(b[i+1]), upperHex(b[i+2])
			i += 2
		}
	}
	return string(b)
}

// legacyNormPath is rules/data.go's normPath.
func legacyNormPath(p string) string {
	for i := 0; i+2 < len(p); i++ {
		if p[i] == '%' && (isLowerHex(p[i+1]) || isLowerHex(p[i+2])) {
			b := []byte(p)
			for j := i; j+2 < len(b); j++ {
				if b[j] == '%' {
					b[j+1], b[j+2] = upperHex(b[j+1]), upperHex(b[j+2])
					j += 2
				}
			}
			return string(b)
		}
	}
	return p
}

func legacyNeedsRespell(p string) bool {
	for i := 0; i+2 < len(p); i++ {
		if p[i] != '%' || !ishex(p[i+1]) || !ishex(p[i+2]) {
			continue
		}
		if isLowerHex(p[i+1]) || isLowerHex(p[i+2]) || legacyUnreserved(unhex(p[i+1])<<4|unhex(p[i+2])) {
			return true
		}
		i += 2
	}
	return false
}

// legacyRespellSegment is rules/spelling.go's respellSegment.
func legacyRespellSegment(b *strings.Builder, seg string) {
	const hex = "0123456789ABCDEF"
	start := b.Len()
	dots, other := 0, false
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		if c == '%' && i+2 < len(seg) && ishex(seg[i+1]) && ishex(seg[i+2]) {
			d := unhex(seg[i+1])<<4 | unhex(seg[i+2])
			if legacyUnreserved(d) {
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
		s := b.String()[:start]
		b.Reset()
		b.WriteString(s)
		b.WriteString(strings.Repeat("%2E", dots))
	}
}

func segmentByte(c byte) bool { return c != '/' && pathByte(c) }

func legacyEscapePathSegment(s string) string {
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

func rawURLByte(c byte) bool {
	return c > ' ' && c < 0x7f && strings.IndexByte(`"<>\^`+"`"+`{|}%`, c) < 0
}

// legacyURLTail is the loop of rules/dataload.go's normURL over a tail.
func legacyURLTail(tail string) string {
	var b strings.Builder
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(tail); i++ {
		switch c := tail[i]; {
		case c == '%' && i+2 < len(tail) && ishex(tail[i+1]) && ishex(tail[i+2]):
			b.WriteByte('%')
			b.WriteByte(upperHex(tail[i+1]))
			b.WriteByte(upperHex(tail[i+2]))
			i += 2
		case rawURLByte(c):
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// legacyPlainURLTail is rules/dataload.go's plainURLTail.
func legacyPlainURLTail(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' {
			if i+2 >= len(s) || !ishex(s[i+1]) || !ishex(s[i+2]) || isLowerHex(s[i+1]) || isLowerHex(s[i+2]) {
				return false
			}
			i += 2
			continue
		}
		if !rawURLByte(c) {
			return false
		}
	}
	return true
}

func legacyEscapeNonASCII(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		ascii = ascii && s[i] < 0x80
	}
	if ascii {
		return s
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// legacyRobotsEncode is audit/robots.go's robotsEncode.
func legacyRobotsEncode(s string) string {
	clean := true
	for i := 0; i < len(s) && clean; i++ {
		clean = s[i] > ' ' && s[i] < 0x7f && s[i] != '%'
	}
	if clean {
		return s
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && ishex(s[i+1]) && ishex(s[i+2]):
			v := unhex(s[i+1])<<4 | unhex(s[i+2])
			if 'a' <= v && v <= 'z' || 'A' <= v && v <= 'Z' || '0' <= v && v <= '9' || v == '-' || v == '.' || v == '_' || v == '~' {
				b.WriteByte(v)
			} else {
				b.WriteByte('%')
				b.WriteByte(hex[v>>4])
				b.WriteByte(hex[v&15])
			}
			i += 2
		case c <= ' ' || c >= 0x7f:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
