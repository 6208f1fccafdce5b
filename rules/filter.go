package rules

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/headgate/headgate/rules/schema"
)

// Template filters (SPEC §16.3): {page.title|before_last:" – "|default:"Notes"}.
// This file holds their parsing and application; template.go calls
// parseVarRef and vars.part.

type filterKind uint8

const (
	fBeforeLast filterKind = iota + 1
	fBefore
	fAfter
	fAfterLast
	fTrimSuffix
	fTrimPrefix
	fDefault
	fLower
	fTruncate
	fDate
)

// filter is one |name:arg of a variable.
type filter struct {
	kind filterKind
	arg  string
	n    int // truncate's length
}

// filterKinds maps names to kinds; takesString says the filter needs a
// quoted string argument, takesInt an integer.
var filterKinds = map[string]struct {
	kind                  filterKind
	takesString, takesInt bool
}{
	"before_last": {fBeforeLast, true, false},
	"before":      {fBefore, true, false},
	"after":       {fAfter, true, false},
	"after_last":  {fAfterLast, true, false},
	"trim_suffix": {fTrimSuffix, true, false},
	"trim_prefix": {fTrimPrefix, true, false},
	"default":     {fDefault, true, false},
	"lower":       {fLower, false, false},
	"truncate":    {fTruncate, false, true},
	"date":        {fDate, false, false},
}

// maxTruncate bounds |truncate:N.
const maxTruncate = 100000

var errUnclosed = errors.New("unclosed {")

// parseVarRef reads what follows a "{": a variable name and its filters up
// to the closing "}". It returns the name, the filters and the offset of
// the "}" in s. A filter's argument is a double-quoted string (\" and \\
// are a quote and a backslash; "}" and "|" may stand in it) or, for
// truncate, an integer.
func parseVarRef(s string) (string, []filter, int, error) {
	i := 0
	for i < len(s) && s[i] != '}' && s[i] != '|' {
		i++
	}
	if i == len(s) {
		return "", nil, 0, errUnclosed
	}
	name := s[:i]
	var fs []filter
	for s[i] == '|' {
		i++
		j := i
		for j < len(s) && (s[j] == '_' || 'a' <= s[j] && s[j] <= 'z') {
			j++
		}
		fname := s[i:j]
		k, ok := filterKinds[fname]
		if !ok {
			msg := fmt.Sprintf("unknown filter |%s on {%s}", fname, name)
			// In order: of two names as near, the same one every time.
			names := slices.Sorted(maps.Keys(filterKinds))
			if sg := schema.Suggest(fname, names); sg != "" && fname != "" {
				msg += " (did you mean |" + sg + "?)"
			}
			return "", nil, 0, errors.New(msg)
		}
		f := filter{kind: k.kind}
		i = j
		hasArg := i < len(s) && s[i] == ':'
		switch {
		case hasArg && k.takesString:
			arg, n, err := quotedArg(s[i+1:])
			if err != nil {
				return "", nil, 0, fmt.Errorf("filter |%s on {%s}: %v", fname, name, err)
			}
			if arg == "" && k.kind != fDefault {
				return "", nil, 0, fmt.Errorf("filter |%s on {%s}: the argument is empty", fname, name)
			}
			f.arg = arg
			i += 1 + n
		case hasArg && k.takesInt:
			j := i + 1
			for j < len(s) && '0' <= s[j] && s[j] <= '9' {
				j++
			}
			n, err := strconv.Atoi(s[i+1 : j])
			if err != nil || n < 1 || n > maxTruncate {
				return "", nil, 0, fmt.Errorf("filter |%s on {%s}: the argument must be a number of characters from 1 to %d", fname, name, maxTruncate)
			}
			f.n = n
			i = j
		case hasArg:
			return "", nil, 0, fmt.Errorf("filter |%s on {%s} takes no argument", fname, name)
		case k.takesString:
			return "", nil, 0, fmt.Errorf(`filter |%s on {%s} needs an argument (|%s:"text")`, fname, name, fname)
		case k.takesInt:
			return "", nil, 0, fmt.Errorf("filter |%s on {%s} needs an argument (|%s:160)", fname, name, fname)
		}
		fs = append(fs, f)
		if i >= len(s) {
			return "", nil, 0, errUnclosed
		}
		if s[i] != '|' && s[i] != '}' {
			return "", nil, 0, fmt.Errorf("unexpected %q after filter |%s on {%s}", s[i], fname, name)
		}
	}
	return name, fs, i, nil
}

