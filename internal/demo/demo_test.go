package demo

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// do sends one request to h; header holds alternating names and values.
func do(t *testing.T, h http.Handler, method, target string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	res := rec.Result()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, body
}

func parse(t *testing.T, body []byte) *html.Node {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// findAll returns the elements under n (n included) for which match is true.
func findAll(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	for d := range n.Descendants() {
		if d.Type == html.ElementNode && match(d) {
			out = append(out, d)
		}
	}
	if n.Type == html.ElementNode && match(n) {
		out = append([]*html.Node{n}, out...)
	}
	return out
}

func byAtom(a atom.Atom) func(*html.Node) bool {
	return func(n *html.Node) bool { return n.DataAtom == a }
}

func first(t *testing.T, n *html.Node, a atom.Atom) *html.Node {
	t.Helper()
	found := findAll(n, byAtom(a))
	if len(found) == 0 {
		t.Fatalf("no <%s> element", a)
	}
	return found[0]
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func text(n *html.Node) string {
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
		}
	}
	return b.String()
}

// links returns the href of every <link rel=rel> under n.
func links(n *html.Node, rel string) []string {
	var out []string
	for _, l := range findAll(n, byAtom(atom.Link)) {
		if strings.EqualFold(attr(l, "rel"), rel) {
			out = append(out, attr(l, "href"))
		}
	}
	return out
}

// metas returns the content of every <meta key=name> under n.
func metas(n *html.Node, key, name string) []string {
	var out []string
	for _, m := range findAll(n, byAtom(atom.Meta)) {
		if strings.EqualFold(attr(m, key), name) {
			out = append(out, attr(m, "content"))
		}
	}
	return out
}

func anchors(n *html.Node) []string {
	var out []string
	for _, a := range findAll(n, byAtom(atom.A)) {
		out = append(out, attr(a, "href"))
	}
	return out
}

func wantList(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s = %q, want %q", what, got, want)
	}
}

func wantLinks(t *testing.T, doc *html.Node, hrefs ...string) {
	t.Helper()
	have := anchors(doc)
	for _, h := range hrefs {
		if !slices.Contains(have, h) {
			t.Errorf("no link to %s (links: %q)", h, have)
		}
	}
}

func wantTitle(t *testing.T, doc *html.Node, want string) {
	t.Helper()
	if got := text(first(t, doc, atom.Title)); got != want {
		t.Errorf("title = %q, want %q", got, want)
	}
}

type route struct {
	path   string
	status int
	ctype  string
	check  func(t *testing.T, body []byte, doc *html.Node)
}

const (
	textHTML   = "text/html; charset=utf-8"
	notesTotal = 12
)

var noteTopics = []string{
	"Getting started", "Keyboard shortcuts", "Organizing notes with tags", "Exporting to Markdown",
	"Sharing a note with a link", "Trying the new editor", "Syncing across devices", "Writing in offline mode",
	"Search tips and operators", "Attaching files and images", "Archiving old notes", "Deleting your account",
}

