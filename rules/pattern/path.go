package pattern

import (
	"errors"
	"strings"

	"github.com/headgate/headgate/internal/pct"
)

// Param is one bound path parameter; Value is percent-decoded.
type Param struct {
	Name, Value string
}

// ErrBadPath is returned by CheckPath for a path headgate refuses (§2.2).
var ErrBadPath = errors.New("bad request path")

// CheckPath rejects what browsers never send and what could lead an
// upstream around a deny: a "." or ".." segment (also percent-encoded, and
// also where an encoded slash %2F or a backslash, raw or %5C, is what
// separates it, since some upstreams decode or honour those, and also with
// ";" path parameters after it, raw or %3B, as in "..;x": servlet
// containers cut those off and resolve what is left), a NUL (raw or %00),
// invalid percent-encoding, or a path that does not start with "/".
func CheckPath(path string) error {
	if !strings.HasPrefix(path, "/") {
		return ErrBadPath
	}
	for i := 0; i < len(path); i++ {
		switch path[i] {
		case 0:
			return ErrBadPath
		case '%':
			if i+2 >= len(path) || !pct.IsHex(path[i+1]) || !pct.IsHex(path[i+2]) {
				return ErrBadPath
			}
			if path[i+1] == '0' && path[i+2] == '0' {
				return ErrBadPath
			}
		}
	}
	// Walk the pieces between separators, counting the dots of each before
	// any ";": a piece whose name is one or two dots (raw or %2e) is a dot
	// segment.
	dots := 0       // dots in the current piece's name; -1 once it holds anything else
	params := false // past a ";" in the current piece
	for i := 1; i <= len(path); i++ {
		kind, width := pathSep, 1
		if i < len(path) {
			kind, width = pathToken(path, i)
		}
		switch kind {
		case pathSep:
			if dots == 1 || dots == 2 {
				return ErrBadPath
			}
			dots, params = 0, false
		case pathSemi:
			params = true
		case pathDot:
			if !params && dots >= 0 {
				dots++
			}
		default:
			if !params {
				dots = -1
			}
		}
		i += width - 1
	}
	return nil
}

// Kinds of path tokens for CheckPath and the deny forms.
const (
	pathOther = iota
	pathSep   // "/", "\", %2F, %5C
	pathSemi  // ";", %3B
	pathDot   // ".", %2E
)

// pathToken classifies the byte (or the percent-escape) at path[i] and
// returns its width. The escape must be valid.
func pathToken(path string, i int) (kind, width int) {
	switch c := path[i]; c {
	case '/', '\\':
		return pathSep, 1
	case ';':
		return pathSemi, 1
	case '.':
		return pathDot, 1
	case '%':
		if i+2 >= len(path) {
			return pathOther, 1
		}
		switch path[i+1] {
		case '2':
			switch path[i+2] {
			case 'f', 'F':
				return pathSep, 3
			case 'e', 'E':
				return pathDot, 3
			}
		case '3':
			if path[i+2] == 'b' || path[i+2] == 'B' {
				return pathSemi, 3
			}
		case '5':
			if path[i+2] == 'c' || path[i+2] == 'C' {
				return pathSep, 3
			}
		}
		return pathOther, 3
	}
	return pathOther, 1
}

// EscapePath returns a request path in a form safe to write into a URL:
// valid percent-escapes are kept (re-spelled by RespellPath: upper-case
// hex, unreserved characters decoded), every other byte outside the
// characters a path may hold is percent-encoded.
func EscapePath(p string) string { return RespellPath(pct.Encode(p, pct.Path, pct.Keep)) }
