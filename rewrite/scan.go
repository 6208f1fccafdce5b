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
}

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
		end, ok := s.rawEnd(start)
		if !ok {
			return token{}, false
		}
		s.raw = nil
		if end > start {
			s.pos = end
			return token{kind: tText, start: start, end: end, raw: true}, true
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

// until reads a bogus comment up to and including the next '>'.
func (s *scanner) until(start, from int, c byte, kind tokKind) (token, bool) {
	i := bytes.IndexByte(s.buf[from:], c)
	if i < 0 {
		if !s.eof {
			return token{}, false
		}
		s.pos = len(s.buf)
		return token{kind: kind, start: start, end: len(s.buf)}, true
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
	return token{kind: tComment, start: start, end: len(b)}, true
}

// tag reads a start or end tag whose name starts at p, with its attributes,
// following the tokenizer's attribute states.
func (s *scanner) tag(start, p int, kind tokKind) (token, bool) {
	b := s.buf
	t := token{kind: kind, start: start, nameStart: p}
	i := p
	for i < len(b) && !isSpace(b[i]) && b[i] != '/' && b[i] != '>' {
		i++
	}
	t.nameEnd = i
	end, selfClose, ok := tagEnd(b, i)
	if !ok {
		if !s.eof {
			return token{}, false
		}
		// EOF in a tag: the tokenizer drops it; pass its bytes on as text.
		s.pos = len(b)
		return token{kind: tText, start: start, end: len(b)}, true
	}
	t.end, t.selfClose = end, selfClose
	s.pos = end
	if kind == tStart {
		s.raw = rawElement(b[t.nameStart:t.nameEnd])
	}
	return t, true
}

// tagEnd scans attributes from i and returns the offset after the tag's
// closing '>'.
func tagEnd(b []byte, i int) (end int, selfClose, ok bool) {
	for {
		// before attribute name
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		if i >= len(b) {
			return 0, false, false
		}
		switch b[i] {
		case '>':
			return i + 1, false, true
		case '/':
			if i+1 >= len(b) {
				return 0, false, false
			}
			if b[i+1] == '>' {
				return i + 2, true, true
			}
			i++
			continue
		}
		// attribute name (a leading '=' belongs to the name)
		i++
		for i < len(b) && !isSpace(b[i]) && b[i] != '/' && b[i] != '>' && b[i] != '=' {
			i++
		}
		// after attribute name
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		if i >= len(b) {
			return 0, false, false
		}
		if b[i] != '=' {
			continue
		}
		i++
		// before attribute value
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		if i >= len(b) {
			return 0, false, false
		}
		switch q := b[i]; q {
		case '"', '\'':
			j := bytes.IndexByte(b[i+1:], q)
			if j < 0 {
				return 0, false, false
			}
			i += j + 2
		case '>':
			return i + 1, false, true
		default:
			for i < len(b) && !isSpace(b[i]) && b[i] != '>' {
				i++
			}
		}
	}
}

var rawNames = [][]byte{
	[]byte("script"), []byte("style"), []byte("title"), []byte("textarea"), []byte("noscript"),
	[]byte("iframe"), []byte("noembed"), []byte("noframes"), []byte("xmp"), []byte("plaintext"),
}

func rawElement(name []byte) []byte {
	for _, r := range rawNames {
		if asciiEqualFold(name, string(r)) {
			return r
		}
	}
	return nil
}

// rawEnd finds where the content of the current raw-text element ends: at
// its end tag ("</name" then a space, '/' or '>'), or at the end of input.
func (s *scanner) rawEnd(start int) (int, bool) {
	b := s.buf
	name := s.raw
	if string(name) == "plaintext" {
		if s.eof {
			return len(b), true
		}
		return 0, false
	}
	if string(name) == "script" {
		if e, ok := scriptEnd(b, start, s.eof); ok {
			return e, true
		}
		return 0, false
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
			return j, true
		case 0:
			from = j + 2
			continue
		}
		// undecided: the buffer ends inside a possible end tag
		if s.eof {
			return len(b), true
		}
		s.resumeTok, s.resumeAt = -start-1, j
		return 0, false
	}
	if s.eof {
		return len(b), true
	}
	s.resumeTok, s.resumeAt = -start-1, max(start, len(b)-1)
	return 0, false
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

// scriptEnd finds the end of script data starting at start, following the
// tokenizer's script escape states ("<!--" … "<script>" … "-->").
func scriptEnd(b []byte, start int, eof bool) (int, bool) {
	name := []byte("script")
	// Fast path: an end tag before any "<!--". The escape search runs only
	// over the stretch before each candidate, so the whole scan is linear.
	from, checked := start, start
	for {
		i := bytes.Index(b[from:], []byte("</"))
		if i < 0 {
			if bytes.Contains(b[max(start, checked-3):], []byte("<!--")) {
				break
			}
			if eof {
				return len(b), true
			}
			return 0, false
		}
		j := from + i
		if bytes.Contains(b[max(start, checked-3):j], []byte("<!--")) {
			break
		}
		checked = j
		switch endTagAt(b, j, name) {
		case 1:
			return j, true
		case -1:
			if eof {
				return len(b), true
			}
			return 0, false
		}
		from = j + 2
	}
	const (
		data = iota
		escaped
		escapedDash
		escapedDashDash
		double
		doubleDash
		doubleDashDash
	)
	st := data
	i := start
	for i < len(b) {
		c := b[i]
		switch st {
		case data:
			if c == '<' {
				if i+1 >= len(b) {
					goto more
				}
				switch b[i+1] {
				case '/':
					switch endTagAt(b, i, name) {
					case 1:
						return i, true
					case -1:
						goto more
					}
				case '!':
					if i+3 >= len(b) {
						goto more
					}
					if b[i+2] == '-' && b[i+3] == '-' {
						st = escapedDashDash
						i += 4
						continue
					}
				}
			}
		case escaped, escapedDash, escapedDashDash:
			switch {
			case c == '-':
				if st == escaped {
					st = escapedDash
				} else {
					st = escapedDashDash
				}
			case c == '<':
				if i+1 >= len(b) {
					goto more
				}
				if b[i+1] == '/' {
					switch endTagAt(b, i, name) {
					case 1:
						return i, true
					case -1:
						goto more
					}
					st = escaped
				} else if isAlpha(b[i+1]) {
					// "<script" followed by a space, '/' or '>' enters double escape.
					k := i + 1
					for k < len(b) && isAlpha(b[k]) {
						k++
					}
					if k >= len(b) {
						goto more
					}
					if asciiEqualFold(b[i+1:k], "script") && (isSpace(b[k]) || b[k] == '/' || b[k] == '>') {
						st = double
					} else {
						st = escaped
					}
					i = k
					continue
				} else {
					st = escaped
				}
			case c == '>' && st == escapedDashDash:
				st = data
			default:
				st = escaped
			}
		case double, doubleDash, doubleDashDash:
			switch {
			case c == '-':
				if st == double {
					st = doubleDash
				} else {
					st = doubleDashDash
				}
			case c == '<':
				if i+1 >= len(b) {
					goto more
				}
				if b[i+1] == '/' {
					k := i + 2
					for k < len(b) && isAlpha(b[k]) {
						k++
					}
					if k >= len(b) {
						goto more
					}
					if asciiEqualFold(b[i+2:k], "script") && (isSpace(b[k]) || b[k] == '/' || b[k] == '>') {
						st = escaped
					} else {
						st = double
					}
					i = k
					continue
				}
				st = double
			case c == '>' && st == doubleDashDash:
				st = data
			default:
				st = double
			}
		}
		i++
	}
more:
	if eof {
		return len(b), true
	}
	return 0, false
}
