package rewrite

import "bytes"

// The scanner splits a growing byte buffer into HTML tokens as the WHATWG
// tokenizer does, far enough to find tag boundaries, tag names and raw-text
// element contents: the token kinds and the byte ranges agree with
// golang.org/x/net/html's Tokenizer (a differential test checks it), but it
// allocates nothing. headgate uses it only for the head; bytes after the
// head are copied, not tokenized.
//
// x/net/html itself allocates twice per attribute of every start tag (from
// v0.55.0 on), which made allocations grow with the number of upstream
// tags; see docs/performance.md.

type tokKind uint8

const (
	tText tokKind = iota
	tStart
	tEnd
	tComment
	tDoctype
)

type token struct {
	kind       tokKind
	start, end int // byte range in the buffer
	nameStart  int // tag name range, for tags
	nameEnd    int
	selfClose  bool
	raw        bool // text of a raw-text element (script, style, title…), not character data
	open       bool // cut by the end of input: a comment, raw text or tag with no end
}

type scanner struct {
	buf []byte
	pos int    // start of the next token
	eof bool   // the buffer holds the rest of the input
	raw []byte // lower-case name of the raw-text element whose content comes next
	// resume lets a search for a terminator continue where the last,
	// incomplete attempt stopped, so that a long token arriving in many
	// small reads costs linear time.
	resumeTok, resumeAt int
	tagSt               tagScan
	scr                 scriptScan
	// The attributes of the <meta> or <link> that starts at attrsTok-1,
	// read while finding its end (offsets from the tag's start); 0 when
	// the last such tag was scanned otherwise.
	attrs    tagAttrs
	attrsTok int
}

// attrsOf returns the attributes of the <meta> or <link> tag t, as the
// scanner read them or read now. They stay valid until the next call.
func (s *scanner) attrsOf(t token) *tagAttrs {
	if s.attrsTok != t.start+1 {
		s.attrs = tagAttrs{}
		readAttrs(s.buf[t.start:t.end], t.nameEnd-t.start, &s.attrs)
		s.attrsTok = t.start + 1
	}
	return &s.attrs
}

// Byte classes for the tag states: spaces, and the bytes that end a tag
// name, an attribute name and an unquoted value.
var spaceTab, stopName, stopAttrName, stopUnquoted = func() (sp, n, an, uq [256]bool) {
	for _, c := range []byte(" \t\n\f\r") {
		sp[c], n[c], an[c], uq[c] = true, true, true, true
	}
	n['/'], n['>'] = true, true
	an['/'], an['>'], an['='] = true, true, true
	uq['>'] = true
	return
}()

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// next returns the next token, or false when the buffer ends inside it and
// more input may come (the scanner is left where it was).
func (s *scanner) next() (token, bool) {
	if s.pos >= len(s.buf) {
		return token{}, false
	}
	start := s.pos
	if s.raw != nil {
		end, open, ok := s.rawEnd(start)
		if !ok {
			return token{}, false
		}
		s.raw = nil
		if end > start {
			s.pos = end
			return token{kind: tText, start: start, end: end, raw: true, open: open}, true
		}
	}
	b := s.buf
	if b[start] != '<' {
		return s.text(start)
	}
	if start+1 >= len(b) {
		if s.eof {
			s.pos = len(b)
			return token{kind: tText, start: start, end: len(b)}, true
		}
		return token{}, false
	}
	switch c := b[start+1]; {
	case c == '!':
		return s.markup(start)
	case c == '/':
		if start+2 >= len(b) {
			if s.eof {
				s.pos = len(b)
				return token{kind: tText, start: start, end: len(b)}, true
			}
			return token{}, false
		}
		c2 := b[start+2]
		switch {
		case isAlpha(c2):
			return s.tag(start, start+2, tEnd)
		case c2 == '>':
			// "</>" is dropped by the tokenizer; keep it as a comment-like token.
			s.pos = start + 3
			return token{kind: tComment, start: start, end: start + 3}, true
		}
		return s.until(start, start+2, '>', tComment)
	case c == '?':
		return s.until(start, start+1, '>', tComment)
	case isAlpha(c):
		return s.tag(start, start+1, tStart)
	}
	return s.text(start)
}

