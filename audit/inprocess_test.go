package audit

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headgate/headgate/proxy"
	"github.com/headgate/headgate/rewrite"
	"github.com/headgate/headgate/rules"
)

// The in-process tests use base_url http://site.example: with
// preserve_host the upstream sees that Host, so {origin} in the test
// site's pages is the base URL.
const base = "http://site.example"

type upstream struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []string // request URIs
	host []string // Host headers
}

func (u *upstream) requests() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.seen...)
}

func (u *upstream) hosts() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.host...)
}

func serveUpstream(t *testing.T, site map[string]resp) *upstream {
	u := &upstream{}
	h := siteHandler(site)
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.seen = append(u.seen, r.URL.RequestURI())
		u.host = append(u.host, r.Host)
		u.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func config(t *testing.T, extra string) *rules.Config {
	t.Helper()
	src := "[server]\nupstream = \"http://127.0.0.1:1\"\n[site]\nbase_url = \"" + base + "\"\n" + extra
	cfg, err := rules.Parse("test.toml", []byte(src), nil)
	if err != nil {
		t.Fatalf("config: %v\n%s", err, src)
	}
	return cfg
}

func auditInProcess(t *testing.T, site map[string]resp, toml string, o Options, start ...string) (*Report, *upstream) {
	return auditInProcessWith(t, site, toml, o, nil, start...)
}

// auditInProcessWith is auditInProcess with sm as headgate's sitemap handler.
func auditInProcessWith(t *testing.T, site map[string]resp, toml string, o Options, sm proxy.SitemapHandler, start ...string) (*Report, *upstream) {
	t.Helper()
	up := serveUpstream(t, site)
	o.Config = config(t, toml)
	o.Upstream = up.srv.URL
	withHeadgate(t, &o, sm)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := Run(ctx, o, start)
	if err != nil {
		t.Fatal(err)
	}
	return r, up
}

func hasChange(p *Page, a rewrite.Action, identity string) bool {
	if p == nil {
		return false
	}
	for _, c := range p.Changes {
		if c.Action == a && c.Identity == identity {
			return true
		}
	}
	return false
}

func TestInProcessDenyAndHost(t *testing.T) {
	r, up := auditInProcess(t, map[string]resp{
		"/":               doc(clean("/"), `<a href="/internal/admin">admin</a> <a href="/%2e%2e/x">dots</a>`),
		"/internal/admin": withHead("/internal/admin", ""),
	}, "[[rule]]\nmatch = \"/internal/*\"\ndeny = true\n", Options{})
	if p := pageOf(r, base+"/internal/admin"); p == nil || p.Status != 404 || p.Outcome != "denied" {
		t.Errorf("denied page = %+v", p)
	}
	if p := pageOf(r, base+"/%2e%2e/x"); p == nil || p.Status != 400 || p.Outcome != "bad_request" {
		t.Errorf("dot-segment page = %+v", p)
	}
	for _, s := range up.requests() {
		if strings.HasPrefix(s, "/internal/") || strings.Contains(s, "%2e") {
			t.Errorf("the upstream was asked for %s", s)
		}
	}
	if len(up.hosts()) == 0 {
		t.Fatal("the upstream got no request")
	}
	for _, h := range up.hosts() {
		if h != "site.example" {
			t.Errorf("Host %q, want the public host (preserve_host)", h)
		}
	}
	// The links to the denied and the refused path are broken links.
	if got := pathsOf(r, base, LinkBroken); len(r.Findings) != 2 || !slices.Equal(got, []string{"/"}) {
		t.Errorf("findings %+v", r.Findings)
	}
}

func TestInProcessNoPreserveHost(t *testing.T) {
	up := serveUpstream(t, map[string]resp{"/": withHead("/", "")})
	cfg, err := rules.Parse("t.toml", []byte("[server]\nupstream = \"http://127.0.0.1:1\"\npreserve_host = false\n[site]\nbase_url = \""+base+"\"\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), headgateOptions(t, Options{Config: cfg, Upstream: up.srv.URL}), nil); err != nil {
		t.Fatal(err)
	}
	want := strings.TrimPrefix(up.srv.URL, "http://")
	if len(up.hosts()) == 0 {
		t.Fatal("the upstream got no request")
	}
	for _, h := range up.hosts() {
		if h != want {
			t.Errorf("Host %q, want the upstream's %q", h, want)
		}
	}
}

func TestInProcessRulesFix(t *testing.T) {
	site := map[string]resp{
		"/":  doc(clean("/"), `<a href="/a">a</a> <a href="/b">b</a>`),
		"/a": doc(`<title>A</title><link rel="canonical" href="/a">`, ""),
		"/b": doc(`<title>B</title><meta name="description" content="B">`+canon("/b")+`<meta property="og:image" content="/b.png">`, ""),
	}
	r, _ := auditInProcess(t, site, `[[rule]]
match = "/a"
description = "About A"
`, Options{})
	for _, check := range []string{DescriptionMissing, CanonicalRelative, OGImageRelative} {
		if got := pathsOf(r, base, check); len(got) != 0 {
			t.Errorf("%s still on %v", check, got)
		}
	}
	a, b := pageOf(r, base+"/a"), pageOf(r, base+"/b")
	if !hasChange(a, rewrite.Wrote, "description") || !hasChange(a, rewrite.Corrected, "canonical") || a.Canonical != base+"/a" || a.Outcome != "rewritten" {
		t.Errorf("page /a = %+v", a)
	}
	if !hasChange(b, rewrite.Corrected, "og:image") {
		t.Errorf("page /b = %+v", b)
	}
	// Without the rules engine's corrections the same site has them.
	r, _ = auditInProcess(t, site, "correct_upstream = false\n", Options{})
	for _, check := range []string{DescriptionMissing, CanonicalRelative, OGImageRelative} {
		if got := pathsOf(r, base, check); len(got) == 0 {
			t.Errorf("%s not found with correct_upstream = false", check)
		}
	}
}

func TestInProcessShadow(t *testing.T) {
	r, _ := auditInProcess(t, map[string]resp{
		"/": doc(`<title>Home</title>`+canon("/"), ""),
	}, "mode = \"shadow\"\n[[rule]]\nmatch = \"/\"\ndescription = \"Home page\"\n", Options{})
	if got := pathsOf(r, base, DescriptionMissing); !slices.Equal(got, []string{"/"}) {
		t.Errorf("description-missing on %v: shadow mode serves the upstream's bytes", got)
	}
	if !hasChange(pageOf(r, base+"/"), rewrite.Wrote, "description") {
		t.Errorf("shadow mode still lists the changes: %+v", pageOf(r, base+"/"))
	}
}

func TestInProcessNonHTML(t *testing.T) {
	r, _ := auditInProcess(t, map[string]resp{
		"/sitemap.xml": sitemapOf("/a.pdf", "/b.pdf"),
		"/a.pdf":       {ctype: "application/pdf", header: map[string]string{"Link": `<{origin}/old>; rel="canonical", </x.css>; rel=preload`}, body: "%PDF"},
		"/b.pdf":       text("application/pdf", "%PDF"),
		"/docs/a.pdf":  text("application/pdf", "%PDF"),
	}, `[[rule]]
match = "/a.pdf"
canonical = "/docs/a.pdf"
[[rule]]
match = "/b.pdf"
robots = { index = false }
`, Options{})
	if p := pageOf(r, base+"/a.pdf"); p == nil || p.Canonical != base+"/docs/a.pdf" {
		t.Errorf("a.pdf = %+v: want the rule's canonical from its Link header", p)
	}
	if got := pathsOf(r, base, SitemapNonCanonical); !slices.Equal(got, []string{"/a.pdf"}) {
		t.Errorf("sitemap-non-canonical on %v", got)
	}
	if got := pathsOf(r, base, SitemapNoindex); !slices.Equal(got, []string{"/b.pdf"}) {
		t.Errorf("sitemap-noindex on %v (X-Robots-Tag from the rule)", got)
	}
	if got := pathsOf(r, base, CanonicalMultiple); got != nil {
		t.Errorf("the upstream's canonical Link was not replaced: %v", got)
	}
}

func TestInProcessStaging(t *testing.T) {
	r, _ := auditInProcess(t, map[string]resp{
		"/robots.txt":  text("text/plain", "User-agent: *\nDisallow: /\n"),
		"/sitemap.xml": sitemapOf("/", "/n"),
		"/":            doc(clean("/"), `<a href="/dup">dup</a>`),
		"/n":           withHead("/n", `<meta name="robots" content="noindex">`),
		"/dup":         doc(`<title>Dup</title>`+canon("/"), ""),
	}, "mode = \"staging\"\n", Options{})
	if got := pathsOf(r, base, SitemapNoindex); !slices.Equal(got, []string{"/n"}) {
		t.Errorf("sitemap-noindex on %v: want only the page that is noindex in production", got)
	}
	if got := pathsOf(r, base, RobotsBlocksDuplicate); got != nil {
		t.Errorf("robots-blocks-duplicate on %v: the staging robots.txt is not judged", got)
	}
	if len(skipped(r, "site.mode is staging")) != 2 {
		t.Errorf("skipped %+v: want the two staging notes", r.Skipped)
	}
}

// fakeSitemap answers /sitemap.xml and /robots.txt as headgate's sitemap
// package does.
type fakeSitemap struct{ panicOn string }

func (f fakeSitemap) Handles(p string) bool { return p == "/sitemap.xml" || p == "/robots.txt" }

func (f fakeSitemap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == f.panicOn {
		panic("boom")
	}
	if r.URL.Path == "/robots.txt" {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "User-agent: *\nDisallow: /print/\n\nSitemap: "+base+"/sitemap.xml\n")
		return
	}
	w.Header().Set("Content-Type", "application/xml")
	io.WriteString(w, `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for _, p := range []string{"/", "/gone"} {
		w.(http.Flusher).Flush()
		io.WriteString(w, "<url><loc>"+base+p+"</loc></url>")
	}
	io.WriteString(w, "</urlset>")
}

func TestInProcessSitemapHandler(t *testing.T) {
	site := map[string]resp{
		"/sitemap.xml": sitemapOf("/upstream-only"),
		"/":            doc(clean("/"), `<a href="/print/x">print</a>`),
		"/print/x":     doc(`<title>Print</title>`+canon("/"), ""),
	}
	r, up := auditInProcessWith(t, site, "", Options{}, fakeSitemap{})
	if got := pathsOf(r, base, SitemapNot200); !slices.Equal(got, []string{"/gone"}) {
		t.Errorf("sitemap-not-200 on %v", got)
	}
	if got := pathsOf(r, base, RobotsBlocksDuplicate); !slices.Equal(got, []string{"/print/x"}) {
		t.Errorf("robots-blocks-duplicate on %v", got)
	}
	for _, s := range up.requests() {
		if s == "/sitemap.xml" || s == "/robots.txt" || s == "/upstream-only" {
			t.Errorf("the upstream was asked for %s", s)
		}
	}

	r, _ = auditInProcessWith(t, site, "", Options{}, fakeSitemap{panicOn: "/robots.txt"})
	if f := findingsOf(r, RobotsTxtInvalid); len(f) != 1 || !strings.Contains(f[0].Detail, "panicked") || pageOf(r, base+"/") == nil {
		t.Errorf("a panicking handler: findings %+v, pages %+v", r.Findings, r.Pages)
	}
}

func TestInProcessRedirects(t *testing.T) {
	var upURL string
	h := siteHandler(map[string]resp{
		"/":    doc(clean("/"), `<a href="/old">old</a> <a href="/rel">rel</a>`),
		"/new": withHead("/new", ""),
		"/rel": redirect(302, "new"),
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" { // a legacy app that names its own address
			http.Redirect(w, r, upURL+"/new", http.StatusMovedPermanently)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	upURL = srv.URL
	r, err := Run(context.Background(), headgateOptions(t, Options{Config: config(t, ""), Upstream: srv.URL}), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/old", "/rel"} {
		if pg := pageOf(r, base+p); pg == nil || pg.Location != base+"/new" {
			t.Errorf("%s = %+v, want a redirect to %s/new", p, pg, base)
		}
	}
	if pg := pageOf(r, base+"/new"); pg == nil || pg.Status != 200 {
		t.Errorf("/new = %+v", pg)
	}
	if got := pathsOf(r, base, LinkToRedirect); len(r.Findings) != 2 || !slices.Equal(got, []string{"/"}) || len(r.Skipped) != 1 || len(skipped(r, "sitemap answers 404")) != 1 {
		t.Errorf("findings %+v, skipped %+v", r.Findings, r.Skipped)
	}
}

// An upstream that stalls inside the head: the audit sees what headgate
// serves, a 504 once server.upstream_timeout has passed (headgate reads the
// head before it sends a header).
func TestInProcessStallInHead(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<!doctype html><html><head><title>Stalled</title>")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	cfg, err := rules.Parse("test.toml", []byte("[server]\nupstream = \"http://127.0.0.1:1\"\nupstream_timeout = \"200ms\"\n[site]\nbase_url = \""+base+"\"\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), headgateOptions(t, Options{Config: cfg, Upstream: srv.URL, Timeout: 5 * time.Second}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := pageOf(r, base+"/"); p == nil || p.Status != http.StatusGatewayTimeout || p.Outcome != "upstream_error" {
		t.Fatalf("page / = %+v, want headgate's 504", p)
	}
}

// The redirects headgate answers itself (SPEC §11) are the proxy's: the
// audit crawls them as hops without the upstream being asked, a chain of
// rules is one hop (collapsed at load), and a 410 is a broken link.
func TestInProcessOwnRedirects(t *testing.T) {
	site := map[string]resp{
		"/":    doc(clean("/"), `<a href="/old">old</a> <a href="/older">older</a> <a href="/removed">removed</a>`),
		"/new": withHead("/new", ""),
	}
	r, up := auditInProcess(t, site, `
[[redirect]]
from = "/old"
to = "/new"
[[redirect]]
from = "/older"
to = "/old"
[[redirect]]
from = "/removed"
status = 410
`, Options{})
	for _, s := range up.requests() {
		if s == "/old" || s == "/older" || s == "/removed" {
			t.Errorf("the upstream was asked for %s", s)
		}
	}
	if p := pageOf(r, base+"/older"); p == nil || p.Status != 301 || p.Outcome != "redirected" || !slices.Equal(p.Redirects, []string{base + "/new"}) {
		t.Errorf("/older = %+v, want one hop to /new", p)
	}
	if got := pathsOf(r, base, RedirectChain); len(got) != 0 {
		t.Errorf("redirect-chain on %v: headgate collapses its chains", got)
	}
	if got := pathsOf(r, base, LinkToRedirect); !slices.Equal(got, []string{"/", "/"}) && !slices.Equal(got, []string{"/"}) {
		t.Errorf("link-to-redirect on %v", got)
	}
	if got := findingsOf(r, LinkBroken); len(got) != 1 || !strings.Contains(got[0].Detail, "410") {
		t.Errorf("link-broken %+v", got)
	}
}

// headgateOptions is o with headgate's pipeline (withHeadgate).
func headgateOptions(t testing.TB, o Options) Options {
	t.Helper()
	withHeadgate(t, &o, nil)
	return o
}
