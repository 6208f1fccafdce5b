package test

import (
	"os"
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
	forbidden["app"] = nil
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

// TestLayering checks issue 33's layering, floor by floor:
//
//	cmd → app → proxy, audit, sitemap, indexnow → rewrite, watch, insight → rules → rules/*, bots, markdown → internal/*
//
// No package imports one on a floor above its own; a package may import
// one on its own floor (proxy → sitemap). Only the packages' own imports
// are read: a package's tests (proxy_test drives app's pipeline) and the
// module's test tree (test/...) stand above every floor.
func TestLayering(t *testing.T) {
	const mod = "github.com/headgate/headgate/"
	floor := func(pkg string) (int, bool) {
		top, _, _ := strings.Cut(pkg, "/")
		switch {
		case top == "cmd" || top == "test":
			return 0, true
		case top == "app":
			return 1, true
		case top == "proxy" || top == "audit" || top == "sitemap" || top == "indexnow":
			return 2, true
		case top == "rewrite",
			top == "watch",   // §20.2 change alerts
			top == "insight": // §20.1 what crawlers do
			return 3, true
		case pkg == "rules":
			return 4, true
		case top == "rules",
			// Engines that depend on nothing of headgate, whose config
			// rules reads and validates at load: rules may import them.
			top == "bots",     // §18 crawler identity
			top == "markdown": // §19 the Markdown converter
			return 5, true
		case top == "internal":
			return 6, true
		}
		return 0, false
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", mod+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(f[0], mod)
		from, ok := floor(pkg)
		if !ok {
			t.Errorf("%s is on no floor of the layering: place it in TestLayering", pkg)
			continue
		}
		seen++
		for _, imp := range f[1:] {
			dep, ours := strings.CutPrefix(imp, mod)
			if !ours {
				continue
			}
			to, ok := floor(dep)
			if ok && to < from {
				t.Errorf("%s imports %s, a floor above it", pkg, dep)
			}
		}
	}
	if seen < 10 {
		t.Fatalf("go list named %d packages: the test reads nothing", seen)
	}
}

// TestCaddyStaysOutOfTheModule checks SPEC §22: the Caddy module is a Go
// module of its own (caddy/go.mod), so that headgate's go.mod, and every
// build of headgate, carries none of Caddy's dependencies.
func TestCaddyStaysOutOfTheModule(t *testing.T) {
	gomod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(gomod), "caddyserver") {
		t.Errorf("headgate's go.mod names caddyserver: the Caddy module belongs in caddy/go.mod")
	}
	sub, err := os.ReadFile("../caddy/go.mod")
	if err != nil {
		t.Fatalf("the Caddy module's own go.mod: %v", err)
	}
	if !strings.Contains(string(sub), "module github.com/headgate/headgate/caddy\n") {
		t.Errorf("caddy/go.mod does not declare module github.com/headgate/headgate/caddy")
	}
	out, err := exec.Command("go", "list", "-deps", "github.com/headgate/headgate/...").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/caddyserver/") || strings.HasPrefix(dep, "github.com/headgate/headgate/caddy") {
			t.Errorf("a package of headgate's module depends on %s", dep)
		}
	}
}
