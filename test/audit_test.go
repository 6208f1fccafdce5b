package test

// The audit against the fixture of audit_fixture_test.go, served by a real
// upstream on loopback: live (the site as it answers), then in process
// through rules that fix some of the planted problems.

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/headgate/headgate/app"
	"github.com/headgate/headgate/audit"
	"github.com/headgate/headgate/rewrite"
	"github.com/headgate/headgate/rules"
)

func audConfig(t *testing.T, upstream, rest string) *rules.Config {
	t.Helper()
	src := "[server]\nupstream = \"" + upstream + "\"\n[site]\nbase_url = \"" + audOrigin + "\"\n" + rest
	cfg, err := rules.Parse("audit-fixture.toml", []byte(src), nil)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return cfg
}

// audPaths returns, per check, the paths of the pages its findings name.
func audPaths(r *audit.Report, origin string) map[string][]string {
	got := map[string][]string{}
	for _, f := range r.Findings {
		p := strings.TrimPrefix(f.URL, origin)
		if !slices.Contains(got[f.Check], p) {
			got[f.Check] = append(got[f.Check], p)
		}
	}
	for _, ps := range got {
		sort.Strings(ps)
	}
	return got
}

func audRun(t *testing.T, o audit.Options, start []string) *audit.Report {
	t.Helper()
	if o.Live == "" && o.Handler == nil {
		// In process, as cmd wires it: headgate's own pipeline.
		stop, err := app.AuditInProcess(&o)
		if err != nil {
			t.Fatal(err)
		}
		defer stop()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := audit.Run(ctx, o, start)
	if err != nil {
		t.Fatalf("audit: %v", err)
	}
	return r
}

// audExpect checks that every planted problem is found on its page and
// nowhere else, except the checks in gone, which must find nothing.
func audExpect(t *testing.T, r *audit.Report, origin string, gone map[string]bool) {
	t.Helper()
	got := audPaths(r, origin)
	for _, c := range audit.Checks() {
		if strings.HasPrefix(c.ID, "diff-") {
			continue // -compare: TestAuditCompare
		}
		want, ok := audPlanted[c.ID]
		if !ok {
			t.Errorf("check %s has no planted problem in the fixture", c.ID)
			continue
		}
		if gone[c.ID] {
			want = nil
		}
		if !slices.Equal(got[c.ID], want) {
			t.Errorf("%s found on %v, want %v", c.ID, got[c.ID], want)
		}
	}
	for _, f := range r.Findings {
		if slices.Contains(audClean, strings.TrimPrefix(f.URL, origin)) {
			t.Errorf("finding on a clean page: %+v", f)
		}
		if _, known := audPlanted[f.Check]; !known {
			t.Errorf("unknown check: %+v", f)
		}
	}
	if t.Failed() {
		var b bytes.Buffer
		r.WriteText(&b)
		t.Logf("report:\n%s", b.String())
	}
}

func TestAuditFixtureLive(t *testing.T) {
	up := httptest.NewServer(audFixture())
	defer up.Close()
	var progress bytes.Buffer
	r := audRun(t, audit.Options{Config: audConfig(t, up.URL, ""), Live: up.URL, Progress: &progress}, audStart)
	audExpect(t, r, up.URL, nil)

	// Every page of the fixture was reached, through links, the sitemap
	// index, the canonical and hreflang targets and the start URLs.
	for path := range audFixtureSite() {
		if path == "/robots.txt" || strings.HasPrefix(path, "/sitemap") || path == "/style.css" {
			continue
		}
		found := false
		for _, p := range r.Pages {
			found = found || p.URL == up.URL+path
		}
		if !found {
			t.Errorf("%s was not crawled", path)
		}
	}
	for _, want := range []string{"mailto: link", "link to another site"} {
		ok := false
		for _, s := range r.Skipped {
			ok = ok || strings.Contains(s.Reason, want)
		}
		if !ok {
			t.Errorf("no skip %q in %+v", want, r.Skipped)
		}
	}
	if !strings.HasSuffix(progress.String(), "findings\n") {
		t.Errorf("progress %q", progress.String())
	}
	if !r.Fails("error") || !r.Fails("warning") || r.Fails("never") {
		t.Error("Fails: the fixture has errors and warnings")
	}
}

// audFixes is a headgate config that fixes some of the planted problems;
// correct_upstream (on by default) makes relative URLs absolute and keeps
// the first of duplicated canonicals.
const audFixes = `
[[rule]]
match = "/p/description-missing"
description = "Now described by a headgate rule, at a length that reads well in search results."

[[rule]]
match = "/p/og-url-mismatch"
canonical = "self"
[rule.open_graph]
type = "website"

[[rule]]
match = "/p/canonical-missing"
canonical = "self"

[[rule]]
match = "/p/title-missing"
title = "Fixture page titled by a headgate rule"
`

// audFixed are the checks audFixes makes disappear, and the change each
// fixed page must list (action, identity).
var audFixed = map[string]struct {
	page     string
	action   rewrite.Action
	identity string
}{
	"canonical-relative":  {"/p/canonical-relative", rewrite.Corrected, "canonical"},
	"og-image-relative":   {"/p/og-image-relative", rewrite.Corrected, "og:image"},
	"canonical-multiple":  {"/p/canonical-multiple", rewrite.Dropped, "canonical"},
	"description-missing": {"/p/description-missing", rewrite.Wrote, "description"},
	"og-url-mismatch":     {"/p/og-url-mismatch", rewrite.Replaced, "og:url"},
	"canonical-missing":   {"/p/canonical-missing", rewrite.Wrote, "canonical"},
	"title-missing":       {"/p/title-missing", rewrite.Wrote, "title"},
}

// In process, through the rewrite engine (needs the real rewriter, not
// the pass-through stub it replaced).
func TestAuditFixtureInProcess(t *testing.T) {
	up := httptest.NewServer(audFixture())
	defer up.Close()
	cfg := audConfig(t, up.URL, audFixes)
	// As cmd wires it (audRun): headgate's own pipeline, whose sitemap and
	// robots.txt here, with no sitemap rule, pass through to the upstream.
	// In process, start URLs replace "/" and the sitemap as seeds (SPEC §7;
	// the sitemap is still read for the sitemap checks): name them all.
	start := append([]string{"/", "/p/sitemap-duplicate", "/p/sitemap-noindex", "/p/sitemap-gone", "/p/sitemap-orphan", "/p/blocked/secret"}, audStart...)
	r := audRun(t, audit.Options{Config: cfg, Upstream: up.URL}, start)
	gone := map[string]bool{}
	for check := range audFixed {
		gone[check] = true
	}
	audExpect(t, r, audOrigin, gone)

	for check, fix := range audFixed {
		var page *audit.Page
		for i := range r.Pages {
			if r.Pages[i].URL == audOrigin+fix.page {
				page = &r.Pages[i]
			}
		}
		if page == nil {
			t.Errorf("%s: page %s not crawled", check, fix.page)
			continue
		}
		ok := false
		for _, c := range page.Changes {
			ok = ok || c.Action == fix.action && c.Identity == fix.identity
		}
		if !ok || page.Outcome != string(rewrite.Rewritten) {
			t.Errorf("%s: page %s (%s) lists %+v, want %s %s", check, fix.page, page.Outcome, page.Changes, fix.action, fix.identity)
		}
	}

	// Without start URLs the crawl starts from "/" and the sitemap: the
	// sitemap's planted pages are found, the unlinked ones are not reached.
	r2 := audRun(t, audit.Options{Config: cfg, Upstream: up.URL}, nil)
	got := audPaths(r2, audOrigin)
	for _, check := range []string{"sitemap-non-canonical", "sitemap-noindex", "sitemap-not-200", "title-duplicate"} {
		if !slices.Equal(got[check], audPlanted[check]) {
			t.Errorf("no start URLs: %s on %v, want %v", check, got[check], audPlanted[check])
		}
	}
	if len(got["canonical-chain"]) != 0 {
		t.Errorf("no start URLs: canonical-chain on %v, its page is linked from nowhere", got["canonical-chain"])
	}

	// The JSON report carries the same changes.
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Pages []struct {
			URL     string `json:"url"`
			Changes []struct {
				Action   string `json:"action"`
				Identity string `json:"identity"`
			} `json:"changes"`
		} `json:"pages"`
	}
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	for _, p := range back.Pages {
		if p.URL == audOrigin+"/p/description-missing" && (len(p.Changes) == 0 || !slices.ContainsFunc(p.Changes, func(c struct {
			Action   string `json:"action"`
			Identity string `json:"identity"`
		}) bool {
			return c.Action == "wrote" && c.Identity == "description"
		})) {
			t.Errorf("JSON changes of /p/description-missing: %+v", p.Changes)
		}
	}
}

