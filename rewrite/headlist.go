package rewrite

import (
	"bytes"

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
// It ends the head where the rewriter does (the stretch after an implicit
// end up to a literal </head> or <body>, lateLiteral), on x/net/html's
// tokenizer: a list for people, not for the request path.
func ListHead(b []byte, contentType string, bodyCut bool) HeadList {
	if enc, name, _ := charset.DetermineEncoding(b[:min(len(b), 1024)], contentType); name != "utf-8" && enc != nil {
		if d, err := enc.NewDecoder().Bytes(b); err == nil {
			b = d
		}
	}
	l := headLister{z: html.NewTokenizer(bytes.NewReader(b)), b: b, open: -1}
	l.z.SetMaxBuf(len(b) + 1)
	l.run(bodyCut)
	return l.out
}

// headLister is ListHead's state.
type headLister struct {
	z         *html.Tokenizer
	b         []byte
	out       HeadList
	open      int // index in out.Tags of a title, script, style, noscript or noframes awaiting its end; -1 none
	text      []byte
	template  int  // depth of <template>
	pos       int  // bytes of b tokenized so far
	afterHead bool // after a literal </head>: head elements still belong to the head
	late      bool // in the stretch after an implicit end
	foreign   int  // depth of <svg> and <math> in the stretch
}

// add appends t; false when the list is full.
func (l *headLister) add(t HeadTag) bool {
	if len(l.out.Tags) >= MaxHeadTags {
		l.out.Cut = true
		return false
	}
	l.out.Tags = append(l.out.Tags, t)
	return true
}

// full ends the list: it is cut, and what ended the head is not known.
func (l *headLister) full() {
	l.out.End, l.out.Cut = HeadEnd{}, true
}

// implicitEnd is where the head ends before a literal </head> or <body>,
// as the rewriter reads it: the tags up to that literal are read on. It
// reports whether the listing goes on.
func (l *headLister) implicitEnd(by, what string) bool {
	l.out.End = HeadEnd{By: by, What: what}
	l.late = !l.afterHead && lateLiteral(l.b[l.pos:])
	return l.late
}

func newHeadTag(tok html.Token, late bool) HeadTag {
	t := HeadTag{Name: tok.Data, Late: late, Attrs: make([]Attr, len(tok.Attr))}
	for i, a := range tok.Attr {
		t.Attrs[i] = Attr{a.Key, a.Val}
	}
	return t
}

// run is the listing's state machine: one step per token, until the head
// has ended.
func (l *headLister) run(bodyCut bool) {
	z := l.z
	for {
		tt := z.Next()
		l.pos += len(z.Raw())
		switch tt {
		case html.ErrorToken:
			if l.open >= 0 {
				t := &l.out.Tags[l.open]
				t.Text, t.Close = string(l.text), CloseEOF
			}
			if l.out.End.By == "" {
				l.out.End.By = "eof"
				if bodyCut {
					l.out.Cut = true
				}
			}
			return
		case html.TextToken:
			if !l.textToken() {
				return
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			if !l.startTag(tt) {
				return
			}
		case html.EndTagToken:
			if !l.endTag() {
				return
			}
		}
	}
}

func (l *headLister) textToken() bool {
	if l.open >= 0 {
		if len(l.text) < 64<<10 {
			l.text = append(l.text, l.z.Text()...)
		}
		return true
	}
	if l.template > 0 || l.late || l.foreign > 0 {
		return true
	}
	// Blank is HTML's whitespace only: a no-break space (&nbsp;) is text,
	// and ends the head, in a browser and in the rewriter alike.
	if t := bytes.Trim(l.z.Text(), " \t\n\f\r"); len(t) > 0 {
		return !l.afterHead && l.implicitEnd("text", string(t))
	}
	return true
}

func (l *headLister) startTag(tt html.TokenType) bool {
	tok := l.z.Token()
	name := tok.Data
	if l.template > 0 {
		if name == "template" {
			l.template++
		}
		return true
	}
	if l.foreign > 0 {
		if (name == "svg" || name == "math") && tt == html.StartTagToken {
			l.foreign++
		}
		return true
	}
	switch name {
	case "html", "head", "bgsound", "basefont":
		return true
	case "meta", "link", "base":
		if !l.add(newHeadTag(tok, l.late)) {
			l.full()
			return false
		}
	case "title", "script", "style", "noscript", "noframes":
		if l.afterHead && name == "noscript" {
			return false // not a head element after </head>
		}
		t := newHeadTag(tok, l.late)
		if tt == html.SelfClosingTagToken && name != "title" {
			if !l.add(t) {
				l.full()
				return false
			}
			return true
		}
		if !l.add(t) {
			l.full()
			return false
		}
		l.open, l.text = len(l.out.Tags)-1, l.text[:0]
	case "template":
		l.template = 1
		if !l.late {
			l.add(newHeadTag(tok, false))
		}
	case "body":
		if !l.late && !l.afterHead {
			l.out.End = HeadEnd{By: "<body>"}
		}
		return false
	default:
		svg := (name == "svg" || name == "math") && tt == html.StartTagToken
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

func (l *headLister) endTag() bool {
	tok := l.z.Token()
	switch {
	case l.template > 0:
		if tok.Data == "template" {
			l.template--
		}
	case l.foreign > 0:
		if tok.Data == "svg" || tok.Data == "math" {
			l.foreign--
		}
	case l.open >= 0 && tok.Data == l.out.Tags[l.open].Name:
		t := &l.out.Tags[l.open]
		t.Text, t.Close = string(l.text), CloseTag
		l.open = -1
	case tok.Data == "head":
		if l.late {
			return false
		}
		if !l.afterHead {
			l.out.End, l.afterHead = HeadEnd{By: "</head>"}, true
		}
	case l.late:
	case tok.Data == "body" || tok.Data == "html" || tok.Data == "br":
		if l.afterHead || !l.implicitEnd("end tag", tok.Data) {
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
