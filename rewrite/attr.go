package rewrite

import (
	"bytes"
)

// attr is one attribute of a start tag, as offsets into the tag's bytes.
type attr struct {
	nameStart, nameEnd int
	valStart, valEnd   int // the value without quotes; valStart == valEnd for none
	spanStart, spanEnd int // the value with its quotes, to replace it
}

// tagAttrs holds the attributes headgate reads from a head tag: the first
// of each name wins, as in the tokenizer.
type tagAttrs struct {
	name, property, content, rel, href, hreflang, typ, charset, httpEquiv, nonce attr
	has                                                                          uint16

	lang attr // of <html>, for {page.lang}
}

const (
	hasName = 1 << iota
	hasProperty
	hasContent
	hasRel
	hasHref
	hasHreflang
	hasType
	hasCharset
	hasHTTPEquiv
	hasLang
)

// readAttrs reads the attributes of tag, whose name ends at nameEnd, into
// ta (zeroed by the caller), with the tokenizer's attribute states: a name
// runs to a space, '/', '>' or '=' (its first byte whatever it is); a value
// follows '=' and is quoted, or runs to a space or '>'.
//
// tag may run on past the tag's end: readAttrs stops at the '>' that ends
// it, as the tokenizer does, and returns that '>”s offset (-1 when tag ends
// first) and whether the tag is self-closing.
func readAttrs(tag []byte, nameEnd int, ta *tagAttrs) (end int, selfClose bool) {
	return eachAttr(tag, nameEnd, func(a attr) { ta.put(tag[a.nameStart:a.nameEnd], &a) })
}

// eachAttr calls fn with each attribute of tag, as readAttrs reads them.
func eachAttr(tag []byte, nameEnd int, fn func(a attr)) (end int, selfClose bool) {
	b, i := tag, nameEnd
	for {
		for i < len(b) && spaceTab[b[i]] {
			i++
		}
		if i >= len(b) {
			return -1, false
		}
		switch b[i] {
		case '>':
			return i, selfClose
		case '/':
			i++
			selfClose = i < len(b) && b[i] == '>'
			continue
		}
		a := attr{nameStart: i}
		i++
		for i < len(b) && !stopAttrName[b[i]] {
			i++
		}
		a.nameEnd = i
		for i < len(b) && spaceTab[b[i]] {
			i++
		}
		if i >= len(b) || b[i] != '=' {
			a.valStart, a.valEnd, a.spanStart, a.spanEnd = i, i, i, i
		} else {
			i++
			for i < len(b) && spaceTab[b[i]] {
				i++
			}
			a.spanStart = i
			switch {
			case i < len(b) && (b[i] == '"' || b[i] == '\''):
				j := bytes.IndexByte(b[i+1:], b[i])
				if j < 0 {
					j = len(b) - i - 1
				}
				a.valStart, a.valEnd = i+1, i+1+j
				i = min(len(b), i+j+2)
			case i < len(b) && b[i] == '>':
				a.valStart, a.valEnd = i, i
			default:
				a.valStart = i
				for i < len(b) && !stopUnquoted[b[i]] {
					i++
				}
				a.valEnd = i
			}
			a.spanEnd = i
		}
		fn(a)
	}
}

// put keeps a as the attribute of its name, if headgate reads that name
// and the tag had no attribute of the name before it.
func (ta *tagAttrs) put(n []byte, a *attr) {
	var dst *attr
	var bit uint16
	switch len(n) {
	case 3:
		if asciiEqualFold(n, "rel") {
			dst, bit = &ta.rel, hasRel
		}
	case 4:
		if asciiEqualFold(n, "name") {
			dst, bit = &ta.name, hasName
		} else if asciiEqualFold(n, "href") {
			dst, bit = &ta.href, hasHref
		} else if asciiEqualFold(n, "type") {
			dst, bit = &ta.typ, hasType
		} else if asciiEqualFold(n, "lang") {
			dst, bit = &ta.lang, hasLang
		}
	case 7:
		if asciiEqualFold(n, "content") {
			dst, bit = &ta.content, hasContent
		} else if asciiEqualFold(n, "charset") {
			dst, bit = &ta.charset, hasCharset
		}
	case 8:
		if asciiEqualFold(n, "property") {
			dst, bit = &ta.property, hasProperty
		} else if asciiEqualFold(n, "hreflang") {
			dst, bit = &ta.hreflang, hasHreflang
		}
	case 10:
		if asciiEqualFold(n, "http-equiv") {
			dst, bit = &ta.httpEquiv, hasHTTPEquiv
		}
	}
	if dst != nil && ta.has&bit == 0 {
		*dst = *a
		ta.has |= bit
	}
}

func (a attr) val(tag []byte) []byte { return tag[a.valStart:a.valEnd] }

// eachToken calls fn with each token of a space-separated list until fn
// returns false.
func eachToken(list []byte, fn func(tok []byte) bool) {
	for len(list) > 0 {
		i := 0
		for i < len(list) && isSpace(list[i]) {
			i++
		}
		j := i
		for j < len(list) && !isSpace(list[j]) {
			j++
		}
		if j > i && !fn(list[i:j]) {
			return
		}
		list = list[j:]
	}
}

// hasToken reports whether a space-separated list holds tok (ASCII case-insensitive).
func hasToken(list []byte, tok string) bool {
	for i := 0; i < len(list); {
		for i < len(list) && spaceTab[list[i]] {
			i++
		}
		j := i
		for j < len(list) && !spaceTab[list[j]] {
			j++
		}
		if j-i == len(tok) && asciiEqualFold(list[i:j], tok) {
			return true
		}
		i = j
	}
	return false
}

// otherTokens returns the tokens of a space-separated list other than tok,
// joined by spaces; nil when there are none.
func otherTokens(list []byte, tok string) []byte {
	var out []byte
	eachToken(list, func(t []byte) bool {
		if !asciiEqualFold(t, tok) {
			if out != nil {
				out = append(out, ' ')
			}
			out = append(out, t...)
		}
		return true
	})
	return out
}