// text reads character data up to the next '<' that may start a token.
func (s *scanner) text(start int) (token, bool) {
	b := s.buf
	from := start + 1
	if s.resumeTok == start && s.resumeAt > from {
		from = s.resumeAt
	}
	for {
		i := bytes.IndexByte(b[from:], '<')
		if i < 0 {
			if s.eof {
				s.pos = len(b)
				return token{kind: tText, start: start, end: len(b)}, true
			}
			s.resumeTok, s.resumeAt = start, len(b)
			return token{}, false
		}
		j := from + i
		if j+1 >= len(b) {
			if s.eof {
				s.pos = len(b)
				return token{kind: tText, start: start, end: len(b)}, true
			}
			s.resumeTok, s.resumeAt = start, j
			return token{}, false
		}
		if c := b[j+1]; isAlpha(c) || c == '!' || c == '/' || c == '?' {
			s.pos = j
			return token{kind: tText, start: start, end: j}, true
		}
		from = j + 1
	}
}

// until reads a bogus comment or doctype up to and including the next '>'.
func (s *scanner) until(start, from int, c byte, kind tokKind) (token, bool) {
	if s.resumeTok == start && s.resumeAt > from {
		from = s.resumeAt
	}
	i := bytes.IndexByte(s.buf[from:], c)
	if i < 0 {
		if !s.eof {
			s.resumeTok, s.resumeAt = start, len(s.buf)
			return token{}, false
		}
		s.pos = len(s.buf)
		return token{kind: kind, start: start, end: len(s.buf), open: true}, true
	}
	s.pos = from + i + 1
	return token{kind: kind, start: start, end: s.pos}, true
}

func (s *scanner) need(n int) bool { return len(s.buf) >= n || s.eof }

// markup reads what follows "<!": a comment, a doctype, or a bogus comment.
func (s *scanner) markup(start int) (token, bool) {
	b := s.buf
	p := start + 2
	if !s.need(p + 7) {
		return token{}, false
	}
	if p+2 <= len(b) && b[p] == '-' && b[p+1] == '-' {
		return s.comment(start, p+2)
	}
	if p+7 <= len(b) && asciiEqualFold(b[p:p+7], "doctype") {
		t, ok := s.until(start, p+7, '>', tDoctype)
		return t, ok
	}
	return s.until(start, p, '>', tComment)
}

// comment finds the end of a comment whose "<!--" ends at p: "-->", "--!>",
// or the abrupt "<!-->" and "<!--->".
func (s *scanner) comment(start, p int) (token, bool) {
	b := s.buf
	if !s.need(p + 2) {
		return token{}, false
	}
	if p < len(b) && b[p] == '>' {
		s.pos = p + 1
		return token{kind: tComment, start: start, end: s.pos}, true
	}
	if p+1 < len(b) && b[p] == '-' && b[p+1] == '>' {
		s.pos = p + 2
		return token{kind: tComment, start: start, end: s.pos}, true
	}
	from := p
	if s.resumeTok == start && s.resumeAt > from {
		from = s.resumeAt
	}
	for {
		i := bytes.Index(b[from:], []byte("--"))
		if i < 0 {
			break
		}
		j := from + i + 2
		// Any run of dashes may precede the closing '>' or "!>".
		for j < len(b) && b[j] == '-' {
			j++
		}
		if j < len(b) && b[j] == '>' {
			s.pos = j + 1
			return token{kind: tComment, start: start, end: s.pos}, true
		}
		if j+1 < len(b) && b[j] == '!' && b[j+1] == '>' {
			s.pos = j + 2
			return token{kind: tComment, start: start, end: s.pos}, true
		}
		if j >= len(b) || j+1 >= len(b) && b[j] == '!' {
			if !s.eof {
				s.resumeTok, s.resumeAt = start, from+i
				return token{}, false
			}
			break
		}
		from = j
	}
	if !s.eof {
		s.resumeTok, s.resumeAt = start, max(p, len(b)-3)
		return token{}, false
	}
	s.pos = len(b)
	return token{kind: tComment, start: start, end: len(b), open: true}, true
}

// tagScan is where an incomplete tag's scan stopped, so that the next
// attempt goes on from there instead of starting over.
type tagScan struct {
	tok     int // the token's start + 1; 0: none
	i       int
	state   uint8
	quote   byte
	nameEnd int
}

