package rules

import (
	"strings"
	"testing"
)

// dotSegmentValue reports whether a URL's path holds a segment that a
// WHATWG URL parser (a browser's, a crawler's) reads as "." or "..",
// encoded or not ("%2E%2E" too): what FuzzSegmentSpelling holds a kept
// upstream canonical to.
func dotSegmentValue(s string) bool {
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, "//"); i >= 0 {
		// Past the authority of an absolute URL.
		if j := strings.IndexByte(s[i+2:], '/'); j >= 0 {
			s = s[i+2+j:]
		} else {
			return false
		}
	}
	for seg := range strings.SplitSeq(s, "/") {
		switch strings.ToLower(seg) {
		case ".", "..", "%2e", ".%2e", "%2e.", "%2e%2e":
			return true
		}
	}
	return false
}

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
