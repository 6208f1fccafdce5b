package demo

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"image"
	"image/color"
	"image/png"
	"io"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"time"
)

//go:embed site
var siteFS embed.FS

const (
	htmlType  = "text/html; charset=utf-8"
	pageSize  = 6                      // notes per listing page
	slowDelay = 300 * time.Millisecond // pause between head and body on /slow
)

// Handler returns the demo site. Each call builds an independent handler
// from the embedded files.
func Handler() http.Handler {
	content, err := fs.Sub(siteFS, "site")
	if err != nil {
		panic("demo: " + err.Error())
	}
	h, err := newSite(content)
	if err != nil {
		// The content is compiled into the binary; this is a bug, not a
		// runtime condition.
		panic("demo: " + err.Error())
	}
	return h
}

// note is one entry of site/notes.json.
type note struct {
	ID          int    `json:"id"`
	Topic       string `json:"topic"`
	Description string `json:"description"`
	Body        string `json:"body"`
	Lastmod     string `json:"lastmod"`
}

// Title is the note's heading and the start of its <title>.
func (n note) Title() string { return fmt.Sprintf("Note %d: %s", n.ID, n.Topic) }

// pageData is what the "layout" template renders; Content goes to the
// page's own "head" and "main" templates.
type pageData struct {
	Lang    string
	Title   string
	Content any
}

type site struct {
	notes []note // notes[i] has ID i+1
	pages map[string]*template.Template
	cover []byte // PNG served for every /covers/{name}.png
}

func newSite(content fs.FS) (http.Handler, error) {
	s := &site{pages: make(map[string]*template.Template)}

	raw, err := fs.ReadFile(content, "notes.json")
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, &s.notes); err != nil {
		return nil, fmt.Errorf("notes.json: %w", err)
	}
	for i, n := range s.notes {
		if n.ID != i+1 {
			return nil, fmt.Errorf("notes.json: entry %d has id %d", i, n.ID)
		}
	}

	base, err := template.ParseFS(content, "templates/layout.html")
	if err != nil {
		return nil, err
	}
	for _, name := range []string{"home", "notes", "note", "about", "admin", "slow", "error"} {
		t, err := base.Clone()
		if err == nil {
			t, err = t.ParseFS(content, "templates/"+name+".html")
		}
		if err != nil {
			return nil, err
		}
		s.pages[name] = t
	}

	if s.cover, err = coverPNG(); err != nil {
		return nil, err
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.home)
	mux.HandleFunc("GET /notes/{$}", s.noteList)
	mux.HandleFunc("GET /notes/{id}", s.note)
	mux.HandleFunc("GET /about", s.aboutRedirect)
	mux.HandleFunc("GET /internal/sitemap/notes.jsonl", s.sitemap)
	mux.HandleFunc("GET /internal/admin", s.admin)
	mux.HandleFunc("GET /covers/{file}", s.coverImage)
	mux.HandleFunc("GET /slow", s.slow)
	for _, a := range []struct{ route, file, contentType string }{
		{"/robots.txt", "robots.txt", "text/plain; charset=utf-8"},
		{"/static/style.css", "static/style.css", "text/css; charset=utf-8"},
		{"/docs/manual.pdf", "docs/manual.pdf", "application/pdf"},
		{"/legacy/latin1", "legacy/latin1.html", "text/html; charset=windows-1252"},
	} {
		body, err := fs.ReadFile(content, a.file)
		if err != nil {
			return nil, err
		}
		mux.HandleFunc("GET "+a.route, func(w http.ResponseWriter, r *http.Request) {
			send(w, r, http.StatusOK, a.contentType, body)
		})
	}
	// Everything else, including /{locale}/about: a ServeMux pattern for it
	// would conflict with /notes/{id} and could not match case-insensitively.
	mux.HandleFunc("/", s.fallback)
	return mux, nil
}

func (s *site) home(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, "home", pageData{Lang: "en", Title: "Welcome | Notes"})
}

func (s *site) noteList(w http.ResponseWriter, r *http.Request) {
	page := 1
	switch r.URL.Query().Get("page") {
	case "", "1":
	case "2":
		page = 2
	default:
		s.notFound(w, r)
		return
	}
	data := struct {
		Notes            []note
		Page, Prev, Next int
	}{Notes: s.notes[(page-1)*pageSize : min(page*pageSize, len(s.notes))], Page: page}
	if page > 1 {
		data.Prev = page - 1
	}
	if page*pageSize < len(s.notes) {
		data.Next = page + 1
	}
	title := "Help notes for every feature | Notes"
	if page > 1 {
		title = fmt.Sprintf("Help notes for every feature, page %d | Notes", page)
	}
	s.render(w, r, http.StatusOK, "notes", pageData{Lang: "en", Title: title, Content: data})
}

