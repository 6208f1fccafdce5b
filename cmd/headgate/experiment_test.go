package main

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/headgate/headgate/proxy"
	"github.com/headgate/headgate/rules"
)

// exampleExperiment copies docs/examples/experiment.toml, and its product
// list, next to an upstream that serves every product page.
func exampleExperiment(t *testing.T) (cfgPath string) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		name := strings.TrimPrefix(r.URL.Path, "/products/")
		io.WriteString(w, "<!DOCTYPE html><html><head><title>"+name+" | Shop</title></head><body>"+name+"</body></html>")
	}))
	t.Cleanup(up.Close)
	dir := t.TempDir()
	src, err := os.ReadFile("../../docs/examples/experiment.toml")
	if err != nil {
		t.Fatal(err)
	}
	src = []byte(strings.Replace(string(src), `"http://127.0.0.1:3000"`, `"`+up.URL+`"`, 1))
	// The whole window: the export's default time and the server's agree.
	src = []byte(strings.Replace(string(src), "end = 2026-12-15", "end = 2099-12-15", 1))
	list, err := os.ReadFile("../../docs/examples/experiment-products.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	cfgPath = filepath.Join(dir, "headgate.toml")
	os.WriteFile(cfgPath, src, 0o644)
	os.WriteFile(filepath.Join(dir, "experiment-products.jsonl"), list, 0o644)
	return cfgPath
}

// The export lists every sitemap URL under match with the group the
// server serves it in: the variant's title exactly on the variant's rows.
func TestExperimentExportIsServed(t *testing.T) {
	cfgPath := exampleExperiment(t)
	code, out, errs := runCmd(t, "", "experiment", "export", "-config", cfgPath, "-name", "title-delivery")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) != 101 || recs[0][0] != "url" || recs[0][1] != "group" {
		t.Fatalf("csv: %v, %d rows, %v", err, len(recs), recs[:1])
	}
	code, jout, errs := runCmd(t, "", "experiment", "export", "-config", cfgPath, "-name", "title-delivery", "-format", "json")
	var js struct {
		Experiment string
		Pages      []exportRow
	}
	if code != exitOK || json.Unmarshal([]byte(jout), &js) != nil || len(js.Pages) != 100 || js.Experiment != "title-delivery" {
		t.Fatalf("json: exit %d %s\n%s", code, errs, jout)
	}

	cfg, err := rules.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	p, err := proxy.New(cfg, proxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(p)
	defer front.Close()
	groups := map[string]int{}
	for i, rec := range recs[1:] {
		if js.Pages[i].URL != rec[0] || js.Pages[i].Group != rec[1] {
			t.Errorf("row %d: csv %v, json %v", i, rec, js.Pages[i])
		}
		u, _ := url.Parse(rec[0])
		res, err := http.Get(front.URL + u.EscapedPath())
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		served := rules.GroupControl
		if strings.Contains(string(b), "free delivery") {
			served = rules.GroupVariant
		}
		if served != rec[1] {
			t.Errorf("%s: exported %s, served %s:\n%s", rec[0], rec[1], served, b)
		}
		groups[served]++
	}
	if groups["variant"] < 30 || groups["control"] < 30 {
		t.Errorf("groups %v", groups)
	}

	// explain names the group of a page.
	first, _ := url.Parse(recs[1][0])
	code, out, errs = runCmd(t, "", "explain", "-config", cfgPath, first.EscapedPath())
	if code != exitOK || !strings.Contains(out, "experiment title-delivery: group "+recs[1][1]) {
		t.Errorf("explain: exit %d\n%s%s", code, out, errs)
	}
	code, _, errs = runCmd(t, "", "experiment", "export", "-config", cfgPath, "-name", "nope")
	if code != exitFix || !strings.Contains(errs, `no experiment "nope"`) {
		t.Errorf("unknown name: exit %d %s", code, errs)
	}
}

