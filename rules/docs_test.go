package rules

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const docsFile = "../docs/configuration.md"

// docSections splits the reference into sections by heading: heading line
// → the lines up to the next heading.
func docSections(t *testing.T) map[string][]string {
	src, err := os.ReadFile(docsFile)
	if os.IsNotExist(err) {
		t.Skipf("%s is absent: nothing to check", docsFile)
	}
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string][]string{}
	heading := ""
	for _, line := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(line, "#") {
			heading = line
			sections[heading] = nil
			continue
		}
		sections[heading] = append(sections[heading], line)
	}
	return sections
}

// section finds the section of a table: the one whose heading names it as
// `[table]` or `[[table]]`.
func section(sections map[string][]string, table string) ([]string, bool) {
	for h, lines := range sections {
		if strings.Contains(h, "`["+table+"]`") || strings.Contains(h, "`[["+table+"]]`") {
			return lines, true
		}
	}
	return nil, false
}

func hasRow(lines []string, first string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, "| "+first+" |") {
			return true
		}
	}
	return false
}

// Every key the loader accepts has a row in its table's section of
// docs/configuration.md.
func TestDocsKeys(t *testing.T) {
	sections := docSections(t)
	for table, keys := range newSchema().Tables {
		if table == "" {
			for _, k := range keys { // the top-level tables have sections
				if _, ok := section(sections, k); !ok {
					t.Errorf("%s has no section headed `[%s]` or `[[%s]]`", docsFile, k, k)
				}
			}
			continue
		}
		lines, ok := section(sections, table)
		if !ok {
			t.Errorf("%s has no section headed `[%s]` or `[[%s]]`", docsFile, table, table)
			continue
		}
		for _, k := range keys {
			if !hasRow(lines, "`"+k+"`") {
				t.Errorf("%s: section [%s] has no row for `%s`", docsFile, table, k)
			}
		}
	}
}

func TestDocsEnvAndCodes(t *testing.T) {
	sections := docSections(t)
	var all []string
	for _, lines := range sections {
		all = append(all, lines...)
	}
	for _, e := range newSchema().Env {
		found := false
		for _, l := range all {
			found = found || strings.HasPrefix(l, "| `"+e.Env+"` | `"+e.Key+"` |")
		}
		if !found {
			t.Errorf("%s has no row | `%s` | `%s` |", docsFile, e.Env, e.Key)
		}
	}

	// Each code has a row whose example is a line the loader really prints:
	// one of the golden reports, named headgate.toml.
	goldens, _ := filepath.Glob("testdata/bad/*.golden")
	real := map[string]bool{}
	name := regexp.MustCompile(`testdata/bad/[a-z0-9_]+\.toml`)
	for _, g := range goldens {
		src, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(src)), "\n") {
			line = name.ReplaceAllString(line, "headgate.toml")
			real[strings.ReplaceAll(line, "testdata/bad/", "")] = true
		}
	}
	example := regexp.MustCompile("`(HG[0-9]{3} headgate\\.toml[^`]*)` \\|$")
	for _, code := range codes {
		var row string
		for _, l := range all {
			if strings.HasPrefix(l, "| "+code+" |") {
				row = l
			}
		}
		if row == "" {
			t.Errorf("%s has no row for %s", docsFile, code)
			continue
		}
		m := example.FindStringSubmatch(row)
		if m == nil || !strings.HasPrefix(m[1], code+" ") {
			t.Errorf("the %s row has no example line `%s headgate.toml:…` at its end", code, code)
			continue
		}
		if !real[m[1]] {
			t.Errorf("the %s example is no line of testdata/bad/*.golden:\n%s", code, m[1])
		}
	}
}
