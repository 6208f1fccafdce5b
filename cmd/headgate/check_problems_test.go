package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// headgate check reports every problem of every broken config the suite
// has, exactly as the loader's golden report has it (rules/testdata/bad
// and rules/testdata/problems, whose want.golden was written before the
// config rework and read), then the count, and exits 1.
func TestCheckReportsEveryProblem(t *testing.T) {
	const root = "../../rules/"
	bad, _ := filepath.Glob(root + "testdata/bad/*.toml")
	dirs, _ := filepath.Glob(root + "testdata/problems/*")
	if len(bad) == 0 || len(dirs) == 0 {
		t.Fatal("no broken configs under rules/testdata")
	}
	type config struct{ file, golden, env string }
	var all []config
	for _, f := range bad {
		all = append(all, config{f, strings.TrimSuffix(f, ".toml") + ".golden", ""})
	}
	for _, d := range dirs {
		all = append(all, config{filepath.Join(d, "input.toml"), filepath.Join(d, "want.golden"), filepath.Join(d, "env.txt")})
	}
	for _, e := range []string{"HEADGATE_LISTEN", "HEADGATE_ADMIN_LISTEN", "HEADGATE_UPSTREAM", "HEADGATE_BASE_URL"} {
		t.Setenv(e, "") // an empty override is none
	}
	for _, c := range all {
		t.Run(strings.TrimPrefix(c.file, root+"testdata/"), func(t *testing.T) {
			if b, err := os.ReadFile(c.env); err == nil {
				for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
					k, v, _ := strings.Cut(line, "=")
					t.Setenv(k, v)
				}
			}
			want, err := os.ReadFile(c.golden)
			if err != nil {
				t.Fatal(err)
			}
			code, out, errs := runCmd(t, "", "check", "-config", c.file)
			if code != exitFix || out != "" {
				t.Errorf("exit %d, stdout %q; want %d and nothing", code, out, exitFix)
			}
			n := strings.Count(string(want), "\n")
			wantOut := string(want) + fmt.Sprintf("%s: %d problem(s)\n", strings.TrimPrefix(c.file, root), n)
			if got := strings.ReplaceAll(errs, root, ""); got != wantOut {
				t.Errorf("check -config %s:\n got:\n%s\nwant:\n%s", c.file, got, wantOut)
			}
		})
	}
}