func routes() []route {
	head := func(t *testing.T, doc *html.Node) *html.Node { return first(t, doc, atom.Head) }
	rs := []route{
		{"/", 200, textHTML, func(t *testing.T, _ []byte, doc *html.Node) {
			if d := metas(doc, "name", "description"); len(d) != 0 {
				t.Errorf("home has a description: %q", d)
			}
			wantList(t, "robots", metas(head(t, doc), "name", "robots"), []string{"index,follow", "noindex"})
			wantList(t, "og:image", metas(head(t, doc), "property", "og:image"), []string{"/covers/home.png"})
			wantLinks(t, doc, "/notes/", "/en/about", "/de/about", "/docs/manual.pdf")
		}},
		{"/notes/", 200, textHTML, listing(1)},
		{"/notes/?page=1", 200, textHTML, listing(1)},
		{"/notes/?page=2", 200, textHTML, listing(2)},
	}
	for id := 1; id <= notesTotal; id++ {
		rs = append(rs, route{fmt.Sprintf("/notes/%d", id), 200, textHTML, noteCheck(id)})
	}
	rs = append(rs, route{"/notes/3?page=2&utm_source=newsletter", 200, textHTML, noteCheck(3)})
	for _, c := range []struct{ path, lang, h1, title string }{
		{"/en/about", "en", "About Notes", "About Notes: who makes it, and why | Notes"},
		{"/de/about", "de", "Über Notes", "Über Notes: wer es macht, und warum | Notes"},
		{"/de-AT/about", "de-AT", "Über Notes", "Über Notes: ein Notizbuch aus Wien | Notes"},
		{"/de-at/about", "de-AT", "Über Notes", "Über Notes: ein Notizbuch aus Wien | Notes"},
		{"/EN/about", "en", "About Notes", "About Notes: who makes it, and why | Notes"},
	} {
		rs = append(rs, route{c.path, 200, textHTML, func(t *testing.T, _ []byte, doc *html.Node) {
			if got := attr(first(t, doc, atom.Html), "lang"); got != c.lang {
				t.Errorf("lang = %q, want %q", got, c.lang)
			}
			if got := text(first(t, doc, atom.H1)); got != c.h1 {
				t.Errorf("h1 = %q, want %q", got, c.h1)
			}
			wantTitle(t, doc, c.title)
			wantList(t, "canonical", links(head(t, doc), "canonical"), []string{"/en/about"})
			// The planted problem: no alternates in the head, only the
			// language switcher's links in the body.
			if alt := links(doc, "alternate"); len(alt) != 0 {
				t.Errorf("about page has alternates %q, want none", alt)
			}
			var switcher []string
			for _, a := range findAll(first(t, doc, atom.Main), byAtom(atom.A)) {
				switcher = append(switcher, attr(a, "hreflang")+" "+attr(a, "href"))
				if current := attr(a, "aria-current") == "page"; current != (attr(a, "hreflang") == c.lang) {
					t.Errorf("switcher link %s: aria-current %v on the %s page", attr(a, "href"), current, c.lang)
				}
			}
			wantList(t, "language switcher", switcher, []string{"en /en/about", "de /de/about", "de-AT /de-AT/about"})
		}})
	}
	rs = append(rs,
		route{"/internal/sitemap/notes.jsonl", 200, "application/x-ndjson", nil},
		route{"/internal/admin", 200, textHTML, func(t *testing.T, _ []byte, doc *html.Node) {
			if got := text(first(t, doc, atom.H1)); got != "Internal admin" {
				t.Errorf("h1 = %q", got)
			}
		}},
		route{"/docs/manual.pdf", 200, "application/pdf", func(t *testing.T, body []byte, _ *html.Node) {
			checkPDF(t, body)
		}},
		route{"/covers/3.png", 200, "image/png", checkPNG},
		route{"/covers/home.png", 200, "image/png", checkPNG},
		route{"/static/style.css", 200, "text/css; charset=utf-8", func(t *testing.T, body []byte, _ *html.Node) {
			if !bytes.Contains(body, []byte(".banner")) {
				t.Errorf("stylesheet has no .banner rule")
			}
		}},
		route{"/robots.txt", 200, "text/plain; charset=utf-8", func(t *testing.T, body []byte, _ *html.Node) {
			if got, want := string(body), "User-agent: *\nDisallow: /internal/\n"; got != want {
				t.Errorf("robots.txt = %q, want %q", got, want)
			}
		}},
		route{"/legacy/latin1", 200, "text/html; charset=windows-1252", func(t *testing.T, body []byte, doc *html.Node) {
			if utf8.Valid(body) {
				t.Error("latin1 page is valid UTF-8; want windows-1252 bytes")
			}
			if got := text(first(t, doc, atom.Title)); !strings.Contains(got, "Caf\xe9 M\xfcller") {
				t.Errorf("title = %q, want windows-1252 Café Müller", got)
			}
			if d := metas(doc, "name", "description"); len(d) != 0 {
				t.Errorf("latin1 page has a description: %q", d)
			}
		}},
		route{"/slow", 200, textHTML, func(t *testing.T, _ []byte, doc *html.Node) {
			wantTitle(t, doc, "Slow page | Notes")
			if got := text(first(t, doc, atom.H1)); got != "A slow page" {
				t.Errorf("h1 = %q", got)
			}
		}},
	)
	for _, p := range []string{
		"/nope", "/notes/0", "/notes/13", "/notes/01", "/notes/abc", "/notes/3/",
		"/notes/?page=3", "/fr/about", "/about/", "/covers/x.jpg", "/covers/.png",
		"/static/missing.css", "/internal/",
	} {
		rs = append(rs, route{p, 404, textHTML, func(t *testing.T, _ []byte, doc *html.Node) {
			wantTitle(t, doc, "Page not found | Notes")
		}})
	}
	return rs
}

