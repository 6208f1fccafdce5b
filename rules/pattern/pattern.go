package pattern

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
)

// SegKind is the kind of a Segment.
// SegKind is the kind of a Segment.
type SegKind uint8

// Segment kinds, in rising specificity.
const (
	SegWild SegKind = iota
	SegParam
	SegRegex
	SegLiteral
)

// Segment is one segment of a pattern (or of a query pattern's value).
type Segment struct {
	Kind  SegKind
	Lit   string // decoded literal
	Name  string // parameter name
	Expr  string // constraint as written
	Re    *regexp.Regexp
	Spans bool // the constraint can match '/', so the value may span segments
}

// Pattern is a compiled path pattern (§2.2).
type Pattern struct {
	Raw    string
	segs   []Segment
	params []string
}

// Segments returns a copy of the pattern's segments, in path order.
func (p *Pattern) Segments() []Segment { return slices.Clone(p.segs) }

// Params lists the pattern's parameter names in order.
func (p *Pattern) Params() []string { return p.params }

// HasParams reports whether the pattern has parameters or a trailing *.
func (p *Pattern) HasParams() bool {
	for _, s := range p.segs {
		if s.Kind != SegLiteral {
			return true
		}
	}
	return false
}

// Parse compiles a path pattern. reserved, when not nil, names the
// parameter names the caller keeps for itself (rules: its template
// variables); a pattern that uses one is refused.
func Parse(s string, reserved func(name string) bool) (*Pattern, error) {
	if !strings.HasPrefix(s, "/") {
		return nil, errors.New("a pattern starts with /")
	}
	if i := IndexOutsideBraces(s, "?#"); i >= 0 {
		return nil, fmt.Errorf("holds %c: a pattern matches the path only, never the query or the fragment (a literal %c in a path is %s)",
			s[i], s[i], map[byte]string{'?': "%3F", '#': "%23"}[s[i]])
	}
	p := &Pattern{Raw: s}
	seen := map[string]bool{}
	rest := s[1:]
	for {
		seg, next, err := cutSegment(rest)
		if err != nil {
			return nil, err
		}
		sg, err := ParseSegment(seg)
		if err != nil {
			return nil, err
		}
		if sg.Kind == SegWild && next >= 0 {
			return nil, errors.New("* is only allowed as the last segment")
		}
		if sg.Name != "" {
			if seen[sg.Name] {
				return nil, fmt.Errorf("duplicate parameter name %q", sg.Name)
			}
			if reserved != nil && reserved(sg.Name) {
				return nil, fmt.Errorf("parameter name %q is reserved for a template variable", sg.Name)
			}
			seen[sg.Name] = true
			p.params = append(p.params, sg.Name)
		}
		p.segs = append(p.segs, sg)
		if next < 0 {
			break
		}
		rest = rest[next:]
	}
	return p, nil
}

// IndexOutsideBraces returns the index of the first byte of set in s that
// stands outside a {constraint} (where a regex may use it), or -1.
func IndexOutsideBraces(s, set string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && depth > 0:
			i++
		case c == '{':
			depth++
		case c == '}' && depth > 0:
			depth--
		case depth == 0 && strings.IndexByte(set, c) >= 0:
			return i
		}
	}
	return -1
}

// cutSegment returns the first segment of s and the offset of the next
// (-1 at the end). A '/' inside a {constraint} does not end a segment.
func cutSegment(s string) (string, int, error) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if depth > 0 {
				i++
			}
		case '{':
			depth++
		case '}':
			if depth > 0 {
				depth--
			}
		case '/':
			if depth == 0 {
				return s[:i], i + 1, nil
			}
		}
	}
	if depth > 0 {
		return "", 0, errors.New("unclosed { in a constraint")
	}
	return s, -1, nil
}

// ParseSegment compiles one segment of a pattern: *, :name, :name{regex}
// or a literal (percent-decoded).
func ParseSegment(seg string) (Segment, error) {
	switch {
	case seg == "*":
		return Segment{Kind: SegWild}, nil
	case strings.HasPrefix(seg, ":"):
		name, expr, constrained := strings.Cut(seg[1:], "{")
		if !validParamName(name) {
			return Segment{}, fmt.Errorf("bad parameter name %q (letters, digits and _)", name)
		}
		if !constrained {
			return Segment{Kind: SegParam, Name: name}, nil
		}
		if !strings.HasSuffix(expr, "}") {
			return Segment{}, fmt.Errorf("text after the constraint of :%s", name)
		}
		expr = expr[:len(expr)-1]
		// Compiled alone first, so that an error quotes the regex as written.
		if _, err := regexp.Compile(expr); err != nil {
			return Segment{}, fmt.Errorf("constraint of :%s: %v", name, err)
		}
		re, err := regexp.Compile(`^(?:` + expr + `)$`)
		if err != nil {
			return Segment{}, fmt.Errorf("constraint of :%s: %v", name, err)
		}
		return Segment{Kind: SegRegex, Name: name, Expr: expr, Re: re, Spans: canMatchSlash(expr)}, nil
	case strings.ContainsAny(seg, "*{}"):
		return Segment{}, fmt.Errorf("segment %q: * and {} belong to parameters (use :name{regex})", seg)
	}
	lit, err := url.PathUnescape(seg)
	if err != nil {
		return Segment{}, fmt.Errorf("segment %q: %v", seg, err)
	}
	return Segment{Kind: SegLiteral, Lit: lit}, nil
}

