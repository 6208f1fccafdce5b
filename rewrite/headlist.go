package rewrite

import (
	"bytes"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// HeadList is a document's head as the rewriter reads it, element by
// element: Result.UpstreamHead for the upstream's head, and ListHead for
// any other bytes (the inspector lists the served head with it).
type HeadList struct {
	Tags []HeadTag
	End  HeadEnd
	// Cut reports a list that is not complete: more than MaxHeadTags
	// elements, or bytes that ended (cut short by the reader) before the
	// head did.
	Cut bool
}

// MaxHeadTags bounds HeadList.Tags.
const MaxHeadTags = 500

// HeadTag is one element of a head: a meta, link or base; a title,
// script, style, noscript or noframes with its text; a template (its
// content is not listed).
type HeadTag struct {
	Name  string // lower-case
	Attrs []Attr // in document order, values decoded
	Text  string // the content of a title, script, style, noscript or noframes, at most 64 KiB
	Close Close
	// Late marks an element after the head's implicit end (a text or a
	// start tag that is no head element), in the stretch up to a literal
	// </head> or <body>: a parser puts it in the body, and the rewriter
	// reads on to that literal and replaces there what it writes.
	Late bool
}

// Attr is an attribute of a HeadTag.
type Attr struct{ Key, Val string }

// Close says how an element with content ended.
type Close uint8

const (
	CloseNone Close = iota // a void or self-closing element: no content
	CloseTag               // its end tag was read
	CloseEOF               // the bytes ended inside it
)

// HeadEnd says what ended the head.
type HeadEnd struct {
	// By: "" (not known: a list cut short), "eof" (the end of what was
	// read), "</head>", "<body>", "text" (a text that is not blank), "tag"
	// (a start tag that is no head element) or "end tag" (</body>,
	// </html> or </br> before </head>).
	By string
	// What is the text, or the tag's name, for "text", "tag" and "end tag".
	What string
}

// ListHead lists the head of an HTML document's first bytes, decoded from
// the charset contentType and the bytes declare. bodyCut says b is not the
// whole document: a head that has not ended by its end is reported Cut.
// It reads the head as the rewriter does: with the rewriter's scanner, the
// head's end where the rewriter puts it (the stretch after an implicit end
// up to a literal </head> or <body>, lateLiteral), values and text decoded
// as the rewriter decodes them (character references resolved).
func ListHead(b []byte, contentType string, bodyCut bool) HeadList {
	if enc, name, _ := charset.DetermineEncoding(b[:min(len(b), 1024)], contentType); name != "utf-8" && enc != nil {
		if d, err := enc.NewDecoder().Bytes(b); err == nil {
			b = d
		}
	}
	l := headLister{sc: scanner{buf: b, eof: true}, listState: listState{b: b, open: -1}}
	l.run(bodyCut)
	return l.out
}

// headLister is ListHead's state: its scanner and the listing.
type headLister struct {
	sc scanner
	listState
}

// listState is a head listing in progress, apart from the tokenizer that
// feeds it: ListHead's and its x/net test oracle's.
type listState struct {
	b         []byte
	out       HeadList
	open      int // index in out.Tags of a title, script, style, noscript or noframes awaiting its end; -1 none
	text      []byte
	template  int  // depth of <template>
	pos       int  // bytes of b scanned so far
	afterHead bool // after a literal </head>: head elements still belong to the head
	late      bool // in the stretch after an implicit end
	foreign   int  // depth of <svg> and <math> in the stretch
}

// add appends t; false when the list is full.
func (l *listState) add(t HeadTag) bool {
	if len(l.out.Tags) >= MaxHeadTags {
		l.out.Cut = true
		return false
	}
	l.out.Tags = append(l.out.Tags, t)
	return true
}

// full ends the list: it is cut, and what ended the head is not known.
func (l *listState) full() {
	l.out.End, l.out.Cut = HeadEnd{}, true
}

// implicitEnd is where the head ends before a literal </head> or <body>,
// as the rewriter reads it: the tags up to that literal are read on. It
// reports whether the listing goes on.
func (l *listState) implicitEnd(by, what string) bool {
	l.out.End = HeadEnd{By: by, What: what}
	l.late = !l.afterHead && lateLiteral(l.b[l.pos:])
	return l.late
}

// tagName is a tag token's name, lower-cased.
func (l *headLister) tagName(t token) string {
	return asciiLower(l.b[t.nameStart:t.nameEnd])
}

func (l *headLister) newHeadTag(t token, name string) HeadTag {
	ht := HeadTag{Name: name, Late: l.late}
	tag := l.b[t.start:t.end]
	eachAttr(tag, t.nameEnd-t.start, func(a attr) {
		key := asciiLower(tag[a.nameStart:a.nameEnd])
		for _, have := range ht.Attrs {
			if have.Key == key {
				return // the first of a name wins; a parser drops the others
			}
		}
		ht.Attrs = append(ht.Attrs, Attr{Key: key, Val: attrRefs(newlines(tag[a.valStart:a.valEnd]))})
	})
	return ht
}

// asciiLower is a tag's or attribute's name as the tokenizer gives it:
// ASCII letters lower-cased, a NUL as U+FFFD.
func asciiLower(b []byte) string {
	out := []byte(string(b))
	for i, c := range out {
		if 'A' <= c && c <= 'Z' {
			out[i] = c + 'a' - 'A'
		}
	}
	if bytes.IndexByte(out, 0) >= 0 {
		out = bytes.ReplaceAll(out, []byte{0}, []byte("\uFFFD"))
	}
	return string(out)
}

// newlines turns CR LF and lone CRs into LF, as the tokenizer's text does.
func newlines(b []byte) []byte {
	if bytes.IndexByte(b, '\r') < 0 {
		return b
	}
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	return bytes.ReplaceAll(b, []byte("\r"), []byte("\n"))
}

// charRefs resolves b's character references, as decodeText does.
func charRefs(b []byte) string {
	if bytes.IndexByte(b, '&') < 0 {
		return string(b)
	}
	return html.UnescapeString(string(b))
}

// attrRefs resolves an attribute value's character references as the
// tokenizer does (WHATWG, "in an attribute"): a named reference counts
// only when its whole name is one, and one without its ';' not when an
// '=' follows — "?a=1&copy=2" in a URL stays as it is, where text would
// read "©=2".
func attrRefs(b []byte) string {
	s := string(b)
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	}
	if strings.IndexByte(s, '&') < 0 {
		return s
	}
	var out strings.Builder
	for {
		i := strings.IndexByte(s, '&')
		if i < 0 {
			out.WriteString(s)
			return out.String()
		}
		out.WriteString(s[:i])
		s = s[i:]
		j := 1
		if j < len(s) && s[j] == '#' { // numeric: read as in text
			for j++; j < len(s) && (isAlnum(s[j]) || s[j] == ';'); j++ {
				if s[j] == ';' {
					j++
					break
				}
			}
			out.WriteString(html.UnescapeString(s[:j]))
			s = s[j:]
			continue
		}
		for j < len(s) && isAlnum(s[j]) {
			j++
		}
		semi := j < len(s) && s[j] == ';'
		if semi {
			j++
		}
		ref := s[:j]
		if r := html.UnescapeString(ref); j > 1 && (semi || j == len(s) || s[j] != '=') && wholeRef(ref, r) {
			out.WriteString(r)
		} else {
			out.WriteString(ref)
		}
		s = s[j:]
	}
}

