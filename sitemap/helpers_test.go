package sitemap

import (
	stdgzip "compress/gzip"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"hash/crc32"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headgate/headgate/internal/hgtest"
	"github.com/headgate/headgate/rules"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// header is the start of every test config.
const header = `
[server]
upstream = "http://127.0.0.1:3000"
[site]
base_url = "https://notes.example"
`

// loadConfig writes files into a temporary directory and parses src (after
// header) as headgate.toml there.
func loadConfig(t testing.TB, src string, files map[string]string) *rules.Config {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := rules.Parse(filepath.Join(dir, "headgate.toml"), []byte(header+src), nil)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return cfg
}

// logs is a slog handler's output, safe for concurrent use.
type logs struct{ hgtest.LogBuffer }

func newLogs() (*logs, *slog.Logger) {
	l := &logs{}
	return l, slog.New(slog.NewJSONHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// records returns the log records whose message is msg.
func (l *logs) records(t testing.TB, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.String()), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

const msgLeftOut = "sitemap: entries left out"

// leftOut returns the one "entries left out" warning for rule, failing the
// test when there is not exactly one.
func (l *logs) leftOut(t testing.TB, rule string) map[string]any {
	t.Helper()
	var found []map[string]any
	for _, r := range l.records(t, msgLeftOut) {
		if r["rule"] == rule {
			found = append(found, r)
		}
	}
	if len(found) != 1 {
		t.Fatalf("got %d %q warnings for rule %s, want 1; log:\n%s", len(found), msgLeftOut, rule, l)
	}
	return found[0]
}

// reasons returns a warning's counts by reason.
func reasons(rec map[string]any) map[string]int {
	out := map[string]int{}
	m, _ := rec["reasons"].(map[string]any)
	for k, v := range m {
		out[k] = int(v.(float64))
	}
	return out
}

// generated runs one generation and returns its files, uncompressed, by
// path ("/sitemap.xml", "/sitemap-1.xml", …).
func generated(t testing.TB, s *Sitemap) map[string]string {
	t.Helper()
	res, err := s.generate(context.Background())
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	return filesOf(t, res)
}

func filesOf(t testing.TB, res *result) map[string]string {
	t.Helper()
	out := map[string]string{"/sitemap.xml": unzip(t, res.main)}
	for i, p := range res.parts {
		out["/sitemap-"+strconv.Itoa(i+1)+".xml"] = unzip(t, p)
	}
	return out
}

func unzip(t testing.TB, f *file) string {
	t.Helper()
	zr, err := f.open()
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("decompressing: %v", err)
	}
	if int64(len(b)) != f.size {
		t.Fatalf("file is %d bytes, says %d", len(b), f.size)
	}
	return string(b)
}

// The sitemap XML, as encoding/xml reads it back: element names carry
// their namespace, so a missing or wrong declaration fails to match.
type xmlURLSet struct {
	XMLName xml.Name `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 urlset"`
	URLs    []xmlURL `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 url"`
}

type xmlURL struct {
	Loc     string    `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 loc"`
	Lastmod string    `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 lastmod"`
	Links   []xmlLink `xml:"http://www.w3.org/1999/xhtml link"`
}

type xmlLink struct {
	Rel      string `xml:"rel,attr"`
	Hreflang string `xml:"hreflang,attr"`
	Href     string `xml:"href,attr"`
}

type xmlIndex struct {
	XMLName  xml.Name `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 sitemapindex"`
	Sitemaps []struct {
		Loc     string `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 loc"`
		Lastmod string `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 lastmod"`
	} `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 sitemap"`
}

// parseURLSet parses a urlset strictly and checks what encoding/xml does
// not: every element is in a known namespace, and xmlns:xhtml is declared
// exactly when a link is there.
func parseURLSet(t testing.TB, doc string) xmlURLSet {
	t.Helper()
	var u xmlURLSet
	if err := xml.Unmarshal([]byte(doc), &u); err != nil {
		t.Fatalf("urlset does not parse: %v\n%.2000s", err, doc)
	}
	checkTokens(t, doc)
	hasLink := false
	for _, x := range u.URLs {
		hasLink = hasLink || len(x.Links) > 0
	}
	if decl := strings.Contains(doc, `xmlns:xhtml="http://www.w3.org/1999/xhtml"`); decl != hasLink {
		t.Errorf("xmlns:xhtml declared: %v, links present: %v", decl, hasLink)
	}
	return u
}

// checkTokens walks every token: elements only in the sitemap and XHTML
// namespaces, no undeclared prefix.
func checkTokens(t testing.TB, doc string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(doc))
	d.Strict = true
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("XML token: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			switch se.Name.Space {
			case nsSitemap, nsXHTML:
			default:
				t.Fatalf("element %s in namespace %q", se.Name.Local, se.Name.Space)
			}
		}
	}
}

func locs(u xmlURLSet) []string {
	var out []string
	for _, x := range u.URLs {
		out = append(out, x.Loc)
	}
	return out
}

// clock is an injectable Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// get requests path from h.
func get(h http.Handler, method, path string, hdr ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// source is an upstream: Fetch serving fixed bodies, counting fetches.
type source struct {
	mu      sync.Mutex
	bodies  map[string]string
	errs    map[string]error
	fetches map[string]int
}

func newSource(bodies map[string]string) *source {
	return &source{bodies: bodies, errs: map[string]error{}, fetches: map[string]int{}}
}

func (s *source) Fetch(ctx context.Context, path string) (io.ReadCloser, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fetches[path]++
	if err := s.errs[path]; err != nil {
		return nil, err
	}
	b, ok := s.bodies[path]
	if !ok {
		return nil, &StatusError{Path: path, StatusCode: http.StatusNotFound}
	}
	return io.NopCloser(strings.NewReader(b)), nil
}

func (s *source) set(path, body string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bodies[path] = body
	s.errs[path] = err
}

func (s *source) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fetches[path]
}

var errBoom = errors.New("connection reset by peer")

func crc32IEEE(b []byte) uint32 { return crc32.ChecksumIEEE(b) }

// stdGunzip decompresses with the standard library, a decoder other than
// the one that wrote the file.
func stdGunzip(t testing.TB, f *file) string {
	t.Helper()
	zr, err := stdgzip.NewReader(f.gz.reader())
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("compress/gzip: %v", err)
	}
	return string(b)
}

// hangingBody returns its content, then blocks until closed, like the body
// of a server that stalls.
type hangingBody struct {
	r      *strings.Reader
	closed chan struct{}
	once   sync.Once
}

func newHangingBody(content string) *hangingBody {
	return &hangingBody{r: strings.NewReader(content), closed: make(chan struct{})}
}

func (h *hangingBody) Read(p []byte) (int, error) {
	if h.r.Len() > 0 {
		return h.r.Read(p)
	}
	<-h.closed
	return 0, errors.New("read on closed body")
}

func (h *hangingBody) Close() error {
	h.once.Do(func() { close(h.closed) })
	return nil
}

func (h *hangingBody) isClosed() bool {
	select {
	case <-h.closed:
		return true
	default:
		return false
	}
}
