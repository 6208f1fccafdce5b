package proxy

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

const mdPage = `<!DOCTYPE html>
<html lang="en"><head>
<meta charset="utf-8">
<title>Upstream title</title>
<meta name="description" content="Upstream description.">
<meta property="article:published_time" content="2026-05-01T10:00:00Z">
</head>
<body><nav>Menu Home About</nav>
<main><h1>Note three</h1><p>Hello <a href="/notes/4">next</a> world.</p></main>
<footer>Footer words</footer>
</body></html>
`

const mdConfig = `
[markdown]
enabled = true
match = ["/notes/*", "/docs/*", "/docs/", "/big/*", "/latin/*", "/nohtml/*", "/raw/*", "/gone/*", "/old/*", "/new/*", "/secret/*", "/frag/*", "/gz/*", "/br/*", "/signal/*"]
max_bytes = "2KiB"

[[rule]]
match = "/notes/*"
title = "Rule title"
canonical = "self"
robots = { index = true, follow = true, directives = ["max-snippet:50"] }

[[rule]]
match = "/raw/*"
rewrite = false

[[rule]]
match = "/secret/*"
deny = true

[[redirect]]
from = "/old/:id"
to = "/new/{id}"
status = 301

[[redirect]]
from = "/moved/:id{[0-9]+}"
to = "/new/{id}"
status = 301

[[rule]]
match = "/signal/*"
content_signal = { search = "yes", ai_input = "no", ai_train = "no" }

[[rule]]
match = "/signal/open/*"
content_signal = { ai_input = "yes" }
`

// mdUpstream is the upstream of the Markdown tests: it records what it was
// asked for.
type mdUpstream struct {
	paths   []string
	accepts []string
	methods []string
}

func (u *mdUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.paths = append(u.paths, r.URL.Path)
	u.accepts = append(u.accepts, r.Header.Get("Accept"))
	u.methods = append(u.methods, r.Method)
	h := w.Header()
	switch {
	case strings.HasPrefix(r.URL.Path, "/big/"):
		h.Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, strings.Replace(mdPage, "<main>", "<main>"+strings.Repeat("<p>filler text</p>", 400), 1))
	case strings.HasPrefix(r.URL.Path, "/latin/"):
		h.Set("Content-Type", "text/html; charset=utf-16")
		io.WriteString(w, mdPage)
	case strings.HasPrefix(r.URL.Path, "/nohtml/"):
		h.Set("Content-Type", "application/json")
		io.WriteString(w, `{"a":1}`)
	case strings.HasPrefix(r.URL.Path, "/gone/"):
		h.Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(404)
		io.WriteString(w, "<p>not here</p>")
	case strings.HasPrefix(r.URL.Path, "/frag/"):
		h.Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<div><p>a fragment</p></div>")
	case strings.HasPrefix(r.URL.Path, "/gz/"):
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		if strings.HasPrefix(r.URL.Path, "/gz/big") {
			io.WriteString(zw, strings.Replace(mdPage, "<main>", "<main>"+strings.Repeat("<p>filler text</p>", 400), 1))
		} else {
			io.WriteString(zw, mdPage)
		}
		zw.Close()
	case strings.HasPrefix(r.URL.Path, "/br/"):
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Encoding", "br")
		bw := brotli.NewWriter(w)
		io.WriteString(bw, mdPage)
		bw.Close()
	case strings.HasPrefix(r.URL.Path, "/signal/") && strings.HasSuffix(r.URL.Path, ".pdf"):
		h.Set("Content-Type", "application/pdf")
		io.WriteString(w, "%PDF-1.4")
	default:
		h.Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, mdPage)
	}
}

func mdProxy(t *testing.T, extra string) (*Proxy, *httptest.Server, *mdUpstream) {
	t.Helper()
	up := &mdUpstream{}
	p, front := newTestProxy(t, up.ServeHTTP, extra)
	return p, front, up
}