// wholeRef reports whether UnescapeString read all of the named reference
// ref as one name (r), not a shorter name with ref's rest after it: a
// reference never decodes to an ASCII letter or digit, and a rest ends
// with one (then the ';', if any).
func wholeRef(ref, r string) bool {
	if r == ref {
		return false
	}
	r = strings.TrimSuffix(r, ";")
	if strings.HasSuffix(ref, ";") && len(r) == 0 {
		return true // &semi;
	}
	return len(r) == 0 || !isAlnum(r[len(r)-1])
}

func isAlnum(c byte) bool { return isAlpha(c) || '0' <= c && c <= '9' }

// run is the listing's state machine: one step per token, until the head
// has ended or the bytes do.
func (l *headLister) run(bodyCut bool) {
	for {
		t, ok := l.sc.next()
		if !ok || t.open && !t.raw {
			// The end of the bytes; a tag or comment they cut is none.
			if l.open >= 0 {
				ht := &l.out.Tags[l.open]
				ht.Text, ht.Close = string(l.text), CloseEOF
			}
			if l.out.End.By == "" {
				l.out.End.By = "eof"
				if bodyCut {
					l.out.Cut = true
				}
			}
			return
		}
		l.pos = t.end
		goOn := true
		switch t.kind {
		case tText:
			goOn = l.textToken(t)
		case tStart:
			goOn = l.startTag(t)
		case tEnd:
			goOn = l.endTag(t)
		}
		if !goOn {
			return
		}
	}
}

