package test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headgate/headgate/app"
	"github.com/headgate/headgate/audit"
	"github.com/headgate/headgate/rules"
)

// e2ePaths is every path e2eSite serves, by what it is: pages, the
// upstream's codings, assets and non-HTML, fragments, statuses, the
// upstream's and headgate's redirects, denied and refused paths, and
// headgate's own files.
var e2ePaths = []string{
	"/", "/p", "/notes/1", "/notes/7", "/notes/7?utm_source=x", "/c", // pages (/c with an ETag and ranges)
	"/identity", "/gzip", "/deflate", "/br", "/zstd", // the upstream's codings
	"/style.css", "/docs/manual.pdf", "/data.json", // not HTML
	"/ajax/nonce", "/ajax/tags", "/ajax/json", "/wp-admin/admin-ajax.php", // fragments, rewrite = false
	"/gone", "/boom", "/missing", // the upstream's error statuses
	"/old", "/old-abs", // the upstream's redirects
	"/moved", "/old-notes/3", "/retired", // headgate's [[redirect]]s
	"/internal/admin", "/internal/", "/internal%2Fadmin", // denied
	"/a/%2e%2e/b", "/a%00b", goRefuses, // refused (400)
	"/sitemap.xml", "/robots.txt", // headgate's own
}

// goRefuses is a target net/http's server answers 400 itself.
const goRefuses = "/a/%zz"

// e2eRules is the config of the e2e differential: the e2e tests' rules in
// one file.
const e2eRules = pageRules + `
[rule.open_graph]
image = "/cover.png"

[[rule]]
match = "/notes/:id{[0-9]+}"
description = "Note {id}"
sitemap = true
sitemap_source = "upstream:/internal/sitemap/notes.jsonl"

[[rule]]
match = "/docs/:name"
canonical = "/docs/{name}"
robots = { index = false }
[rule.headers]
x-doc = "{name}"
cache-control = "public, max-age=60"

[[rule]]
match = "/wp-admin/*"
rewrite = false
robots = { index = false }

[[rule]]
match = "/internal/*"
deny = true

[[redirect]]
from = "/moved"
to = "/p"

[[redirect]]
from = "/old-notes/:id{[0-9]+}"
to = "/notes/{id}"
status = 308

[[redirect]]
from = "/retired"
status = 410
`

// e2eSite is the e2e tests' upstream in one handler: every kind of answer
// the e2e tests get from their own upstreams.
func e2eSite(t testing.TB) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		switch p := r.URL.Path; p {
		case "/identity", "/gzip", "/deflate", "/br", "/zstd":
			coding := strings.TrimPrefix(p, "/")
			h.Set("Content-Type", "text/html; charset=utf-8")
			if coding != "identity" {
				h.Set("Content-Encoding", coding)
			}
			h.Set("Vary", "Accept-Encoding")
			w.Write(encode(t, coding, []byte(page)))
		case "/c":
			h.Set("ETag", `"v1"`)
			h.Set("Content-Type", "text/html; charset=utf-8")
			h.Set("Accept-Ranges", "bytes")
			if r.Header.Get("If-None-Match") == `"v1"` {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			io.WriteString(w, page)
		case "/style.css":
			h.Set("Content-Type", "text/css")
			io.WriteString(w, "body{}")
		case "/docs/manual.pdf":
			h.Set("Content-Type", "application/pdf")
			h.Add("Link", `</old.pdf>; rel="canonical", </font.woff2>; rel=preload; as=font`)
			h.Set("X-Robots-Tag", "all")
			io.WriteString(w, "%PDF-1.4 fake")
		case "/data.json":
			h.Set("Content-Type", "application/json")
			io.WriteString(w, `{"a":"<meta name=x>"}`)
		case "/ajax/nonce":
			h.Set("Content-Type", "text/html; charset=UTF-8")
			io.WriteString(w, "a1b2c3d4e5")
		case "/ajax/tags":
			h.Set("Content-Type", "text/html; charset=UTF-8")
			io.WriteString(w, "<li>go</li><li>seo</li>")
		case "/ajax/json":
			h.Set("Content-Type", "text/html; charset=UTF-8")
			io.WriteString(w, `{"success":true,"data":"<meta name=x>"}`)
		case "/gone":
			h.Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusGone)
			io.WriteString(w, page)
		case "/boom":
			http.Error(w, "boom", http.StatusInternalServerError)
		case "/old":
			http.Redirect(w, r, "/p", http.StatusMovedPermanently)
		case "/old-abs":
			http.Redirect(w, r, "http://"+r.Host+"/notes/1", http.StatusFound)
		case "/internal/sitemap/notes.jsonl":
			h.Set("Content-Type", "application/jsonl")
			io.WriteString(w, `{"params":{"id":"1"},"lastmod":"2024-05-01"}`+"\n"+`{"params":{"id":"7"}}`+"\n")
		case "/", "/p", "/notes/1", "/notes/7", "/wp-admin/admin-ajax.php":
			h.Set("Content-Type", "text/html; charset=utf-8")
			h.Set("Content-Length", strconv.Itoa(len(page)))
			io.WriteString(w, page)
		default:
			http.NotFound(w, r)
		}
	}
}

