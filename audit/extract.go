package audit

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/transform"
)

// Bounds of what extraction holds for one page, whatever its size.
const (
	maxPrefix     = 1 << 20 // bytes given to html.Parse: the head and the token that ends it
	maxToken      = 1 << 20 // one token (a text run, a script) of the rest
	maxLinks      = 10000   // distinct same-site links kept per page
	maxPageSkips  = 100     // distinct skipped links noted per page
	maxTextLength = 2048    // a title or description kept for comparison
)

// facts is what the checks need to know of one HTML page. Everything else
// of the document is dropped as soon as it has been read.
type facts struct {
	title     string
	hasTitle  bool
	descs     []string  // meta description contents, in the head
	robots    []string  // meta robots contents, in the head
	googlebot []string  // meta googlebot contents, in the head: Google reads them as robots metas of its own
	headCanon []string  // canonical hrefs as written, in the head
	bodyCanon []string  // canonical hrefs as written, outside the head
	headEnd   string    // what ended the head: "<div>", `text "Beta!"`…; "" when the document never left it
	social    []metaVal // og:url and twitter:url, anywhere in the document
	images    []metaVal // og:image (and :url, :secure_url), twitter:image
	alts      []alt     // hreflang alternates in the head
	jsonld    []ldBlock // every ld+json block
	links     []string  // keys of same-site links, distinct, without the page itself
	skips     []Skip    // links not followed
	notes     []string  // what was not read, and why
	base      *url.URL  // <base href>, else the page's URL
	page      *url.URL  // the page's URL
	pageKey   string    // its key
	linkSeen  map[string]bool
	positions bool // false when the head was too long to tell head from body
	linksCut  bool
	headCut   bool     // the head was not read to its end (a bound, a stall, a read error): what it lacks is not known
	titleEnd  bool     // the first <title>'s end tag was read: its text is whole
	text      textHash // the body's text, whitespace-normalized
	httpLinks []string // http:// links to an https origin of the site
}

// textHash hashes text as it streams past, whitespace runs made one space
// and the ends trimmed (FNV-1a, 64 bits): the page's body text in 8 bytes.
type textHash struct {
	h       uint64
	n       int64 // bytes hashed
	pending bool  // a blank was seen since the last byte hashed
}

const fnvOffset, fnvPrime = 14695981039346656037, 1099511628211

func (t *textHash) write(b []byte) {
	if t.n == 0 && t.h == 0 {
		t.h = fnvOffset
	}
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\f', '\r':
			t.pending = t.n > 0
			continue
		}
		if t.pending {
			t.h = (t.h ^ ' ') * fnvPrime
			t.n++
			t.pending = false
		}
		t.h = (t.h ^ uint64(c)) * fnvPrime
		t.n++
	}
}

// boundary marks the edge of a block element: a browser breaks the line
// there, so "<p>Body of /</p><a>en</a>" and "<p>Body of /en</p>" are two
// texts, not one.
func (t *textHash) boundary() { t.pending = t.n > 0 }

// blockElement reports the elements whose edges break the text's flow, as
// a browser renders them (HTML's block and table elements, list items,
// <br>).
func blockElement(a atom.Atom) bool {
	switch a {
	case atom.Address, atom.Article, atom.Aside, atom.Blockquote, atom.Br, atom.Dd, atom.Details, atom.Dialog, atom.Div, atom.Dl, atom.Dt,
		atom.Fieldset, atom.Figcaption, atom.Figure, atom.Footer, atom.Form, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6,
		atom.Header, atom.Hgroup, atom.Hr, atom.Li, atom.Main, atom.Nav, atom.Ol, atom.P, atom.Pre, atom.Section, atom.Summary,
		atom.Table, atom.Tbody, atom.Td, atom.Tfoot, atom.Th, atom.Thead, atom.Tr, atom.Ul, atom.Option, atom.Caption:
		return true
	}
	return false
}

type metaVal struct{ key, value string }

