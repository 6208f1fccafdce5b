package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// gateSite serves three pages. Release 1 has a broken link (an error) on
// /a; release 2 fixes it and adds a page without a title (a new error);
// release 3 only fixes it.
func gateSite(release *atomic.Int32) http.Handler {
	page := func(w http.ResponseWriter, title, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><head><title>%s</title><meta name="description" content="A page of the release gate's test site, with a description long enough to read.">`+
			`</head><body>%s</body></html>`, title, body)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rel := release.Load()
		switch r.URL.Path {
		case "/":
			links := `<a href="/a">a</a>`
			if rel == 2 {
				links += ` <a href="/b">b</a>`
			}
			page(w, "The home page of the release gate site", links)
		case "/a":
			if rel == 1 {
				page(w, "Page A of the release gate site, linking", `<a href="/gone">gone</a>`)
			} else {
				page(w, "Page A of the release gate site, linking", `<a href="/">home</a>`)
			}
		case "/b":
			if rel == 2 {
				page(w, "", `<a href="/">home</a>`)
				return
			}
			http.NotFound(w, r)
		default:
			http.NotFound(w, r)
		}
	})
}

func TestAuditBaselineGate(t *testing.T) {
	var release atomic.Int32
	release.Store(1)
	srv := httptest.NewServer(gateSite(&release))
	defer srv.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "headgate.toml")
	os.WriteFile(cfg, []byte("[server]\nupstream = \""+srv.URL+"\"\n[site]\nbase_url = \""+srv.URL+"\"\n"), 0o644)
	base := filepath.Join(dir, "baseline.json")
	if code, _, errs := runCmd(t, "", "audit", "-config", cfg, "-live", srv.URL, "-format", "json", "-o", base, "-fail-on", "never"); code != exitOK {
		t.Fatalf("release 1: exit %d: %s", code, errs)
	}

	// Release 2: the broken link fixed, a title missing.
	release.Store(2)
	out := filepath.Join(dir, "r2.json")
	code, _, errs := runCmd(t, "", "audit", "-config", cfg, "-live", srv.URL, "-baseline", base, "-format", "json", "-o", out, "-fail-on", "error")
	if code != exitFix {
		t.Errorf("release 2 adds an error: exit %d, want %d (%s)", code, exitFix, errs)
	}
	var rep struct {
		Findings []struct{ Check, Severity, URL, Status string }
		Fixed    []struct{ Check, URL string }
	}
	b, _ := os.ReadFile(out)
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	var news, fixed []string
	for _, f := range rep.Findings {
		if f.Status == "new" && f.Severity == "error" {
			news = append(news, f.Check+" "+strings.TrimPrefix(f.URL, srv.URL))
		} else if f.Status != "known" && f.Status != "new" {
			t.Errorf("finding %+v: status %q", f, f.Status)
		}
	}
	for _, f := range rep.Fixed {
		fixed = append(fixed, f.Check+" "+strings.TrimPrefix(f.URL, srv.URL))
	}
	if strings.Join(news, ",") != "title-missing /b" || strings.Join(fixed, ",") != "link-broken /a" {
		t.Errorf("new %q, fixed %q; want the missing title the one new error and the broken link fixed\n%s", news, fixed, b)
	}

	// Release 3: only the fix. The old warnings are known: -fail-on error
	// and even -fail-on warning pass.
	release.Store(3)
	for _, level := range []string{"error", "warning"} {
		if code, stdout, errs := runCmd(t, "", "audit", "-config", cfg, "-live", srv.URL, "-baseline", base, "-fail-on", level); code != exitOK {
			t.Errorf("release 3, -fail-on %s: exit %d, want 0\n%s%s", level, code, stdout, errs)
		}
	}
	// Without the baseline the old debt fails -fail-on warning.
	if code, _, _ := runCmd(t, "", "audit", "-config", cfg, "-live", srv.URL, "-fail-on", "warning"); code != exitFix {
		t.Errorf("release 3 without a baseline, -fail-on warning: exit %d, want %d", code, exitFix)
	}

	// A baseline that is no report: a clear error, exit 2.
	for name, content := range map[string]string{
		"not JSON":      "<html>oops</html>",
		"old version":   `{"findings": [], "pages": [], "skipped": []}`,
		"other version": `{"version": 1, "findings": []}`,
		"no report":     `[1, 2, 3]`,
	} {
		bad := filepath.Join(dir, "bad.json")
		os.WriteFile(bad, []byte(content), 0o644)
		code, _, errs := runCmd(t, "", "audit", "-config", cfg, "-live", srv.URL, "-baseline", bad)
		if code != exitUsage || !strings.Contains(errs, "-baseline") || !strings.Contains(errs, "baseline:") {
			t.Errorf("%s: exit %d, stderr %q", name, code, errs)
		}
	}

	// A -live URL that is no http(s) URL: a usage error, exit 2.
	for _, live := range []string{"ftp://x", "notes.example", "http://"} {
		code, _, errs := runCmd(t, "", "audit", "-config", cfg, "-live", live)
		if code != exitUsage || !strings.Contains(errs, "-live") {
			t.Errorf("-live %q: exit %d, stderr %q", live, code, errs)
		}
	}
}
