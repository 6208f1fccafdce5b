package markdown

import "golang.org/x/net/html/atom"

// What the converter does where the WHATWG tree builder would change the
// tree it is given: the elements a start tag ends (impliedEnds), and the
// emphasis a block closed around it, opened again at the next text as the
// builder reconstructs its active formatting elements (conv.active).

// find returns the index of the innermost open element a, looking no
// further down than a boundary element; -1 when there is none.
func (v *conv) find(a atom.Atom, bounds ...atom.Atom) int {
	for i := len(v.stack) - 1; i >= 0; i-- {
		e := v.stack[i].a
		if e == a {
			return i
		}
		for _, b := range bounds {
			if e == b {
				return -1
			}
		}
	}
	return -1
}

// impliedEnds closes the elements a start tag of a ends, approximating
// the WHATWG tree builder.
func (v *conv) impliedEnds(a atom.Atom) {
	switch {
	case a == atom.Li:
		if i := v.find(atom.Li, atom.Ul, atom.Ol, atom.Menu, atom.Table, atom.Td, atom.Th, atom.Blockquote); i >= 0 {
			v.closeTo(i)
		}
	case a == atom.Dt || a == atom.Dd:
		i := v.find(atom.Dd, atom.Dl, atom.Table, atom.Td, atom.Th)
		if j := v.find(atom.Dt, atom.Dl, atom.Table, atom.Td, atom.Th); j > i {
			i = j
		}
		if i >= 0 {
			v.closeTo(i)
		}
	case a == atom.Tr:
		if i := v.find(atom.Tr, atom.Table); i >= 0 {
			v.closeTo(i)
		}
	case a == atom.Td || a == atom.Th:
		i := v.find(atom.Td, atom.Tr, atom.Table)
		if j := v.find(atom.Th, atom.Tr, atom.Table); j > i {
			i = j
		}
		if i >= 0 {
			v.closeTo(i)
		}
	case a == atom.Thead || a == atom.Tbody || a == atom.Tfoot || a == atom.Caption:
		for _, x := range []atom.Atom{atom.Td, atom.Th, atom.Tr, atom.Caption} {
			if i := v.find(x, atom.Table); i >= 0 {
				v.closeTo(i)
			}
		}
	case a == atom.A:
		if i := v.find(atom.A, atom.Table, atom.Td, atom.Th); i >= 0 {
			v.closeTo(i)
		}
	case a == atom.Option || a == atom.Optgroup:
		if i := v.find(atom.Option, atom.Select, atom.Table); i >= 0 {
			v.closeTo(i)
		}
	}
	if closesP(a) {
		if i := v.find(atom.P, atom.Table, atom.Td, atom.Th, atom.Caption, atom.Button, atom.Html, atom.Object, atom.Template); i >= 0 {
			v.closeTo(i)
		}
	}
	if isHeading(a) && len(v.stack) > 0 && isHeading(v.stack[len(v.stack)-1].a) {
		v.closeTo(len(v.stack) - 1)
	}
	if v.removed > 0 && !inHead(a) {
		// A tag that cannot be in the head ends an unclosed one.
		if i := v.find(atom.Head); i >= 0 {
			v.closeTo(i)
		}
	}
}

// maxActive bounds conv.active (the tree builder's list has no bound but
// its three-of-a-kind rule; a page of unclosed <b>s would grow it).
const maxActive = 12

// emphDelim is the Markdown delimiter of emphasis element a ("" for
// other elements): openInline's and forget's.
func emphDelim(a atom.Atom) string {
	switch a {
	case atom.Em, atom.I, atom.Cite, atom.Dfn, atom.Var:
		return "*"
	case atom.Strong, atom.B:
		return "**"
	}
	return ""
}

// forget drops the latest emphasis written with delimiter d from v.active:
// Markdown tells an <i> from an <em> no more than a reader does.
func (v *conv) forget(d string) {
	for i := len(v.active) - 1; i >= 0; i-- {
		if v.active[i].delim == d {
			v.active = append(v.active[:i], v.active[i+1:]...)
			return
		}
	}
}

// reopen opens the emphasis in v.active again, outermost first, around
// the text about to be written (the tree builder's reconstruction of the
// active formatting elements).
func (v *conv) reopen() {
	for _, e := range v.active {
		if len(v.stack) >= v.c.maxDepth {
			break // as a start tag past MaxDepth: not pushed
		}
		e.cands = 0
		v.openEmph(&e)
		v.push(e)
	}
	v.active = v.active[:0]
}

// openEmph owes emphasis e's opener (e.delim) before the next text.
func (v *conv) openEmph(e *elem) {
	e.mark, e.epoch = len(v.opens), v.flushes
	v.opens = append(v.opens, e.delim)
	v.emph++
}