func listing(page int) func(t *testing.T, body []byte, doc *html.Node) {
	return func(t *testing.T, _ []byte, doc *html.Node) {
		wantTitle(t, doc, map[int]string{
			1: "Help notes for every feature | Notes",
			2: "Help notes for every feature, page 2 | Notes"}[page])
		wantList(t, "description", metas(doc, "name", "description"), []string{map[int]string{
			1: "Every help note for Notes in one list, from getting started and keyboard shortcuts to tags, exporting and sharing.",
			2: "More help notes for Notes, page 2: syncing, offline mode, search, attachments, archiving and deleting an account."}[page]})
		// Page 2 and later are for browsing, not for results.
		wantList(t, "robots", metas(doc, "name", "robots"), map[int][]string{1: nil, 2: {"noindex, follow"}}[page])
		if c := links(doc, "canonical"); len(c) != 0 {
			t.Errorf("listing has canonical %q, want none", c)
		}
		var want []string
		for id := (page-1)*6 + 1; id <= page*6; id++ {
			want = append(want, fmt.Sprintf("/notes/%d", id))
		}
		wantList(t, "listed notes", anchors(first(t, doc, atom.Ul)), want)
		other := map[int]string{1: "/notes/?page=2", 2: "/notes/"}[page]
		wantLinks(t, doc, other)
	}
}

func noteCheck(id int) func(t *testing.T, body []byte, doc *html.Node) {
	return func(t *testing.T, body []byte, doc *html.Node) {
		heading := fmt.Sprintf("Note %d: %s", id, noteTopics[id-1])
		wantTitle(t, doc, heading+" | Notes")
		if got := text(first(t, doc, atom.H1)); got != heading {
			t.Errorf("h1 = %q, want %q", got, heading)
		}
		if p := first(t, first(t, doc, atom.Article), atom.P); strings.TrimSpace(text(p)) == "" {
			t.Error("note has an empty body paragraph")
		}
		cover := fmt.Sprintf("/covers/%d.png", id)
		wantLinks(t, doc, cover)
		if id > 1 {
			wantLinks(t, doc, fmt.Sprintf("/notes/%d", id-1))
		}
		if id < notesTotal {
			wantLinks(t, doc, fmt.Sprintf("/notes/%d", id+1))
		}

		head := first(t, doc, atom.Head)
		canonical := links(head, "canonical")
		description := metas(head, "name", "description")
		switch id {
		case 1:
			wantList(t, "canonical", canonical, []string{"/notes/1?ref=legacy"})
		case 2:
			wantList(t, "canonical", canonical, nil)
		case 3:
			wantList(t, "canonical", canonical, []string{"/notes/3"})
			if u, err := url.Parse(canonical[0]); err != nil || u.IsAbs() || u.Host != "" {
				t.Errorf("canonical %q is not relative", canonical[0])
			}
		case 4:
			wantList(t, "canonical", canonical, []string{"javascript:alert(1)"})
		case 5:
			wantList(t, "canonical", canonical, []string{"/notes/5", "/archive/notes/5"})
		case 6:
			// The banner ends the head for a parser; what follows lands in body.
			src := string(body)
			order := []string{`<div class="banner">Beta!</div>`, `<meta name="description"`, `<link rel="canonical" href="/notes/6">`, `</head>`}
			last := -1
			for _, s := range order {
				i := strings.Index(src, s)
				if i <= last {
					t.Fatalf("raw HTML does not have %q in this order", order)
				}
				last = i
			}
			if len(canonical) != 0 || len(description) != 0 {
				t.Errorf("parsed head kept canonical %q / description %q; want both pushed into body", canonical, description)
			}
			b := first(t, doc, atom.Body)
			if banner := first(t, b, atom.Div); attr(banner, "class") != "banner" {
				t.Errorf("first div in body has class %q, want banner", attr(banner, "class"))
			}
			wantList(t, "body canonical", links(b, "canonical"), []string{"/notes/6"})
			if len(metas(b, "name", "description")) != 1 {
				t.Error("no description in body")
			}
		case 7:
			wantList(t, "og:url", metas(head, "property", "og:url"), []string{"http://localhost:3000/notes/7"})
			wantList(t, "canonical", canonical, nil)
		case 8:
			wantList(t, "canonical", canonical, nil)
			ns := first(t, head, atom.Noscript)
			if got := text(ns); got != `<link rel="canonical" href="/noscript">` {
				t.Errorf("noscript text = %q", got)
			}
			// Parsed as if scripting were off, the noscript holds a real link.
			off, err := html.ParseWithOptions(bytes.NewReader(body), html.ParseOptionEnableScripting(false))
			if err != nil {
				t.Fatal(err)
			}
			wantList(t, "noscript canonical", links(first(t, first(t, off, atom.Head), atom.Noscript), "canonical"), []string{"/noscript"})
		default:
			wantList(t, "canonical", canonical, nil)
		}
		if id != 6 && len(description) != 1 {
			t.Errorf("description = %q, want one", description)
		}
	}
}

