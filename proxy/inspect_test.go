package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/headgate/headgate/rules"
)

// inspectorFixture is a proxy in front of h with its public and admin
// listeners, and a count of the upstream's requests.
type inspectorFixture struct {
	p             *Proxy
	public, admin *httptest.Server
	hits          atomic.Int64
}

func newInspector(t *testing.T, h http.HandlerFunc, extra string) *inspectorFixture {
	t.Helper()
	f := &inspectorFixture{}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(up.Close)
	p, err := New(testConfig(t, up.URL, extra), Options{
		Sitemap: func(cfg *rules.Config, fetch func(ctx context.Context, path string) (io.ReadCloser, error)) SitemapHandler {
			return staticSitemap{}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.p = p
	f.public = httptest.NewServer(p)
	t.Cleanup(f.public.Close)
	f.admin = httptest.NewServer(p.Admin())
	t.Cleanup(f.admin.Close)
	return f
}

// staticSitemap serves a two-URL sitemap, one URL on another origin.
type staticSitemap struct{}

func (staticSitemap) Handles(path string) bool { return path == "/sitemap.xml" }
func (staticSitemap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/xml")
	io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`+
		`<url><loc>https://notes.example/notes/3</loc></url><url><loc>https://evil.example/x</loc></url>`+
		`<url><loc>https://notes.example/a%20b?page=2</loc></url></urlset>`)
}

func (f *inspectorFixture) get(t *testing.T, srv *httptest.Server, rawPath string, query url.Values) (int, http.Header, []byte) {
	t.Helper()
	u := srv.URL + rawPath
	if query != nil {
		u += "?" + query.Encode()
	}
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 8<<20))
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, res.Header, b
}

func (f *inspectorFixture) report(t *testing.T, path string) (int, *inspectReport) {
	t.Helper()
	code, _, b := f.get(t, f.admin, "/inspect", url.Values{"path": {path}, "format": {"json"}})
	var rep inspectReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("format=json: %v\n%s", err, b)
	}
	return code, &rep
}

const notePage = `<!DOCTYPE html>
<html lang="en"><head>
<meta charset="utf-8">
<title>Note 3: Tagging notes | Notes</title>
<meta name="description" content="Group related notes with tags.">
<link rel="canonical" href="/notes/3">
<meta name="viewport" content="width=device-width">
</head><body><h1>Note 3</h1></body></html>
`

const noteRules = `[site]
title_template = "%s · Notes"

[[rule]]
match = "/*"
[rule.open_graph]
site_name = "Notes"
image = { url = "/covers/home.png", width = 1200, height = 630 }
[rule.twitter]
card = "summary_large_image"

[[rule]]
match = "/notes/:id{[0-9]+}"
title = "A very long title for note {id}, longer than any search engine shows in full"
canonical = "self"
[rule.headers]
x-robots-tag = "noarchive"

[[rule]]
match = "/internal/*"
deny = true
`

func htmlPage(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, body)
	}
}

