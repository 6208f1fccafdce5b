package sitemapxml

import (
	"fmt"
	"io"
)

// runLimit fails a read once max bytes have come within one token of the
// XML, so that encoding/xml never buffers one larger than that. It follows
// where encoding/xml's tokens end: text at a "<"; a tag at its ">" outside
// quoted attribute values (a "<" in one is an error there); a comment only
// at "-->" and a CDATA section at "]]>", whatever "<" and ">" they hold; a
// processing instruction at "?>"; a directive (<!DOCTYPE …>) at its
// unquoted, unnested ">", with the comments in it skipped. Where it is
// unsure, it counts on: it may stop a file whose token is a little shorter
// than the bound, never let a longer one through.
type runLimit struct {
	r     io.Reader
	max   int // the bound; 0 is defaultToken
	run   int
	state runState
	k     int  // bytes of a delimiter matched so far
	quote byte // in a tag or a directive: the open quote, or 0
	depth int  // in a directive: the "<" nested in it
}

type runState uint8

const (
	rsText      runState = iota
	rsLt                 // "<"
	rsBang               // "<!"
	rsBangDash           // "<!-"
	rsCDATAOpen          // "<![" and k bytes of "CDATA["
	rsTag
	rsComment   // k: bytes of "-->" matched
	rsCDATA     // k: bytes of "]]>" matched
	rsPI        // k: 1 after a "?"
	rsDirective // quote, depth
	rsDirLt     // a "<" in a directive, and k bytes of "!--" after it
	rsDirComment
)

func (l *runLimit) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	limit := l.max
	if limit == 0 {
		limit = defaultToken
	}
	for _, c := range p[:n] {
		l.step(c)
		if l.run > limit {
			return n, fmt.Errorf("%w (more than %d bytes: text between two tags, a tag, a comment, a CDATA section)", ErrToken, limit)
		}
	}
	return n, err
}

// step reads one byte: it sets the state, and starts the count over where
// a token ends.
func (l *runLimit) step(c byte) {
	l.run++
	switch l.state {
	case rsText:
		if c == '<' {
			l.state, l.run = rsLt, 1
		}
	case rsLt:
		switch c {
		case '!':
			l.state = rsBang
		case '?':
			l.state, l.k = rsPI, 0
		case '>':
			l.end()
		default:
			l.state = rsTag
		}
	case rsBang:
		switch c {
		case '-':
			l.state = rsBangDash
		case '[':
			l.state, l.k = rsCDATAOpen, 0
		default:
			l.directive()
		}
	case rsBangDash:
		if c == '-' {
			l.state, l.k = rsComment, 0
		} else {
			l.directive()
		}
	case rsCDATAOpen:
		switch {
		case c != "CDATA["[l.k]:
			l.directive()
		case l.k == len("CDATA[")-1:
			l.state, l.k = rsCDATA, 0
		default:
			l.k++
		}
	case rsTag:
		// A ">" in a quoted attribute value does not end the tag.
		if !l.quoted(c) && c == '>' {
			l.end()
		}
	case rsComment:
		l.k = closeMatch(l.k, c, '-')
		if l.k == 3 {
			l.end()
		}
	case rsCDATA:
		l.k = closeMatch(l.k, c, ']')
		if l.k == 3 {
			l.end()
		}
	case rsPI:
		switch {
		case c == '>' && l.k == 1:
			l.end()
		case c == '?':
			l.k = 1
		default:
			l.k = 0
		}
	case rsDirective:
		l.inDirective(c)
	case rsDirLt:
		if c == "!--"[l.k] {
			l.k++
			if l.k == 3 {
				l.state, l.k = rsDirComment, 0
			}
			return
		}
		// Not a comment: a nested "<", and c read as any byte of the
		// directive is.
		l.depth++
		l.state = rsDirective
		l.inDirective(c)
	case rsDirComment:
		l.k = closeMatch(l.k, c, '-')
		if l.k == 3 {
			l.state, l.k = rsDirective, 0
		}
	}
}

// closeMatch advances a match of "XX>" (X is '-' or ']') by c: k bytes
// matched so far.
func closeMatch(k int, c, x byte) int {
	switch {
	case c == x && k < 2:
		return k + 1
	case c == x:
		return 2 // "--" followed by more: the last two still count
	case c == '>' && k == 2:
		return 3
	}
	return 0
}

// directive starts a directive at its first byte after "<!", which
// encoding/xml takes as it is: not a quote, not a ">" that ends it.
func (l *runLimit) directive() {
	l.state, l.quote, l.depth = rsDirective, 0, 0
}

// quoted reads c as part of a quoted value, or as the quote that opens
// one; it reports false for any other byte.
func (l *runLimit) quoted(c byte) bool {
	switch {
	case l.quote != 0:
		if c == l.quote {
			l.quote = 0
		}
		return true
	case c == '\'' || c == '"':
		l.quote = c
		return true
	}
	return false
}

func (l *runLimit) inDirective(c byte) {
	if l.quoted(c) {
		return
	}
	switch {
	case c == '>' && l.depth == 0:
		l.end()
	case c == '>':
		l.depth--
	case c == '<':
		l.state, l.k = rsDirLt, 0
	}
}

func (l *runLimit) end() { l.state, l.run, l.k, l.quote = rsText, 0, 0, 0 }