// exchange is one request the in-process audit made of headgate's handler
// and what it read back.
type exchange struct {
	target string
	host   string
	header http.Header
	status int
	sent   http.Header
	body   []byte
	cut    bool // the reader stopped: body is what it read, a prefix
}

// tapHandler records every exchange with h.
type tapHandler struct {
	h  http.Handler
	wg sync.WaitGroup
	mu sync.Mutex
	ex []*exchange
}

func (t *tapHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t.wg.Add(1)
	defer t.wg.Done()
	e := &exchange{target: r.RequestURI, host: r.Host, header: r.Header.Clone()}
	t.h.ServeHTTP(&tapWriter{ResponseWriter: w, e: e}, r)
	t.mu.Lock()
	t.ex = append(t.ex, e)
	t.mu.Unlock()
}

type tapWriter struct {
	http.ResponseWriter
	e *exchange
}

func (w *tapWriter) WriteHeader(code int) {
	if w.e.sent == nil && code >= 200 {
		w.e.status, w.e.sent = code, w.Header().Clone()
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *tapWriter) Write(b []byte) (int, error) {
	if w.e.sent == nil {
		w.WriteHeader(http.StatusOK)
	}
	n, err := w.ResponseWriter.Write(b)
	w.e.body = append(w.e.body, b[:n]...)
	if err != nil {
		w.e.cut = true
	}
	return n, err
}

func (w *tapWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// The one request pipeline, against the real binary (issue 11): for every
// path of the e2e upstream, what headgate serves on its port — status,
// every header, every body byte — equals what the in-process audit read
// from the handler it drives for the same request (the audit's own
// request, replayed); and `headgate sitemap` writes the served
// /sitemap.xml byte for byte.
func TestDifferentialE2EUpstream(t *testing.T) {
	up := newUpstream(t, e2eSite(t))
	hg := start(t, config{Upstream: up.URL, Rules: e2eRules})
	statuses := diffPipeline(t, hg, up.URL, e2ePaths)

	// What each kind of path is, so that the comparison is not of 404s.
	for p, want := range map[string]int{
		"/p": 200, "/gzip": 200, "/docs/manual.pdf": 200, "/ajax/tags": 200, "/gone": 410, "/boom": 500,
		"/old": 301, "/moved": 301, "/old-notes/3": 308, "/retired": 410, "/internal/admin": 404,
		"/a/%2e%2e/b": 400, "/sitemap.xml": 200, "/robots.txt": 200, "/missing": 404,
	} {
		if statuses[p] != want {
			t.Errorf("%s: status %d, want %d", p, statuses[p], want)
		}
	}

	// headgate sitemap: the served /sitemap.xml, byte for byte.
	cmd := exec.Command(binary, "sitemap", "-config", hg.Config)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("headgate sitemap: %v\n%s", err, stderr.String())
	}
	_, served := hg.Get(t, "GET", "/sitemap.xml")
	if !bytes.Equal(out, served) {
		t.Errorf("headgate sitemap and the served /sitemap.xml differ:\n--- command\n%s\n--- served\n%s", clip(out), clip(served))
	}
	for _, loc := range []string{"<loc>https://notes.example/notes/1</loc>", "<loc>https://notes.example/notes/7</loc>"} {
		if !bytes.Contains(served, []byte(loc)) {
			t.Errorf("/sitemap.xml lacks %s:\n%s", loc, clip(served))
		}
	}
}

// diffPipeline runs the in-process audit over start against hg's own
// config, records every request it makes of headgate's handler and what
// the handler answered, replays each request to hg (the binary, on
// loopback) and requires the same status, headers and body bytes. It
// returns the status of each target.
func diffPipeline(t *testing.T, hg *headgate, upstream string, start []string) map[string]int {
	t.Helper()
	cfg, err := rules.Load(hg.Config)
	if err != nil {
		t.Fatal(err)
	}
	o := audit.Options{Config: cfg, Upstream: upstream}
	stop, err := app.AuditInProcess(&o)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	tap := &tapHandler{h: o.Handler}
	o.Handler = tap
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := audit.Run(ctx, o, start)
	if err != nil {
		t.Fatal(err)
	}
	tap.wg.Wait() // the audit may stop reading before a handler returns
	for _, s := range rep.Skipped {
		t.Logf("the audit skipped %s: %s", s.URL, s.Reason)
	}
	host := cfg.Site.BaseURL[strings.Index(cfg.Site.BaseURL, "//")+2:]

	// The paths the audit does not ask (it refuses a target that is not a
	// clean path, as a crawler would) are asked of the same handler as a
	// client would ask them; and so, again, is each request whose answer
	// the audit stopped reading (it reads no body of an asset, an error or
	// a redirect), so that every byte the pipeline produces is compared.
	asked := map[string]bool{}
	var again []*exchange
	for _, e := range tap.ex {
		asked[e.target] = true
		if e.cut {
			again = append(again, e)
		}
	}
	for _, p := range start {
		if !asked[p] {
			t.Logf("%s: not asked by the audit; asked of its handler directly", p)
			again = append(again, &exchange{target: p, host: host, header: http.Header{}})
		}
	}
	for _, e := range again {
		u, err := url.Parse("https://" + e.host + e.target)
		if err != nil {
			u = &url.URL{Scheme: "https", Host: e.host, Path: e.target} // /a/%zz: the proxy reads RequestURI
		}
		req := (&http.Request{Method: http.MethodGet, URL: u, Host: e.host, Header: e.header.Clone()}).WithContext(ctx)
		req.RequestURI, req.RemoteAddr = e.target, "127.0.0.1:0"
		tap.ServeHTTP(discardWriter{http.Header{}}, req)
	}

	seen := map[string]bool{} // asked, and read whole
	statuses := map[string]int{}
	for _, e := range tap.ex {
		statuses[e.target] = e.status
		if !e.cut {
			seen[e.target] = true
		}
		res, body := replay(t, hg.URL, e)
		if res.StatusCode != e.status {
			t.Errorf("%s: served %d, in process %d", e.target, res.StatusCode, e.status)
		}
		if e.target == goRefuses {
			// Go's HTTP server answers this target itself (it cannot
			// parse it): the binary's handler never sees it.
			if !bytes.Equal(body, []byte("400 Bad Request")) {
				t.Errorf("%s: served %q, want net/http's own 400", e.target, body)
			}
			continue
		}
		if d := headerDiff(res.Header, e.sent, len(body)); d != "" {
			t.Errorf("%s: the headers differ: %s", e.target, d)
		}
		if e.cut && len(body) > len(e.body) {
			body = body[:len(e.body)] // the audit read no further
		}
		if !bytes.Equal(body, e.body) {
			t.Errorf("%s: the bodies differ:\n--- served\n%s\n--- in process\n%s", e.target, clip(body), clip(e.body))
		}
	}
	for _, p := range start {
		if !seen[p] {
			t.Errorf("%s: never asked and read whole", p)
		}
	}
	if len(tap.ex) < len(start) {
		t.Errorf("%d exchanges for %d start paths", len(tap.ex), len(start))
	}
	return statuses
}

type discardWriter struct{ h http.Header }

func (w discardWriter) Header() http.Header         { return w.h }
func (w discardWriter) WriteHeader(int)             {}
func (w discardWriter) Write(b []byte) (int, error) { return len(b), nil }

// replay sends e's request, its target as written and its headers, to the
// headgate at base.
func replay(t *testing.T, base string, e *exchange) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.URL.Opaque = e.target // as written: %2e%2e stays %2e%2e
	if i := strings.IndexByte(e.target, '?'); i >= 0 {
		req.URL.Opaque, req.URL.RawQuery = e.target[:i], e.target[i+1:]
	}
	req.Host = e.host
	req.Header = e.header.Clone()
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", e.target, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s: %v", e.target, err)
	}
	return res, body
}

// headerDiff compares the headers a client got with those the handler
// sent. Date is the HTTP server's, as are a Content-Length it adds to a
// short answer the handler did not size (checked against the body) and
// the Content-Type it sniffs for one the handler did not type.
func headerDiff(served, sent http.Header, n int) string {
	var diffs []string
	keys := map[string]bool{}
	for k := range served {
		keys[k] = true
	}
	for k := range sent {
		keys[k] = true
	}
	var sorted []string
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		a, b := served[k], sent[k]
		switch {
		case k == "Date":
			continue
		case k == "Content-Length" && len(b) == 0 && len(a) == 1 && a[0] == strconv.Itoa(n):
			continue
		case k == "Content-Type" && len(b) == 0 && len(a) == 1 && n > 0:
			continue
		}
		if !slices.Equal(a, b) {
			diffs = append(diffs, fmt.Sprintf("%s: served %q; in process %q", k, a, b))
		}
	}
	return strings.Join(diffs, "; ")
}