func TestInspectReport(t *testing.T) {
	f := newInspector(t, htmlPage(notePage), strings.Replace(noteRules, "[site]\n", "", 1))
	code, rep := f.report(t, "/notes/3?utm_source=x")
	if code != 200 {
		t.Fatalf("status %d", code)
	}
	if rep.Decision.Kind != "rules" || len(rep.Decision.Rules) != 2 ||
		rep.Decision.Rules[0].Pattern != "/*" || rep.Decision.Rules[1].Pattern != "/notes/:id{[0-9]+}" {
		t.Errorf("decision %+v", rep.Decision)
	}
	if rep.Outcome != "rewritten" || rep.Upstream == nil || rep.Upstream.Status != 200 || rep.Served.Status != 200 {
		t.Errorf("outcome %q upstream %+v served %d", rep.Outcome, rep.Upstream, rep.Served.Status)
	}
	marks := map[string]headRow{}
	for _, r := range rep.Heads {
		marks[r.Key] = r
	}
	for key, want := range map[string]string{
		"meta charset":           "same",
		"title":                  "changed",
		"link canonical":         "changed",
		"meta name=description":  "same",
		"meta name=viewport":     "same",
		"meta property=og:image": "added",
	} {
		if marks[key].Mark != want {
			t.Errorf("head line %q marked %q, want %q (%+v)", key, marks[key].Mark, want, marks[key])
		}
	}
	if r := marks["link canonical"]; r.Upstream != `<link rel="canonical" href="/notes/3">` ||
		r.Served != `<link rel="canonical" href="https://notes.example/notes/3">` {
		t.Errorf("canonical line %+v", r)
	}
	var replaced bool
	for _, c := range rep.Changes {
		if c.Action == "replaced" && c.Identity == "canonical" && c.Reason != "" {
			replaced = true
		}
		if c.Reason == "" {
			t.Errorf("change without a reason: %+v", c)
		}
		if c.Action == "wrote" && c.Identity == "canonical" && c.Reason != "rule /notes/:id{[0-9]+} (test.toml:16) sets it" {
			t.Errorf("written canonical: reason %q", c.Reason)
		}
		if c.Action == "wrote" && c.Key == "og:site_name" && c.Reason != "rule /* (test.toml:8) sets it" {
			t.Errorf("written og:site_name: reason %q", c.Reason)
		}
	}
	if !replaced {
		t.Errorf("no replaced canonical in %+v", rep.Changes)
	}
	// The previews: the title cut in the text at a word before 60.
	s := rep.Search
	if s == nil || !s.TitleCut || len([]rune(s.Title)) > 60 || !strings.HasSuffix(s.Title, "…") ||
		!strings.HasPrefix("A very long title for note 3, longer than any search engine shows in full · Notes", strings.TrimSuffix(s.Title, "…")) {
		t.Errorf("search preview %+v", s)
	}
	if s != nil && (s.Description != "Group related notes with tags." || strings.Join(s.Breadcrumb, " › ") != "notes.example › notes › 3") {
		t.Errorf("search preview %+v", s)
	}
	c := rep.Card
	if c == nil || c.Shape != "summary_large_image" || c.Image != "https://notes.example/covers/home.png" || !c.ImageOK ||
		c.SiteName != "Notes" || c.Domain != "notes.example" {
		t.Errorf("card %+v", c)
	}
	// Headers headgate set are marked.
	hm := map[string]string{}
	for _, h := range rep.Served.Headers {
		hm[h.Name] = h.Mark
	}
	if hm["X-Robots-Tag"] != "added" || hm["Content-Type"] != "same" {
		t.Errorf("header marks %v", hm)
	}
	if f.hits.Load() != 1 {
		t.Errorf("upstream asked %d times, want 1", f.hits.Load())
	}
}

// The upstream gets the request the proxy would send for a client without
// cookies: the base URL's host (preserve_host is off: the upstream's own),
// no Cookie, headgate's forwarding headers.
func TestInspectAsksAsTheProxy(t *testing.T) {
	var got *http.Request
	f := newInspector(t, func(w http.ResponseWriter, r *http.Request) {
		got = r.Clone(context.Background())
		htmlPage(notePage)(w, r)
	}, strings.Replace(noteRules, "[site]\n", "", 1))
	req, _ := http.NewRequest("GET", f.admin.URL+"/inspect?path=/notes/3", nil)
	req.Header.Set("Cookie", "session=secret")
	req.Header.Set("Authorization", "Basic eDp5")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if got == nil {
		t.Fatal("the upstream was not asked")
	}
	if got.Header.Get("Cookie") != "" || got.Header.Get("Authorization") != "" {
		t.Errorf("client credentials reached the upstream: %v", got.Header)
	}
	if got.Header.Get("User-Agent") != inspectUA || got.Header.Get("X-Forwarded-For") == "" || got.URL.RequestURI() != "/notes/3" {
		t.Errorf("upstream request %s %v", got.URL, got.Header)
	}
}

func TestInspectNotOnPublic(t *testing.T) {
	f := newInspector(t, func(w http.ResponseWriter, r *http.Request) {
		http.NotFound(w, r)
	}, "")
	code, _, body := f.get(t, f.public, "/inspect", url.Values{"path": {"/notes/3"}})
	if code != http.StatusNotFound || bytes.Contains(body, []byte("inspector")) {
		t.Errorf("public /inspect: %d %q", code, body)
	}
	if f.hits.Load() != 1 {
		t.Errorf("the public /inspect was not simply forwarded (%d upstream requests)", f.hits.Load())
	}
}

