package rules

import "github.com/headgate/headgate/rules/schema"

// Problem and Problems are schema's: Load and Parse return a Problems list
// as their error, and callers name it from here.
type (
	Problem  = schema.Problem
	Problems = schema.Problems
)
