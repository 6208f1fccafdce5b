package test

// -compare: a staging and a production copy of a site that differ in five
// planted ways, one per page; the audit of staging against production
// reports exactly those five.

import (
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/headgate/headgate/audit"
)

func cmpSite(staging bool) map[string]audResp {
	page := func(path, extra string) audResp {
		return audDoc(audSelf(path)+extra, audLinks("/"))
	}
	ld := func(t string) string {
		return `<script type="application/ld+json">{"@context":"https://schema.org","@type":"` + t + `","headline":"x"}</script>`
	}
	alts := audAlternates("en", "/hreflang", "de", "/de/hreflang", "x-default", "/hreflang")
	s := map[string]audResp{
		"/robots.txt": {ctype: "text/plain", body: "User-agent: *\nDisallow:\n"},
		"/":           audDoc(audSelf("/"), audLinks("/canon", "/noindex", "/title", "/hreflang", "/jsonld", "/same")),
		"/canon":      page("/canon", ""),
		"/noindex":    page("/noindex", ""),
		"/title":      page("/title", ""),
		"/hreflang":   page("/hreflang", alts),
		"/jsonld":     page("/jsonld", ld("Article")),
		"/same":       page("/same", ld("WebPage")),
	}
	if staging {
		s["/canon"] = audDoc(audHead("Fixture /canon", "What /canon is about.", "/canon/")+"", audLinks("/"))
		s["/noindex"] = page("/noindex", `<meta name="robots" content="noindex">`)
		s["/title"] = audDoc(audHead("Fixture /title, renamed by the release", "What /title is about.", "/title"), audLinks("/"))
		s["/hreflang"] = page("/hreflang", audAlternates("en", "/hreflang", "fr", "/fr/hreflang", "x-default", "/hreflang"))
		s["/jsonld"] = page("/jsonld", ld("BlogPosting"))
	}
	return s
}

func TestAuditCompare(t *testing.T) {
	serve := func(site map[string]audResp) *httptest.Server {
		return httptest.NewServer(audHandler(site))
	}
	prod, stage := serve(cmpSite(false)), serve(cmpSite(true))
	defer prod.Close()
	defer stage.Close()
	r := audRun(t, audit.Options{Config: audConfig(t, stage.URL, ""), Live: stage.URL, Compare: prod.URL}, nil)
	var got []string
	for _, f := range r.Findings {
		if strings.HasPrefix(f.Check, "diff-") {
			got = append(got, f.Check+" "+strings.TrimPrefix(f.URL, stage.URL))
			t.Logf("%s %s: %s", f.Check, f.URL, f.Detail)
		}
	}
	sort.Strings(got)
	want := []string{"diff-alternates /hreflang", "diff-canonical /canon", "diff-jsonld-types /jsonld", "diff-robots /noindex", "diff-title /title"}
	if !slices.Equal(got, want) {
		t.Errorf("diffs %q, want %q", got, want)
	}
	// A site compared with itself differs in nothing.
	r = audRun(t, audit.Options{Config: audConfig(t, prod.URL, ""), Live: prod.URL, Compare: prod.URL}, nil)
	for _, f := range r.Findings {
		if strings.HasPrefix(f.Check, "diff-") {
			t.Errorf("production against itself: %+v", f)
		}
	}
}

// httptestServer serves the audit fixture on loopback for the test's life.
func httptestServer(t *testing.T) string {
	srv := httptest.NewServer(audFixture())
	t.Cleanup(srv.Close)
	return srv.URL
}