func mdGet(t *testing.T, method, url, accept string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	req.Header.Set("Accept-Encoding", "identity")
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func isMarkdown(res *http.Response) bool {
	return res.Header.Get("Content-Type") == "text/markdown; charset=utf-8"
}

func TestMarkdownNegotiation(t *testing.T) {
	_, front, up := mdProxy(t, mdConfig)
	for _, tc := range []struct {
		name, method, path, accept string
		md                         bool
	}{
		{"markdown preferred", "GET", "/notes/3", "text/markdown;q=0.9, text/html;q=0.8", true},
		{"html preferred", "GET", "/notes/3", "text/html;q=0.9, text/markdown;q=0.8", false},
		{"markdown only", "GET", "/notes/3", "text/markdown", true},
		{"equal q is html", "GET", "/notes/3", "text/markdown, text/html", false},
		{"any alone is html", "GET", "/notes/3", "*/*", false},
		{"no accept is html", "GET", "/notes/3", "", false},
		{"browser", "GET", "/notes/3", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", false},
		{"head markdown", "HEAD", "/notes/3", "text/markdown", true},
		{"outside match", "GET", "/elsewhere", "text/markdown", false},
		{"post is never markdown", "POST", "/notes/3", "text/markdown", false},
		{"path form", "GET", "/notes/3.md", "", true},
		{"path form index", "GET", "/docs/index.md", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, body := mdGet(t, tc.method, front.URL+tc.path, tc.accept)
			if res.StatusCode != 200 {
				t.Fatalf("status %d", res.StatusCode)
			}
			if got := isMarkdown(res); got != tc.md {
				t.Fatalf("markdown = %v (Content-Type %q), want %v\n%s", got, res.Header.Get("Content-Type"), tc.md, body)
			}
			if tc.method == "HEAD" && body != "" {
				t.Fatalf("HEAD has a body: %q", body)
			}
			// A HEAD converts nothing, so has no token count
			// (TestMarkdownHead).
			if tc.md && tc.method == "GET" && res.Header.Get("X-Markdown-Tokens") == "" {
				t.Fatal("no X-Markdown-Tokens")
			}
			if tc.md && tc.method == "GET" && (strings.Contains(body, "Menu") || strings.Contains(body, "Footer")) {
				t.Fatalf("navigation or footer in the Markdown:\n%s", body)
			}
		})
	}
	// The path forms asked the upstream for the pages' HTML.
	joined := strings.Join(up.paths, " ")
	for _, want := range []string{"/notes/3", "/docs/"} {
		if !strings.Contains(" "+joined+" ", " "+want+" ") {
			t.Errorf("upstream paths %q lack %q", up.paths, want)
		}
	}
	if strings.Contains(joined, ".md") {
		t.Errorf("the upstream was asked for a path form: %q", up.paths)
	}
	mdGet(t, "HEAD", front.URL+"/notes/9", "text/markdown")
	if a, m := up.accepts[len(up.accepts)-1], up.methods[len(up.methods)-1]; strings.Contains(a, "markdown") || m != "GET" {
		t.Errorf("a Markdown HEAD asked the upstream %s with Accept %q, want a GET for HTML", m, a)
	}
}

func TestMarkdownAnswer(t *testing.T) {
	_, front, _ := mdProxy(t, mdConfig)
	res, body := mdGet(t, "GET", front.URL+"/notes/3", "text/markdown")
	h := res.Header
	wantFront := "---\ntitle: \"Rule title\"\ndescription: \"Upstream description.\"\nurl: \"https://notes.example/notes/3\"\nlang: \"en\"\ndate: \"2026-05-01T10:00:00Z\"\n---\n"
	if !strings.HasPrefix(body, wantFront) {
		t.Errorf("front matter: want\n%s\ngot\n%s", wantFront, body)
	}
	if !strings.Contains(body, "# Note three") || !strings.Contains(body, "[next](https://notes.example/notes/4)") {
		t.Errorf("content:\n%s", body)
	}
	for k, want := range map[string]string{
		"Vary":         "Accept",
		"Link":         `<https://notes.example/notes/3>; rel="canonical"`,
		"X-Robots-Tag": "index, follow, max-snippet:50",
	} {
		if got := strings.Join(h.Values(k), ", "); !strings.Contains(got, want) {
			t.Errorf("%s = %q, want %q in it", k, got, want)
		}
	}
	if h.Get("Etag") != "" || h.Get("Content-Encoding") != "" {
		t.Errorf("the HTML's ETag or coding on the Markdown: %v", h)
	}

	// The HTML answer links its Markdown, in the headers and in the head.
	res, body = mdGet(t, "GET", front.URL+"/notes/3", "")
	h = res.Header
	if !strings.Contains(strings.Join(h.Values("Vary"), ","), "Accept") {
		t.Errorf("HTML Vary = %q", h.Values("Vary"))
	}
	alt := `<https://notes.example/notes/3.md>; rel="alternate"; type="text/markdown"`
	if !strings.Contains(strings.Join(h.Values("Link"), ", "), alt) {
		t.Errorf("HTML Link = %q, want %s", h.Values("Link"), alt)
	}
	if !strings.Contains(body, `<link rel="alternate" type="text/markdown" href="https://notes.example/notes/3.md">`) {
		t.Errorf("no alternate link in the head:\n%s", body)
	}
	// A page without rules has its alternate too; the index page's is
	// its index.md form.
	_, body = mdGet(t, "GET", front.URL+"/docs/", "")
	if !strings.Contains(body, `href="https://notes.example/docs/index.md"`) {
		t.Errorf("docs index head:\n%s", body)
	}
	// A path without a Markdown version says nothing of one.
	res, body = mdGet(t, "GET", front.URL+"/elsewhere", "")
	if strings.Contains(body, "text/markdown") || strings.Contains(strings.Join(res.Header.Values("Link"), ""), "markdown") {
		t.Errorf("a Markdown link on a page without one:\n%v\n%s", res.Header, body)
	}
}

func TestMarkdownFailOpen(t *testing.T) {
	p, front, _ := mdProxy(t, mdConfig)
	for _, tc := range []struct {
		name, path string
		status     int
		ctype      string
		contains   string
	}{
		{"too large", "/big/1", 200, "text/html", "filler text"},
		{"undecodable charset", "/latin/1", 200, "text/html", ""},
		{"not found", "/gone/1", 404, "text/html", "not here"},
		{"not html", "/nohtml/1", 200, "application/json", `{"a":1}`},
		{"rewrite false", "/raw/1", 200, "text/html", "Upstream title"},
		{"fragment", "/frag/1", 200, "text/html", "a fragment"},
		{"path form too large", "/big/1.md", 200, "text/html", "filler text"},
		{"gzip too large", "/gz/big", 200, "text/html", "filler text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, body := mdGet(t, "GET", front.URL+tc.path, "text/markdown")
			if res.StatusCode != tc.status || !strings.HasPrefix(res.Header.Get("Content-Type"), tc.ctype) {
				t.Fatalf("status %d, Content-Type %q; want %d %s\n%s", res.StatusCode, res.Header.Get("Content-Type"), tc.status, tc.ctype, body)
			}
			if !strings.Contains(body, tc.contains) {
				t.Fatalf("body lacks %q:\n%s", tc.contains, body)
			}
			if tc.ctype == "text/html" && tc.status == 200 && tc.name != "fragment" && !strings.HasSuffix(body, "</html>\n") {
				t.Fatalf("the HTML answer is not whole: …%s", body[max(0, len(body)-200):])
			}
		})
	}
	if got := testutil.ToFloat64(p.mm.fallbacks.WithLabelValues("too_large")); got != 3 {
		t.Errorf("too_large fallbacks = %v, want 3", got)
	}
	if got := testutil.ToFloat64(p.mm.fallbacks.WithLabelValues("charset")); got != 1 {
		t.Errorf("charset fallbacks = %v, want 1", got)
	}
}

