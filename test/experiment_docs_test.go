package test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The worked analysis of docs/experiments.md runs: the script on the
// sample Search Console export and the export's url,group file finds the
// variant's effect the sample was made with (+12 % CTR) inside its
// interval, and the docs show the output it prints.
func TestDocsExperimentAnalysis(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	ex := filepath.Join(root, "docs", "examples")
	args := []string{filepath.Join(ex, "experiment_analysis.py"),
		"--groups", filepath.Join(ex, "experiment-groups.csv"),
		"--performance", filepath.Join(ex, "search-console-sample.csv"),
		"--start", "2026-10-20"}
	out, err := exec.Command(py, append(args, "--json")...).Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var r struct {
		Groups map[string]struct {
			Pages         int
			Before, After float64
		}
		DID      float64    `json:"did"`
		CI       [2]float64 `json:"ci95"`
		Relative float64
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if r.Groups["control"].Pages+r.Groups["variant"].Pages != 100 || r.Groups["variant"].Pages == 0 {
		t.Errorf("groups %+v", r.Groups)
	}
	if !(r.CI[0] > 0 && r.CI[0] < r.DID && r.DID < r.CI[1]) || r.Relative < 0.05 || r.Relative > 0.2 {
		t.Errorf("did %.3f (%.1f %%), CI %v: the sample's +12 %% is not found", r.DID, r.Relative*100, r.CI)
	}
	text, err := exec.Command(py, args...).Output()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "experiments.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(text)), "\n") {
		if !strings.Contains(string(doc), line) {
			t.Errorf("docs/experiments.md does not show the script's line %q", line)
		}
	}
	// The url,group file is the export of docs/examples/experiment.toml.
	got, err := exec.Command(binary, "experiment", "export", "-config", filepath.Join(ex, "experiment.toml"), "-name", "title-delivery").Output()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(filepath.Join(ex, "experiment-groups.csv"))
	if string(got) != string(want) {
		t.Errorf("docs/examples/experiment-groups.csv is not what headgate experiment export prints for experiment.toml")
	}
}
