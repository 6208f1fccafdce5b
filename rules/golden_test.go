package rules

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/bad/*.golden from the loader's output")

// codes is every HG code of SPEC §3.1; each has a bad config in
// testdata/bad whose name starts with it.
var codes = []string{
	"HG100", "HG101", "HG102", "HG103", "HG110", "HG111", "HG112", "HG113", "HG114",
	"HG120", "HG121", "HG130", "HG140", "HG141", "HG150", "HG160", "HG170", "HG180", "HG181", "HG182",
	"HG175", "HG176", "HG177",
	"HG190", "HG191", "HG192",
	"HG200", "HG201", "HG202", "HG203", "HG204", "HG205", "HG206", "HG207", "HG208", "HG209",
	"HG210", "HG211", // experiment.go
	"HG220", "HG221", "HG222", "HG223", "HG224", "HG225", // watch_load.go
}

// TestBadConfigs loads each testdata/bad/NAME.toml and compares the report
// with NAME.golden: one "CODE file:line: key: message" line per problem.
func TestBadConfigs(t *testing.T) {
	files, err := filepath.Glob("testdata/bad/*.toml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bad configs: %v", err)
	}
	covered := map[string]bool{}
	lineRE := regexp.MustCompile(`^(HG[0-9]{3}) ([^ :]+)(:[0-9]+)?: `)
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".toml")
		code := strings.ToUpper(name[:5])
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Parse(filepath.ToSlash(file), src, nil)
			var ps Problems
			if !errors.As(err, &ps) || len(ps) == 0 {
				t.Fatalf("Parse = %v, want Problems", err)
			}
			got := ps.Error() + "\n"
			golden := strings.TrimSuffix(file, ".toml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./rules -run TestBadConfigs -update, then read the file)", err)
			}
			if got != string(want) {
				t.Errorf("%s:\n got:\n%s\nwant:\n%s", golden, got, want)
			}
			for _, line := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
				m := lineRE.FindStringSubmatch(line)
				if m == nil {
					t.Errorf("line %q is not CODE file:line: key: message", line)
					continue
				}
				if m[1] != code {
					t.Errorf("%s reports %s, want only %s", name, line, code)
				}
			}
			covered[code] = true
		})
	}
	for _, c := range codes {
		if !covered[c] {
			t.Errorf("no testdata/bad/%s_*.toml proves %s", strings.ToLower(c), c)
		}
	}
}

// All problems are reported in one run, in line order, each at its key.
func TestAllProblems(t *testing.T) {
	src := `[server]
upstream = "gopher://x"
listen = "nope"
shutdown_timeout = "-1s"

[site]
base_url = "https://notes.example/#top"
locales = ["de_DE"]

[[rule]]
match = "/notes/:id{[0-9]+"
open_graf = { title = "x" }

[[rule]]
match = "/a"
title = "{nope}"
canonical = "data:text/html,x"
headers = { set-cookie = "a=b" }
sitemap = true
deny = true
`
	_, err := Parse("all.toml", []byte(src), nil)
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("Parse = %v, want Problems", err)
	}
	var got []string
	for _, p := range ps {
		got = append(got, p.Code+" "+p.Key+" "+itoa(p.Line))
	}
	want := []string{
		"HG102 server.upstream 2",
		"HG103 server.listen 3",
		"HG141 server.shutdown_timeout 4",
		"HG101 site.base_url 7",
		"HG170 site.locales[0] 8",
		"HG120 rule[0].match 11",
		"HG140 rule[0].open_graf 12",
		"HG121 rule[1].title 16",
		"HG150 rule[1].canonical 17",
		"HG130 rule[1].headers.set-cookie 18",
		"HG113 rule[1].sitemap 19",
	}
	sameList(t, "problems", got, want)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