func validParamName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] == '_' || s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z' || i > 0 && s[i] >= '0' && s[i] <= '9') {
			return false
		}
	}
	return true
}

// canMatchSlash reports whether a regex has any way to consume a '/'.
func canMatchSlash(expr string) bool { return CanMatchRune(expr, '/') }

// CanMatchRune reports whether a regex has any way to consume c.
func CanMatchRune(expr string, c rune) bool {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return false
	}
	var walk func(*syntax.Regexp) bool
	walk = func(r *syntax.Regexp) bool {
		switch r.Op {
		case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
			return true
		case syntax.OpLiteral:
			for _, l := range r.Rune {
				if l == c {
					return true
				}
			}
		case syntax.OpCharClass:
			for i := 0; i+1 < len(r.Rune); i += 2 {
				if r.Rune[i] <= c && c <= r.Rune[i+1] {
					return true
				}
			}
		}
		for _, s := range r.Sub {
			if walk(s) {
				return true
			}
		}
		return false
	}
	return walk(re)
}

// FillReason says why Pattern.Fill refused a value.
type FillReason int

// The reasons of a FillError.
const (
	FillMissing    FillReason = iota + 1 // no value for the parameter
	FillEmpty                            // an empty value
	FillConstraint                       // a value the parameter's {regex} refuses
	FillSlash                            // a "/" in a value whose parameter does not span segments
	FillDotOrNUL                         // a "." or ".." segment, or a NUL
)

// FillError is the error of Pattern.Fill: callers branch on Reason.
type FillError struct {
	Param  string // the parameter's name; "*" for a trailing wildcard
	Value  string // the value refused ("" for FillMissing and FillEmpty)
	Reason FillReason
	expr   string // the constraint, for FillConstraint
}

func (e *FillError) Error() string {
	switch e.Reason {
	case FillMissing:
		return fmt.Sprintf("missing parameter %q", e.Param)
	case FillEmpty:
		return fmt.Sprintf("parameter %q is empty", e.Param)
	case FillConstraint:
		return fmt.Sprintf("parameter %q: %q does not match {%s}", e.Param, e.Value, e.expr)
	case FillSlash:
		return fmt.Sprintf("parameter %q: %q holds a /", e.Param, e.Value)
	default:
		return fmt.Sprintf("parameter %q: %q holds a dot segment or a NUL", e.Param, e.Value)
	}
}

// Fill builds the path of the pattern with the given parameter values, each
// percent-encoded; it fails when the pattern would not match the result: a
// missing value, a value the constraint refuses, "." or "..", or a "/" that
// the constraint does not allow. A trailing * is filled with nothing. The
// error is a *FillError.
func (p *Pattern) Fill(params map[string]string) (string, error) {
	var b strings.Builder
	for i, s := range p.segs {
		if s.Kind == SegWild {
			// The rest of the path comes from the parameter "*", written as
			// segments; without one, the pattern's own prefix.
			v := params["*"]
			if v == "" {
				if i == 0 {
					b.WriteByte('/')
				}
				break
			}
			for _, part := range strings.Split(strings.TrimPrefix(v, "/"), "/") {
				if part == "." || part == ".." || strings.IndexByte(part, 0) >= 0 {
					return "", &FillError{Param: "*", Value: v, Reason: FillDotOrNUL}
				}
				b.WriteByte('/')
				b.WriteString(EscapeSegment(part))
			}
			break
		}
		b.WriteByte('/')
		switch s.Kind {
		case SegLiteral:
			b.WriteString(EscapeSegment(s.Lit))
		case SegParam, SegRegex:
			v, ok := params[s.Name]
			if !ok {
				return "", &FillError{Param: s.Name, Reason: FillMissing}
			}
			if v == "" {
				return "", &FillError{Param: s.Name, Reason: FillEmpty}
			}
			// The order of the checks is the order of the reasons a
			// sitemap reports: an unsafe value first, then a constraint.
			if strings.IndexByte(v, 0) >= 0 {
				return "", &FillError{Param: s.Name, Value: v, Reason: FillDotOrNUL}
			}
			for _, part := range strings.Split(v, "/") {
				if part == "." || part == ".." {
					return "", &FillError{Param: s.Name, Value: v, Reason: FillDotOrNUL}
				}
			}
			if s.Re != nil && !s.Re.MatchString(v) {
				return "", &FillError{Param: s.Name, Value: v, Reason: FillConstraint, expr: s.Expr}
			}
			if strings.Contains(v, "/") && !s.Spans {
				return "", &FillError{Param: s.Name, Value: v, Reason: FillSlash}
			}
			if s.Spans {
				// A value that spans segments is written as segments.
				for j, part := range strings.Split(v, "/") {
					if j > 0 {
						b.WriteByte('/')
					}
					b.WriteString(EscapeSegment(part))
				}
			} else {
				b.WriteString(EscapeSegment(v))
			}
		}
	}
	return b.String(), nil
}