func (s *site) note(w http.ResponseWriter, r *http.Request) {
	raw := r.PathValue("id")
	id, err := strconv.Atoi(raw)
	if err != nil || strconv.Itoa(id) != raw || id < 1 || id > len(s.notes) {
		s.notFound(w, r)
		return
	}
	n := s.notes[id-1]
	data := struct {
		note
		Prev, Next int
	}{note: n}
	if id > 1 {
		data.Prev = id - 1
	}
	if id < len(s.notes) {
		data.Next = id + 1
	}
	s.render(w, r, http.StatusOK, "note", pageData{Lang: "en", Title: n.Title() + " | Notes", Content: data})
}

func (s *site) aboutRedirect(w http.ResponseWriter, r *http.Request) {
	target := "/en/about"
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	http.Redirect(w, r, target, http.StatusFound)
}

type aboutPage struct{ lang, name, title, description string }

// aboutPages are the About page's language versions, in the order the
// language switcher lists them.
var aboutPages = []aboutPage{
	{"en", "English", "About Notes: who makes it, and why | Notes",
		"Who makes Notes, and why: a small notebook for the web, written in our spare time since 2019."},
	{"de", "Deutsch", "Über Notes: wer es macht, und warum | Notes",
		"Wer Notes macht, und warum: ein kleines Notizbuch für das Web, seit 2019 in unserer Freizeit geschrieben."},
	{"de-AT", "Deutsch (Österreich)", "Über Notes: ein Notizbuch aus Wien | Notes",
		"Wer Notes macht, und warum: ein kleines Notizbuch fürs Web, seit 2019 in Wien geschrieben, meistens im Kaffeehaus."},
}

// localizedAbout returns the About page for a locale path segment, which is
// matched case-insensitively.
func localizedAbout(locale string) (aboutPage, bool) {
	for _, p := range aboutPages {
		if strings.EqualFold(p.lang, locale) {
			return p, true
		}
	}
	return aboutPage{}, false
}

// language is one entry of the About page's language switcher.
type language struct {
	Locale, Name string
	Current      bool
}

// fallback serves the localized About pages and answers everything else
// with an HTML 404 (or 405 for methods other than GET and HEAD).
func (s *site) fallback(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		s.render(w, r, http.StatusMethodNotAllowed, "error", pageData{
			Lang:  "en",
			Title: "Method not allowed | Notes",
			Content: errorPage{
				Heading: "Method not allowed",
				Message: "This site can only be read.",
			},
		})
		return
	}
	locale, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if p, ok := localizedAbout(locale); ok && rest == "about" {
		var langs []language
		for _, l := range aboutPages {
			langs = append(langs, language{l.lang, l.name, l.lang == p.lang})
		}
		s.render(w, r, http.StatusOK, "about", pageData{
			Lang:  p.lang,
			Title: p.title,
			Content: struct {
				Locale, Description string
				Languages           []language
			}{
				Locale:      p.lang,
				Description: p.description,
				Languages:   langs,
			},
		})
		return
	}
	s.notFound(w, r)
}

type errorPage struct{ Heading, Message string }

func (s *site) notFound(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusNotFound, "error", pageData{
		Lang:  "en",
		Title: "Page not found | Notes",
		Content: errorPage{
			Heading: "Page not found",
			Message: "There is no page at this address.",
		},
	})
}

func (s *site) admin(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, "admin", pageData{
		Lang:    "en",
		Title:   "Internal admin | Notes",
		Content: struct{ Notes int }{len(s.notes)},
	})
}

