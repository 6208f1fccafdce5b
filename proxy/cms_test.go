package proxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/headgate/headgate/internal/hgtest"
	"github.com/headgate/headgate/rules"
	"github.com/headgate/headgate/sitemap"
)

const cmsRules = `
[[rule]]
match = "/*"
description = "A rewritten page."
canonical = "self"
[rule.open_graph]
site_name = "Notes"
[rule.headers]
x-layout = "yes"

[[rule]]
match = "/wp-admin/*"
rewrite = false
robots = { index = false }

[[rule]]
match = "/wp-admin/edit.php"
rewrite = true
`

// Fragments and rewrite = false pass through the proxy byte for byte
// (SPEC §16.1); the headers of §4.8 and §4.9 still apply to the latter.
func TestFragmentsAndRewriteFalseThroughProxy(t *testing.T) {
	bodies := map[string]string{
		"/wp-admin/admin-ajax.php": testPage, // a whole page, but rewrite = false
		"/ajax/nonce":              "a1b2c3d4e5",
		"/ajax/json":               `{"success":true,"data":"<meta name=x>"}`,
		"/ajax/tags":               "<li>go</li><li>seo</li>",
		"/ajax/div":                `<div class="x">ok</div>`,
		"/ajax/htmx":               "\n  <!-- partial -->\n<div hx-swap-oob=\"true\">x</div>",
	}
	p, front := newTestProxy(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		b, ok := bodies[r.URL.Path]
		if !ok {
			b = testPage
		}
		io.WriteString(w, b)
	}, cmsRules)
	get := func(path string) (*http.Response, string) {
		t.Helper()
		return hgtest.Fetch(t, front.URL+path)
	}
	for path, want := range bodies {
		res, got := get(path)
		if got != want {
			t.Errorf("%s: body changed:\n got %q\nwant %q", path, got, want)
		}
		if res.Header.Get("X-Layout") != "yes" {
			t.Errorf("%s: the rule headers of §4.9 are missing", path)
		}
	}
	res, _ := get("/wp-admin/admin-ajax.php")
	if res.Header.Get("X-Robots-Tag") != "noindex" || !strings.Contains(res.Header.Get("Link"), "canonical") {
		t.Errorf("rewrite = false: §4.8 headers missing: X-Robots-Tag %q, Link %q", res.Header.Get("X-Robots-Tag"), res.Header.Get("Link"))
	}
	// The counter is incremented once the handler returns, which may be
	// just after the client has the body: wait for it, bounded.
	var counts map[string]float64
	for deadline := time.Now().Add(5 * time.Second); ; {
		counts = outcomes(t, p)
		if counts["skipped_fragment"] == 5 && counts["skipped_rule"] == 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if counts["skipped_fragment"] != 5 || counts["skipped_rule"] != 2 {
		t.Errorf("outcomes %v, want skipped_fragment=5 skipped_rule=2", counts)
	}
	// A more specific rule turns rewriting back on (§17), and pages are
	// still rewritten.
	for _, path := range []string{"/wp-admin/edit.php", "/2024/05/post/"} {
		if _, got := get(path); !strings.Contains(got, `<meta name="description" content="A rewritten page.">`) {
			t.Errorf("%s: not rewritten:\n%s", path, got)
		}
	}
}

func outcomes(t *testing.T, p *Proxy) map[string]float64 {
	counts := map[string]float64{}
	mfs, err := p.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "headgate_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" {
					counts[l.GetValue()] = m.GetCounter().GetValue()
				}
			}
		}
	}
	return counts
}

// A HEAD under rewrite = false gets the upstream's own headers, length
// included, as its GET gets the upstream's bytes.
func TestRewriteFalseHead(t *testing.T) {
	_, front := newTestProxy(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		w.Header().Set("Content-Length", "10")
		w.Header().Set("ETag", `"abc"`)
		if r.Method != http.MethodHead {
			io.WriteString(w, "a1b2c3d4e5")
		}
	}, cmsRules)
	req, _ := http.NewRequest(http.MethodHead, front.URL+"/wp-admin/admin-ajax.php", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.ContentLength != 10 || res.Header.Get("ETag") != `"abc"` {
		t.Errorf("HEAD: Content-Length %d, ETag %q", res.ContentLength, res.Header.Get("ETag"))
	}
}

