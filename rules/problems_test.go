package rules

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSuiteProblems loads every broken config of testdata/problems and
// compares its whole report with want.golden. The suite_* configs are the
// broken configs the tests of rules, cmd/headgate, proxy and test load
// (collected from a run of go test ./..., each with the data files beside
// it and the HEADGATE_* overrides it ran with, in env.txt; from.txt says
// which test loaded it and what it reported there; the three whose data file
// is over 256 KiB are left to the tests that write them). The extra_*
// configs set
// every key of each table to a value of the wrong type, or to a bad value,
// so that every key's check is on record. With TestBadConfigs this is the
// proof that a change to the loader keeps every problem, its HG code, its
// line and its key.
func TestSuiteProblems(t *testing.T) {
	dirs, err := filepath.Glob("testdata/problems/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no configs in testdata/problems: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			file := filepath.ToSlash(filepath.Join(dir, "input.toml"))
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			env := map[string]string{}
			if b, err := os.ReadFile(filepath.Join(dir, "env.txt")); err == nil {
				for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
					k, v, _ := strings.Cut(line, "=")
					env[k] = v
				}
			}
			_, err = Parse(file, src, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
			var ps Problems
			if !errors.As(err, &ps) || len(ps) == 0 {
				t.Fatalf("Parse = %v, want Problems", err)
			}
			got := ps.Error() + "\n"
			golden := filepath.Join(dir, "want.golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./rules -run TestSuiteProblems -update, then read the file)", err)
			}
			if got != string(want) {
				t.Errorf("%s:\n got:\n%s\nwant:\n%s", golden, got, want)
			}
		})
	}
}
