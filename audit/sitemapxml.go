package audit

import (
	"bufio"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// maxLocLength bounds one <loc>; the protocol allows 2,048 characters.
const maxLocLength = 4096

// Bounds on what a sitemap may make the audit hold: the protocol's 50 MB
// uncompressed (a gzip bomb is cut there), one token (encoding/xml holds
// each whole: runLimit) and the depth of elements.
const (
	maxSitemapUncompressed = 64 << 20
	maxSitemapTextRun      = 1 << 20
	maxSitemapDepth        = 32
)

// errTextRun stops a sitemap with a token longer than any sitemap's.
var errTextRun = fmt.Errorf("more than %d bytes in one token (text between two tags, a tag, a comment, a CDATA section)", maxSitemapTextRun)

// runLimit fails a read once maxSitemapTextRun bytes have come within one
// token of the XML, so that encoding/xml never buffers one larger than
// that. It follows where encoding/xml's tokens end: text at a "<"; a tag
// at its ">" (a "<" in a quoted attribute value is an error there); a
// comment only at "-->" and a CDATA section at "]]>", whatever "<" and ">"
// they hold; a processing instruction at "?>"; a directive (<!DOCTYPE …>)
// at its unquoted, unnested ">", with the comments in it skipped. Where it
// is unsure, it counts on: it may stop a file whose token is a little
// shorter than the bound, never let a longer one through.
type runLimit struct {
	r     io.Reader
	max   int // the bound; 0 is maxSitemapTextRun
	run   int
	state runState
	k     int  // bytes of a delimiter matched so far
	quote byte // in a directive: the open quote, or 0
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
		limit = maxSitemapTextRun
	}
	for _, c := range p[:n] {
		l.step(c)
		if l.run > limit {
			return n, errTextRun
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
		if c == '>' {
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

func (l *runLimit) inDirective(c byte) {
	switch {
	case l.quote != 0:
		if c == l.quote {
			l.quote = 0
		}
	case c == '\'' || c == '"':
		l.quote = c
	case c == '>' && l.depth == 0:
		l.end()
	case c == '>':
		l.depth--
	case c == '<':
		l.state, l.k = rsDirLt, 0
	}
}

func (l *runLimit) end() { l.state, l.run, l.k = rsText, 0, 0 }

// parseSitemap streams a sitemap file, calling emit for each <loc> of a
// <urlset> (index false) or a <sitemapindex> (index true), and returns the
// root element's name. A gzipped file is read through gzip. emit returns
// false to stop early.
func parseSitemap(r io.Reader, emit func(loc string, index bool) bool) (root string, err error) {
	br := bufio.NewReader(r)
	if b, err := br.Peek(2); err == nil && b[0] == 0x1f && b[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return "", err
		}
		defer zr.Close()
		r = &limited{r: zr, n: maxSitemapUncompressed}
	} else {
		r = br
	}
	d := xml.NewDecoder(&runLimit{r: r})
	root, err = decodeSitemap(d, emit)
	return root, err
}

func decodeSitemap(d *xml.Decoder, emit func(loc string, index bool) bool) (string, error) {
	var stack []string
	root := ""
	var loc strings.Builder
	inLoc := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			if root == "" {
				return "", errors.New("no <urlset> or <sitemapindex>")
			}
			return root, nil
		}
		if err != nil {
			return root, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := t.Name.Local
			if len(stack) == 0 {
				if name != "urlset" && name != "sitemapindex" {
					return "", fmt.Errorf("root element <%s> is neither <urlset> nor <sitemapindex>", name)
				}
				root = name
			}
			if name == "loc" && len(stack) == 2 && (stack[1] == "url" || stack[1] == "sitemap") {
				inLoc = true
				loc.Reset()
			}
			if len(stack) >= maxSitemapDepth {
				return root, fmt.Errorf("elements nested more than %d deep", maxSitemapDepth)
			}
			stack = append(stack, name)
		case xml.CharData:
			if inLoc && loc.Len() < maxLocLength {
				loc.Write(t)
			}
		case xml.EndElement:
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			if inLoc && t.Name.Local == "loc" {
				inLoc = false
				if s := strings.TrimSpace(loc.String()); s != "" {
					if !emit(s, root == "sitemapindex") {
						return root, nil
					}
				}
			}
		}
	}
}
