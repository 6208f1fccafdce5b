package markdown

import "bytes"

// rawAttrs appends the attributes of a start tag read from its raw bytes
// ("<a href=x class='y'>"), the way x/net/html's tokenizer reads them
// (readTag: the first of a repeated name wins, a lone "/" is skipped),
// without a copy: the slices alias raw. ok is false when a value or name
// would need TagAttr's decoding (an entity, a NUL, a CR, an upper-case
// name) or the tag has more than 32 attributes; the caller then asks
// TagAttr, which copies every attribute.
func rawAttrs(dst []attr, raw []byte) (_ []attr, ok bool) {
	const maxRawAttrs = 32
	if bytes.IndexByte(raw, '&') >= 0 || bytes.IndexByte(raw, 0) >= 0 || bytes.IndexByte(raw, '\r') >= 0 {
		return dst, false
	}
	first := len(dst)
	n := len(raw)
	i := 2 // past "<" and the name's first byte
	for i < n && !isSpace(raw[i]) && raw[i] != '/' && raw[i] != '>' {
		i++
	}
	skip := func() {
		for i < n && isSpace(raw[i]) {
			i++
		}
	}
	skip()
	for i < n && raw[i] != '>' {
		ks := i
		for i < n {
			c := raw[i]
			if c == '=' && i == ks {
				i++ // a leading "=" is part of the name
				continue
			}
			if isSpace(c) || c == '/' || c == '>' || c == '=' {
				break
			}
			i++
		}
		key := raw[ks:i]
		val := raw[i:i]
		skip()
		switch {
		case i >= n:
		case raw[i] == '/':
			i++
		case raw[i] != '=':
		default:
			i++
			skip()
			switch {
			case i >= n, raw[i] == '>':
			case raw[i] == '"' || raw[i] == '\'':
				q := raw[i]
				i++
				e := bytes.IndexByte(raw[i:], q)
				if e < 0 {
					val, i = raw[i:], n
				} else {
					val, i = raw[i:i+e], i+e+1
				}
			default:
				vs := i
				for i < n && !isSpace(raw[i]) && raw[i] != '>' {
					i++
				}
				val = raw[vs:i]
			}
		}
		if len(key) > 0 {
			for _, c := range key {
				if c >= 'A' && c <= 'Z' {
					return dst[:first], false
				}
			}
			if len(dst)-first >= maxRawAttrs {
				// The repeated-name check is a scan of those before:
				// past a few, TagAttr's reading (a map) is cheaper.
				return dst[:first], false
			}
			seen := false
			for _, a := range dst[first:] {
				if bytes.Equal(a.key, key) {
					seen = true
					break
				}
			}
			if !seen {
				dst = append(dst, attr{key, val})
			}
		}
		skip()
	}
	return dst, true
}
