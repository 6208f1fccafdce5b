package rules

import (
	"fmt"
	"net/url"
	"strings"
)

// Template is a string value with {name} substitutions (§2.4). It is parsed
// once at load; rendering substitutes values, never markup.
type Template struct {
	Raw   string
	parts []tpart
}

type tpart struct {
	lit string
	v   string // variable name; "" for a literal part
}

// The variables every template may name besides the rule's parameters.
var fixedVars = map[string]bool{
	"locale": true, "path": true, "base_url": true, "canonical": true,
	"title": true, "description": true, "page.title": true, "page.description": true,
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
			end := strings.IndexByte(s[i+1:], '}')
			if end < 0 {
				return nil, fmt.Errorf("unclosed { in template %q (write {{ for a literal brace)", s)
			}
			name := s[i+1 : i+1+end]
			if name == "" || strings.ContainsAny(name, "{ ") {
				return nil, fmt.Errorf("bad variable {%s} in template %q", name, s)
			}
			if lit.Len() > 0 {
				t.parts = append(t.parts, tpart{lit: lit.String()})
				lit.Reset()
			}
			t.parts = append(t.parts, tpart{v: name})
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
	params      []Param
	locale      string
	path        string
	baseURL     string
	canonical   string
	title       string
	description string
	pageTitle   string
	pageDesc    string
}

func (v *vars) lookup(name string) (string, bool) {
	switch name {
	case "locale":
		return v.locale, false
	case "path":
		return v.path, true
	case "base_url":
		return v.baseURL, true
	case "canonical":
		return v.canonical, true
	case "title":
		return v.title, false
	case "description":
		return v.description, false
	case "page.title":
		return v.pageTitle, false
	case "page.description":
		return v.pageDesc, false
	}
	for _, p := range v.params {
		if p.Name == name {
			return p.Value, false
		}
	}
	return "", false
}

// render substitutes the variables. In a URL context (forURL) a value that
// is not itself a URL is percent-encoded as a path segment.
func (t *Template) render(v *vars, forURL bool) string {
	if len(t.parts) == 1 && t.parts[0].v == "" {
		return t.parts[0].lit
	}
	var b strings.Builder
	for _, p := range t.parts {
		if p.v == "" {
			b.WriteString(p.lit)
			continue
		}
		val, isURL := v.lookup(p.v)
		if forURL && !isURL {
			val = url.PathEscape(val)
		}
		b.WriteString(val)
	}
	return b.String()
}
