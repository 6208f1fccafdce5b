package rules

import "testing"

// A templated URL's path segment that a browser reads as "." or ".."
// (RFC 3986 and the WHATWG URL standard's spellings, any case) is found in
// the path only: not in the authority, the query or the fragment, and not
// in a segment that merely holds dots.
func TestDotSegmentValue(t *testing.T) {
	for s, want := range map[string]bool{
		"/search/../":                  true,
		"/search/./":                   true,
		"/search/%2E%2E/":              true,
		"/search/%2e./":                true,
		"/search/.%2E":                 true,
		"/search/%2e":                  true,
		"https://a.example/x/%2E%2E/y": true,
		"/search/.../":                 false,
		"/search/..a/":                 false,
		"/search/%2E%2E%2F/":           false,
		"/search/?q=..":                false,
		"/search/#..":                  false,
		"https://a.example/x":          false,
		"https://..":                   false,
		"/":                            false,
	} {
		if got := dotSegmentValue(s); got != want {
			t.Errorf("dotSegmentValue(%q) = %v, want %v", s, got, want)
		}
	}
}
