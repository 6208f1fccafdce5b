package proxy

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/headgate/headgate/internal/hgtest"
	"github.com/headgate/headgate/rules"
)

type fetchFunc = func(context.Context, string) (io.ReadCloser, error)

// seen records what the upstream received.
type seen struct {
	mu   sync.Mutex
	hits int
	last http.Header
}

func (s *seen) handler(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits++
	s.last = r.Header.Clone()
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write([]byte(testPage))
}

func (s *seen) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits
}

// redirectProxy is a proxy over a counting upstream, with its log.
func redirectProxy(t *testing.T, extra string) (*Proxy, *seen, *hgtest.LogBuffer) {
	t.Helper()
	up := &seen{}
	srv := httptest.NewServer(http.HandlerFunc(up.handler))
	t.Cleanup(srv.Close)
	log := &hgtest.LogBuffer{}
	p, err := New(testConfig(t, srv.URL, extra), Options{
		Logger:  slog.New(slog.NewJSONHandler(log, nil)),
		Sitemap: func(_ *rules.Config, fetch fetchFunc) SitemapHandler { return &fakeSitemap{fetch: fetch} },
	})
	if err != nil {
		t.Fatal(err)
	}
	return p, up, log
}

// do serves one request in process from remote, with headers "K: v".
func do(p *Proxy, method, host, target, remote string, headers ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, "http://"+host+target, nil)
	req.Host = host
	req.RemoteAddr = remote
	for _, kv := range headers {
		k, v, _ := strings.Cut(kv, ": ")
		req.Header.Add(k, v)
	}
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, req)
	return rec
}

const redirectTOML = `[server]
trusted_proxies = ["10.0.0.0/8", "fd00::/8"]

[normalize]
redirect_hosts = ["www.notes.example"]
https = true
trailing_slash = "strip"
lowercase = true
merge_slashes = true

[[rule]]
match = "/internal/*"
deny = true

[[redirect]]
from = "/old/:id{[0-9]+}"
to = "/notes/{id}"

[[redirect]]
from = "/gone/*"
status = 410

[[redirect]]
from = "/temp"
to = "https://other.example/x?a=<b>"
status = 307
`