// quotedArg reads a double-quoted argument at the start of s and returns
// it and the bytes it took.
func quotedArg(s string) (string, int, error) {
	if s == "" || s[0] != '"' {
		return "", 0, errors.New(`the argument must be a double-quoted string ("text")`)
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), i + 1, nil
		case '\\':
			if i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
				b.WriteByte(s[i+1])
				i++
				continue
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, errors.New("unclosed quote in the argument")
}

// extend gives a variable part that has filters or names a page variable
// of §16.3 its value: lookup's (val and kind) for the others, the page's
// for a page variable, then the filters applied. Kept out of lookup, so
// that lookup stays small enough to inline.
func (v *vars) extend(p *tpart, val string, kind varKind) (string, varKind) {
	if pageVarName(p.v) {
		val, kind = v.pageLookup(p.v)
	}
	if p.filters != nil {
		val = applyFilters(val, p.filters)
	}
	return val, kind
}

// namesVars reports whether a JSON-LD value is a template that names a
// variable: one that comes out empty is left out of its object.
func namesVars(node any) bool {
	t, ok := node.(*Template)
	return ok && (len(t.parts) > 1 || len(t.parts) == 1 && t.parts[0].v != "")
}

func applyFilters(s string, fs []filter) string {
	for _, f := range fs {
		switch f.kind {
		case fBeforeLast:
			if i := strings.LastIndex(s, f.arg); i >= 0 {
				s = strings.TrimRightFunc(s[:i], unicode.IsSpace)
			}
		case fBefore:
			if i := strings.Index(s, f.arg); i >= 0 {
				s = strings.TrimRightFunc(s[:i], unicode.IsSpace)
			}
		case fAfter:
			if i := strings.Index(s, f.arg); i >= 0 {
				s = strings.TrimLeftFunc(s[i+len(f.arg):], unicode.IsSpace)
			}
		case fAfterLast:
			if i := strings.LastIndex(s, f.arg); i >= 0 {
				s = strings.TrimLeftFunc(s[i+len(f.arg):], unicode.IsSpace)
			}
		case fTrimSuffix:
			s = strings.TrimSuffix(s, f.arg)
		case fTrimPrefix:
			s = strings.TrimPrefix(s, f.arg)
		case fDefault:
			if strings.TrimSpace(s) == "" {
				s = f.arg
			}
		case fLower:
			s = strings.ToLower(s)
		case fTruncate:
			s = truncate(s, f.n)
		case fDate:
			s = dateOnly(s)
		}
	}
	return s
}

// truncate shortens s to at most n characters, the "…" included, cut at a
// word boundary when there is one, with no space before the "…".
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n == 1 {
		return "…"
	}
	// The first n-1 characters, and whether a word goes on past them.
	end, count := 0, 0
	for end < len(s) && count < n-1 {
		_, w := utf8.DecodeRuneInString(s[end:])
		end += w
		count++
	}
	cut := s[:end]
	next, _ := utf8.DecodeRuneInString(s[end:])
	if unicode.IsLetter(next) || unicode.IsDigit(next) {
		// Inside a word: back to the last space, unless the first word is
		// longer than n.
		if i := strings.LastIndexFunc(cut, unicode.IsSpace); i > 0 {
			cut = cut[:i]
		}
	}
	cut = strings.TrimRightFunc(cut, func(r rune) bool { return unicode.IsSpace(r) || r == ',' || r == ';' || r == ':' })
	return strings.ToValidUTF8(cut, "") + "…"
}

// dateOnly reads an RFC 3339 date-time (converted to UTC first), a
// "YYYY-MM-DD HH:MM:SS" or "YYYY-MM-DDTHH:MM:SS" (read as UTC) or a
// "YYYY-MM-DD" value ("t" and "z" in either case) and writes it as
// YYYY-MM-DD; anything else comes out
// empty, so the field is not written: no date is better than a wrong one.
func dateOnly(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 64 {
		return ""
	}
	// RFC 3339 §5.6 allows "t" and "z" in lower case; Go's layouts match
	// them upper-case only. Nothing else in a date holds a letter.
	s = strings.ToUpper(s)
	for _, layout := range []string{time.RFC3339Nano, time.DateTime, "2006-01-02T15:04:05", time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			if y := t.UTC().Year(); y < 1 || y > 9999 {
				return ""
			}
			return t.UTC().Format(time.DateOnly)
		}
	}
	return ""
}