// rawText reports whether an element's content is taken as it is, with no
// character references (a script's, a style's), rather than as text (a
// title's).
func rawText(name string) bool {
	return name != "title" && name != "textarea"
}

func (l *headLister) textToken(t token) bool {
	b := newlines(l.b[t.start:t.end])
	if t.raw && bytes.IndexByte(b, 0) >= 0 {
		// A raw-text or RCDATA element's NUL is U+FFFD (WHATWG).
		b = bytes.ReplaceAll(b, []byte{0}, []byte("\uFFFD"))
	}
	if l.open >= 0 {
		if len(l.text) < 64<<10 {
			if rawText(l.out.Tags[l.open].Name) {
				l.text = append(l.text, b...)
			} else {
				l.text = append(l.text, charRefs(b)...)
			}
		}
		return true
	}
	if l.template > 0 || l.late || l.foreign > 0 {
		return true
	}
	// Blank is HTML's whitespace only: a no-break space (&nbsp;) is text,
	// and ends the head, in a browser and in the rewriter alike.
	if s := strings.Trim(charRefs(b), " \t\n\f\r"); s != "" {
		return !l.afterHead && l.implicitEnd("text", s)
	}
	return true
}

func (l *headLister) startTag(t token) bool {
	name := l.tagName(t)
	if l.template > 0 {
		if name == "template" {
			l.template++
		}
		return true
	}
	if l.foreign > 0 {
		if (name == "svg" || name == "math") && !t.selfClose {
			l.foreign++
		}
		return true
	}
	switch name {
	case "html", "head", "bgsound", "basefont":
		return true
	case "meta", "link", "base":
		if !l.add(l.newHeadTag(t, name)) {
			l.full()
			return false
		}
	case "title", "script", "style", "noscript", "noframes":
		if l.afterHead && name == "noscript" {
			return false // not a head element after </head>
		}
		if !l.add(l.newHeadTag(t, name)) {
			l.full()
			return false
		}
		if !t.selfClose || name == "title" {
			l.open, l.text = len(l.out.Tags)-1, l.text[:0]
		}
	case "template":
		l.template = 1
		if !l.late {
			l.add(l.newHeadTag(t, name))
		}
	case "body":
		if !l.late && !l.afterHead {
			l.out.End = HeadEnd{By: "<body>"}
		}
		return false
	default:
		svg := (name == "svg" || name == "math") && !t.selfClose
		switch {
		case l.late:
			if svg {
				l.foreign = 1 // their <title> and <link> are not HTML's
			}
		case l.afterHead:
			return false
		case !l.implicitEnd("tag", name):
			return false
		default:
			if svg {
				l.foreign = 1
			}
		}
	}
	return true
}

func (l *headLister) endTag(t token) bool {
	name := l.tagName(t)
	switch {
	case l.template > 0:
		if name == "template" {
			l.template--
		}
	case l.foreign > 0:
		if name == "svg" || name == "math" {
			l.foreign--
		}
	case l.open >= 0 && name == l.out.Tags[l.open].Name:
		ht := &l.out.Tags[l.open]
		ht.Text, ht.Close = string(l.text), CloseTag
		l.open = -1
	case name == "head":
		if l.late {
			return false
		}
		if !l.afterHead {
			l.out.End, l.afterHead = HeadEnd{By: "</head>"}, true
		}
	case l.late:
	case name == "body" || name == "html" || name == "br":
		if l.afterHead || !l.implicitEnd("end tag", name) {
			return false
		}
	}
	return true
}

// lateLiteral reports whether a literal "</head" or "<body" stands in b:
// the rewriter's test for a stretch after the head's implicit end
// (headScan.lateHead).
func lateLiteral(b []byte) bool {
	for i := 0; i < len(b); {
		j := bytes.IndexByte(b[i:], '<')
		if j < 0 {
			return false
		}
		i += j
		if lateLiteralAt(b[i:]) {
			return true
		}
		i++
	}
	return false
}

// lateLiteralAt reports whether b starts with "</head" or "<body", in any
// case.
func lateLiteralAt(b []byte) bool {
	return hasPrefixFold(b, "</head") || hasPrefixFold(b, "<body")
}