func checkPNG(t *testing.T, body []byte, _ *html.Node) {
	if _, err := png.Decode(bytes.NewReader(body)); err != nil {
		t.Errorf("cover is not a valid PNG: %v", err)
	}
}

// checkPDF checks the header, trailer and that every xref entry points at
// its object.
func checkPDF(t *testing.T, body []byte) {
	if !bytes.HasPrefix(body, []byte("%PDF-1.")) || !bytes.HasSuffix(body, []byte("%%EOF\n")) {
		t.Fatal("not framed as a PDF")
	}
	m := regexp.MustCompile(`startxref\n(\d+)\n%%EOF\n$`).FindSubmatch(body)
	if m == nil {
		t.Fatal("no startxref")
	}
	off, _ := strconv.Atoi(string(m[1]))
	if off >= len(body) || !bytes.HasPrefix(body[off:], []byte("xref\n0 ")) {
		t.Fatalf("startxref %d does not point at the xref table", off)
	}
	entries := regexp.MustCompile(`(\d{10}) 00000 n \n`).FindAllSubmatch(body[off:], -1)
	if len(entries) == 0 {
		t.Fatal("empty xref table")
	}
	for i, e := range entries {
		o, _ := strconv.Atoi(string(e[1]))
		if want := fmt.Sprintf("%d 0 obj\n", i+1); !bytes.HasPrefix(body[o:], []byte(want)) {
			t.Errorf("xref entry %d points at %q", i+1, body[o:min(o+10, len(body))])
		}
	}
}

func TestRoutes(t *testing.T) {
	h := Handler()
	for _, r := range routes() {
		t.Run(r.path, func(t *testing.T) {
			res, body := do(t, h, http.MethodGet, r.path)
			if res.StatusCode != r.status {
				t.Fatalf("status = %d, want %d", res.StatusCode, r.status)
			}
			if got := res.Header.Get("Content-Type"); got != r.ctype {
				t.Errorf("Content-Type = %q, want %q", got, r.ctype)
			}
			etag := res.Header.Get("ETag")
			if !regexp.MustCompile(`^"[0-9a-f]+"$`).MatchString(etag) {
				t.Errorf("ETag = %q, want a strong hex tag", etag)
			}
			if r.path != "/slow" {
				if got := res.Header.Get("Content-Length"); got != strconv.Itoa(len(body)) {
					t.Errorf("Content-Length = %q, body has %d bytes", got, len(body))
				}
			}
			if res.Header.Get("Link") != "" {
				t.Errorf("unexpected Link header %q", res.Header.Get("Link"))
			}
			var doc *html.Node
			if strings.HasPrefix(r.ctype, "text/html") {
				doc = parse(t, body)
				lang := attr(first(t, doc, atom.Html), "lang")
				if lang == "" {
					lang = "en" // the legacy windows-1252 page
				}
				nav := first(t, doc, atom.Nav)
				wantLinks(t, nav, "/", "/notes/", "/"+lang+"/about")
				if slices.Contains(anchors(nav), "/about") {
					t.Error("the nav links /about, a redirect: link the page's own language version")
				}
			}
			if r.check != nil {
				r.check(t, body, doc)
			}
		})
	}
}