// Tag scanning states, after the tokenizer's.
const (
	stTagName = iota
	stBeforeAttr
	stAttrName
	stAfterAttrName
	stBeforeValue
	stQuoted
	stUnquoted
	stSlash
)

// tag reads a start or end tag whose name starts at p, with its attributes,
// following the tokenizer's tag and attribute states.
func (s *scanner) tag(start, p int, kind tokKind) (token, bool) {
	b := s.buf
	ts := s.tagSt
	if ts.tok != start+1 {
		// <meta> and <link>, whose attributes headgate reads: read them
		// now, and the tag's end with them, in one pass.
		if kind == tStart && p+4 < len(b) && stopName[b[p+4]] && (asciiEqualFold(b[p:p+4], "meta") || asciiEqualFold(b[p:p+4], "link")) {
			s.attrs = tagAttrs{}
			if end, selfClose := readAttrs(b[start:], p+4-start, &s.attrs); end >= 0 {
				s.attrsTok = start + 1
				return s.tagDone(start, p, p+4, start+end+1, selfClose, kind)
			}
			s.attrsTok = 0
		}
		ts = tagScan{tok: start + 1, i: p, state: stTagName}
	}
	i := ts.i
	// Each state reads the run of bytes that keeps it in one loop over a
	// table, then handles the byte that ends the run.
	for i < len(b) {
		switch ts.state {
		case stTagName:
			for i < len(b) && !stopName[b[i]] {
				i++
			}
			if i < len(b) {
				ts.nameEnd, ts.state = i, stBeforeAttr
			}
		case stBeforeAttr, stAfterAttrName:
			for i < len(b) && spaceTab[b[i]] {
				i++
			}
			if i >= len(b) {
				break
			}
			switch c := b[i]; {
			case c == '/':
				ts.state = stSlash
			case c == '>':
				return s.tagDone(start, p, ts.nameEnd, i+1, false, kind)
			case c == '=' && ts.state == stAfterAttrName:
				ts.state = stBeforeValue
			default:
				ts.state = stAttrName // a leading '=' belongs to the name
			}
			i++
		case stAttrName:
			for i < len(b) && !stopAttrName[b[i]] {
				i++
			}
			if i >= len(b) {
				break
			}
			if b[i] == '=' {
				ts.state = stBeforeValue
				i++
			} else {
				ts.state = stAfterAttrName // which reads this byte
			}
		case stBeforeValue:
			for i < len(b) && spaceTab[b[i]] {
				i++
			}
			if i >= len(b) {
				break
			}
			switch c := b[i]; {
			case c == '"' || c == '\'':
				ts.state, ts.quote = stQuoted, c
				i++
			case c == '>':
				return s.tagDone(start, p, ts.nameEnd, i+1, false, kind)
			default:
				ts.state = stUnquoted
				i++
			}
		case stQuoted:
			j := bytes.IndexByte(b[i:], ts.quote)
			if j < 0 {
				i = len(b)
				break
			}
			i += j + 1
			ts.state = stBeforeAttr // the byte after the quote is read in "before attribute name"
		case stUnquoted:
			for i < len(b) && !stopUnquoted[b[i]] {
				i++
			}
			if i >= len(b) {
				break
			}
			if b[i] == '>' {
				return s.tagDone(start, p, ts.nameEnd, i+1, false, kind)
			}
			ts.state = stBeforeAttr
			i++
		case stSlash:
			if b[i] == '>' {
				return s.tagDone(start, p, ts.nameEnd, i+1, true, kind)
			}
			ts.state = stBeforeAttr // which reads this byte
		}
	}
	if !s.eof {
		ts.i = i
		s.tagSt = ts
		return token{}, false
	}
	// EOF in a tag: the tokenizer drops it; pass its bytes on as text.
	s.tagSt = tagScan{}
	s.pos = len(b)
	return token{kind: tText, start: start, end: len(b), open: true}, true
}

func (s *scanner) tagDone(start, nameStart, nameEnd, end int, selfClose bool, kind tokKind) (token, bool) {
	s.tagSt = tagScan{}
	s.pos = end
	t := token{kind: kind, start: start, end: end, nameStart: nameStart, nameEnd: nameEnd, selfClose: selfClose}
	if kind == tStart {
		s.raw = rawElement(s.buf[nameStart:nameEnd])
	}
	return t, true
}

