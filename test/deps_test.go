package test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependenciesPointOneWay checks SPEC §9: cmd → proxy, audit, sitemap →
// rewrite, rules; rewrite and rules know nothing of HTTP servers; the test
// helpers (internal/hgtest) are in no shipped package.
func TestDependenciesPointOneWay(t *testing.T) {
	const mod = "github.com/headgate/headgate/"
	forbidden := map[string][]string{
		"rules":   {"net/http", mod + "rewrite", mod + "proxy", mod + "sitemap", mod + "audit", mod + "cmd/"},
		"rewrite": {"net/http", mod + "proxy", mod + "sitemap", mod + "audit", mod + "cmd/"},
		"sitemap": {mod + "proxy", mod + "audit", mod + "cmd/"},
		"audit":   {mod + "proxy", mod + "cmd/"},
		"proxy":   {mod + "audit", mod + "cmd/"},
	}
	// internal/hgtest is for tests only: no package headgate ships uses it.
	forbidden["cmd/headgate"] = nil
	forbidden["internal/wire"] = nil
	for pkg := range forbidden {
		forbidden[pkg] = append(forbidden[pkg], mod+"internal/hgtest")
	}
	for pkg, bad := range forbidden {
		out, err := exec.Command("go", "list", "-deps", mod+pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", mod+pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, b := range bad {
				if dep == b || strings.HasSuffix(b, "/") && strings.HasPrefix(dep, b) {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}
