package rules

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"unicode/utf8"
)

// jsonObject is a JSON-LD object compiled at load: keys sorted once, so
// that rendering is one pass with no maps and no reflection.
type jsonObject struct {
	keys []string
	vals []any
}

// compileJSON turns a JSON-LD tree into jsonObject / []any / *Template /
// scalar form.
func compileJSON(node any) any {
	switch n := node.(type) {
	case map[string]any:
		o := &jsonObject{keys: make([]string, 0, len(n))}
		for k := range n {
			o.keys = append(o.keys, k)
		}
		sort.Strings(o.keys)
		for _, k := range o.keys {
			o.vals = append(o.vals, compileJSON(n[k]))
		}
		return o
	case []any:
		out := make([]any, len(n))
		for i, x := range n {
			out[i] = compileJSON(x)
		}
		return out
	}
	return node
}

// appendJSON renders and serializes a compiled tree as encoding/json would
// with HTML escaping: < > & U+2028 U+2029 escaped, invalid UTF-8 replaced,
// keys sorted. NaN and infinities, which JSON can not hold, become null.
func appendJSONValue(b []byte, node any, v *vars) []byte {
	switch n := node.(type) {
	case *jsonObject:
		b = append(b, '{')
		first := true
		for i, k := range n.keys {
			mark := len(b)
			if !first {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			at := len(b)
			b = appendJSONValue(b, n.vals[i], v)
			if len(b)-at == 2 && (b[at] == '"' && namesVars(n.vals[i]) || b[at] == '[' && elemNamesVars(n.vals[i])) {
				// A property whose template comes out empty is left out
				// (§17), and so is an array all of whose templates do:
				// taken back, not rendered twice.
				b = b[:mark]
				continue
			}
			first = false
		}
		return append(b, '}')
	case []any:
		b = append(b, '[')
		first := true
		for _, x := range n {
			mark := len(b)
			if !first {
				b = append(b, ',')
			}
			at := len(b)
			b = appendJSONValue(b, x, v)
			if len(b)-at == 2 && b[at] == '"' && namesVars(x) {
				b = b[:mark] // an element whose template comes out empty: left out
				continue
			}
			first = false
		}
		return append(b, ']')
	case *Template:
		// Each part escaped straight into b: a template's value is the
		// concatenation of its parts, and so is its escaped form, as long
		// as no part is invalid UTF-8 that the next part might complete.
		for i := range n.parts {
			p := &n.parts[i]
			if p.v == "" {
				continue
			}
			val, kind := v.lookup(p.v)
			if p.ext {
				val, _ = v.extend(p, val, kind)
			}
			if !utf8.ValidString(val) {
				return appendJSONString(b, n.render(v, false))
			}
		}
		b = append(b, '"')
		for i := range n.parts {
			p := &n.parts[i]
			if p.v == "" {
				b = appendJSONChars(b, p.lit)
			} else {
				val, kind := v.lookup(p.v)
				if p.ext {
					val, _ = v.extend(p, val, kind)
				}
				b = appendJSONChars(b, val)
			}
		}
		return append(b, '"')
	case string:
		return appendJSONString(b, n)
	case bool:
		return strconv.AppendBool(b, n)
	case int64:
		return strconv.AppendInt(b, n, 10)
	case int:
		return strconv.AppendInt(b, int64(n), 10)
	case float64:
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return append(b, "null"...)
		}
		if n == math.Trunc(n) && math.Abs(n) < 1e21 {
			return strconv.AppendFloat(b, n, 'f', -1, 64)
		}
		return strconv.AppendFloat(b, n, 'g', -1, 64)
	case json.Number:
		return append(b, n...)
	case nil:
		return append(b, "null"...)
	}
	// Anything else (a TOML date that was not converted) as its string form.
	bs, err := json.Marshal(node)
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, bs...)
}

func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	return append(appendJSONChars(b, s), '"')
}

// jsonPlain marks the ASCII bytes a JSON string holds as they are.
var jsonPlain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = true
	}
	t['"'], t['\\'], t['<'], t['>'], t['&'] = false, false, false, false, false
	return t
}()

// appendJSONChars appends s escaped for the inside of a JSON string.
func appendJSONChars(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonPlain[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(b, s[start:]...)
}

// elemNamesVars reports whether node is an array some element of which is
// a template that names a variable: one that came out empty ([]) had only
// such elements, all empty.
func elemNamesVars(node any) bool {
	a, ok := node.([]any)
	if !ok {
		return false
	}
	for _, x := range a {
		if namesVars(x) {
			return true
		}
	}
	return false
}