// A whole HTML document sent as a download (Content-Disposition:
// attachment, as an export or a "save page" answers) is a file, not a
// page: its bytes pass through, GET and HEAD alike.
func TestAttachmentNotRewritten(t *testing.T) {
	_, front := newTestProxy(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		switch r.URL.Path {
		case "/export":
			w.Header().Set("Content-Disposition", `Attachment; filename="notes.html"`)
		case "/inline":
			w.Header().Set("Content-Disposition", "inline")
		}
		io.WriteString(w, testPage)
	}, cmsRules)
	res, got := hgtest.Fetch(t, front.URL+"/export")
	if got != testPage {
		t.Errorf("an attachment was rewritten:\n%s", got)
	}
	if res.Header.Get("Content-Disposition") == "" {
		t.Error("Content-Disposition lost")
	}
	if _, got := hgtest.Fetch(t, front.URL+"/inline"); got == testPage {
		t.Error("an inline page was not rewritten")
	}
}

// In append mode the upstream's robots.txt is fetched through redirects
// on the upstream's own site (a slash added, its public https address),
// as crawlers follow them; one to another host, or a loop, is no
// robots.txt (as Google reads it after five hops), never a 503 that would
// stop the crawl.
func TestUpstreamRobotsRedirects(t *testing.T) {
	const cfg = "[robots]\nmode = \"append\"\n[[robots.group]]\nuser_agents = [\"GPTBot\"]\ndisallow = [\"/\"]\n"
	for _, c := range []struct {
		name     string
		location map[string]string // path → Location
		want     string            // in the served file
		not      string
	}{
		{"a slash added", map[string]string{"/robots.txt": "/robots.txt/"}, "Disallow: /private", ""},
		{"the public address", map[string]string{"/robots.txt": "https://notes.example/real-robots.txt"}, "Disallow: /private", ""},
		{"two hops", map[string]string{"/robots.txt": "/a", "/a": "/robots.txt/"}, "Disallow: /private", ""},
		{"another host", map[string]string{"/robots.txt": "https://cdn.example/robots.txt"}, "User-agent: GPTBot", "private"},
		{"a loop", map[string]string{"/robots.txt": "/a", "/a": "/robots.txt"}, "User-agent: GPTBot", "private"},
	} {
		t.Run(c.name, func(t *testing.T) {
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if loc, ok := c.location[r.URL.Path]; ok {
					w.Header().Set("Location", loc)
					w.WriteHeader(http.StatusMovedPermanently)
					return
				}
				if r.URL.Path == "/robots.txt/" || r.URL.Path == "/real-robots.txt" {
					io.WriteString(w, "User-agent: *\nDisallow: /private\n")
					return
				}
				http.NotFound(w, r)
			}))
			defer up.Close()
			p, err := New(testConfig(t, up.URL, cfg), Options{
				Sitemap: func(cfg *rules.Config, fetch func(context.Context, string) (io.ReadCloser, error)) SitemapHandler {
					return sitemap.New(cfg, sitemap.Options{Fetch: fetch})
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			front := httptest.NewServer(p)
			defer front.Close()
			res, body := hgtest.Fetch(t, front.URL+"/robots.txt")
			if res.StatusCode != 200 || !strings.Contains(body, c.want) || c.not != "" && strings.Contains(body, c.not) {
				t.Errorf("%d:\n%s", res.StatusCode, body)
			}
			if !strings.Contains(body, "User-agent: GPTBot\nDisallow: /") {
				t.Errorf("headgate's group is missing:\n%s", body)
			}
		})
	}
}

