package insight

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docs/operations.md's "Referral sources" table is the documented list
// (SPEC §20.1): the same sources in the same order, and every host the
// code matches named in its row.
func TestReferralTableIsDocumented(t *testing.T) {
	src, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(src), "### Referral sources\n")
	if !ok {
		t.Fatal(`docs/operations.md: no "### Referral sources" section`)
	}
	sec, _, _ = strings.Cut(sec, "\n### ")
	row := regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\| (.*) \\|$")
	var names []string
	for _, m := range row.FindAllStringSubmatch(sec, -1) {
		names = append(names, m[1])
		i := slices.Index(sourceNames, m[1])
		if i < 0 {
			t.Errorf("docs: source %q is not in the code", m[1])
			continue
		}
		for _, d := range referrers[i].domains {
			if !strings.Contains(m[2], "`"+d+"`") {
				t.Errorf("docs: source %s does not list host %s", m[1], d)
			}
		}
	}
	if !slices.Equal(names, sourceNames) {
		t.Errorf("docs list %v\ncode has  %v", names, sourceNames)
	}
}
