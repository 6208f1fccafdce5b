package markdown

import (
	"bytes"
	"fmt"
	"strings"
)

// A selector is one compound CSS selector: an optional tag name followed by
// any number of #id, .class, [attr] and [attr=value] parts, all of which must
// hold. Combinators (descendant, child, ",") are not supported: the content
// element and the removed subtrees are found in one pass over the tokens,
// which knows an element's own attributes but not its ancestors'.
type selector struct {
	text  string
	tag   string
	parts []part
}

type part struct {
	kind  byte // '#', '.', '[' (attribute present), '=' (attribute equals)
	name  string
	value string
}

// parseSelector reads one compound selector, or says what is wrong with it.
func parseSelector(s string) (selector, error) {
	sel := selector{text: s}
	rest := strings.TrimSpace(s)
	if rest == "" {
		return sel, fmt.Errorf("%w: empty selector", ErrSelector)
	}
	n := identLen(rest)
	sel.tag, rest = strings.ToLower(rest[:n]), rest[n:]
	if sel.tag == "*" {
		sel.tag = ""
	}
	for rest != "" {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case '#', '.':
			n := identLen(rest)
			if n == 0 {
				return sel, fmt.Errorf("%w: %q: %c without a name", ErrSelector, s, c)
			}
			sel.parts = append(sel.parts, part{kind: c, name: rest[:n]})
			rest = rest[n:]
		case '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return sel, fmt.Errorf("%w: %q: [ without ]", ErrSelector, s)
			}
			body := rest[:end]
			rest = rest[end+1:]
			name, value, eq := strings.Cut(body, "=")
			name = strings.ToLower(strings.TrimSpace(name))
			if identLen(name) != len(name) || name == "" {
				return sel, fmt.Errorf("%w: %q: bad attribute name %q", ErrSelector, s, name)
			}
			p := part{kind: '[', name: name}
			if eq {
				value = strings.TrimSpace(value)
				if len(value) >= 2 && (value[0] == '"' || value[0] == '\'') && value[len(value)-1] == value[0] {
					value = value[1 : len(value)-1]
				}
				p.kind, p.value = '=', value
			}
			sel.parts = append(sel.parts, p)
		default:
			return sel, fmt.Errorf("%w: %q: unsupported %q (only tag, #id, .class, [attr], [attr=value])", ErrSelector, s, c)
		}
	}
	return sel, nil
}

func identLen(s string) int {
	for i, c := range []byte(s) {
		if !(c == '-' || c == '_' || c == '*' || c >= 0x80 || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return i
		}
	}
	return len(s)
}

type attr struct{ key, val []byte }

// match reports whether an element with this (lower-case) name and these
// attributes is selected. The attributes alias the tokenizer's buffer.
func (s *selector) match(name []byte, attrs []attr) bool {
	if s.tag != "" && string(name) != s.tag {
		return false
	}
	for _, p := range s.parts {
		ok := false
		for _, a := range attrs {
			switch p.kind {
			case '#':
				ok = string(a.key) == "id" && string(a.val) == p.name
			case '.':
				ok = string(a.key) == "class" && hasClass(a.val, p.name)
			case '[':
				ok = string(a.key) == p.name
			case '=':
				ok = string(a.key) == p.name && string(a.val) == p.value
			}
			if ok {
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

func hasClass(list []byte, class string) bool {
	for len(list) > 0 {
		i := bytes.IndexAny(list, " \t\n\f\r")
		if i < 0 {
			return string(list) == class
		}
		if string(list[:i]) == class {
			return true
		}
		list = list[i+1:]
	}
	return false
}

// attrNames lists the attributes s tests.
func (s *selector) attrNames() []string {
	var names []string
	for _, p := range s.parts {
		switch p.kind {
		case '#':
			names = append(names, "id")
		case '.':
			names = append(names, "class")
		default:
			names = append(names, p.name)
		}
	}
	return names
}