func TestAboutRedirect(t *testing.T) {
	h := Handler()
	for target, want := range map[string]string{
		"/about":          "/en/about",
		"/about?ref=home": "/en/about?ref=home",
	} {
		res, _ := do(t, h, http.MethodGet, target)
		if res.StatusCode != http.StatusFound {
			t.Errorf("%s: status = %d, want 302", target, res.StatusCode)
		}
		if got := res.Header.Get("Location"); got != want {
			t.Errorf("%s: Location = %q, want %q", target, got, want)
		}
	}
}

func TestQueryIgnoredOnNotes(t *testing.T) {
	h := Handler()
	_, plain := do(t, h, http.MethodGet, "/notes/9")
	_, tracked := do(t, h, http.MethodGet, "/notes/9?page=4&utm_source=newsletter")
	if !bytes.Equal(plain, tracked) {
		t.Error("query parameters changed the note page")
	}
}

func TestSitemap(t *testing.T) {
	_, body := do(t, Handler(), http.MethodGet, "/internal/sitemap/notes.jsonl")
	lines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
	if len(lines) != notesTotal {
		t.Fatalf("%d lines, want %d", len(lines), notesTotal)
	}
	if want := `{"params":{"id":"1"},"lastmod":"2026-01-02T10:00:00Z"}`; lines[0] != want {
		t.Errorf("line 1 = %s, want %s", lines[0], want)
	}
	var prev time.Time
	for i, line := range lines {
		var e struct {
			Params struct {
				ID string `json:"id"`
			} `json:"params"`
			Lastmod string `json:"lastmod"`
		}
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if e.Params.ID != strconv.Itoa(i+1) {
			t.Errorf("line %d: id %q", i+1, e.Params.ID)
		}
		ts, err := time.Parse(time.RFC3339, e.Lastmod)
		if err != nil {
			t.Errorf("line %d: %v", i+1, err)
		}
		if !ts.After(prev) {
			t.Errorf("line %d: lastmod %s not after %s", i+1, ts, prev)
		}
		prev = ts
	}
}

