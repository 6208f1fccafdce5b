package rules

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/headgate/headgate/rules/pattern"
)

// Template is a string value with {name} substitutions (§2.4). It is parsed
// once at load; rendering substitutes values, never markup.
type Template struct {
	Raw   string
	parts []tpart
	data  bool // names a table column, {TABLE.COLUMN} (datarender.go)
}

type tpart struct {
	lit     string
	v       string   // variable name; "" for a literal part
	filters []filter // applied left to right to the variable's value (§16.3)
	ext     bool     // filters or a page variable of §16.3: vars.extend has the value
}

// The variables every template may name besides the rule's parameters.
func isFixedVar(name string) bool {
	switch name {
	case "locale", "path", "base_url", "canonical", "title", "description", "page.title", "page.description":
		return true
	}
	return false
}

// parseTemplate splits s into literal and variable parts. "{{" and "}}" are
// literal braces.
func parseTemplate(s string) (*Template, error) {
	t := &Template{Raw: s}
	var lit strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '{' && i+1 < len(s) && s[i+1] == '{':
			lit.WriteByte('{')
			i++
		case c == '}' && i+1 < len(s) && s[i+1] == '}':
			lit.WriteByte('}')
			i++
		case c == '{':
			// A variable, with filters (rules/filter.go).
			name, filters, end, err := parseVarRef(s[i+1:])
			if err == errUnclosed {
				return nil, fmt.Errorf("unclosed { in template %q (write {{ for a literal brace)", s)
			}
			if err != nil {
				return nil, fmt.Errorf("%v in template %q", err, s)
			}
			if name == "" || strings.ContainsAny(name, "{ ") {
				return nil, fmt.Errorf("bad variable {%s} in template %q", name, s)
			}
			if lit.Len() > 0 {
				t.parts = append(t.parts, tpart{lit: lit.String()})
				lit.Reset()
			}
			t.parts = append(t.parts, tpart{v: name, filters: filters, ext: filters != nil || pageVarName(name)})
			i += end + 1
		case c == '}':
			return nil, fmt.Errorf("stray } in template %q (write }} for a literal brace)", s)
		default:
			lit.WriteByte(c)
		}
	}
	if lit.Len() > 0 || len(t.parts) == 0 {
		t.parts = append(t.parts, tpart{lit: lit.String()})
	}
	return t, nil
}

// Vars lists the variables the template names, in order.
func (t *Template) Vars() []string {
	var vs []string
	for _, p := range t.parts {
		if p.v != "" {
			vs = append(vs, p.v)
		}
	}
	return vs
}

// Static reports whether the template names no variable except base_url,
// so that its value is known when the config loads.
func (t *Template) Static() bool {
	for _, p := range t.parts {
		if p.v != "" && p.v != "base_url" {
			return false
		}
	}
	return true
}

// vars is what a template is rendered with.
type vars struct {
	// For {page.meta.NAME}, {page.canonical} and {page.lang}: copies of
	// the Page's, not a pointer to it, which would move it to the heap.
	pageMeta    []PageMeta
	pageCanon   string
	pageLang    string
	params      []Param
	locale      string
	path        string
	baseURL     string
	canonical   string
	title       string
	description string
	pageTitle   string
	pageDesc    string

	data *matchData // the rows the match looked up (datarender.go)
	mr   *Matched   // the rule being rendered, whose lookups data holds
}

// varKind says how a value is written into a URL.
type varKind uint8

const (
	textVar  varKind = iota // free text: percent-encoded whole, "/" included
	paramVar                // a path parameter: percent-encoded per segment
	urlVar                  // already a URL or an escaped path: written as it is
	tableVar                // a table cell: a URL as it is at the start of one, else per segment
)

func (v *vars) lookup(name string) (string, varKind) {
	switch name {
	case "locale":
		return v.locale, textVar
	case "path":
		return v.path, urlVar
	case "base_url":
		return v.baseURL, urlVar
	case "canonical":
		return v.canonical, urlVar
	case "title":
		return v.title, textVar
	case "description":
		return v.description, textVar
	case "page.title":
		return v.pageTitle, textVar
	case "page.description":
		return v.pageDesc, textVar
	}
	if v.data != nil {
		if val, ok := v.tableValue(name); ok {
			return val, tableVar
		}
	}
	for _, p := range v.params {
		if p.Name == name {
			return p.Value, paramVar
		}
	}
	return "", textVar
}

// render substitutes the variables. In a URL (forURL) values are
// percent-encoded so that none can change the URL's structure: in the path,
// a parameter per segment (a value that spans segments is written as
// segments) and any other text whole; after a "?" or "#", every value as a
// query component.
func (t *Template) render(v *vars, forURL bool) string {
	if len(t.parts) == 1 && t.parts[0].v == "" {
		return t.parts[0].lit
	}
	var b strings.Builder
	n := 0
	for i := range t.parts {
		p := &t.parts[i]
		n += len(p.lit)
		if p.v != "" {
			val, kind := v.lookup(p.v)
			if p.ext {
				val, _ = v.extend(p, val, kind)
			}
			n += len(val) + len(val)/4 // room for a few escapes
		}
	}
	b.Grow(n)
	inQuery := false
	for i := range t.parts {
		p := &t.parts[i]
		if p.v == "" {
			b.WriteString(p.lit)
			inQuery = inQuery || forURL && strings.ContainsAny(p.lit, "?#")
			continue
		}
		val, kind := v.lookup(p.v)
		if p.ext {
			val, kind = v.extend(p, val, kind) // rules/filter.go
		}
		if forURL {
			switch {
			case inQuery:
				val = url.QueryEscape(val)
			case kind == paramVar:
				val = escapeParam(val)
			case kind == tableVar && b.Len() == 0:
				// A cell that starts a URL is one (an image on a CDN);
				// the URL rules check it whole.
				inQuery = strings.ContainsAny(val, "?#")
			case kind == tableVar:
				val = escapeParam(val)
			case kind == textVar:
				val = url.PathEscape(val)
			default:
				inQuery = strings.ContainsAny(val, "?#")
			}
		}
		b.WriteString(val)
	}
	return b.String()
}

// escapeParam percent-encodes a parameter value for a URL path, segment by
// segment. A "." or ".." segment (only a spanning value from a path that
// CheckPath refuses can hold one) is written encoded, so that resolving the
// URL can not climb out of it.
func escapeParam(val string) string {
	if strings.IndexByte(val, '/') < 0 && val != "." && val != ".." {
		return pattern.EscapeSegment(val)
	}
	parts := strings.Split(val, "/")
	for i, p := range parts {
		if p == "." || p == ".." {
			parts[i] = strings.Repeat("%2E", len(p))
		} else {
			parts[i] = pattern.EscapeSegment(p)
		}
	}
	return strings.Join(parts, "/")
}