var rawNames = [][]byte{
	[]byte("script"), []byte("style"), []byte("title"), []byte("textarea"), []byte("noscript"),
	[]byte("iframe"), []byte("noembed"), []byte("noframes"), []byte("xmp"), []byte("plaintext"),
}

// rawNameStrings are rawNames as strings, to compare without converting.
var rawNameStrings = func() []string {
	out := make([]string, len(rawNames))
	for i, r := range rawNames {
		out[i] = string(r)
	}
	return out
}()

func rawElement(name []byte) []byte {
	if len(name) < 3 || len(name) > 9 {
		return nil
	}
	// Only names whose first letter one of them has.
	switch name[0] | 0x20 {
	case 's', 't', 'n', 'i', 'x', 'p':
	default:
		return nil
	}
	for i, r := range rawNameStrings {
		if len(r) == len(name) && asciiEqualFold(name, r) {
			return rawNames[i]
		}
	}
	return nil
}

// rawEnd finds where the content of the current raw-text element ends: at
// its end tag ("</name" then a space, '/' or '>'), or at the end of input.
// open reports content cut by the end of input.
func (s *scanner) rawEnd(start int) (end int, open, ok bool) {
	b := s.buf
	name := s.raw
	if string(name) == "plaintext" {
		if s.eof {
			return len(b), false, true
		}
		return 0, false, false
	}
	if string(name) == "script" {
		return s.scriptEnd(start)
	}
	from := start
	if s.resumeTok == -start-1 && s.resumeAt > from {
		from = s.resumeAt
	}
	for {
		i := bytes.Index(b[from:], []byte("</"))
		if i < 0 {
			break
		}
		j := from + i
		switch endTagAt(b, j, name) {
		case 1:
			return j, false, true
		case 0:
			from = j + 2
			continue
		}
		// undecided: the buffer ends inside a possible end tag
		if s.eof {
			return len(b), true, true
		}
		s.resumeTok, s.resumeAt = -start-1, j
		return 0, false, false
	}
	if s.eof {
		return len(b), true, true
	}
	s.resumeTok, s.resumeAt = -start-1, max(start, len(b)-1)
	return 0, false, false
}

// endTagAt says whether b[j:] starts "</name" followed by a space, '/' or
// '>': 1 yes, 0 no, -1 the buffer ends too soon to tell.
func endTagAt(b []byte, j int, name []byte) int {
	k := j + 2
	if k+len(name) > len(b) {
		if asciiPrefixFold(b[k:], name) {
			return -1
		}
		return 0
	}
	if !asciiEqualFold(b[k:k+len(name)], string(name)) {
		return 0
	}
	k += len(name)
	if k >= len(b) {
		return -1
	}
	if c := b[k]; isSpace(c) || c == '/' || c == '>' {
		return 1
	}
	return 0
}

func asciiPrefixFold(b, name []byte) bool {
	for i := range b {
		if b[i]|0x20 != name[i] {
			return false
		}
	}
	return true
}

// asciiEqualFold compares b with a lower-case ASCII string.
func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// scriptScan is where an incomplete script scan stopped.
type scriptScan struct {
	tok  int // the script text's start + 1; 0: none
	from int // fast path: where the next '<' is looked for
	slow bool
	i    int // slow path position
	st   int // slow path state
}

// Script data states, after the tokenizer's escape states.
const (
	scData = iota
	scEscaped
	scEscapedDash
	scEscapedDashDash
	scDouble
	scDoubleDash
	scDoubleDashDash
)

// scriptEnd finds the end of script data starting at start, following the
// tokenizer's script escape states ("<!--" … "<script>" … "-->").
func (s *scanner) scriptEnd(start int) (int, bool, bool) {
	if s.scr.tok != start+1 {
		s.scr = scriptScan{tok: start + 1, from: start, i: start}
	}
	return scriptData(s.buf, s.eof, &s.scr)
}

