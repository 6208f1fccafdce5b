package rules

import "github.com/headgate/headgate/rules/pattern"

// The path patterns and path spellings are rules/pattern's; these names
// keep rules' API for its callers.
type (
	Pattern    = pattern.Pattern
	Param      = pattern.Param
	FillError  = pattern.FillError
	FillReason = pattern.FillReason
)

// The reasons of a FillError.
const (
	FillMissing    = pattern.FillMissing
	FillEmpty      = pattern.FillEmpty
	FillConstraint = pattern.FillConstraint
	FillSlash      = pattern.FillSlash
	FillDotOrNUL   = pattern.FillDotOrNUL
)

// ErrBadPath is returned by CheckPath for a path headgate refuses (§2.2).
var ErrBadPath = pattern.ErrBadPath

// ParsePattern compiles a path pattern; a parameter may not take the name
// of a template variable.
func ParsePattern(s string) (*Pattern, error) { return pattern.Parse(s, isFixedVar) }

// CheckPath is pattern.CheckPath: see there.
func CheckPath(path string) error { return pattern.CheckPath(path) }

// EscapePath is pattern.EscapePath: see there.
func EscapePath(p string) string { return pattern.EscapePath(p) }

// RespellPath is pattern.RespellPath: see there.
func RespellPath(p string) string { return pattern.RespellPath(p) }
