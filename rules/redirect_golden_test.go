package rules

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestNormalizeGolden runs every combination of the [normalize] keys on a
// set of request addresses and compares the answers with
// testdata/redirect/normalize.golden (go test ./rules -run NormalizeGolden
// -update rewrites it; read it before committing). Each line is
// "request → answer"; every answer is one hop.
func TestNormalizeGolden(t *testing.T) {
	var b strings.Builder
	paths := []string{"/", "//", "/A", "/a/", "//A//b//", "/X.PDF", "/v1.2/Notes", "/%e6/Z/", "/a//b.html/", "/A?Q=%7e&x"}
	b.WriteString("# Path normalizations on https://notes.example (host and scheme already normal).\n")
	for _, ts := range []string{"keep", "strip", "add"} {
		for mask := 0; mask < 4; mask++ {
			lower, merge := mask&1 != 0, mask&2 != 0
			fmt.Fprintf(&b, "\n[normalize] lowercase=%v merge_slashes=%v trailing_slash=%s\n", lower, merge, ts)
			cfg := mustRedirConfig(t, fmt.Sprintf("[normalize]\nlowercase = %v\nmerge_slashes = %v\ntrailing_slash = %q\n", lower, merge, ts), nil)
			for _, p := range paths {
				fmt.Fprintf(&b, "  %-14s → %s\n", p, answer(cfg, RedirectRequest{Method: "GET", Host: "notes.example", HTTPS: true, Target: p}))
			}
		}
	}
	b.WriteString("\n# Host and scheme, with every path normalization on.\n")
	cfg := mustRedirConfig(t, allNormalize, nil)
	for _, host := range []string{"notes.example", "WWW.notes.example:8443", "old-notes.example", "other.example"} {
		for _, https := range []bool{false, true} {
			for _, p := range []string{"/", "/a", "//A/?q=1"} {
				req := RedirectRequest{Method: "GET", Host: host, HTTPS: https, Target: p}
				scheme := "http"
				if https {
					scheme = "https"
				}
				fmt.Fprintf(&b, "  %s://%s%s → %s\n", scheme, host, p, answer(cfg, req))
			}
		}
	}
	b.WriteString("\n# Other methods are never normalized.\n")
	for _, m := range []string{"POST", "PUT", "PATCH", "DELETE", "OPTIONS"} {
		fmt.Fprintf(&b, "  %s http://WWW.notes.example//A/ → %s\n", m, answer(cfg, RedirectRequest{Method: m, Host: "WWW.notes.example", Target: "//A/"}))
	}
	got := b.String()
	const golden = "testdata/redirect/normalize.golden"
	if *update {
		os.MkdirAll("testdata/redirect", 0o755)
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update, then read the file)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs:\n%s", golden, got)
	}
}