type alt struct{ lang, href string }

// ldBlock is one ld+json script: why it is invalid, or the page URLs its
// nodes name.
type ldBlock struct {
	err     string
	refs    []ldRef
	types   []string    // @type values of its nodes
	missing []ldMissing // required properties its nodes lack, the block alone
	nodes   []*ldNode   // its typed nodes, to weigh with the page's other blocks
	ids     map[string]map[string]bool
	note    string // a bound cut the walk short
}

type ldRef struct{ typ, prop, value string }

// limited reads at most n bytes and remembers whether it stopped there.
type limited struct {
	r   io.Reader
	n   int64
	hit bool
}

func (l *limited) Read(p []byte) (int, error) {
	if l.n <= 0 {
		l.hit = true
		return 0, io.EOF
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// extract reads an HTML page (at most maxBytes of it) and returns its facts.
//
// The head and the token that ends it go through html.Parse, so that an
// element the parser moves into the body counts as in the body; the rest of
// the document is tokenized and dropped token by token, so that memory is
// bounded by maxPrefix and maxToken whatever the page's size.
func extract(body io.Reader, contentType string, page *url.URL, s *site, maxBytes int64) *facts {
	f := &facts{page: page, base: page, linkSeen: map[string]bool{}, positions: true}
	f.pageKey, _ = s.keyOf(page)
	ex := &extractor{f: f, site: s}

	lim := &limited{r: body, n: maxBytes}
	br := bufio.NewReaderSize(lim, 4096)
	peek, _ := br.Peek(1024)
	var r io.Reader = br
	if e := htmlEncoding(peek, contentType); e != nil {
		r = transform.NewReader(br, e.NewDecoder())
	}

	z := html.NewTokenizer(r)
	z.SetMaxBuf(maxToken)
	var pre bytes.Buffer
	ended, eof := ex.prefix(z, &pre)
	if doc, err := html.Parse(&pre); err == nil {
		ex.walk(doc, false)
	}
	pre = bytes.Buffer{} // the tree and its bytes go now
	if !ended && !eof {
		f.positions = false
		f.notes = append(f.notes, fmt.Sprintf("the head is longer than %d KiB: head and body are not told apart after that", maxPrefix>>10))
	}
	if !eof {
		ex.rest(z)
	}
	switch err := z.Err(); {
	case err == nil || err == io.EOF:
	case errors.Is(err, html.ErrBufferExceeded):
		f.notes = append(f.notes, fmt.Sprintf("a token is longer than %d KiB: the page is not read past it", maxToken>>10))
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, net.ErrClosed) || errors.Is(err, context.Canceled):
		// The fetch's timeout closed the body under the reader.
		f.notes = append(f.notes, "reading stopped: the page did not finish within -timeout (checked as far as read)")
	default:
		f.notes = append(f.notes, "reading stopped: "+err.Error())
	}
	if !ended && (!eof || lim.hit || z.Err() != nil && z.Err() != io.EOF) {
		f.headCut = true
	}
	if lim.hit {
		var one [1]byte
		if n, _ := io.ReadFull(body, one[:]); n > 0 {
			f.notes = append(f.notes, fmt.Sprintf("page longer than %d bytes: cut there", maxBytes))
		}
	}
	f.linkSeen = nil
	return f
}

// htmlEncoding returns the decoder a browser would use, nil for UTF-8. A
// document that declares no charset is read as UTF-8 (not windows-1252).
func htmlEncoding(peek []byte, contentType string) encoding.Encoding {
	e, name, certain := charset.DetermineEncoding(peek, contentType)
	if e == nil || e == encoding.Nop || name == "utf-8" {
		return nil
	}
	if certain || bytes.Contains(bytes.ToLower(peek), []byte("charset")) {
		return e
	}
	return nil
}

type extractor struct {
	f            *facts
	site         *site
	titleStarted bool // the first <title>'s start tag was read
}

// headAllowed are the start tags that do not end the head (the "in head"
// insertion mode takes them, and "after head" puts them back in the head).
func headAllowed(a atom.Atom) bool {
	switch a {
	case atom.Html, atom.Head, atom.Base, atom.Basefont, atom.Bgsound, atom.Link, atom.Meta,
		atom.Noframes, atom.Script, atom.Style, atom.Template, atom.Title, atom.Noscript:
		return true
	}
	return false
}

// prefix copies tokens into pre up to and including the first one that
// makes the parser leave the head for the body. It errs late, never
// early: html.Parse of the prefix has the last word on every element in it.
// ended: such a token was found; eof: the document ended.
func (ex *extractor) prefix(z *html.Tokenizer, pre *bytes.Buffer) (ended, eof bool) {
	tmpl := 0
	rawNext := false
	for pre.Len() <= maxPrefix {
		tt := z.Next()
		if tt == html.ErrorToken {
			return false, true
		}
		pre.Write(z.Raw()) // before TagName/Text, which rewrite the buffer in place
		wasRaw := rawNext
		rawNext = false
		switch tt {
		case html.StartTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if a == atom.Template {
				tmpl++
				continue
			}
			if tmpl > 0 {
				continue
			}
			if headAllowed(a) {
				rawNext = a == atom.Title || a == atom.Script || a == atom.Style || a == atom.Noscript || a == atom.Noframes
				ex.titleStarted = ex.titleStarted || a == atom.Title
				continue
			}
			ex.f.headEnd = "<" + string(name) + ">"
			return true, false
		case html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if a == atom.Template && tmpl > 0 {
				tmpl--
				continue
			}
			if tmpl == 0 && (a == atom.Body || a == atom.Html || a == atom.Br) {
				ex.f.headEnd = "</" + string(name) + ">"
				return true, false
			}
			if a == atom.Title && ex.titleStarted {
				ex.f.titleEnd = true
			}
		case html.TextToken:
			if wasRaw || tmpl > 0 {
				continue
			}
			if t := bytes.Trim(z.Raw(), " \t\n\f\r"); len(t) > 0 {
				ex.f.headEnd = fmt.Sprintf("text %q", clip(string(t), 30))
				return true, false
			}
		}
	}
	return false, false
}

// walk visits the parsed prefix in document order.
func (ex *extractor) walk(n *html.Node, inHead bool) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode && !inHead && n.Type == html.ElementNode && !rawTextElement(n.DataAtom) {
			ex.f.text.write([]byte(c.Data))
		}
		if c.Type != html.ElementNode || c.Namespace != "" {
			continue // text, comments; svg and math hold no head tags or page links
		}
		block := !inHead && blockElement(c.DataAtom)
		if block {
			ex.f.text.boundary()
		}
		switch c.DataAtom {
		case atom.Template:
			continue // inert content
		case atom.Head:
			ex.walk(c, true)
			continue
		case atom.Title:
			ex.title(nodeText(c))
		case atom.Script:
			if isLD(attrOf(c.Attr, "type")) {
				ex.f.jsonld = append(ex.f.jsonld, parseLD(nodeText(c)))
			}
		default:
			ex.element(c.DataAtom, c.Attr, inHead, true)
		}
		ex.walk(c, inHead)
		if block {
			ex.f.text.boundary()
		}
	}
}

