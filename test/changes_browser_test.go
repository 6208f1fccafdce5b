package test

// The /changes page (SPEC §20.2) in Debian's headless Chromium: a proxy in
// process with [watch] (confirm = 2) in front of an upstream that flips a
// page to noindex and another's title to markup; once both changes are
// confirmed, Chromium renders the admin listener's /changes page. The DOM
// it builds carries the noindex event (its URL, signal robots, severity
// critical), the hostile title stays text, there is no <script>, and
// ?severity=critical leaves out the info event. A screenshot is kept as an
// artifact for a person to look at (go test -artifacts).

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/net/html"

	"github.com/headgate/headgate/proxy"
	"github.com/headgate/headgate/rules"
)

func TestChangesPageInChromium(t *testing.T) {
	if _, err := exec.LookPath("chromium"); err != nil {
		if _, err := os.Stat("/usr/bin/chromium"); err != nil {
			t.Skip("chromium not installed (Debian: apt-get install chromium): the browser check of the /changes page is skipped")
		}
	}
	const hostile = `<script>alert(1)</script>Pricing & plans`
	var flipped atomic.Bool
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		robots, title := "index, follow", "About us"
		if flipped.Load() {
			switch r.URL.Path {
			case "/pricing":
				robots = "noindex, follow"
			case "/about":
				title = hostile
			}
		}
		io.WriteString(w, `<!DOCTYPE html><html><head><title>`+html.EscapeString(title)+`</title>`+
			`<meta name="robots" content="`+robots+`"></head><body><p>A page.</p></body></html>`)
	}))
	defer up.Close()
	cfg, err := rules.Parse("headgate.toml", []byte(`[server]
upstream = "`+up.URL+`"

[site]
base_url = "https://notes.example"

[watch]
enabled = true
confirm = 2
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	px, err := proxy.New(cfg, proxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	get := func(path string) {
		w := httptest.NewRecorder()
		px.ServeHTTP(w, httptest.NewRequest("GET", "http://notes.example"+path, nil))
		if w.Code != 200 {
			t.Fatalf("GET %s: %d", path, w.Code)
		}
	}
	// The baseline, then the change on two responses in a row (confirm).
	get("/pricing")
	get("/about")
	flipped.Store(true)
	for range 2 {
		get("/pricing")
		get("/about")
	}

	admin := httptest.NewServer(px.Admin())
	defer admin.Close()
	url := admin.URL + "/changes"
	args := []string{"--hide-scrollbars", "--window-size=1280,600"}
	type row struct{ url, signal, severity, after string }
	rows := func(dom []byte) []row {
		t.Helper()
		doc, err := html.Parse(bytes.NewReader(dom))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(dom, []byte("Upstream changes")) {
			t.Fatalf("not the page:\n%s", tail(string(dom), 2000))
		}
		walkNodes(doc, func(n *html.Node) {
			if n.Type == html.ElementNode && n.Data == "script" {
				t.Errorf("a <script> element on the page: %q", textOf(n))
			}
		})
		var out []row
		walkNodes(doc, func(n *html.Node) {
			if n.Data != "tr" || n.Parent == nil || n.Parent.Data != "tbody" {
				return
			}
			var td []string
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Data == "td" {
					td = append(td, strings.TrimSpace(textOf(c)))
				}
			}
			if len(td) != 6 {
				t.Errorf("a row of %d cells: %q", len(td), td)
				return
			}
			out = append(out, row{url: td[2], signal: td[3], severity: td[1], after: td[5]})
		})
		return out
	}

	all := rows(runChromium(t, append(args, "--dump-dom", url)...))
	var noindex, title bool
	for _, r := range all {
		switch {
		case strings.HasSuffix(r.url, "/pricing") && r.signal == "robots":
			noindex = true
			if r.severity != "critical" || !strings.Contains(r.after, "noindex") {
				t.Errorf("the noindex event reads %+v: want severity critical, after noindex", r)
			}
		case strings.HasSuffix(r.url, "/about") && r.signal == "title":
			title = true
			if r.severity != "info" || r.after != hostile {
				t.Errorf("the title event reads %+v: want severity info, the title as text", r)
			}
		}
	}
	if !noindex || !title {
		t.Fatalf("events on the page %+v: want /pricing robots (critical) and /about title (info)", all)
	}
	crit := rows(runChromium(t, append(args, "--dump-dom", url+"?severity=critical")...))
	if len(crit) == 0 {
		t.Fatal("?severity=critical shows no event")
	}
	for _, r := range crit {
		if r.severity != "critical" {
			t.Errorf("?severity=critical shows %+v", r)
		}
	}

	shot := filepath.Join(t.ArtifactDir(), "changes.png")
	runChromium(t, append(args, "--screenshot="+shot, url)...)
	if fi, err := os.Stat(shot); err != nil || fi.Size() == 0 {
		t.Fatalf("no screenshot: %v", err)
	}
	t.Logf("screenshot: %s", shot)
}
