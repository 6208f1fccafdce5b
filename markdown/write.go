package markdown

import (
	"bytes"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// block ends the current block: the next text starts a new one, separated
// by a newline (n=1) or a blank line (n=2). Inside a flattened context it is
// a space.
func (v *conv) block(n int) {
	if v.flat > 0 || v.tab != nil {
		v.space = true
		return
	}
	if v.emph > 0 {
		v.breakEmph()
	}
	if n > v.sep {
		v.sep = n
	}
	v.space, v.hardBr = false, false
	v.lineBeg = true
}

// breakEmph closes the emphasis open across a block boundary and owes it
// again to the next text, since a delimiter run cannot span blocks.
func (v *conv) breakEmph() {
	var open []int
	for i := len(v.stack) - 1; i >= 0; i-- {
		e := &v.stack[i]
		if e.act == actEmph && e.epoch < v.flushes {
			v.raw(e.delim)
			open = append(open, i)
		}
	}
	if len(open) == 0 {
		return
	}
	// Owe the written ones again, before the still-owed inner ones.
	k := len(open)
	owed := append(make([]string, 0, k+len(v.opens)), make([]string, k)...)
	owed = append(owed, v.opens...)
	for i := range v.stack {
		if e := &v.stack[i]; (e.act == actEmph || e.act == actLink) && e.epoch == v.flushes {
			e.mark += k
		}
	}
	for j := k - 1; j >= 0; j-- {
		e := &v.stack[open[j]]
		e.mark, e.epoch = k-1-j, v.flushes
		owed[e.mark] = e.delim
	}
	v.opens = owed
}

func (v *conv) finishBlock() {
	v.block(2)
	if v.tab != nil {
		t := v.tab
		v.tab = nil
		v.emitTable(t)
	}
}

func (v *conv) br() {
	switch {
	case v.pre > 0:
		v.preBuf = append(v.preBuf, '\n')
	case v.flat > 0 || v.tab != nil || v.code > 0:
		v.space = true
	case !v.lineBeg:
		v.hardBr = true
		v.space = false
	}
}

// newline ends the current line and writes the container prefixes of the
// next. A blank line keeps only the blockquote markers.
func (v *conv) newline(blank bool) {
	v.out = append(v.out, '\n')
	if blank {
		n := len(v.out)
		for _, c := range v.cons {
			if c.quote {
				v.out = append(v.out, "> "...)
			} else {
				v.out = append(v.out, "          "[:min(c.width, 10)]...)
			}
		}
		v.out = append(v.out[:n], bytes.TrimRight(v.out[n:], " ")...)
		v.out = append(v.out, '\n')
	}
	v.prefix()
}

// prefix writes the container prefixes of a line.
func (v *conv) prefix() {
	for i := range v.cons {
		c := &v.cons[i]
		switch {
		case c.quote:
			v.out = append(v.out, "> "...)
		case c.marker != "":
			v.out = append(v.out, c.marker...)
			c.marker = ""
		default:
			v.out = append(v.out, "          "[:min(c.width, 10)]...)
		}
	}
}

// lead writes what is owed before the next text: the block separation and
// line prefix, a heading marker, a hard break, a space, the lazy openers. It
// reports whether the text starts a line.
func (v *conv) lead() bool {
	if v.tab != nil {
		dst := &v.tab.caption
		if v.tab.inCell {
			dst = &v.tab.cell
		}
		if v.space && len(*dst) > 0 {
			*dst = append(*dst, ' ')
		}
		v.space = false
		for _, o := range v.opens {
			*dst = append(*dst, o...)
		}
		if len(v.opens) > 0 {
			v.flushes++
			v.opens = v.opens[:0]
		}
		return false
	}
	lineBeg := false
	if v.lineBeg {
		if v.started {
			v.newline(v.sep >= 2)
		} else {
			v.prefix()
		}
		v.started, v.lineBeg, v.sep, v.space, v.inList = true, false, 0, false, false
		if v.marker != "" {
			v.out = append(v.out, v.marker...)
			v.marker = ""
		} else {
			lineBeg = true
		}
	}
	if v.hardBr {
		v.out = append(v.out, '\\')
		v.newline(false)
		v.hardBr, v.space, lineBeg = false, false, true
	}
	if v.space {
		v.out = append(v.out, ' ')
		v.space = false
		lineBeg = false
	}
	for _, o := range v.opens {
		if o == "[" && len(v.out) > 0 && v.out[len(v.out)-1] == '!' && !escaped(v.out, len(v.out)-1) {
			v.out = append(v.out[:len(v.out)-1], '\\', '!')
		}
		v.out = append(v.out, o...)
		lineBeg = false
	}
	if len(v.opens) > 0 {
		v.flushes++
		v.opens = v.opens[:0]
	}
	return lineBeg
}

// leadBare is lead for a block written whole, syntax first (a fence, a
// table row, a rule): the owed openers stay owed, for the text after it.
// Written before it they would break the block's syntax ("**```" opens
// no fence, and the code's lines would be read as Markdown, raw HTML
// and all).
func (v *conv) leadBare() {
	owed := v.opens
	v.opens = nil
	v.lead()
	v.opens = owed
}

func escaped(b []byte, i int) bool {
	n := 0
	for i > 0 && b[i-1] == '\\' {
		n++
		i--
	}
	return n%2 == 1
}

// dst is where inline text goes.
func (v *conv) dst() *[]byte {
	if v.tab != nil {
		if v.tab.inCell {
			return &v.tab.cell
		}
		return &v.tab.caption
	}
	return &v.out
}

// raw writes Markdown syntax (a closer) where text goes.
func (v *conv) raw(s string) {
	d := v.dst()
	*d = append(*d, s...)
}

// emit writes s as one piece of text, escaped unless verbatim.
func (v *conv) emit(s string, escape bool) {
	lb := v.lead()
	d := v.dst()
	if escape {
		*d = escapeText(*d, []byte(s), lb, v.tab != nil)
	} else {
		*d = append(*d, s...)
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

// text takes the text of a text token (entities decoded; aliases the
// tokenizer's buffer).
func (v *conv) text(t []byte) {
	if v.pre > 0 {
		if len(v.preBuf) == 0 && len(t) > 0 && t[0] == '\n' {
			t = t[1:] // the tree builder drops a newline right after <pre>
		}
		v.preBuf = appendValid(v.preBuf, t)
		return
	}
	if v.code > 0 {
		for _, c := range t {
			if isSpace(c) {
				c = ' '
			}
			v.codeBuf = append(v.codeBuf, c)
		}
		return
	}
	for len(t) > 0 {
		if isSpace(t[0]) {
			v.space = true
			t = t[1:]
			continue
		}
		n := 0
		for n < len(t) && !isSpace(t[n]) {
			n++
		}
		if len(v.active) > 0 && v.tab == nil {
			v.reopen()
		}
		lb := v.lead()
		d := v.dst()
		*d = escapeText(*d, t[:n], lb, v.tab != nil)
		t = t[n:]
	}
}

func appendValid(dst, s []byte) []byte {
	for len(s) > 0 {
		r, n := utf8.DecodeRune(s)
		switch {
		case r == utf8.RuneError && n <= 1, r == 0:
			dst = append(dst, "\uFFFD"...)
		default:
			dst = append(dst, s[:n]...)
		}
		s = s[n:]
	}
	return dst
}

// escapeText appends one word of page text so that a CommonMark (+GFM
// tables) parser reads it back as that text: no character of it can open
// syntax, an entity or raw HTML.
func escapeText(dst, w []byte, lineBeg, inTable bool) []byte {
	if lineBeg && len(w) > 0 {
		switch w[0] {
		case '>', '-', '+', '=':
			dst = append(dst, '\\')
		default:
			// An ordered list marker: up to 9 digits and . or ).
			i := 0
			for i < len(w) && i < 10 && w[i] >= '0' && w[i] <= '9' {
				i++
			}
			if i > 0 && i < 10 && i < len(w) && (w[i] == '.' || w[i] == ')') {
				dst = appendValid(dst, w[:i])
				dst = append(dst, '\\')
				w = w[i:]
			}
		}
	}
	for i := 0; i < len(w); {
		c := w[i]
		switch c {
		case '\\', '`', '*', '_', '[', ']', '<', '#', '|', '~':
			dst = append(dst, '\\', c)
		case '&':
			if i+1 < len(w) && (w[i+1] == '#' || isAlnum(w[i+1])) {
				dst = append(dst, '\\')
			}
			dst = append(dst, c)
		case '!':
			if i+1 < len(w) && w[i+1] == '[' {
				dst = append(dst, '\\')
			}
			dst = append(dst, c)
		case 0:
			dst = append(dst, "\uFFFD"...)
		default:
			if c < utf8.RuneSelf {
				dst = append(dst, c)
				break
			}
			r, n := utf8.DecodeRune(w[i:])
			if r == utf8.RuneError && n <= 1 {
				dst = append(dst, "\uFFFD"...)
			} else {
				dst = append(dst, w[i:i+n]...)
			}
			i += n
			continue
		}
		i++
	}
	return dst
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func attrVal(attrs []attr, key string) ([]byte, bool) {
	for _, a := range attrs {
		if string(a.key) == key {
			return a.val, true
		}
	}
	return nil, false
}

// lang is the language of a code block: class="language-x" (or "lang-x").
func lang(attrs []attr) string {
	cl, _ := attrVal(attrs, "class")
	for _, f := range strings.Fields(string(cl)) {
		for _, p := range []string{"language-", "lang-"} {
			if l, ok := strings.CutPrefix(f, p); ok && l != "" {
				ok := true
				for _, c := range []byte(l) {
					if !(isAlnum(c) || c == '-' || c == '+' || c == '_' || c == '#' || c == '.') {
						ok = false
					}
				}
				if ok {
					return l
				}
			}
		}
	}
	return ""
}

// url resolves a link or image URL and says whether it may be written; it
// returns the destination escaped for a Markdown link, or "".
func (v *conv) url(raw []byte) string {
	raw = bytes.Trim(raw, " \t\n\f\r\x00")
	var s string
	if bytes.ContainsAny(raw, "\t\n\r\x00") {
		s = strings.Map(func(r rune) rune {
			if r == '\t' || r == '\n' || r == '\r' || r == 0 {
				return -1
			}
			return r
		}, string(raw))
	} else {
		s = string(raw) // the common URL: one copy, not two
	}
	if s == "" {
		return ""
	}
	if v.c.resolve != nil && v.c.base != nil {
		abs, ok := v.c.resolve(v.c.base, s)
		if !ok {
			return ""
		}
		return destEscape(abs)
	}
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	switch strings.ToLower(u.Scheme) {
	case "javascript", "data", "vbscript":
		return ""
	}
	if v.c.base != nil {
		u = v.c.base.ResolveReference(u)
	}
	if sc := strings.ToLower(u.Scheme); sc != "" && sc != "http" && sc != "https" {
		return ""
	}
	return destEscape(u.String())
}

// destEscape makes a URL a safe Markdown link destination.
func destEscape(s string) string {
	clean := utf8.ValidString(s)
	for i := 0; clean && i < len(s); i++ {
		c := s[i]
		clean = c > ' ' && c != '(' && c != ')' && c != '\\' && c != '<' && c != '>' && c != 0x7f && c != '`' && c != '|'
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case r == '(' || r == ')' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r <= ' ' || r == '<' || r == '>' || r == 0x7f || r == '`' || r == '|':
			b.WriteString("%")
			b.WriteString(strings.ToUpper(strconv.FormatInt(int64(r)|0x100, 16)[1:]))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func (v *conv) image(attrs []attr) {
	alt, _ := attrVal(attrs, "alt")
	src, _ := attrVal(attrs, "src")
	dest := ""
	if len(src) > 0 {
		dest = v.url(src)
	}
	if dest == "" {
		v.text(alt)
		return
	}
	v.lead()
	d := v.dst()
	*d = append(*d, "!["...)
	first := true
	for _, w := range bytes.Fields(alt) {
		if !first {
			*d = append(*d, ' ')
		}
		first = false
		*d = escapeText(*d, w, false, v.tab != nil)
	}
	*d = append(*d, "]("...)
	*d = append(*d, dest...)
	*d = append(*d, ')')
}

// emitCode writes an inline code span, its backtick fence longer than any
// run of backticks inside.
func (v *conv) emitCode() {
	code := bytes.TrimSpace(v.codeBuf)
	if len(code) == 0 {
		return
	}
	code = appendValid(nil, code)
	if v.tab != nil {
		code = bytes.ReplaceAll(code, []byte("|"), []byte(`\|`))
	}
	fence := strings.Repeat("`", longestRun(code, '`')+1)
	v.lead()
	d := v.dst()
	*d = append(*d, fence...)
	if code[0] == '`' || code[len(code)-1] == '`' {
		*d = append(*d, ' ')
		*d = append(*d, code...)
		*d = append(*d, ' ')
	} else {
		*d = append(*d, code...)
	}
	*d = append(*d, fence...)
}

func longestRun(b []byte, c byte) int {
	best, n := 0, 0
	for _, x := range b {
		if x == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

// emitPre writes a fenced code block, its fence longer than any backtick
// run inside, every line behind the container prefixes.
func (v *conv) emitPre() {
	body := bytes.TrimRight(v.preBuf, "\n")
	if len(bytes.TrimSpace(body)) == 0 {
		return
	}
	if v.tab != nil || v.flat > 0 {
		v.text(body)
		return
	}
	if bytes.IndexByte(body, '\r') >= 0 {
		body = bytes.ReplaceAll(body, []byte("\r\n"), []byte("\n"))
	}
	fence := strings.Repeat("`", max(3, longestRun(body, '`')+1))
	v.leadBare()
	v.out = append(v.out, fence...)
	v.out = append(v.out, v.preLang...)
	for line := range bytes.SplitSeq(body, []byte("\n")) {
		v.newline(false)
		v.out = append(v.out, line...)
	}
	v.newline(false)
	v.out = append(v.out, fence...)
	v.block(2)
}

// oweAgain owes, after table t, the openers of the emphasis and links
// open around it (t.owed): the text after the table is still inside them
// (<em>a<table>…</table>d</em> is "*a*", the table, "*d*"). Their epoch
// moves to now, so that what the cells wrote does not count as written
// inside them. emitTable writes the table bare (leadBare): they stay owed.
func (v *conv) oweAgain(t *table) {
	if len(t.owed) == 0 {
		return
	}
	v.opens = append(v.opens[:0], t.owed...)
	for i := range v.stack {
		if e := &v.stack[i]; (e.act == actEmph || e.act == actLink) && e.epoch == t.epoch && e.mark < len(t.owed) {
			e.epoch = v.flushes
		}
	}
}

// endCell closes the open cell of the open table.
func (v *conv) endCell() {
	t := v.tab
	if t == nil || !t.inCell {
		return
	}
	v.opens = v.opens[:0]
	if len(t.rows) == 0 {
		t.rows = append(t.rows, 0)
	}
	start := len(t.data)
	t.data = append(t.data, bytes.TrimSpace(t.cell)...)
	t.cells = append(t.cells, [2]int{start, len(t.data)})
	t.inCell = false
	v.space = false
}

// newTable returns an empty table, on the buffers of the last one.
func (v *conv) newTable() *table {
	t := v.spare
	if t == nil {
		return &table{}
	}
	v.spare = nil
	*t = table{cells: t.cells[:0], rows: t.rows[:0], data: t.data[:0], cell: t.cell[:0], caption: t.caption[:0], owed: t.owed[:0]}
	return t
}

// row returns the cells of row i of t.
func (t *table) row(i int) [][2]int {
	end := len(t.cells)
	if i+1 < len(t.rows) {
		end = t.rows[i+1]
	}
	return t.cells[t.rows[i]:end]
}

// emitTable writes a GFM table: the first row is the header.
func (v *conv) emitTable(t *table) {
	defer func() { v.spare = t }()
	cols := 0
	for i := range t.rows {
		cols = max(cols, len(t.row(i)))
	}
	if cap := bytes.TrimSpace(t.caption); len(cap) > 0 {
		v.block(2)
		v.leadBare()
		v.out = append(v.out, cap...)
	}
	v.block(2)
	if cols == 0 {
		return
	}
	first := true
	for ri := range t.rows {
		r := t.row(ri)
		if len(r) == 0 {
			continue
		}
		v.leadBare()
		v.out = append(v.out, '|')
		for i := range cols {
			v.out = append(v.out, ' ')
			if i < len(r) {
				v.out = append(v.out, t.data[r[i][0]:r[i][1]]...)
			}
			v.out = append(v.out, " |"...)
		}
		if first {
			v.newline(false)
			v.out = append(v.out, '|')
			for range cols {
				v.out = append(v.out, " --- |"...)
			}
			first = false
		}
		v.lineBeg = true
		v.sep = 1
	}
	v.block(2)
}