// rawTextElement reports whether an element's text is no page text (a
// script, a style, the title) for the body-text hash.
func rawTextElement(a atom.Atom) bool {
	switch a {
	case atom.Script, atom.Style, atom.Title, atom.Noscript, atom.Template, atom.Textarea,
		atom.Xmp, atom.Iframe, atom.Noembed, atom.Noframes, atom.Plaintext:
		return true
	}
	return false
}

func nodeText(n *html.Node) string {
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	return b.String()
}

func attrOf(attrs []html.Attribute, key string) string {
	for _, a := range attrs {
		if a.Namespace == "" && a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasAttr(attrs []html.Attribute, key string) bool {
	for _, a := range attrs {
		if a.Namespace == "" && a.Key == key {
			return true
		}
	}
	return false
}

func isLD(typ string) bool {
	return strings.EqualFold(strings.TrimSpace(typ), "application/ld+json")
}

func (ex *extractor) title(t string) {
	if ex.f.hasTitle {
		return
	}
	ex.f.hasTitle = true
	ex.f.title = clip(strings.Join(strings.Fields(t), " "), maxTextLength)
}

// element records what the checks need of one element. known is false
// when head and body can not be told apart.
func (ex *extractor) element(a atom.Atom, attrs []html.Attribute, inHead, known bool) {
	f := ex.f
	switch a {
	case atom.Base:
		if f.base == f.page && hasAttr(attrs, "href") {
			if u, kind := resolveRef(f.page, attrOf(attrs, "href")); kind == refOK {
				f.base = u
			}
		}
	case atom.A, atom.Area:
		if hasAttr(attrs, "href") {
			ex.link(attrOf(attrs, "href"))
		}
	case atom.Link:
		if !hasAttr(attrs, "href") || !known {
			return
		}
		href := attrOf(attrs, "href")
		rels := strings.Fields(strings.ToLower(attrOf(attrs, "rel")))
		for _, rel := range rels {
			switch rel {
			case "canonical":
				if inHead {
					f.headCanon = append(f.headCanon, href)
				} else {
					f.bodyCanon = append(f.bodyCanon, href)
				}
			case "alternate":
				if inHead && hasAttr(attrs, "hreflang") {
					f.alts = append(f.alts, alt{strings.TrimSpace(attrOf(attrs, "hreflang")), href})
				}
			}
		}
	case atom.Meta:
		key := strings.ToLower(strings.TrimSpace(attrOf(attrs, "property")))
		if key == "" {
			key = strings.ToLower(strings.TrimSpace(attrOf(attrs, "name")))
		}
		content := attrOf(attrs, "content")
		switch key {
		case "description":
			if inHead && known {
				f.descs = append(f.descs, clip(strings.Join(strings.Fields(content), " "), maxTextLength))
			}
		case "robots":
			if inHead && known {
				f.robots = append(f.robots, content)
			}
		case "googlebot":
			if inHead && known {
				f.googlebot = append(f.googlebot, content)
			}
		case "og:url", "twitter:url":
			f.social = append(f.social, metaVal{key, content})
		case "og:image", "og:image:url", "og:image:secure_url", "twitter:image", "twitter:image:src":
			f.images = append(f.images, metaVal{key, content})
		}
	}
}

// link records an <a href>: a same-site key to crawl, or why not.
func (ex *extractor) link(raw string) {
	f := ex.f
	u, kind := resolveRef(f.base, raw)
	switch kind {
	case refEmpty:
		return
	case refScheme:
		scheme, _, _ := strings.Cut(strings.TrimSpace(raw), ":")
		ex.skip(clip(strings.TrimSpace(raw), 120), strings.ToLower(scheme)+": link, not followed")
		return
	case refBad:
		ex.skip(clip(strings.TrimSpace(raw), 120), "link does not parse, not followed")
		return
	}
	key, ok := ex.site.keyOf(u)
	if !ok {
		if ex.site.httpsTwin(u) && len(f.httpLinks) < 10 && !f.linkSeen["\x01"+norm(u)] {
			f.linkSeen["\x01"+norm(u)] = true
			f.httpLinks = append(f.httpLinks, norm(u))
		}
		ex.skip(norm(u), "link to another site, not followed")
		return
	}
	if key == f.pageKey || f.linkSeen[key] {
		return
	}
	if len(f.links) >= maxLinks {
		if !f.linksCut {
			f.linksCut = true
			f.notes = append(f.notes, fmt.Sprintf("more than %d links: the rest are not followed", maxLinks))
		}
		return
	}
	f.linkSeen[key] = true
	f.links = append(f.links, key)
}

func (ex *extractor) skip(u, reason string) {
	f := ex.f
	if len(f.skips) >= maxPageSkips || f.linkSeen["\x00"+u] {
		return
	}
	f.linkSeen["\x00"+u] = true
	f.skips = append(f.skips, Skip{URL: u, Reason: reason})
}

// rest reads the document after the prefix, token by token: everything
// in it is in the body (or, when positions are unknown, in neither).
func (ex *extractor) rest(z *html.Tokenizer) {
	const (
		none = iota
		wantTitle
		wantLD
	)
	known := ex.f.positions
	tmpl, foreign, pending := 0, 0, none
	rawNext := false // the next text token is a raw-text element's
	var attrs []html.Attribute
	for {
		tt := z.Next()
		wasRaw := rawNext
		rawNext = false
		switch tt {
		case html.ErrorToken:
			return
		case html.TextToken:
			if !wasRaw && tmpl == 0 {
				ex.f.text.write(z.Text())
			}
			switch pending {
			case wantTitle:
				ex.title(string(z.Text()))
			case wantLD:
				ex.f.jsonld = append(ex.f.jsonld, parseLD(string(z.Text())))
			}
			pending = none
			continue
		case html.EndTagToken:
			if pending == wantLD {
				ex.f.jsonld = append(ex.f.jsonld, parseLD(""))
			}
			pending = none
			ea := rawAtom(z.Raw(), 2)
			if ea == atom.Title && ex.titleStarted {
				ex.f.titleEnd = true
			}
			if tmpl == 0 && foreign == 0 && blockElement(ea) {
				ex.f.text.boundary()
			}
			switch ea {
			case atom.Template:
				if tmpl > 0 {
					tmpl--
				}
			case atom.Svg, atom.Math:
				if foreign > 0 && tmpl == 0 {
					foreign--
				}
			}
			continue
		case html.StartTagToken, html.SelfClosingTagToken:
		default:
			pending = none
			continue
		}
		pending = none
		a := rawAtom(z.Raw(), 1)
		if a == atom.Template {
			tmpl++
		}
		if tmpl == 0 && foreign == 0 && blockElement(a) {
			ex.f.text.boundary()
		}
		rawNext = tt == html.StartTagToken && foreign == 0 && rawTextElement(a)
		if tmpl > 0 {
			continue
		}
		if foreign > 0 {
			// As the parser does: no raw text in foreign content (an svg <title>).
			z.NextIsNotRawText()
			if (a == atom.Svg || a == atom.Math) && tt == html.StartTagToken {
				foreign++
			}
			continue
		}
		switch a {
		case atom.Svg, atom.Math:
			if tt == html.StartTagToken {
				foreign++
			}
			continue
		case atom.A, atom.Area, atom.Link, atom.Meta, atom.Script, atom.Title, atom.Base:
		default:
			continue
		}
		attrs = attrs[:0]
		for more := true; more; {
			var k, v []byte
			k, v, more = z.TagAttr()
			if k != nil {
				attrs = append(attrs, html.Attribute{Key: string(k), Val: string(v)})
			}
		}
		switch a {
		case atom.Title:
			if !ex.f.hasTitle {
				pending = wantTitle
				ex.titleStarted = true
			}
		case atom.Script:
			if isLD(attrOf(attrs, "type")) {
				pending = wantLD
			}
		default:
			ex.element(a, attrs, false, known)
		}
	}
}

// rawAtom returns the atom of a tag's name, read from the token's raw
// bytes after its "<" or "</" (skip): TagName would copy the name for
// every tag of the body, and only a few names matter here. Names longer
// than any of those are 0.
func rawAtom(raw []byte, skip int) atom.Atom {
	var buf [16]byte
	n := 0
	for i := skip; i < len(raw); i++ {
		c := raw[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == '/' || c == '>' {
			break
		}
		if n == len(buf) {
			return 0
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[n] = c
		n++
	}
	return atom.Lookup(buf[:n])
}