func TestRedirectResponses(t *testing.T) {
	p, up, log := redirectProxy(t, redirectTOML)
	const client = "192.0.2.7:4444"
	cases := []struct {
		name, method, host, target string
		headers                    []string
		status                     int
		location, source           string
	}{
		{"all normalizations, one hop", "GET", "WWW.notes.example", "//A/", nil, 301, "https://notes.example/a", "normalize"},
		{"normalization then a rule", "GET", "www.notes.example", "/OLD/42/?x=1", nil, 301, "https://notes.example/notes/42?x=1", "normalize"},
		{"a rule", "GET", "notes.example", "/old/42", []string{"X-Forwarded-Proto: https"}, 301, "https://notes.example/notes/42", "normalize"},
		{"HEAD", "HEAD", "www.notes.example", "/A", nil, 301, "https://notes.example/a", "normalize"},
		{"410", "GET", "notes.example", "/gone/x", nil, 410, "", "normalize"},
		{"normalization then an absolute target", "GET", "notes.example", "/temp", nil, 301, "https://other.example/x?a=%3Cb%3E", "normalize"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := up.count()
			rec := do(p, c.method, c.host, c.target, client, c.headers...)
			if rec.Code != c.status || rec.Header().Get("Location") != c.location {
				t.Fatalf("%d %q, want %d %q", rec.Code, rec.Header().Get("Location"), c.status, c.location)
			}
			if up.count() != before {
				t.Error("a redirect was forwarded")
			}
			body := rec.Body.String()
			if c.method == "HEAD" {
				if body != "" {
					t.Errorf("HEAD has a body: %q", body)
				}
				if rec.Header().Get("Content-Length") == "" {
					t.Error("HEAD has no Content-Length")
				}
			} else if c.location != "" && !strings.Contains(body, `<a href="`+c.location+`">`) {
				t.Errorf("body lacks the link:\n%s", body)
			}
			if c.status == 410 && rec.Header().Get("X-Robots-Tag") != "noindex" {
				t.Errorf("410 X-Robots-Tag %q", rec.Header().Get("X-Robots-Tag"))
			}
		})
	}
	// Over https (a trusted proxy says so), rules alone answer.
	rec := do(p, "GET", "notes.example", "/gone/x", "10.1.2.3:1", "X-Forwarded-Proto: https")
	if rec.Code != 410 {
		t.Fatalf("410 over https: %d", rec.Code)
	}
	rec = do(p, "GET", "notes.example", "/temp", "10.1.2.3:1", "X-Forwarded-Proto: https")
	if rec.Code != 307 || rec.Header().Get("Location") != "https://other.example/x?a=%3Cb%3E" {
		t.Fatalf("307: %d %q", rec.Code, rec.Header().Get("Location"))
	}
	if !strings.Contains(rec.Body.String(), `href="https://other.example/x?a=%3Cb%3E"`) {
		t.Errorf("307 body:\n%s", rec.Body.String())
	}
	if got := counterValue(p.rm.total.WithLabelValues("normalize", "301")); got != 5 {
		t.Errorf(`redirects_total{normalize,301} = %v, want 5`, got)
	}
	if got := counterValue(p.rm.total.WithLabelValues("normalize", "410")); got != 1 {
		t.Errorf(`redirects_total{normalize,410} = %v, want 1 (a chain counts under its first hop)`, got)
	}
	if got := counterValue(p.rm.total.WithLabelValues("rule", "307")); got != 1 {
		t.Errorf(`redirects_total{rule,307} = %v, want 1`, got)
	}
	if got := counterValue(p.m.requests.WithLabelValues(string(Redirected))); got != 8 {
		t.Errorf(`requests_total{redirected} = %v, want 8`, got)
	}
	// The access log names the source and the client.
	var line map[string]any
	for _, l := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		if strings.Contains(l, `"msg":"request"`) {
			json.Unmarshal([]byte(l), &line)
		}
	}
	if line["redirect"] != "rule" || line["outcome"] != "redirected" || line["status"] != float64(307) || line["client"] != "10.1.2.3" {
		t.Errorf("last access log line: %v", line)
	}
}

// §11.2's order: the 400 checks, deny, headgate's own endpoints, then
// redirects; other methods are forwarded, never normalized.
func TestRedirectOrderInProxy(t *testing.T) {
	p, up, _ := redirectProxy(t, redirectTOML)
	if rec := do(p, "GET", "www.notes.example", "/a/%2e%2e/b", "192.0.2.1:1"); rec.Code != 400 {
		t.Errorf("bad path: %d", rec.Code)
	}
	if rec := do(p, "GET", "www.notes.example", "/internal/x", "192.0.2.1:1"); rec.Code != 404 {
		t.Errorf("deny: %d", rec.Code)
	}
	if rec := do(p, "GET", "www.notes.example", "/sitemap.xml", "192.0.2.1:1"); rec.Code != 200 || !strings.Contains(rec.Body.String(), "urlset") {
		t.Errorf("sitemap: %d %s", rec.Code, rec.Body.String())
	}
	for _, m := range []string{"POST", "PUT", "DELETE"} {
		before := up.count()
		rec := do(p, m, "www.notes.example", "//A/", "192.0.2.1:1")
		if rec.Code != 200 || up.count() != before+1 {
			t.Errorf("%s: %d, upstream hits %d → %d: want forwarded", m, rec.Code, before, up.count())
		}
	}
	// A rule still answers a POST (the operator picks 307/308 to keep it one).
	if rec := do(p, "POST", "notes.example", "/old/1", "192.0.2.1:1"); rec.Code != 301 {
		t.Errorf("POST to a rule: %d", rec.Code)
	}
	// A served page: nothing redirects it.
	if rec := do(p, "GET", "notes.example", "/a", "10.0.0.1:1", "X-Forwarded-Proto: https"); rec.Code != 200 {
		t.Errorf("normal page: %d %v", rec.Code, rec.Header())
	}
}

