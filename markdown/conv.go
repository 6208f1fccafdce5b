package markdown

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// What an open element does when it closes.
const (
	actNone = iota
	actBlock
	actHeading
	actQuote
	actList
	actItem
	actPre
	actCode
	actEmph // mark/dest: the delimiter
	actLink
	actTable
	actRow
	actCell
	actCaption
	actFlat // a table nested in a table: flattened
)

type elem struct {
	a       atom.Atom
	name    string // for elements without an atom
	act     uint8
	removed bool   // this subtree is left out
	cands   uint64 // content selectors this element is the first match of
	mark    int    // index into conv.opens of the lazy opener
	epoch   int    // conv.flushes when the opener was owed
	delim   string // the closer of an emphasis, or a link's destination
}

type container struct {
	quote  bool
	marker string // a list item's marker not yet written
	width  int    // a list item's continuation indent
}

type list struct {
	ordered bool
	n       int
}

type span struct{ start, end int }

type table struct {
	cells   [][2]int // spans of data, row after row
	rows    []int    // the index in cells of each row's first cell
	data    []byte
	cell    []byte
	inCell  bool
	caption []byte
	// owed are the openers of the emphasis and links around the table,
	// owed when it started (breakEmph), and epoch conv.flushes then: the
	// cells write their own; the text after the table owes them again.
	owed  []string
	epoch int
}

// conv is the state of one conversion.
type conv struct {
	c *Converter

	stack []elem
	over  int // start tags past MaxDepth not pushed
	skip  int // >0: inside a subtree left out past MaxDepth

	out     []byte
	base    int // len(out) before the page's Markdown
	cons    []container
	lists   []list
	sep     int  // separation owed before the next block text: 1 newline, 2 blank line
	lineBeg bool // the next text starts a line (after its prefix)
	started bool // out has text
	space   bool // a collapsed space is owed before the next text
	hardBr  bool // a <br> is owed before the next text of this block
	marker  string
	opens   []string // lazy openers ("[", "*", "**") owed before the next text
	// active is the emphasis a block closed around it (a </p>, a <table>
	// that ends the paragraph), not its own end tag: the tree builder
	// keeps such elements in its list of active formatting elements and
	// opens them again at the next text, so that a browser shows that
	// text emphasised too (reopen). Outside tables only; at most
	// maxActive, the oldest dropped.
	active  []elem
	flat    int  // >0: block structure reads as spaces (links, headings, cells)
	emph    int  // open emphasis elements
	flushes int  // times owed openers were written
	inList  bool // the owed separation follows a list that ended in an item

	removed int // open elements that are removed
	pre     int
	preBuf  []byte
	preLang string
	code    int
	codeBuf []byte

	tab     *table
	tabFlat int
	spare   *table // a finished table, kept for the next one's buffers

	cands []span
	found uint64
}

// convPool keeps the state of finished conversions, so that a conversion
// reuses the stacks and buffers of an earlier one instead of growing its
// own (BenchmarkConvert).
var convPool = sync.Pool{New: func() any { return new(conv) }}

// reset readies a pooled conv for a conversion by c into dst, keeping the
// capacity of its slices.
func (v *conv) reset(c *Converter, dst []byte) {
	*v = conv{
		c: c, out: dst, base: len(dst), lineBeg: true,
		stack: v.stack[:0], cons: v.cons[:0], lists: v.lists[:0], opens: v.opens[:0], active: v.active[:0],
		preBuf: v.preBuf[:0], codeBuf: v.codeBuf[:0], cands: v.cands[:0], spare: v.spare,
	}
	for range c.content {
		v.cands = append(v.cands, span{-1, -1})
	}
}

// release returns v to convPool, unless a hostile page made its buffers
// large.
func (v *conv) release() {
	v.out, v.c = nil, nil
	if cap(v.preBuf)+cap(v.codeBuf) > maxPooled || v.spare != nil && cap(v.spare.data) > maxPooled {
		return
	}
	convPool.Put(v)
}

