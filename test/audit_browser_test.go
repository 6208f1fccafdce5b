package test

// The HTML report in a real browser: Debian's headless chromium renders
// the summary, a check's why and fix, and the upstream's head beside the
// served one (a screenshot, kept for a person to look at), and the inline
// script applies a filter from the URL fragment (the DOM it leaves).
//
//	go test ./test -run TestAuditReportInBrowser -v   # logs the screenshot's path

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/headgate/headgate/audit"
)

func chromium(t *testing.T, args ...string) []byte {
	t.Helper()
	return runChromium(t, args...)
}

func TestAuditReportInBrowser(t *testing.T) {
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Skip("no chromium on PATH (Debian's chromium; .ci/run installs it): the browser test is skipped")
	}
	up := httptestServer(t)
	cfg := audConfig(t, up, audFixes)
	r := audRun(t, audit.Options{Config: cfg, Upstream: up}, append([]string{"/"}, audStart...))
	// Against a baseline that had every finding but the first: one new.
	r.ApplyBaseline(&audit.Baseline{Findings: r.Findings[1:]})
	first := r.Findings[0]
	dir := os.Getenv("HEADGATE_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, "audit-report.html")
	var b bytes.Buffer
	if err := r.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	url := "file://" + path

	// A screenshot of the top, and one of the changes with both heads.
	shot := filepath.Join(dir, "audit-report.png")
	chromium(t, "--screenshot="+shot, "--window-size=1280,2400", url)
	shot2 := filepath.Join(dir, "audit-report-heads.png")
	// Every finding filtered out: the changes and their heads come to the top.
	chromium(t, "--screenshot="+shot2, "--window-size=1280,1600", url+"#severity=error&check=link-to-redirect")
	for _, s := range []string{shot, shot2} {
		if st, err := os.Stat(s); err != nil || st.Size() < 10<<10 {
			t.Fatalf("screenshot %s: %v (%d bytes)", s, err, st.Size())
		}
	}
	t.Logf("screenshots: %s, %s (report %s)", shot, shot2, path)

	// Scripts on, no filter: the DOM holds the summary, the why and fix of
	// a check, and the two heads of a changed page.
	dom := string(chromium(t, "--dump-dom", url))
	for _, want := range []string{"Summary", "Why it matters:", "How to fix it:", "the upstream's head", "the head headgate serves", "Now described by a headgate rule"} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered DOM lacks %q", want)
		}
	}
	if visible(t, dom, "") < 20 {
		t.Errorf("without a filter, %d findings visible", visible(t, dom, ""))
	}

	// The filter in the fragment: only link-broken's rows are left.
	dom = string(chromium(t, "--dump-dom", url+"#severity=error&check=link-broken"))
	if n := visible(t, dom, "link-broken"); n != 1 || visible(t, dom, "") != 1 {
		t.Errorf("filtered to link-broken: %d link-broken rows and %d rows in all visible, want 1 and 1", n, visible(t, dom, ""))
	}
	if !strings.Contains(dom, "1 shown") {
		t.Error("the filter does not say how many it shows")
	}
	// The status filter: only the new finding is left.
	dom = string(chromium(t, "--dump-dom", url+"#status=new"))
	if n := visible(t, dom, first.Check); n != 1 || visible(t, dom, "") != 1 {
		t.Errorf("status=new: %d rows of %s and %d in all visible, want 1 and 1", n, first.Check, visible(t, dom, ""))
	}
	// Scripts off, the report reads whole (every finding shown, the
	// filters hidden): headless chromium neither dumps nor shoots a page
	// with scripts disabled, so audit's TestWriteHTML checks the HTML as
	// written, which is what such a browser shows.
	// A warning-only check under severity=error: nothing is left.
	dom = string(chromium(t, "--dump-dom", url+"#severity=error&check=link-to-redirect"))
	if n := visible(t, dom, ""); n != 0 {
		t.Errorf("severity=error, check=link-to-redirect: %d rows visible, want 0", n)
	}
}

// visible counts the finding rows (of check, or of any) the DOM shows: no
// hidden attribute on the row or its section.
func visible(t *testing.T, dom, check string) int {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(dom))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for e := range doc.Descendants() {
		if e.Type != html.ElementNode || e.Data != "tr" || attr(e, "class") != "finding" {
			continue
		}
		if check != "" && attr(e, "data-check") != check {
			continue
		}
		shown := true
		for p := e; p != nil; p = p.Parent {
			if hasHidden(p) {
				shown = false
			}
		}
		if shown {
			n++
		}
	}
	return n
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasHidden(n *html.Node) bool {
	for _, a := range n.Attr {
		if a.Key == "hidden" {
			return true
		}
	}
	return false
}