// sitemap writes the JSON Lines listing headgate's sitemap reads.
func (s *site) sitemap(w http.ResponseWriter, r *http.Request) {
	type params struct {
		ID string `json:"id"`
	}
	type entry struct {
		Params  params `json:"params"`
		Lastmod string `json:"lastmod"`
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, n := range s.notes {
		if err := enc.Encode(entry{params{strconv.Itoa(n.ID)}, n.Lastmod}); err != nil {
			http.Error(w, "encoding sitemap failed", http.StatusInternalServerError)
			return
		}
	}
	send(w, r, http.StatusOK, "application/x-ndjson", buf.Bytes())
}

func (s *site) coverImage(w http.ResponseWriter, r *http.Request) {
	if name, ok := strings.CutSuffix(r.PathValue("file"), ".png"); !ok || name == "" {
		s.notFound(w, r)
		return
	}
	send(w, r, http.StatusOK, "image/png", s.cover)
}

// slow sends everything up to and including <body>, flushes, pauses, then
// sends the rest. It streams, so it has no Content-Length.
func (s *site) slow(w http.ResponseWriter, r *http.Request) {
	page, err := s.execute("slow", pageData{Lang: "en", Title: "Slow page | Notes"})
	if err != nil {
		http.Error(w, "rendering page failed", http.StatusInternalServerError)
		return
	}
	cut := bytes.Index(page, []byte("<body>")) + len("<body>")
	gz, done := negotiate(w, r, http.StatusOK, htmlType, page)
	if done {
		return
	}
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	rc := http.NewResponseController(w)
	var out io.Writer = w
	var zw *gzip.Writer
	if gz {
		zw = gzip.NewWriter(w)
		defer zw.Close()
		out = zw
	}
	if _, err := out.Write(page[:cut]); err != nil {
		return
	}
	if zw != nil {
		if err := zw.Flush(); err != nil {
			return
		}
	}
	if err := rc.Flush(); err != nil {
		return
	}
	select {
	case <-time.After(slowDelay):
	case <-r.Context().Done():
		return
	}
	out.Write(page[cut:])
}

func (s *site) execute(name string, data pageData) ([]byte, error) {
	var buf bytes.Buffer
	if err := s.pages[name].ExecuteTemplate(&buf, "layout", data); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (s *site) render(w http.ResponseWriter, r *http.Request, status int, name string, data pageData) {
	page, err := s.execute(name, data)
	if err != nil {
		http.Error(w, "rendering page failed", http.StatusInternalServerError)
		return
	}
	send(w, r, status, htmlType, page)
}

// send writes body as a complete response with a strong ETag, conditional
// GET support, gzip when the client accepts it, and Content-Length. HEAD
// requests get the headers only.
func send(w http.ResponseWriter, r *http.Request, status int, contentType string, body []byte) {
	gz, done := negotiate(w, r, status, contentType, body)
	if done {
		return
	}
	if gz {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(body) // writing to a bytes.Buffer cannot fail
		zw.Close()
		body = buf.Bytes()
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

// negotiate sets Content-Type, Vary, Content-Encoding and ETag for body and
// answers a matching If-None-Match with 304. It reports whether the body
// must be gzipped and whether the response is already complete.
func negotiate(w http.ResponseWriter, r *http.Request, status int, contentType string, body []byte) (gz, done bool) {
	h := w.Header()
	sum := sha256.Sum256(body)
	etag := hex.EncodeToString(sum[:12])
	if compressible(contentType) {
		h.Set("Vary", "Accept-Encoding")
		if gz = acceptsGzip(r.Header.Get("Accept-Encoding")); gz {
			etag += "-gzip" // a different representation needs a different strong ETag
		}
	}
	etag = `"` + etag + `"`
	h.Set("ETag", etag)
	if status == http.StatusOK && etagMatches(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return false, true
	}
	h.Set("Content-Type", contentType)
	if gz {
		h.Set("Content-Encoding", "gzip")
	}
	return gz, false
}

func compressible(contentType string) bool {
	return strings.HasPrefix(contentType, "text/") || contentType == "application/x-ndjson"
}

// acceptsGzip reports whether an Accept-Encoding header allows gzip.
func acceptsGzip(header string) bool {
	gzipQ, anyQ := -1.0, -1.0
	for part := range strings.SplitSeq(header, ",") {
		coding, params, _ := strings.Cut(part, ";")
		q := 1.0
		for param := range strings.SplitSeq(params, ";") {
			k, v, _ := strings.Cut(param, "=")
			if strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					q = f
				}
			}
		}
		switch strings.ToLower(strings.TrimSpace(coding)) {
		case "gzip", "x-gzip":
			gzipQ = q
		case "*":
			anyQ = q
		}
	}
	if gzipQ >= 0 {
		return gzipQ > 0
	}
	return anyQ > 0
}

// etagMatches applies the weak comparison If-None-Match calls for.
func etagMatches(ifNoneMatch, etag string) bool {
	for tag := range strings.SplitSeq(ifNoneMatch, ",") {
		tag = strings.TrimSpace(tag)
		if tag == "*" || strings.TrimPrefix(tag, "W/") == etag {
			return true
		}
	}
	return false
}

// coverPNG draws the small placeholder served as every cover image.
func coverPNG() ([]byte, error) {
	img := image.NewRGBA(image.Rect(0, 0, 120, 63))
	for y := range 63 {
		for x := range 120 {
			c := color.RGBA{0x2f, 0x48, 0x58, 0xff}
			if y > 40 {
				c = color.RGBA{0xf6, 0xae, 0x2d, 0xff}
			}
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