// scriptData is scriptEnd's search, resuming from and leaving its state in
// sc (no defer saves it: this runs for every script element).
func scriptData(b []byte, eof bool, sc *scriptScan) (int, bool, bool) {
	name := []byte("script")
	more := func() (int, bool, bool) {
		if eof {
			*sc = scriptScan{}
			return len(b), true, true
		}
		return 0, false, false
	}
	done := func(j int) (int, bool, bool) {
		*sc = scriptScan{}
		return j, false, true
	}
	// Fast path: an end tag before any "<!--", found in one pass from '<'
	// to '<' (only "</" and "<!--" matter before the escape states); a
	// '<' too near the end of the input waits there for more.
fast:
	for !sc.slow {
		i := bytes.IndexByte(b[sc.from:], '<')
		if i < 0 {
			sc.from = len(b)
			return more()
		}
		j := sc.from + i
		if j+1 >= len(b) {
			sc.from = j
			return more()
		}
		switch b[j+1] {
		case '/':
			switch endTagAt(b, j, name) {
			case 1:
				return done(j)
			case -1:
				sc.from = j
				return more()
			}
			sc.from = j + 2
		case '!':
			if j+3 >= len(b) {
				sc.from = j
				return more()
			}
			if b[j+2] == '-' && b[j+3] == '-' {
				sc.slow = true
				break fast
			}
			sc.from = j + 2
		default:
			sc.from = j + 1
		}
	}
	i, st := sc.i, sc.st
	// Waiting for more input, the slow path resumes where it stopped.
	wait := func() (int, bool, bool) {
		if !eof {
			sc.i, sc.st = i, st
		}
		return more()
	}
	for i < len(b) {
		// In these three states only some bytes move the state: skip to
		// the next of them.
		switch st {
		case scData:
			if j := bytes.IndexByte(b[i:], '<'); j < 0 {
				i = len(b)
				continue
			} else {
				i += j
			}
		case scEscaped, scDouble:
			for i < len(b) && b[i] != '-' && b[i] != '<' {
				i++
			}
			if i >= len(b) {
				continue
			}
		}
		c := b[i]
		switch st {
		case scData:
			if c == '<' {
				if i+1 >= len(b) {
					return wait()
				}
				switch b[i+1] {
				case '/':
					switch endTagAt(b, i, name) {
					case 1:
						return done(i)
					case -1:
						return wait()
					}
				case '!':
					if i+3 >= len(b) {
						return wait()
					}
					if b[i+2] == '-' && b[i+3] == '-' {
						st = scEscapedDashDash
						i += 4
						continue
					}
				}
			}
		case scEscaped, scEscapedDash, scEscapedDashDash:
			switch {
			case c == '-':
				if st == scEscaped {
					st = scEscapedDash
				} else {
					st = scEscapedDashDash
				}
			case c == '<':
				if i+1 >= len(b) {
					return wait()
				}
				if b[i+1] == '/' {
					switch endTagAt(b, i, name) {
					case 1:
						return done(i)
					case -1:
						return wait()
					}
					st = scEscaped
				} else if isAlpha(b[i+1]) {
					// "<script" followed by a space, '/' or '>' enters double escape.
					k := i + 1
					for k < len(b) && isAlpha(b[k]) {
						k++
					}
					if k >= len(b) {
						return wait()
					}
					if asciiEqualFold(b[i+1:k], "script") && (isSpace(b[k]) || b[k] == '/' || b[k] == '>') {
						st = scDouble
					} else {
						st = scEscaped
					}
					i = k
					continue
				} else {
					st = scEscaped
				}
			case c == '>' && st == scEscapedDashDash:
				st = scData
			default:
				st = scEscaped
			}
		case scDouble, scDoubleDash, scDoubleDashDash:
			switch {
			case c == '-':
				if st == scDouble {
					st = scDoubleDash
				} else {
					st = scDoubleDashDash
				}
			case c == '<':
				if i+1 >= len(b) {
					return wait()
				}
				if b[i+1] == '/' {
					k := i + 2
					for k < len(b) && isAlpha(b[k]) {
						k++
					}
					if k >= len(b) {
						return wait()
					}
					if asciiEqualFold(b[i+2:k], "script") && (isSpace(b[k]) || b[k] == '/' || b[k] == '>') {
						st = scEscaped
					} else {
						st = scDouble
					}
					i = k
					continue
				}
				st = scDouble
			case c == '>' && st == scDoubleDashDash:
				st = scData
			default:
				st = scDouble
			}
		}
		i++
	}
	return wait()
}