func TestInspectBadPath(t *testing.T) {
	f := newInspector(t, htmlPage(notePage), "")
	for _, path := range []string{
		"https://evil.example/x",
		"http:/x",
		"//evil.example/x",
		"///x",
		"notes/3",
		"/notes/3\r\nX-Injected: 1",
		"/notes/3\nx",
		"/a b",
		"/a#frag",
		`/\evil.example`,
		"/caf\xe9", // Latin-1, not UTF-8: no text a form sends
		" /x",
		// Not an origin-form target (RFC 9112 §3.2.1), so 400 (§17).
		"/a<b", `/a"b`, "/a{b}", "/a|b", "/a^b", "/a`b", "/a[b]", "/a>b",
		"/a?q=%zz", "/a%", "/a%4", "/x?%",
	} {
		for _, format := range []string{"", "json"} {
			q := url.Values{"path": {path}}
			if format != "" {
				q.Set("format", format)
			}
			code, h, body := f.get(t, f.admin, "/inspect", q)
			if code != http.StatusBadRequest {
				t.Errorf("path %q format %q: %d, want 400", path, format, code)
			}
			if format == "json" && !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
				t.Errorf("path %q: Content-Type %q", path, h.Get("Content-Type"))
			}
			if bytes.Contains(body, []byte("X-Injected: 1")) && format == "" {
				t.Errorf("path %q echoed raw: %s", path, body)
			}
		}
	}
	code, _, _ := f.get(t, f.admin, "/inspect", url.Values{"path": {"/"}, "format": {"xml"}})
	if code != http.StatusBadRequest {
		t.Errorf("format=xml: %d", code)
	}
	if n := f.hits.Load(); n != 0 {
		t.Errorf("bad paths reached the upstream %d times", n)
	}
}

func TestInspectDecisions(t *testing.T) {
	f := newInspector(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new?x=1", http.StatusMovedPermanently)
			return
		}
		htmlPage(notePage)(w, r)
	}, strings.Replace(noteRules, "[site]\n", "", 1))
	_, rep := f.report(t, "/internal/admin")
	if rep.Decision.Kind != "deny" || rep.Served.Status != 404 || rep.Upstream != nil {
		t.Errorf("deny: %+v served %d upstream %+v", rep.Decision, rep.Served.Status, rep.Upstream)
	}
	_, rep = f.report(t, "/old")
	if rep.Decision.Kind != "redirect" || rep.Decision.Status != 301 || rep.Decision.Location != "/new?x=1" || rep.Decision.By != "upstream" {
		t.Errorf("redirect: %+v", rep.Decision)
	}
	_, rep = f.report(t, "/a/../b")
	if rep.Decision.Kind != "bad_request" || rep.Served.Status != 400 {
		t.Errorf("dot segment: %+v %d", rep.Decision, rep.Served.Status)
	}
	if n := f.hits.Load(); n != 1 {
		t.Errorf("upstream asked %d times, want 1 (the redirect)", n)
	}
}

func TestInspectIndex(t *testing.T) {
	f := newInspector(t, htmlPage(notePage), "")
	code, h, body := f.get(t, f.admin, "/inspect", nil)
	if code != 200 || !strings.Contains(h.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Fatalf("%d %v", code, h)
	}
	for _, want := range []string{`<form method="get"`, `name="path"`, `href="?path=%2Fnotes%2F3"`, `href="?path=%2Fa%2520b%3Fpage%3D2"`} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("index lacks %s:\n%s", want, body)
		}
	}
	if bytes.Contains(body, []byte("evil.example")) {
		t.Error("a sitemap URL on another origin is offered")
	}
	_, _, body = f.get(t, f.admin, "/inspect", url.Values{"format": {"json"}})
	var idx inspectIndexPage
	if err := json.Unmarshal(body, &idx); err != nil || len(idx.Links) != 2 || idx.Links[0].Path != "/notes/3" {
		t.Errorf("json index %v %+v", err, idx)
	}
}