func TestFetchRedirectPath(t *testing.T) {
	p, err := New(testConfig(t, "http://127.0.0.1:9/app", ""), Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := p.state.Load()
	for _, c := range []struct {
		loc, want string
		ok        bool
	}{
		{"/app/robots.txt/", "/robots.txt/", true}, // the upstream's own path: under its prefix
		{"robots-2.txt", "/robots-2.txt", true},
		{"http://127.0.0.1:9/app/x?y=1", "/x?y=1", true},
		{"https://NOTES.example/real.txt", "/real.txt", true}, // the public address: as proxied
		{"/other/robots.txt", "", false},                      // outside the upstream's prefix
		{"https://cdn.example/robots.txt", "", false},
		{"https://user@notes.example/x", "", false},
		{"ftp://notes.example/x", "", false},
		{"http://127.0.0.1:10/app/x", "", false},
	} {
		got, ok := st.redirectPath("/robots.txt", c.loc)
		if got != c.want || ok != c.ok {
			t.Errorf("%q: %q %v, want %q %v", c.loc, got, ok, c.want, c.ok)
		}
	}
}

// canonical = "upstream-or-self" on a response headgate does not read
// (§4.8, §16.4): the upstream's Link canonical is kept when it is on
// base_url's origin, re-spelled as a sitemap <loc>; else self. Without one,
// an HTML page under rewrite = false (and a 304, which has no type) gets
// no canonical Link, so none contradicts the head it holds.
func TestUpstreamOrSelfLinkHeader(t *testing.T) {
	const rulesTOML = `
[[rule]]
match = "/*"
canonical = "upstream-or-self"
robots = { index = true, follow = true }

[[rule]]
match = "/raw/*"
rewrite = false
`
	links := map[string]string{
		"/doc.pdf":     `<https://notes.example/docs/a%28b%29.pdf>; rel="canonical", <https://notes.example/x>; rel="next"`,
		"/rel.pdf":     `<../files/a.pdf>; rel=canonical`,
		"/other.pdf":   `<https://other.example/doc.pdf>; rel="canonical"`,
		"/raw/link":    `<https://notes.example/raw/original>; rel="canonical"`,
		"/raw/js":      `<javascript:alert(1)>; rel="canonical"`,
		"/raw/other":   `<//evil.example/x>; rel="canonical"`,
		"/plain.pdf":   "",
		"/raw/page":    "",
		"/not-changed": "",
	}
	_, front := newTestProxy(t, func(w http.ResponseWriter, r *http.Request) {
		if l := links[r.URL.Path]; l != "" {
			w.Header().Set("Link", l)
		}
		switch {
		case r.URL.Path == "/not-changed":
			w.WriteHeader(http.StatusNotModified)
			return
		case strings.HasPrefix(r.URL.Path, "/raw/"):
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, testPage)
		default:
			w.Header().Set("Content-Type", "application/pdf")
			io.WriteString(w, "%PDF-1.7")
		}
	}, rulesTOML)
	for path, want := range map[string]string{
		"/doc.pdf":     `<https://notes.example/docs/a(b).pdf>; rel="canonical"`,
		"/rel.pdf":     `<https://notes.example/files/a.pdf>; rel="canonical"`,
		"/other.pdf":   `<https://notes.example/other.pdf>; rel="canonical"`,
		"/plain.pdf":   `<https://notes.example/plain.pdf>; rel="canonical"`,
		"/raw/link":    `<https://notes.example/raw/original>; rel="canonical"`,
		"/raw/js":      `<https://notes.example/raw/js>; rel="canonical"`, // fails §4.6: self replaces it
		"/raw/other":   `<https://notes.example/raw/other>; rel="canonical"`,
		"/raw/page":    "",
		"/not-changed": "",
	} {
		res, _ := hgtest.Fetch(t, front.URL+path)
		var canon []string
		for _, v := range res.Header.Values("Link") {
			for l := range strings.SplitSeq(v, ", ") {
				if strings.Contains(l, "canonical") {
					canon = append(canon, l)
				}
			}
		}
		if got := strings.Join(canon, " | "); got != want {
			t.Errorf("%s: canonical Link %q, want %q", path, got, want)
		}
		if res.StatusCode == http.StatusOK && res.Header.Get("X-Robots-Tag") != "index, follow" {
			t.Errorf("%s: X-Robots-Tag %q", path, res.Header.Get("X-Robots-Tag"))
		}
	}
	// The other links of the upstream's header stay.
	res, _ := hgtest.Fetch(t, front.URL+"/doc.pdf")
	if !strings.Contains(strings.Join(res.Header.Values("Link"), ", "), `<https://notes.example/x>; rel="next"`) {
		t.Errorf("the rel=next link was lost: %q", res.Header.Values("Link"))
	}
}
