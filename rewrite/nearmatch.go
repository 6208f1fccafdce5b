package rewrite

import "bytes"

// A head that changes on every request usually changes in one small place:
// a CSRF token in a <meta name="csrf-token">, a CSP nonce on a <script>, a
// timestamp or request id inside an inline script. Nothing headgate
// decides reads those bytes, so the plan made for the last head holds for
// this one too: the scan would find the same tokens at the same offsets
// and decide the same edits. A plan records such stretches as opaque spans
// while it is made; a head whose bytes differ from the plan's copy only
// inside them, byte for byte in place (the same length), and only by
// bytes that cannot change how a tokenizer splits that stretch, is
// replayed like an exact hit. Any other difference is a miss and the head
// is scanned.
//
// Which bytes are inert where (WHATWG tokenizer states):
//   - a quoted attribute value ends only at its quote; an unquoted one at a
//     space or '>' (and '"', '\'', '=', '<', '`' are parse errors in it);
//   - in the text of a script or style element, only '<' starts anything
//     ("</script", "<!--", "<script"), and '-' and '>' move the escaped
//     states ("-->"); other bytes leave the state as it is, unless they are
//     part of a sequence that starts at a '<' a few bytes before them (a
//     letter of "</script", the space after it);
//   - headgate itself looks for a literal "</head" or "<body" after the
//     head's implicit end.
//
// So a changed byte is inert when it and the byte it replaces are of its
// span's inert class, and no '<' stands in the span within ltReach bytes
// before it. (A '<' before the span cannot reach into it: a value follows
// '=' or a quote, script text a start tag's '>', and neither is part of
// "</head", "<body" or any sequence the script states read.)
// NUL is never inert (the tokenizer replaces it).

// spanKind says what an opaque span is.
type spanKind uint8

const (
	spanValue       spanKind = iota + 1 // an attribute value headgate does not read (a meta's of no identity it knows, a style's, a link's that is neither canonical nor alternate but its rel)
	spanScriptValue                     // an attribute value of a <script> start tag: the tag must still not read "json"
	spanRaw                             // the text of a script or style element (not ld+json)
)

type opaqueSpan struct {
	start, end       int32 // the bytes that may change
	tagStart, tagEnd int32 // spanScriptValue: the start tag
	kind             spanKind
	quote            byte // the value's quote; 0 unquoted
}

// ltReach is how far before a changed byte a '<' could start a sequence
// that reads it: "</noscript" and the byte after it are 11 bytes.
const ltReach = 16

// inert reports whether byte c may stand for another inert byte in s.
func (s *opaqueSpan) inert(c byte) bool {
	switch {
	case c == 0 || c == '<':
		return false
	case s.kind == spanRaw:
		return c != '-' && c != '>'
	case s.quote != 0:
		return c != s.quote
	default:
		return !spaceTab[c] && c != '>' && c != '"' && c != '\'' && c != '=' && c != '`'
	}
}

// nearMatch reports whether cur (at least as long as old) holds old's bytes
// except for inert changes inside spans (sorted by start, disjoint).
func nearMatch(old, cur []byte, spans []opaqueSpan) bool {
	if len(cur) < len(old) {
		return false
	}
	cur = cur[:len(old)]
	si := 0
	for i := 0; ; {
		n := mismatch(old[i:], cur[i:])
		if n < 0 {
			return true
		}
		j := i + n
		for si < len(spans) && int(spans[si].end) <= j {
			si++
		}
		if si == len(spans) || int(spans[si].start) > j {
			return false
		}
		sp := &spans[si]
		end := int(sp.end)
		for k := j; k < end; k++ {
			if old[k] == cur[k] {
				continue
			}
			if !sp.inert(old[k]) || !sp.inert(cur[k]) {
				return false
			}
			// Bytes before k either match or were checked to be no '<'.
			// A '<' before the span is its tag's own: the state at the
			// span's start is that of a value, or of fresh script text.
			if bytes.IndexByte(cur[max(int(sp.start), k-ltReach):k], '<') >= 0 {
				return false
			}
		}
		if sp.kind == spanScriptValue && containsFold(cur[sp.tagStart:sp.tagEnd], "json") {
			return false
		}
		i = end
		si++
	}
}

// mismatch returns the index of the first byte where a and b (of equal
// length) differ, or -1: block by block with bytes.Equal, then byte by byte.
func mismatch(a, b []byte) int {
	i := 0
	for _, blk := range [...]int{512, 64} {
		for i+blk <= len(a) && bytes.Equal(a[i:i+blk], b[i:i+blk]) {
			i += blk
		}
	}
	for ; i < len(a); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// noteSpan records an opaque span while a plan may be made of this scan.
func (h *headScan) noteSpan(s opaqueSpan) {
	if h.spans && s.end > s.start {
		h.st.spans = append(h.st.spans, s)
	}
}

// noteValue records an attribute value of the tag at tagStart as opaque.
func (h *headScan) noteValue(kind spanKind, tagStart, tagEnd int, tag []byte, a attr) {
	if a.valEnd <= a.valStart {
		return
	}
	var q byte
	if a.spanStart < a.valStart {
		q = tag[a.spanStart]
	}
	h.noteSpan(opaqueSpan{start: int32(tagStart + a.valStart), end: int32(tagStart + a.valEnd),
		tagStart: int32(tagStart), tagEnd: int32(tagEnd), kind: kind, quote: q})
}

// noteValues records the attribute values of a start tag headgate does not
// read (a <script> that is not ld+json, a <style>, a <link> that is
// neither canonical nor alternate: a nonce, a src with a version) as
// opaque, but for those of attributes named read (a link's rel): a change
// there could make the tag one headgate reads.
func (h *headScan) noteValues(kind spanKind, t token, tag []byte, read string) {
	if !h.spans {
		return
	}
	eachAttr(tag, t.nameEnd-t.start, func(a attr) {
		if n := tag[a.nameStart:a.nameEnd]; read == "" || len(n) != len(read) || !asciiEqualFold(n, read) {
			h.noteValue(kind, t.start, t.end, tag, a)
		}
	})
}

// keptSpans returns the spans a plan may keep: inside the bytes it holds,
// touching no edit, and outside the bytes before the insertion point that
// decide compares with what it writes (a head that is headgate's own
// output stays as it is).
func (h *headScan) keptSpans(seen int) []opaqueSpan {
	var out []opaqueSpan
next:
	for _, s := range h.st.spans {
		st, en := int(s.start), int(s.end)
		if en > seen || (h.ownFrom >= 0 && st < h.insertAt && en > h.ownFrom) {
			continue
		}
		for _, e := range h.st.edits {
			if e.start <= en && e.end >= st {
				continue next
			}
		}
		out = append(out, s)
	}
	return out
}