// TestMarkdownFragmentNoAlternate: an HTML fragment is no page and has no
// Markdown version (§19.1), so its answer neither links one nor varies on
// Accept, whichever the client asked for.
func TestMarkdownFragmentNoAlternate(t *testing.T) {
	_, front, _ := mdProxy(t, mdConfig)
	for _, accept := range []string{"", "text/markdown"} {
		res, body := mdGet(t, "GET", front.URL+"/frag/1", accept)
		if res.StatusCode != 200 || !strings.Contains(body, "a fragment") {
			t.Fatalf("Accept %q: %d\n%s", accept, res.StatusCode, body)
		}
		if l := strings.Join(res.Header.Values("Link"), ", "); strings.Contains(l, "alternate") {
			t.Errorf("Accept %q: Link %q advertises a Markdown version", accept, l)
		}
		for _, v := range res.Header.Values("Vary") {
			for tok := range strings.SplitSeq(v, ",") {
				if strings.EqualFold(strings.TrimSpace(tok), "Accept") {
					t.Errorf("Accept %q: Vary %q", accept, res.Header.Values("Vary"))
				}
			}
		}
	}
}

func TestMarkdownCompressedUpstream(t *testing.T) {
	_, front, _ := mdProxy(t, mdConfig)
	for _, path := range []string{"/gz/1", "/br/1"} {
		res, body := mdGet(t, "GET", front.URL+path, "text/markdown")
		if !isMarkdown(res) || !strings.Contains(body, "# Note three") {
			t.Errorf("%s: %v\n%s", path, res.Header, body)
		}
	}
}