// The differential of the one-request pipeline: the fixture crawled live
// and in process, with no rules, gives the same findings on the same
// paths, but for what site.correct_upstream (on by default) corrects in
// process: relative canonicals and og:images made absolute, the second
// canonical dropped.
func TestAuditFixtureLiveEqualsInProcess(t *testing.T) {
	up := httptest.NewServer(audFixture())
	defer up.Close()
	live := audRun(t, audit.Options{Config: audConfig(t, up.URL, ""), Live: up.URL}, audStart)
	// In process, start URLs replace "/" and the sitemap as seeds: give the
	// seeds the live crawl has.
	start := append([]string{"/", "/files/guide.pdf", "/p/sitemap-duplicate", "/p/sitemap-noindex", "/p/sitemap-gone"}, audIndexable...)
	inproc := audRun(t, audit.Options{Config: audConfig(t, up.URL, ""), Upstream: up.URL}, append(start, audStart...))
	corrected := map[string]bool{"canonical-relative": true, "og-image-relative": true, "canonical-multiple": true}
	l, p := audPaths(live, up.URL), audPaths(inproc, audOrigin)
	for _, c := range audit.Checks() {
		if corrected[c.ID] {
			if len(p[c.ID]) != 0 {
				t.Errorf("%s in process on %v: correct_upstream corrects it", c.ID, p[c.ID])
			}
			continue
		}
		if !slices.Equal(l[c.ID], p[c.ID]) {
			t.Errorf("%s: live on %v, in process on %v", c.ID, l[c.ID], p[c.ID])
		}
	}
}