// TestHTTP checks conditional requests, gzip and HEAD on every route.
func TestHTTP(t *testing.T) {
	h := Handler()
	for _, r := range routes() {
		t.Run(r.path, func(t *testing.T) {
			res, body := do(t, h, http.MethodGet, r.path)
			etag := res.Header.Get("ETag")
			compressible := !strings.HasPrefix(r.ctype, "image/") && r.ctype != "application/pdf"

			cond, condBody := do(t, h, http.MethodGet, r.path, "If-None-Match", `"other", W/`+etag)
			wantStatus := r.status
			if r.status == http.StatusOK {
				wantStatus = http.StatusNotModified
			}
			if cond.StatusCode != wantStatus || cond.Header.Get("ETag") != etag {
				t.Errorf("If-None-Match: status %d, ETag %q; want %d, %q", cond.StatusCode, cond.Header.Get("ETag"), wantStatus, etag)
			}
			if wantStatus == http.StatusNotModified && len(condBody) != 0 {
				t.Errorf("304 with a %d-byte body", len(condBody))
			}
			if stale, _ := do(t, h, http.MethodGet, r.path, "If-None-Match", `"stale"`); stale.StatusCode != r.status {
				t.Errorf("stale If-None-Match: status %d, want %d", stale.StatusCode, r.status)
			}

			gz, gzBody := do(t, h, http.MethodGet, r.path, "Accept-Encoding", "br, gzip;q=0.8")
			if got := gz.Header.Get("Content-Encoding"); compressible != (got == "gzip") {
				t.Errorf("Content-Encoding = %q (compressible: %v)", got, compressible)
			}
			if compressible {
				if gz.Header.Get("Vary") != "Accept-Encoding" || res.Header.Get("Vary") != "Accept-Encoding" {
					t.Errorf("Vary = %q / %q, want Accept-Encoding", res.Header.Get("Vary"), gz.Header.Get("Vary"))
				}
				if gz.Header.Get("ETag") == etag {
					t.Error("gzip and identity responses share an ETag")
				}
				if r.path != "/slow" && gz.Header.Get("Content-Length") != strconv.Itoa(len(gzBody)) {
					t.Errorf("gzip Content-Length = %q, body has %d bytes", gz.Header.Get("Content-Length"), len(gzBody))
				}
				zr, err := gzip.NewReader(bytes.NewReader(gzBody))
				if err != nil {
					t.Fatal(err)
				}
				plain, err := io.ReadAll(zr)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(plain, body) {
					t.Error("gunzipped body differs from the identity body")
				}
			}
			if refused, _ := do(t, h, http.MethodGet, r.path, "Accept-Encoding", "gzip;q=0, *"); refused.Header.Get("Content-Encoding") != "" {
				t.Error("gzip sent although the client refused it")
			}

			head, headBody := do(t, h, http.MethodHead, r.path)
			if head.StatusCode != res.StatusCode || len(headBody) != 0 {
				t.Errorf("HEAD: status %d with %d body bytes", head.StatusCode, len(headBody))
			}
			for _, k := range []string{"Content-Type", "Content-Length", "ETag"} {
				if head.Header.Get(k) != res.Header.Get(k) {
					t.Errorf("HEAD %s = %q, GET has %q", k, head.Header.Get(k), res.Header.Get(k))
				}
			}
		})
	}
}

func TestMethodNotAllowed(t *testing.T) {
	res, body := do(t, Handler(), http.MethodPost, "/notes/1")
	if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: status %d, Allow %q", res.StatusCode, res.Header.Get("Allow"))
	}
	wantTitle(t, parse(t, body), "Method not allowed | Notes")
}

// TestSlowStreams checks that /slow's head reaches the client before its
// body is written, with and without gzip.
func TestSlowStreams(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	for _, encoding := range []string{"identity", "gzip"} {
		t.Run(encoding, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, srv.URL+"/slow", nil)
			if err != nil {
				t.Fatal(err)
			}
			if encoding == "identity" {
				// Setting the header also stops the transport from asking
				// for gzip and decompressing transparently.
				req.Header.Set("Accept-Encoding", "identity")
			}
			res, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			if res.Uncompressed != (encoding == "gzip") {
				t.Fatalf("response gzipped: %v, want %v", res.Uncompressed, encoding == "gzip")
			}
			br := bufio.NewReader(res.Body)
			var head []byte
			for !bytes.HasSuffix(head, []byte("<body>")) {
				b, err := br.ReadByte()
				if err != nil {
					t.Fatalf("stream ended before <body>: %v", err)
				}
				head = append(head, b)
			}
			gotHead := time.Now()
			rest, err := io.ReadAll(br)
			if err != nil {
				t.Fatal(err)
			}
			if wait := time.Since(gotHead); wait < slowDelay*2/3 {
				t.Errorf("rest arrived %v after the head; want about %v", wait, slowDelay)
			}
			if !bytes.Contains(head, []byte("</head>")) || !bytes.HasSuffix(rest, []byte("</html>\n")) {
				t.Errorf("unexpected split: head %q, rest %q", head, rest)
			}
			if res.ContentLength != -1 {
				t.Errorf("ContentLength = %d, want unknown (streamed)", res.ContentLength)
			}
		})
	}
}

func TestHandlersAreIndependent(t *testing.T) {
	_, a := do(t, Handler(), http.MethodGet, "/notes/5")
	_, b := do(t, Handler(), http.MethodGet, "/notes/5")
	if !bytes.Equal(a, b) {
		t.Error("two handlers serve different pages")
	}
}