// body appends the Markdown of the content element of in to dst.
func (c *Converter) body(dst, in []byte) ([]byte, string) {
	v := convPool.Get().(*conv)
	v.reset(c, dst)
	defer v.release()
	z := html.NewTokenizerFragment(bytes.NewReader(in), "")
	var attrs []attr
	var nameBuf [32]byte
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			v.closeTo(0)
			return v.pick()
		case html.TextToken:
			if v.skip == 0 && v.removed == 0 {
				v.text(z.Text())
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			// x/net/html copies every name and attribute it returns, so
			// the name comes from the raw bytes, and the attributes only
			// when an element or a selector can use them, from the raw
			// bytes too unless they need decoding (attrs.go).
			raw := z.Raw()
			name := tagName(nameBuf[:0], raw)
			attrs = attrs[:0]
			if a := atom.Lookup(name); v.wantAttrs(a, raw) {
				var ok bool
				if attrs, ok = rawAttrs(attrs, raw); ok {
					v.start(name, attrs, tt == html.SelfClosingTagToken)
					continue
				}
				for more := true; more; {
					var k, val []byte
					k, val, more = z.TagAttr()
					if k != nil {
						attrs = append(attrs, attr{k, val})
					}
				}
			}
			v.start(name, attrs, tt == html.SelfClosingTagToken)
		case html.EndTagToken:
			v.end(tagName(nameBuf[:0], z.Raw()))
		}
	}
}