func TestStagingRedirect(t *testing.T) {
	p, _, _ := redirectProxy(t, "mode = \"staging\"\n[normalize]\nlowercase = true\n[[redirect]]\nfrom = \"/g\"\nstatus = 410\n")
	for target, status := range map[string]int{"/A": 301, "/g": 410} {
		rec := do(p, "GET", "notes.example", target, "192.0.2.1:1")
		if rec.Code != status || rec.Header().Get("X-Robots-Tag") != stagingRobots {
			t.Errorf("%s: %d, X-Robots-Tag %q", target, rec.Code, rec.Header().Get("X-Robots-Tag"))
		}
	}
}

// §11.1 and §17: a trusted peer's X-Forwarded-For is extended and its
// X-Forwarded-Proto kept; any other peer's are replaced.
func TestTrustedProxies(t *testing.T) {
	p, up, log := redirectProxy(t, redirectTOML)
	cases := []struct {
		name, remote    string
		headers         []string
		status          int
		wantXFF, wantXP string
		wantClient      string
	}{
		{"trusted, https", "10.9.8.7:1234", []string{"X-Forwarded-For: 203.0.113.5", "X-Forwarded-Proto: https"}, 200, "203.0.113.5, 10.9.8.7", "https", "203.0.113.5"},
		{"trusted chain", "10.9.8.7:1234", []string{"X-Forwarded-For: 203.0.113.5, 10.1.1.1", "X-Forwarded-Proto: https"}, 200, "203.0.113.5, 10.1.1.1, 10.9.8.7", "https", "203.0.113.5"},
		{"trusted, Forwarded", "10.9.8.7:1234", []string{"Forwarded: for=203.0.113.5;proto=https"}, 200, "10.9.8.7", "https", "10.9.8.7"},
		{"trusted IPv6", "[fd00::1]:1234", []string{"X-Forwarded-For: 2001:db8::5", "X-Forwarded-Proto: https"}, 200, "2001:db8::5, fd00::1", "https", "2001:db8::5"},
		{"trusted, no proto: headgate's own listener (http)", "10.9.8.7:1234", []string{"X-Forwarded-For: 203.0.113.5"}, 301, "", "", "203.0.113.5"},
		{"untrusted: replaced", "192.0.2.9:1234", []string{"X-Forwarded-For: 203.0.113.5", "X-Forwarded-Proto: https"}, 301, "", "", "192.0.2.9"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := do(p, "GET", "notes.example", "/page", c.remote, c.headers...)
			if rec.Code != c.status {
				t.Fatalf("status %d, want %d (%v)", rec.Code, c.status, rec.Header())
			}
			if c.status == 200 {
				up.mu.Lock()
				h := up.last
				up.mu.Unlock()
				if got := strings.Join(h.Values("X-Forwarded-For"), ", "); got != c.wantXFF {
					t.Errorf("X-Forwarded-For %q, want %q", got, c.wantXFF)
				}
				if got := h.Get("X-Forwarded-Proto"); got != c.wantXP {
					t.Errorf("X-Forwarded-Proto %q, want %q", got, c.wantXP)
				}
			}
			lines := strings.Split(strings.TrimSpace(log.String()), "\n")
			var last map[string]any
			json.Unmarshal([]byte(lines[len(lines)-1]), &last)
			if last["client"] != c.wantClient {
				t.Errorf("access log client %v, want %s", last["client"], c.wantClient)
			}
		})
	}
	// Untrusted on a served path: what headgate saw replaces the headers.
	p2, up2, _ := redirectProxy(t, "")
	do(p2, "GET", "notes.example", "/x", "10.9.8.7:1", "X-Forwarded-For: 1.2.3.4", "X-Forwarded-Proto: https")
	if got := up2.last.Get("X-Forwarded-For"); got != "10.9.8.7" {
		t.Errorf("untrusted X-Forwarded-For %q", got)
	}
	if got := up2.last.Get("X-Forwarded-Proto"); got != "http" {
		t.Errorf("untrusted X-Forwarded-Proto %q", got)
	}
}