// audit -experiment reports findings per group, in text, JSON and HTML.
func TestExperimentAudit(t *testing.T) {
	cfgPath := exampleExperiment(t)
	code, out, errs := runCmd(t, "", "audit", "-config", cfgPath, "-experiment", "title-delivery", "-fail-on", "never", "-format", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep struct {
		Experiment struct {
			Name   string
			Groups []struct {
				Group  string
				Pages  int
				Checks map[string]int
			}
		}
		Pages []struct{ URL, Group string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	g := rep.Experiment.Groups
	if rep.Experiment.Name != "title-delivery" || len(g) != 2 || g[0].Group != "control" || g[1].Group != "variant" || g[0].Pages+g[1].Pages != 100 || g[0].Pages == 0 || g[1].Pages == 0 {
		t.Errorf("experiment %+v", rep.Experiment)
	}
	n := 0
	for _, p := range rep.Pages {
		if p.Group != "" {
			n++
		}
	}
	if n != 100 {
		t.Errorf("%d pages carry a group, want 100", n)
	}
	code, out, _ = runCmd(t, "", "audit", "-config", cfgPath, "-experiment", "title-delivery", "-fail-on", "never")
	if code != exitOK || !strings.Contains(out, "experiment title-delivery (/products/:slug): findings per group") {
		t.Errorf("text: exit %d\n%s", code, out)
	}
	code, out, _ = runCmd(t, "", "audit", "-config", cfgPath, "-experiment", "title-delivery", "-fail-on", "never", "-format", "html")
	if code != exitOK || !strings.Contains(out, `id="experiment-groups"`) {
		t.Errorf("html: exit %d", code)
	}
	code, _, errs = runCmd(t, "", "audit", "-config", cfgPath, "-experiment", "nope")
	if code != exitUsage || !strings.Contains(errs, `no experiment "nope"`) {
		t.Errorf("unknown: exit %d %s", code, errs)
	}
}

// check reports experiment problems with code, file:line and key.
func TestExperimentCheck(t *testing.T) {
	code, out, errs := runCmd(t, "", "check", "-config", "../../rules/testdata/bad/hg211_variant.toml")
	all := out + errs
	if code != exitFix || !strings.Contains(all, "HG211 ../../rules/testdata/bad/hg211_variant.toml:16: experiment[0].variant.titel: unknown variant field (did you mean title?)") ||
		!strings.Contains(all, "HG211 ../../rules/testdata/bad/hg211_variant.toml:12: experiment[0].variant_share") {
		t.Errorf("exit %d\n%s", code, all)
	}
	code, out, errs = runCmd(t, "", "check", "-config", "../../rules/testdata/bad/hg210_overlap.toml")
	if code != exitFix || !strings.Contains(out+errs, "HG210 ../../rules/testdata/bad/hg210_overlap.toml:17: experiment[1].match") {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}
}

// explain groups a page by its canonical path (§21): a note's print view,
// whose canonical is the note, is in the note's group, and it says so; a
// date-only end is shown as the inclusive day it is.
func TestExperimentExplainCanonical(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "headgate.toml")
	os.WriteFile(cfgPath, []byte(`[server]
upstream = "builtin:demo"

[site]
base_url = "https://notes.example"

[[rule]]
match = "/notes/:id/print"
canonical = "/notes/{id}"

[[experiment]]
name = "notes"
match = "/notes/*"
variant_share = 50
end = 2099-12-06
[experiment.variant]
title = "Variant"
`), 0o644)
	cfg, err := rules.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	e := cfg.Experiment("notes")
	id := ""
	for i := range 40 {
		if p := "/notes/" + strconv.Itoa(i); rules.Bucket(e.Name, p) < 5000 != (rules.Bucket(e.Name, p+"/print") < 5000) {
			id = strconv.Itoa(i)
			break
		}
	}
	if id == "" {
		t.Fatal("no note whose print view hashes apart")
	}
	group := func(target string) string {
		code, out, errs := runCmd(t, "", "explain", "-config", cfgPath, target)
		_, rest, ok := strings.Cut(out, "experiment notes: group ")
		if code != exitOK || !ok {
			t.Fatalf("explain %s: exit %d\n%s%s", target, code, out, errs)
		}
		if !strings.Contains(out, "(of /notes/"+id+", the page's canonical path)") || !strings.Contains(out, "to 2099-12-06 (inclusive, UTC)") {
			t.Errorf("explain %s:\n%s", target, out)
		}
		g, _, _ := strings.Cut(rest, " ")
		return g
	}
	if a, b := group("/notes/"+id), group("/notes/"+id+"/print"); a != b {
		t.Errorf("/notes/%s: %s, its print view: %s", id, a, b)
	}
}
