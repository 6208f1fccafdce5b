package test

import (
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/headgate/headgate/app"
	"github.com/headgate/headgate/audit"
)

// The one request pipeline (issue 11): the in-process audit reads what
// headgate serves. The audit fixture site is crawled twice — in process
// (the audit drives the proxy's handler) and live through a real headgate
// on loopback (the same proxy behind an HTTP server) — and every page must
// agree: status, redirect target, canonical, body text, head as served;
// and every finding must be the same.
func TestDifferentialInProcessEqualsServed(t *testing.T) {
	up := httptest.NewServer(audFixture())
	defer up.Close()
	cfg := audConfig(t, up.URL, audFixes)
	p, stop, err := app.Proxy(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	hg := httptest.NewServer(p)
	defer hg.Close()

	start := append([]string{"/", "/files/guide.pdf", "/p/sitemap-duplicate", "/p/sitemap-noindex", "/p/sitemap-gone"}, audIndexable...)
	start = append(start, audStart...)
	served := audRun(t, audit.Options{Config: cfg, Live: hg.URL}, start)
	inproc := audRun(t, audit.Options{Config: cfg, Upstream: up.URL}, start)

	// Page URLs name the origin each crawl asked: compare by path.
	pages := func(r *audit.Report, origin string) map[string]audit.Page {
		m := map[string]audit.Page{}
		for _, pg := range r.Pages {
			m[strings.TrimPrefix(pg.URL, origin)] = pg
		}
		return m
	}
	sp, ip := pages(served, hg.URL), pages(inproc, audOrigin)
	if len(ip) < 20 {
		t.Fatalf("only %d pages crawled in process", len(ip))
	}
	for path, a := range ip {
		b, ok := sp[path]
		if !ok {
			t.Errorf("%s: crawled in process, not through headgate", path)
			continue
		}
		norm := func(s string) string { return strings.ReplaceAll(s, hg.URL, audOrigin) }
		if a.Status != b.Status || a.Location != norm(b.Location) || a.Canonical != norm(b.Canonical) || a.BodyHash != b.BodyHash {
			t.Errorf("%s: in process %d %q canonical %q body %s; served %d %q canonical %q body %s",
				path, a.Status, a.Location, a.Canonical, a.BodyHash, b.Status, b.Location, b.Canonical, b.BodyHash)
		}
	}
	for path := range sp {
		if _, ok := ip[path]; !ok {
			t.Errorf("%s: crawled through headgate, not in process", path)
		}
	}
	fs, fi := audPaths(served, hg.URL), audPaths(inproc, audOrigin)
	for _, c := range audit.Checks() {
		if !slices.Equal(fs[c.ID], fi[c.ID]) {
			t.Errorf("%s: through headgate on %v, in process on %v", c.ID, fs[c.ID], fi[c.ID])
		}
	}
}

// The same promise to the byte, against the real binary: every request the
// in-process audit makes of the fixture site gets, from headgate on its
// port, the status, headers and body bytes the audit read in process.
// (The fixture's config has no sitemap rule: its /sitemap.xml is the
// upstream's, compared like any page; `headgate sitemap` is compared with
// the served one on the e2e upstream, TestDifferentialE2EUpstream.)
func TestDifferentialFixtureBytes(t *testing.T) {
	up := newUpstream(t, audFixture().ServeHTTP)
	hg := start(t, config{Upstream: up.URL, BaseURL: audOrigin, Rules: audFixes})
	paths := append([]string{"/", "/files/guide.pdf", "/p/sitemap-duplicate", "/p/sitemap-noindex", "/p/sitemap-gone"}, audIndexable...)
	paths = append(paths, audStart...)
	statuses := diffPipeline(t, hg, up.URL, slices.Compact(slices.Sorted(slices.Values(paths))))
	if len(statuses) < 20 {
		t.Errorf("only %d targets compared", len(statuses))
	}
}