// A table swapped by a reload: requests see the old table or the new,
// never a mix or none.
func TestRedirectTableReload(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "h.toml")
	table := filepath.Join(dir, "r.csv")
	os.WriteFile(cfgPath, []byte("[server]\nupstream = \"http://127.0.0.1:1\"\n[site]\nbase_url = \"https://notes.example\"\n[[redirect_table]]\nfile = \"r.csv\"\n"), 0o644)
	os.WriteFile(table, []byte("from,to\n/a,/one\n"), 0o644)
	cfg, err := rules.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rec := do(p, "GET", "notes.example", "/a", "192.0.2.1:1"); rec.Header().Get("Location") != "https://notes.example/one" {
		t.Fatalf("before: %d %v", rec.Code, rec.Header())
	}
	os.WriteFile(table, []byte("from,to\n/a,/two\n"), 0o644)
	p.Reload("test")
	if rec := do(p, "GET", "notes.example", "/a", "192.0.2.1:1"); rec.Header().Get("Location") != "https://notes.example/two" {
		t.Fatalf("after: %d %v", rec.Code, rec.Header())
	}
	os.WriteFile(table, []byte("from,to\n/a,javascript:x\n"), 0o644)
	p.Reload("test")
	if rec := do(p, "GET", "notes.example", "/a", "192.0.2.1:1"); rec.Header().Get("Location") != "https://notes.example/two" {
		t.Fatalf("a refused table replaced the good one: %d %v", rec.Code, rec.Header())
	}
	if got := counterValue(p.m.reloads.WithLabelValues("refused")); got != 1 {
		t.Errorf("refused reloads %v", got)
	}
}

func counterValue(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		return -1
	}
	return m.GetCounter().GetValue()
}

// Shadow mode computes the redirect, logs and counts it, and serves the
// request as if there were none.
func TestShadowRedirect(t *testing.T) {
	p, up, log := redirectProxy(t, "mode = \"shadow\"\n[[redirect]]\nfrom = \"/old\"\nto = \"/new\"\n")
	rec := do(p, "GET", "notes.example", "/old", "192.0.2.1:1")
	if rec.Code != 200 || up.count() != 1 {
		t.Fatalf("shadow: %d, upstream hits %d", rec.Code, up.count())
	}
	if !strings.Contains(log.String(), `"msg":"shadow: would redirect"`) || !strings.Contains(log.String(), `"location":"https://notes.example/new"`) {
		t.Errorf("no shadow log line:\n%s", log.String())
	}
	if got := counterValue(p.rm.total.WithLabelValues("rule", "301")); got != 1 {
		t.Errorf("redirects_total{rule,301} = %v", got)
	}
}

// No Location is built from Host, X-Forwarded-Host or Forwarded.
func TestRedirectIgnoresForgedHosts(t *testing.T) {
	p, _, _ := redirectProxy(t, redirectTOML)
	for _, remote := range []string{"192.0.2.1:1", "10.0.0.9:1"} { // untrusted, trusted
		rec := do(p, "GET", "evil.example", "/Old/7", remote,
			"X-Forwarded-Host: evil.example", "Forwarded: host=evil.example;proto=http", "X-Forwarded-Proto: http")
		if rec.Code != 301 || rec.Header().Get("Location") != "https://notes.example/notes/7" {
			t.Errorf("from %s: %d %q", remote, rec.Code, rec.Header().Get("Location"))
		}
		if strings.Contains(rec.Body.String(), "evil") {
			t.Errorf("from %s: the body names the forged host:\n%s", remote, rec.Body.String())
		}
	}
}

func TestWarnHTTPSWithoutTrustedProxies(t *testing.T) {
	_, _, log := redirectProxy(t, "[normalize]\nhttps = true\n")
	if !strings.Contains(log.String(), "server.trusted_proxies is empty") {
		t.Errorf("no warning:\n%s", log.String())
	}
	_, _, log = redirectProxy(t, "[server]\ntrusted_proxies = [\"10.0.0.0/8\"]\n\n[normalize]\nhttps = true\n")
	if strings.Contains(log.String(), "trusted_proxies is empty") {
		t.Errorf("a warning with trusted proxies:\n%s", log.String())
	}
}

// TestAppendHTMLEscaped checks the redirect page's escaping against
// html.EscapeString.
func TestAppendHTMLEscaped(t *testing.T) {
	for _, s := range []string{"", "https://notes.example/a?b=1&c=2", `x"y'z<w>&amp;`, "\xff\x00é"} {
		if got, want := string(appendHTMLEscaped([]byte("pre:"), s)), "pre:"+html.EscapeString(s); got != want {
			t.Errorf("%q: %q, want %q", s, got, want)
		}
	}
}
