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

// The drop is recorded with its reason, for the log and the metric.
func TestDotSegmentDropped(t *testing.T) {
	cfg := mustParse(t, `
[[rule]]
match = "/find"
query = { s = ":q" }
canonical = "/search/{q}/"
`)
	h := cfg.Resolve("/find?s=%2E.").Render(Page{})
	if h.Canonical != nil {
		t.Errorf("canonical %q written", *h.Canonical)
	}
	if len(h.Dropped) != 1 || h.Dropped[0].Reason != DropDotSegment || h.Dropped[0].Field != "canonical" {
		t.Errorf("dropped %+v, want one canonical with reason %q", h.Dropped, DropDotSegment)
	}
	if h := cfg.Resolve("/find?s=tea").Render(Page{}); str(h.Canonical) != "https://notes.example/search/tea/" {
		t.Errorf("canonical %q for s=tea", str(h.Canonical))
	}
}