func TestMarkdownDenyAndRedirect(t *testing.T) {
	_, front, up := mdProxy(t, mdConfig)
	for _, path := range []string{"/secret/1", "/secret/1.md"} {
		res, _ := mdGet(t, "GET", front.URL+path, "text/markdown")
		if res.StatusCode != 404 {
			t.Errorf("%s: status %d, want 404", path, res.StatusCode)
		}
	}
	for _, path := range up.paths {
		if strings.HasPrefix(path, "/secret/") {
			t.Errorf("a denied page was fetched: %s", path)
		}
	}
	for path, want := range map[string]string{
		"/old/7":    "https://notes.example/new/7",
		"/old/7.md": "https://notes.example/new/7.md",
		// The source is no Markdown page (not in match), its target is:
		// the path form redirects all the same (§19.1).
		"/moved/7.md": "https://notes.example/new/7.md",
	} {
		res, _ := mdGet(t, "GET", front.URL+path, "")
		if res.StatusCode != 301 || res.Header.Get("Location") != want {
			t.Errorf("%s: %d Location %q, want 301 %q", path, res.StatusCode, res.Header.Get("Location"), want)
		}
	}
}

func TestContentSignalHeaders(t *testing.T) {
	_, front, _ := mdProxy(t, mdConfig)
	for _, tc := range []struct {
		name, path, accept, signal, usage string
	}{
		{"html", "/signal/a", "", "search=yes, ai-input=no, ai-train=no", "train-ai=n, search=y"},
		{"markdown", "/signal/a", "text/markdown", "search=yes, ai-input=no, ai-train=no", "train-ai=n, search=y"},
		{"non-html", "/signal/a.pdf", "", "search=yes, ai-input=no, ai-train=no", "train-ai=n, search=y"},
		{"merged key by key", "/signal/open/a", "", "search=yes, ai-input=yes, ai-train=no", "train-ai=n, search=y"},
		{"no rule", "/notes/3", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, _ := mdGet(t, "GET", front.URL+tc.path, tc.accept)
			if got := res.Header.Get("Content-Signal"); got != tc.signal {
				t.Errorf("Content-Signal = %q, want %q", got, tc.signal)
			}
			if got := res.Header.Get("Content-Usage"); got != tc.usage {
				t.Errorf("Content-Usage = %q, want %q", got, tc.usage)
			}
			if tc.accept != "" && !isMarkdown(res) {
				t.Errorf("not Markdown: %v", res.Header)
			}
		})
	}
}

func TestMarkdownRecord(t *testing.T) {
	p, front, _ := mdProxy(t, mdConfig)
	_ = front
	var got *Record
	req := httptest.NewRequest("GET", "/notes/3.md", nil)
	req = req.WithContext(Observe(req.Context(), func(r *Record) { got = r }))
	w := httptest.NewRecorder()
	p.ServeHTTP(w, req)
	if got == nil || got.Outcome != Markdown || got.Markdown == nil || !got.Markdown.PathForm || got.Markdown.Stats.Tokens == 0 {
		t.Fatalf("record: %+v", got)
	}
	if !bytes.HasPrefix(w.Body.Bytes(), []byte("---\n")) {
		t.Fatalf("body:\n%s", w.Body)
	}
}

func TestInspectorMarkdown(t *testing.T) {
	up := &mdUpstream{}
	f := newInspector(t, up.ServeHTTP, mdConfig)
	res, body := mdGet(t, "GET", f.admin.URL+"/inspect?path=/notes/3", "")
	if res.StatusCode != 200 || !strings.Contains(body, `id="markdown"`) || !strings.Contains(body, `/inspect?format=markdown&amp;path=%2Fnotes%2F3`) {
		t.Fatalf("no Markdown section:\n%s", body)
	}
	res, body = mdGet(t, "GET", f.admin.URL+"/inspect?format=markdown&path=/notes/3", "")
	if ct := res.Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" || !strings.Contains(body, "# Note three") || !strings.Contains(body, `title: "Rule title"`) {
		t.Fatalf("%s\n%s", ct, body)
	}
	_, body = mdGet(t, "GET", f.admin.URL+"/inspect?format=markdown&path=/big/1", "")
	if !strings.Contains(body, "as HTML, not Markdown: too_large") {
		t.Fatalf("fallback not said:\n%s", body)
	}
	_, body = mdGet(t, "GET", f.admin.URL+"/inspect?path=/elsewhere", "")
	if strings.Contains(body, `id="markdown"`) {
		t.Fatal("a Markdown section for a page without one")
	}
}
