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

// attrIter walks the attributes of a start tag whose bytes are tag and whose
// name ends at i, with the tokenizer's attribute states (see tagEnd).
type attrIter struct {
	tag []byte
	i   int
	// After the last attribute: the offset of the '>' that ends the tag,
	// or -1 when tag ends first; and whether a '/' came right before it.
	end       int
	selfClose bool
}

func (it *attrIter) next() (attr, bool) {
	b, i := it.tag, it.i
	for {
		for i < len(b) && spaceTab[b[i]] {
			i++
		}
		if i >= len(b) || b[i] == '>' {
			it.end = -1
			if i < len(b) {
				it.end = i
			}
			it.i = len(b)
			return attr{}, false
		}
		if b[i] == '/' {
			i++
			it.selfClose = i < len(b) && b[i] == '>'
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
			it.i = i
			return a, true
		}
		i++
		for i < len(b) && spaceTab[b[i]] {
			i++
		}
		a.spanStart = i
		if i < len(b) && (b[i] == '"' || b[i] == '\'') {
			q := b[i]
			j := bytes.IndexByte(b[i+1:], q)
			if j < 0 {
				j = len(b) - i - 1
			}
			a.valStart, a.valEnd = i+1, i+1+j
			i = min(len(b), i+j+2)
		} else if i < len(b) && b[i] == '>' {
			a.valStart, a.valEnd = i, i
		} else {
			a.valStart = i
			for i < len(b) && !stopUnquoted[b[i]] {
				i++
			}
			a.valEnd = i
		}
		a.spanEnd = i
		it.i = i
		return a, true
	}
}

// tagAttrs holds the attributes headgate reads from a head tag: the first
// of each name wins, as in the tokenizer.
type tagAttrs struct {
	name, property, content, rel, href, hreflang, typ, charset, httpEquiv, nonce attr
	has                                                                          uint16
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
)

// readAttrs reads the attributes of tag, whose name ends at nameEnd, into
// ta (zeroed by the caller).
//
// tag may run on past the tag's end: readAttrs stops at the '>' that ends
// it, as the tokenizer does, and returns that '>''s offset (-1 when tag ends
// first) and whether the tag is self-closing.
func readAttrs(tag []byte, nameEnd int, ta *tagAttrs) (end int, selfClose bool) {
	it := attrIter{tag: tag, i: nameEnd}
	for {
		a, ok := it.next()
		if !ok {
			return it.end, it.selfClose
		}
		n := tag[a.nameStart:a.nameEnd]
		set := func(dst *attr, bit uint16) {
			if ta.has&bit == 0 {
				*dst = a
				ta.has |= bit
			}
		}
		switch len(n) {
		case 3:
			if asciiEqualFold(n, "rel") {
				set(&ta.rel, hasRel)
			}
		case 4:
			if asciiEqualFold(n, "name") {
				set(&ta.name, hasName)
			} else if asciiEqualFold(n, "href") {
				set(&ta.href, hasHref)
			} else if asciiEqualFold(n, "type") {
				set(&ta.typ, hasType)
			}
		case 7:
			if asciiEqualFold(n, "content") {
				set(&ta.content, hasContent)
			} else if asciiEqualFold(n, "charset") {
				set(&ta.charset, hasCharset)
			}
		case 8:
			if asciiEqualFold(n, "property") {
				set(&ta.property, hasProperty)
			} else if asciiEqualFold(n, "hreflang") {
				set(&ta.hreflang, hasHreflang)
			}
		case 10:
			if asciiEqualFold(n, "http-equiv") {
				set(&ta.httpEquiv, hasHTTPEquiv)
			}
		}
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