// The upstream's head is hostile: whatever it holds, the inspector's page
// has no script, no event handler and no javascript: URL of its own.
const hostileHead = "<!DOCTYPE html><html><head><meta charset=\"utf-8\">" +
	"<title></textarea><script>document.title='pwned'</script></title>" +
	"<meta name=\"description\" content=\"&quot;><img src=x onerror=alert(1)>\">" +
	"<meta property=\"og:title\" content=\"</textarea><script>document.body.append('pwned')</script>\">" +
	"<meta property=\"og:image\" content=\"javascript:alert(2)\">" +
	"<link rel=\"canonical\" href=\"javascript:alert(3)\">" +
	"<meta name=\"twitter:url\" content=\"\xff\xfe\xc3(\">" +
	"<meta name=\"bad\xffname\" content=\"x\x00y\">" +
	"<meta property=\"og:description\" content=\"bell\x07 and \x01\">" +
	"<meta property=\"og:site_name\" content=\"site\x1b[31m\">" +
	"<script>document.title='pwned2'</script>" +
	"<style>body{background:url(javascript:alert(4))}</style>" +
	"</head><body></body></html>"

func TestInspectEscapesHostileHead(t *testing.T) {
	f := newInspector(t, htmlPage(hostileHead), `
[[rule]]
match = "/*"
[rule.twitter]
card = "summary"
`)
	code, h, body := f.get(t, f.admin, "/inspect", url.Values{"path": {"/x"}})
	if code != 200 {
		t.Fatalf("status %d", code)
	}
	if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") {
		t.Errorf("CSP %q", csp)
	}
	assertInert(t, body)
	for i, c := range body {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' || c == 0x7f {
			t.Fatalf("a raw control byte %#x at %d: …%q…", c, i, body[max(i-40, 0):min(i+20, len(body))])
		}
	}
	for _, want := range []string{"&lt;/textarea&gt;&lt;script&gt;", `\xFF`, `bell\u0007 and \u0001`, `site\u001B[31m`} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("page lacks the escaped text %s", want)
		}
	}
	_, rep := f.report(t, "/x")
	if rep.Card == nil || rep.Card.ImageOK {
		t.Errorf("a javascript: og:image is offered to load: %+v", rep.Card)
	}
}

// assertInert parses an inspector page and fails on anything that could
// run or load: a script, an event handler, a javascript: URL, an image
// that is not http(s).
func assertInert(t *testing.T, page []byte) {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "script", "iframe", "object", "embed", "base", "textarea":
				t.Errorf("the page has a <%s>", n.Data)
			}
			for _, a := range n.Attr {
				v := strings.ToLower(strings.TrimSpace(a.Val))
				if strings.HasPrefix(a.Key, "on") {
					t.Errorf("<%s %s=%q>", n.Data, a.Key, a.Val)
				}
				if (a.Key == "href" || a.Key == "src" || a.Key == "action") && strings.HasPrefix(v, "javascript:") {
					t.Errorf("<%s %s=%q>", n.Data, a.Key, a.Val)
				}
				if n.Data == "img" && a.Key == "src" && !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") {
					t.Errorf("<img src=%q>", a.Val)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
}