// tagName reads the lower-case name of a start or end tag from its raw
// bytes ("<Name ...", "</name>") into buf (or a new slice when longer).
func tagName(buf, raw []byte) []byte {
	i := 1
	if i < len(raw) && raw[i] == '/' {
		i++
	}
	for ; i < len(raw); i++ {
		c := raw[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == '/' || c == '>' {
			break
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf = append(buf, c)
	}
	return buf
}

// wantAttrs reports whether a start tag's attributes can matter: the
// element reads one (href, src, alt, class, start), or its raw bytes hold
// the name of an attribute a selector still looks for.
func (v *conv) wantAttrs(a atom.Atom, raw []byte) bool {
	switch a {
	case atom.A, atom.Img, atom.Pre, atom.Code, atom.Ol:
		return true
	}
	if v.skip > 0 || v.removed > 0 {
		return false
	}
	for _, n := range v.c.removeAttrs {
		if containsFold(raw, n) {
			return true
		}
	}
	for i, names := range v.c.contentAttrs {
		if v.found&(1<<i) == 0 {
			for _, n := range names {
				if containsFold(raw, n) {
					return true
				}
			}
		}
	}
	return false
}

// containsFold reports whether s holds the lower-case ASCII word sub, in
// any case.
func containsFold(s []byte, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		j := 0
		for j < len(sub) && (s[i+j]|0x20) == sub[j] {
			j++
		}
		if j == len(sub) {
			return true
		}
	}
	return false
}

// pick returns the first content selector's output.
func (v *conv) pick() ([]byte, string) {
	v.finishBlock()
	for i, s := range v.c.content {
		sp := v.cands[i]
		if s.tag == "body" || s.tag == "html" {
			if len(s.parts) == 0 {
				sp = span{v.base, len(v.out)}
			}
		}
		if sp.start < 0 {
			continue
		}
		if sp.end < 0 {
			sp.end = len(v.out)
		}
		b := bytes.TrimLeft(v.out[sp.start:sp.end], "\n")
		b = bytes.TrimRight(b, " \n")
		if len(b) == 0 {
			continue
		}
		return append(v.out[:v.base], b...), s.text
	}
	return v.out[:v.base], ""
}

func isVoid(a atom.Atom) bool {
	switch a {
	case atom.Area, atom.Base, atom.Br, atom.Col, atom.Embed, atom.Hr, atom.Img, atom.Input,
		atom.Link, atom.Meta, atom.Source, atom.Track, atom.Wbr, atom.Param, atom.Keygen:
		return true
	}
	return false
}

// skipped elements hold no page text a reader sees.
func isSkipped(a atom.Atom) bool {
	switch a {
	case atom.Head, atom.Title, atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Svg,
		atom.Math, atom.Iframe, atom.Object, atom.Video, atom.Audio, atom.Canvas, atom.Textarea,
		atom.Select, atom.Noembed, atom.Noframes, atom.Xmp, atom.Plaintext:
		return true
	}
	return false
}

// closesP: a start tag that ends an open <p> (WHATWG "in body").
func closesP(a atom.Atom) bool {
	switch a {
	case atom.Address, atom.Article, atom.Aside, atom.Blockquote, atom.Center, atom.Details,
		atom.Dialog, atom.Dir, atom.Div, atom.Dl, atom.Fieldset, atom.Figcaption, atom.Figure,
		atom.Footer, atom.Header, atom.Hgroup, atom.Main, atom.Menu, atom.Nav, atom.Ol, atom.P,
		atom.Search, atom.Section, atom.Summary, atom.Ul, atom.H1, atom.H2, atom.H3, atom.H4,
		atom.H5, atom.H6, atom.Pre, atom.Listing, atom.Form, atom.Li, atom.Dd, atom.Dt,
		atom.Plaintext, atom.Table, atom.Hr, atom.Xmp:
		return true
	}
	return false
}

func isBlock(a atom.Atom) bool {
	switch a {
	case atom.Address, atom.Article, atom.Aside, atom.Center, atom.Details, atom.Dialog,
		atom.Div, atom.Dl, atom.Dt, atom.Dd, atom.Fieldset, atom.Figcaption, atom.Figure,
		atom.Footer, atom.Header, atom.Hgroup, atom.Main, atom.Nav, atom.P, atom.Search,
		atom.Section, atom.Summary, atom.Form, atom.Legend, atom.Body, atom.Html, atom.Option:
		return true
	}
	return false
}

// inHead: elements the tree builder keeps in an open <head>.
func inHead(a atom.Atom) bool {
	switch a {
	case atom.Base, atom.Basefont, atom.Bgsound, atom.Link, atom.Meta, atom.Title, atom.Noscript,
		atom.Noframes, atom.Style, atom.Script, atom.Template, atom.Head:
		return true
	}
	return false
}

func isHeading(a atom.Atom) bool {
	return a == atom.H1 || a == atom.H2 || a == atom.H3 || a == atom.H4 || a == atom.H5 || a == atom.H6
}

func (v *conv) start(name []byte, attrs []attr, selfClosing bool) {
	a := atom.Lookup(name)
	if v.skip > 0 {
		if !isVoid(a) && !selfClosing {
			v.skip++
		}
		return
	}
	if v.removed > 0 && (selfClosing || a == 0) {
		// Foreign content (inside a removed <svg>) closes itself; custom
		// elements never do, and are tracked by name below.
		if selfClosing {
			return
		}
	}
	v.impliedEnds(a)
	if a == atom.Html || a == atom.Body || a == atom.Head && len(v.stack) > 0 {
		return // the tree builder merges these into the open ones
	}

	removed := v.removed > 0 || isSkipped(a)
	if !removed {
		for i := range v.c.remove {
			if v.c.remove[i].match(name, attrs) {
				removed = true
				break
			}
		}
	}
	void := isVoid(a)
	if len(v.stack) >= v.c.maxDepth && !void {
		if removed && v.removed == 0 {
			v.skip = 1
		} else {
			v.over++
		}
		if a == atom.Br && !removed {
			v.br()
		}
		return
	}
	if removed {
		if !void {
			v.push(elem{a: a, name: nameOf(a, name), removed: true})
			v.removed++
		}
		return
	}
	if d := emphDelim(a); d != "" && v.tab == nil {
		// Emphasis of the same kind opened by hand stands for the one a
		// block closed (a browser would nest the two and keep the old one
		// open after the new one's end; the Markdown would say it twice,
		// or, reopened inside the new one, ** for an <i> in an <em>).
		v.forget(d)
	}

	// Content candidates: the first element each selector matches, where
	// its output is a contiguous run of v.out.
	var cands uint64
	if v.tab == nil && v.pre == 0 && v.code == 0 {
		for i := range v.c.content {
			if v.found&(1<<i) == 0 && v.c.content[i].match(name, attrs) {
				cands |= 1 << i
				v.found |= 1 << i
				v.cands[i].start = len(v.out)
			}
		}
	}

	e := elem{a: a, name: nameOf(a, name), cands: cands}
	v.open(&e, a, attrs)
	if void || selfClosing && (a == 0 || v.removed > 0) {
		for i := range v.c.content {
			if cands&(1<<i) != 0 {
				v.cands[i].end = len(v.out)
			}
		}
		return
	}
	v.push(e)
}

// open starts what element e (atom a) writes, by kind: the first case
// that applies wins, as in one switch.
func (v *conv) open(e *elem, a atom.Atom, attrs []attr) {
	switch {
	case v.pre > 0:
		if a == atom.Code && v.preLang == "" {
			v.preLang = lang(attrs)
		}
		if a == atom.Br {
			v.preBuf = append(v.preBuf, '\n')
		}
	case v.code > 0:
	case a == atom.Img:
		v.image(attrs)
	case a == atom.Br:
		v.br()
	case a == atom.Hr:
		v.block(2)
		if v.flat == 0 {
			v.leadBare()
			v.out = append(v.out, "* * *"...)
			v.block(2)
		}
	case a == atom.Wbr, a == atom.Input:
	case v.openTable(e, a, attrs), v.openBlock(e, a, attrs):
	default:
		v.openInline(e, a, attrs)
	}
}

// openTable starts a table, a row, a cell or a caption; false when a is
// none of them in this place.
func (v *conv) openTable(e *elem, a atom.Atom, attrs []attr) bool {
	switch {
	case v.tab != nil && (a == atom.Table || v.tabFlat > 0):
		// A table inside a table cell reads as the cell's text.
		v.space = true
		if a == atom.Table {
			v.tabFlat++
			e.act = actFlat
		}
	case a == atom.Table:
		v.block(2)
		v.tab = v.newTable()
		v.tab.owed, v.tab.epoch = append(v.tab.owed, v.opens...), v.flushes
		v.flat++
		e.act = actTable
	case v.tab != nil && a == atom.Tr:
		v.endCell()
		v.tab.rows = append(v.tab.rows, len(v.tab.cells))
		e.act = actRow
	case v.tab != nil && (a == atom.Td || a == atom.Th):
		v.endCell()
		if len(v.tab.rows) == 0 {
			v.tab.rows = append(v.tab.rows, 0)
		}
		v.tab.inCell = true
		v.tab.cell = v.tab.cell[:0]
		v.space, v.opens = false, v.opens[:0]
		e.act = actCell
	case v.tab != nil && a == atom.Caption:
		v.endCell()
		e.act = actCaption
	default:
		return false
	}
	return true
}

// openBlock starts a heading, a quote, a list, an item or a pre; false
// when a is none of them.
func (v *conv) openBlock(e *elem, a atom.Atom, attrs []attr) bool {
	switch {
	case isHeading(a):
		v.block(2)
		if v.flat == 0 {
			v.marker = "######"[:a.String()[1]-'0'] + " "
		}
		v.flat++
		e.act = actHeading
	case a == atom.Blockquote:
		v.block(2)
		if v.flat == 0 {
			v.cons = append(v.cons, container{quote: true})
			e.act = actQuote
		}
	case a == atom.Ul || a == atom.Ol || a == atom.Menu:
		v.block(2)
		if v.flat == 0 && len(v.cons) > 0 && !v.cons[len(v.cons)-1].quote {
			v.sep = 1 // a list nested in an item stays tight
		}
		l := list{ordered: a == atom.Ol, n: 1}
		if l.ordered {
			if s, ok := attrVal(attrs, "start"); ok {
				if n, err := strconv.Atoi(strings.TrimSpace(string(s))); err == nil && n >= 0 && n <= 999999999 {
					l.n = n
				}
			}
		}
		v.lists = append(v.lists, l)
		e.act = actList
	case a == atom.Li:
		if v.flat > 0 {
			v.space = true
			return true
		}
		v.block(1)
		if v.inList && v.sep == 2 {
			v.sep = 1 // the next item after a nested list: the list stays tight
		}
		marker := "- "
		if n := len(v.lists); n > 0 && v.lists[n-1].ordered {
			marker = strconv.Itoa(v.lists[n-1].n) + ". "
			v.lists[n-1].n++
		}
		v.cons = append(v.cons, container{marker: marker, width: len(marker)})
		e.act = actItem
	case a == atom.Pre || a == atom.Listing:
		v.block(2)
		v.pre++
		v.preBuf = v.preBuf[:0]
		v.preLang = lang(attrs)
		e.act = actPre
	default:
		return false
	}
	return true
}

// openInline starts code, emphasis, a link or another block; false when
// a is none of them.
func (v *conv) openInline(e *elem, a atom.Atom, attrs []attr) bool {
	switch {
	case a == atom.Code || a == atom.Kbd || a == atom.Samp || a == atom.Tt:
		v.code++
		v.codeBuf = v.codeBuf[:0]
		e.act = actCode
	case emphDelim(a) != "":
		e.act, e.delim = actEmph, emphDelim(a)
		v.openEmph(e)
	case a == atom.A:
		if href, ok := attrVal(attrs, "href"); ok {
			if dest := v.url(href); dest != "" {
				e.act, e.mark, e.epoch, e.delim = actLink, len(v.opens), v.flushes, dest
				v.opens = append(v.opens, "[")
				v.flat++
			}
		}
	case isBlock(a):
		v.block(2)
		e.act = actBlock
	default:
		return false
	}
	return true
}

func nameOf(a atom.Atom, name []byte) string {
	if a != 0 {
		return ""
	}
	return string(name)
}

func (v *conv) push(e elem) { v.stack = append(v.stack, e) }

func (v *conv) end(name []byte) {
	a := atom.Lookup(name)
	if v.skip > 0 {
		v.skip--
		return
	}
	if v.over > 0 {
		v.over--
		return
	}
	if a == atom.Br {
		if v.removed == 0 {
			v.br()
		}
		return
	}
	for i := len(v.stack) - 1; i >= 0; i-- {
		e := &v.stack[i]
		if e.a == a && (a != 0 || e.name == string(name)) {
			v.closeTo(i)
			return
		}
		if e.a == atom.Table && a != atom.Table && !e.removed {
			return // an end tag does not reach out of a table
		}
	}
	if d := emphDelim(a); d != "" {
		v.forget(d) // its end, after a block closed it: not opened again
	}
}

// closeTo pops the elements from the top of the stack down to and including
// index i, running their close actions. Emphasis above i, outside tables,
// is closed by what closes i, not by its own end: it goes to v.active, to
// be opened again at the next text.
func (v *conv) closeTo(i int) {
	mark := len(v.active)
	for len(v.stack) > i {
		e := v.stack[len(v.stack)-1]
		v.stack = v.stack[:len(v.stack)-1]
		if e.removed {
			v.removed--
			continue
		}
		if e.act == actEmph && len(v.stack) > i && v.tab == nil {
			// Popped innermost first: inserted at mark, so that the
			// outermost comes first.
			// (A close that writes text, a <pre> flattened in a heading,
			// may have opened v.active again meanwhile: mark is clamped.)
			mark = min(mark, len(v.active))
			if len(v.active) == maxActive {
				v.active = append(v.active[:0], v.active[1:]...) // the oldest goes
				mark = max(mark-1, 0)
			}
			v.active = slices.Insert(v.active, mark, e)
		}
		v.close(&e)
		if e.cands != 0 {
			for k := range v.cands {
				if e.cands&(1<<k) != 0 {
					v.cands[k].end = len(v.out)
				}
			}
		}
	}
}

func (v *conv) close(e *elem) {
	switch e.act {
	case actBlock:
		v.block(2)
	case actHeading:
		v.flat--
		v.marker = ""
		v.block(2)
	case actQuote:
		v.block(2)
		v.cons = v.cons[:len(v.cons)-1]
	case actList:
		v.lists = v.lists[:len(v.lists)-1]
		v.block(2)
		v.inList = len(v.cons) > 0 && !v.cons[len(v.cons)-1].quote
	case actItem:
		v.block(1)
		v.cons = v.cons[:len(v.cons)-1]
	case actPre:
		v.pre--
		if v.pre == 0 {
			v.emitPre()
		}
	case actCode:
		v.code--
		if v.code == 0 {
			v.emitCode()
		}
	case actEmph, actLink:
		if e.act == actLink {
			v.flat--
		} else {
			v.emph--
		}
		if v.flushes == e.epoch {
			v.opens = v.opens[:min(e.mark, len(v.opens))] // nothing was written inside
			return
		}
		if e.act == actEmph {
			v.raw(e.delim)
		} else {
			v.raw("](")
			v.raw(e.delim)
			v.raw(")")
		}
	case actFlat:
		v.tabFlat--
		v.space = true
	case actRow:
		v.endCell()
	case actCell:
		v.endCell()
	case actCaption:
		if v.tab != nil {
			v.tab.caption = append(v.tab.caption, ' ')
		}
	case actTable:
		v.endCell()
		v.flat--
		t := v.tab
		v.tab = nil
		v.oweAgain(t)
		v.emitTable(t)
	}
}
