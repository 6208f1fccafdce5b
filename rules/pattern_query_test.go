package rules

import (
	"strings"
	"testing"
)

// A pattern matches the path only (SPEC §2.2): a ? or # outside a
// constraint is refused, where it used to be kept as a literal that no
// request path can hold (and the sitemap wrote as %3F).
func TestPatternRefusesQuery(t *testing.T) {
	for _, s := range []string{"/notes/?page=2", "/?s=x", "/a?", "/a#top", "/a/:id?x=1", "/a/:id{[0-9]+}?x"} {
		if _, err := ParsePattern(s); err == nil || !strings.Contains(err.Error(), "never the query") {
			t.Errorf("ParsePattern(%q) = %v, want the query refused", s, err)
		}
	}
	// Inside a constraint ? and # belong to the regex; %3F is a literal ?.
	for _, s := range []string{"/a/:id{[0-9]?}", "/a/:x{a#?b}", "/a%3F", `/a/:x{a\}?}`} {
		if _, err := ParsePattern(s); err != nil {
			t.Errorf("ParsePattern(%q) = %v, want nil", s, err)
		}
	}
}