// Bad upstreams: the inspector answers within upstream_timeout plus its
// slack, with what it saw, reading a bounded amount.
func TestInspectBadUpstreams(t *testing.T) {
	head := "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Big</title></head><body>"
	var sent atomic.Int64
	release := make(chan struct{})
	f := newInspector(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		wait := func() {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		switch r.URL.Path {
		case "/huge": // 500 MB, written as long as anyone reads
			w.Header().Set("Content-Length", fmt.Sprint(500<<20))
			io.WriteString(w, head)
			chunk := bytes.Repeat([]byte("<p>lorem ipsum</p>\n"), 3000)
			for n := int64(len(head)); n < 500<<20; n += int64(len(chunk)) {
				if _, err := w.Write(chunk[:min(int64(len(chunk)), 500<<20-n)]); err != nil {
					return
				}
				sent.Add(int64(len(chunk)))
			}
		case "/longhead": // a head far beyond max_head_bytes
			io.WriteString(w, "<!DOCTYPE html><html><head><title>Long</title>")
			for i := 0; i < 20000; i++ {
				fmt.Fprintf(w, `<meta name="k%d" content="v">`, i)
			}
			io.WriteString(w, "</head><body>x</body></html>")
		case "/binary": // random bytes labelled text/html
			rnd := rand.New(rand.NewPCG(1, 2))
			b := make([]byte, 1<<20)
			for i := range b {
				b[i] = byte(rnd.Uint32())
			}
			w.Write(b)
		case "/stall-before": // no headers at all
			wait()
		case "/stall-head": // headers, part of the head, then nothing
			io.WriteString(w, "<!DOCTYPE html><html><head><title>Half")
			w.(http.Flusher).Flush()
			wait()
		case "/stall-body": // the whole head, then nothing
			io.WriteString(w, head)
			w.(http.Flusher).Flush()
			wait()
		}
	}, `[server]
upstream_timeout = "1s"
max_head_bytes = "64KiB"

[[rule]]
match = "/*"
canonical = "self"
`)
	t.Cleanup(func() { close(release) }) // before the upstream closes
	budget := time.Second + inspectSlack + 2*time.Second
	for _, c := range []struct {
		path    string
		code    int
		outcome string
		check   func(t *testing.T, rep *inspectReport)
	}{
		{"/huge", 200, "rewritten", func(t *testing.T, rep *inspectReport) {
			n := sent.Load()
			if n > 64<<20 {
				t.Errorf("the upstream sent %d MB of its 500 MB: the inspector reads the body", n>>20)
			}
			t.Logf("the upstream wrote %d KiB of its 500 MB before the inspector hung up", n>>10)
		}},
		{"/longhead", 200, "skipped_too_large", func(t *testing.T, rep *inspectReport) {
			if len(rep.Heads) == 0 || len(rep.Heads) > maxHeadRows {
				t.Errorf("%d head lines", len(rep.Heads))
			}
		}},
		{"/binary", 200, "", nil},
		{"/stall-before", 504, "", nil},
		{"/stall-head", 504, "", nil},
		{"/stall-body", 200, "rewritten", func(t *testing.T, rep *inspectReport) {
			if len(rep.Heads) == 0 || len(rep.Notes) == 0 {
				t.Errorf("heads %d, notes %q: want what was seen and why it stopped", len(rep.Heads), rep.Notes)
			}
		}},
	} {
		t.Run(strings.TrimPrefix(c.path, "/"), func(t *testing.T) {
			t0 := time.Now()
			code, rep := f.report(t, c.path)
			d := time.Since(t0)
			if d > budget {
				t.Errorf("answered after %v, want within %v", d, budget)
			}
			t.Logf("%s: %d after %v", c.path, code, d.Round(time.Millisecond))
			if code != c.code || c.outcome != "" && rep.Outcome != c.outcome {
				t.Errorf("status %d outcome %q (%s), want %d %q; notes %q", code, rep.Outcome, rep.Reason, c.code, c.outcome, rep.Notes)
			}
			if c.check != nil {
				c.check(t, rep)
			}
			// The HTML page too: it renders, and stays inert.
			_, _, page := f.get(t, f.admin, "/inspect", url.Values{"path": {c.path}})
			assertInert(t, page)
		})
	}
}

func TestCutWords(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
		cut  bool
	}{
		{"Short title", 60, "Short title", false},
		{strings.Repeat("a", 60), 60, strings.Repeat("a", 60), false},
		{strings.Repeat("a", 61), 60, strings.Repeat("a", 59) + "…", true},
		{"Note 3: Tagging notes and finding them again later, with the sidebar · Notes", 60,
			"Note 3: Tagging notes and finding them again later, with…", true},
		{"  spaced\n\tout  ", 60, "spaced out", false},
		{"Ünïcödé " + strings.Repeat("é", 70), 60, "Ünïcödé " + strings.Repeat("é", 51) + "…", true},
	} {
		got, cut := cutWords(c.in, c.n)
		if got != c.want || cut != c.cut {
			t.Errorf("cutWords(%q, %d) = %q %v, want %q %v", c.in, c.n, got, cut, c.want, c.cut)
		}
		if len([]rune(got)) > c.n {
			t.Errorf("cutWords(%q) is %d characters", c.in, len([]rune(got)))
		}
	}
}

// What an origin-form target may hold is accepted as it is.
func TestInspectTargetAccepts(t *testing.T) {
	for _, path := range []string{"/", "/notes/3", "/wiki/Tea_(drink)", "/a:b@c/!$&'*+,;=", "/s?q=a+b&x=%C3%A9&y=/?", "/%7euser", "/-._~"} {
		if got, err := inspectTarget(path); err != nil || got != path {
			t.Errorf("inspectTarget(%q) = %q, %v", path, got, err)
		}
	}
}

// After an implicit end of the head (an <img> in it) the rewriter reads on
// to the literal </head> and replaces there what it writes; the inspector
// shows those tags too, so the side-by-side agrees with the change list: a
// replaced og:title is "changed", not "added".
func TestInspectStretchAfterImplicitEnd(t *testing.T) {
	const page = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>T</title>
<img src="/pixel.gif">
<meta property="og:title" content="Old">
<svg><title>an icon</title></svg>
<meta name="x" content="y">
</head><body><p>text</p><meta name="in-body" content="z"></body></html>`
	f := newInspector(t, htmlPage(page), strings.Replace(noteRules, "[site]\n", "", 1))
	_, rep := f.report(t, "/p")
	if rep.HeadEnd.Upstream != "<img>" {
		t.Errorf("upstream head end %q, want <img>", rep.HeadEnd.Upstream)
	}
	rows := map[string]headRow{}
	for _, r := range rep.Heads {
		rows[r.Key] = r
	}
	if r := rows["meta property=og:title"]; r.Mark != "changed" || !strings.Contains(r.Upstream, `content="Old"`) || !strings.Contains(r.Upstream, "after the head's end") {
		t.Errorf("og:title row %+v", r)
	}
	if r := rows["meta name=x"]; r.Mark != "same" {
		t.Errorf("a late tag headgate leaves alone: %+v", r)
	}
	for key := range rows {
		if strings.Contains(key, "in-body") || key == "title #2" {
			t.Errorf("a tag past the stretch or inside <svg> listed: %q", key)
		}
	}
	var replaced bool
	for _, c := range rep.Changes {
		replaced = replaced || c.Action == "replaced" && c.Identity == "og:title"
	}
	if !replaced {
		t.Errorf("the change list does not say og:title was replaced: %+v", rep.Changes)
	}
}

// The inspector ends the head where the rewriter does in the other cases
// too: an <svg> that ends it (its <title> and <link> are not the head's),
// a </body> in the head (the stretch up to </head> is read on), and head
// elements after </head> (a parser still puts them in the head).
func TestInspectHeadEndsAsTheRewriter(t *testing.T) {
	for _, c := range []struct {
		name, page, end  string
		listed, unlisted []string
	}{
		{"svg", `<!DOCTYPE html><html><head><meta charset="utf-8"><title>T</title><svg><title>an icon</title><link rel="canonical" href="/icon"></svg>` +
			`<meta property="og:title" content="Old"></head><body>x</body></html>`, "<svg>",
			[]string{"meta property=og:title"}, []string{"title #2", "link canonical"}},
		{"end tag", `<!DOCTYPE html><html><head><meta charset="utf-8"><title>T</title></body><meta property="og:title" content="Old"></head><body>x</body></html>`, "</body>",
			[]string{"meta property=og:title"}, nil},
		{"no-break space", `<!DOCTYPE html><html><head><meta charset="utf-8"><title>T</title>&nbsp;<meta property="og:title" content="Old"></head><body>x</body></html>`, "text \u00a0",
			[]string{"meta property=og:title"}, nil},
		{"after </head>", `<!DOCTYPE html><html><head><meta charset="utf-8"><title>T</title></head>` + "\n" + `<meta property="og:title" content="Old"><body>x<meta name="in-body" content="z"></body></html>`, "</head>",
			[]string{"meta property=og:title"}, []string{"meta name=in-body"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newInspector(t, htmlPage(c.page), strings.Replace(noteRules, "[site]\n", "", 1))
			_, rep := f.report(t, "/p")
			if rep.HeadEnd.Upstream != c.end {
				t.Errorf("upstream head end %q, want %q", rep.HeadEnd.Upstream, c.end)
			}
			rows := map[string]headRow{}
			for _, r := range rep.Heads {
				rows[r.Key] = r
			}
			for _, k := range c.listed {
				if r := rows[k]; r.Mark != "changed" || r.Upstream == "" {
					t.Errorf("%s: row %+v, want the upstream's tag, changed", k, r)
				}
			}
			for _, k := range c.unlisted {
				if r, ok := rows[k]; ok && r.Upstream != "" {
					t.Errorf("%s listed on the upstream side: %+v", k, r)
				}
			}
		})
	}
}
