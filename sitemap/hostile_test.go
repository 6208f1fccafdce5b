package sitemap

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"
)

// hostileValues are parameter values a source must not be able to turn
// into another address, another host, markup or a broken file.
var hostileValues = []string{
	"../../etc/passwd", "..", ".", "%2e%2e", "a/b", "<script>alert(1)</script>", "<script>", "\"quoted\" & 'single'",
	"line\r\nbreak", "tab\there", "nul\x00byte", "javascript:alert(1)", "//evil.example/x", "?q=1#frag",
	"\u202eevil\u202c", "\ufeffbom", "]]>", "<!--", "&amp;", "\x7f", strings.Repeat("x", 10000),
	"ok-1", "ok 2", "ünïcödé",
}

func hostileSource(t testing.TB) string {
	var b strings.Builder
	for _, v := range hostileValues {
		line, err := json.Marshal(map[string]any{"params": map[string]string{"id": v}, "lastmod": "2026-01-02"})
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	b.WriteString("<script>not json</script>\n")
	b.WriteString(`{"params":{"id":"x"},"lastmod":"<b>2026</b>"}` + "\n")
	return b.String()
}

const hostileConfig = `
locales = ["en", "de"]
[sitemap]
cache_ttl = "1m"
[[rule]]
match = "/"
sitemap = true
[[rule]]
match = "/n/:id"
localized = true
sitemap = true
sitemap_source = "upstream:/s"
`

func TestHostileValues(t *testing.T) {
	clk := newClock()
	lg, log := newLogs()
	up := newSource(map[string]string{"/s": hostileSource(t)})
	s := New(loadConfig(t, hostileConfig, nil), Options{Fetch: up.Fetch, Logger: log, Now: clk.Now})
	w := get(s, "GET", "/sitemap.xml")
	if w.Code != 200 {
		t.Fatalf("status %d", w.Code)
	}
	doc := w.Body.String()
	u := parseURLSet(t, doc)
	var values []string
	for _, x := range u.URLs[1:] {
		loc, err := url.Parse(x.Loc)
		if err != nil {
			t.Fatalf("%q: %v", x.Loc, err)
		}
		if loc.Scheme != "https" || loc.Host != "notes.example" || loc.RawQuery != "" || loc.Fragment != "" || loc.User != nil {
			t.Errorf("%q leaves the site's pages", x.Loc)
		}
		rest, ok := strings.CutPrefix(loc.EscapedPath(), "/en/n/")
		if !ok {
			rest, ok = strings.CutPrefix(loc.EscapedPath(), "/de/n/")
		}
		if !ok || strings.Contains(rest, "/") || rest == "" {
			t.Errorf("%q is not one /n/ segment below a locale", x.Loc)
		}
		if !printableASCII(x.Loc) || len(x.Loc) > maxLoc {
			t.Errorf("%q: not printable ASCII within %d", x.Loc, maxLoc)
		}
		if len(x.Links) != 3 {
			t.Errorf("%q has %d links", x.Loc, len(x.Links))
		}
		if strings.HasPrefix(loc.EscapedPath(), "/en/") {
			v, _ := url.PathUnescape(rest)
			values = append(values, v)
		}
	}
	// What is listed reads back exactly; the rest was refused.
	want := []string{"%2e%2e", "<script>", "\"quoted\" & 'single'", "line\r\nbreak", "tab\there",
		"javascript:alert(1)", "?q=1#frag", "\u202eevil\u202c", "\ufeffbom", "]]>", "<!--", "&amp;", "\x7f", "ok-1", "ok 2", "ünïcödé",
		"x"} // listed without its bad lastmod (§16.5)
	if strings.Join(values, "|") != strings.Join(want, "|") {
		t.Errorf("listed values:\n got %q\nwant %q", values, want)
	}
	rec := lg.leftOut(t, "/n/:id")
	wantReasons := map[string]int{reasonDot: 3, reasonSlash: 3, reasonNUL: 1, reasonLocTooLong: 1, reasonBadLine: 1, reasonBadLastmod: 1}
	if got := reasons(rec); !mapsEqual(got, wantReasons) {
		t.Errorf("reasons = %v, want %v", got, wantReasons)
	}
	if first := rec["first"].(string); len(first) > 400 || strings.ContainsAny(first, "\r\n") {
		t.Errorf("first = %q: want short and on one line", first)
	}
	if strings.Contains(lg.String(), strings.Repeat("x", 400)) {
		t.Error("a 10 KB value reached the log")
	}

	// One warning per generation: a second generation adds one.
	get(s, "GET", "/sitemap.xml")
	clk.Add(2 * time.Minute)
	get(s, "GET", "/sitemap.xml")
	if n := len(lg.records(t, msgLeftOut)); n != 2 {
		t.Errorf("%d warnings after two generations, want 2", n)
	}
	validate(t, map[string]string{"/sitemap.xml": doc})
}

// endless yields its line forever (up to n bytes), never holding more
// than one line.
type endless struct {
	line []byte
	off  int
	n    int64
}

func (e *endless) Read(p []byte) (int, error) {
	if e.n <= 0 {
		return 0, io.EOF
	}
	k := 0
	for k < len(p) && e.n > 0 {
		c := copy(p[k:], e.line[e.off:])
		if int64(c) > e.n {
			c = int(e.n)
		}
		k += c
		e.n -= int64(c)
		e.off = (e.off + c) % len(e.line)
	}
	return k, nil
}

func (e *endless) Close() error { return nil }

func TestHugeSources(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a few hundred MB")
	}
	for _, tc := range []struct {
		name   string
		line   string
		size   int64
		check  func(t *testing.T, lg *logs, u xmlURLSet)
		config string
	}{
		{
			name: "one endless line", line: strings.Repeat("a", 4096), size: 256 << 20,
			check: func(t *testing.T, lg *logs, u xmlURLSet) {
				if got := reasons(lg.leftOut(t, "/n/:id")); !mapsEqual(got, map[string]int{reasonLineTooLong: 1}) {
					t.Errorf("reasons = %v", got)
				}
			},
		},
		{
			name: "endless JSON lines past max_urls", line: `{"params":{"id":"7"},"lastmod":"2026-01-02"}` + "\n", size: 16 << 20,
			config: "[sitemap]\nmax_urls = 1000\n",
			check: func(t *testing.T, lg *logs, u xmlURLSet) {
				if len(u.URLs) != 1000 {
					t.Errorf("got %d URLs, want 1000", len(u.URLs))
				}
				recs := lg.records(t, "sitemap: limit reached; the rest is left out")
				// "/" is 1 URL, 999 entries fit; the last line is cut.
				entries := 16 << 20 / len(`{"params":{"id":"7"},"lastmod":"2026-01-02"}`+"\n")
				if len(recs) != 1 || recs[0]["urls_left_out"] != float64(entries-999) {
					t.Errorf("limit warnings: %v, want %d left out", recs, entries-999)
				}
			},
		},
		{
			name: "endless bad lines", line: "<p>not json</p>\n", size: 64 << 20,
			check: func(t *testing.T, lg *logs, u xmlURLSet) {
				if got := reasons(lg.leftOut(t, "/n/:id")); got[reasonBadLine] != 64<<20/16 {
					t.Errorf("reasons = %v", got)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lg, log := newLogs()
			cfg := loadConfig(t, tc.config+`
[[rule]]
match = "/"
sitemap = true
[[rule]]
match = "/n/:id"
sitemap = true
sitemap_source = "upstream:/s"
`, nil)
			src := &endless{line: []byte(tc.line), n: tc.size}
			if tc.name == "endless bad lines" {
				// The first byte must not look like HTML, or the source fails
				// as a whole (tested elsewhere).
				src.line = []byte("p>not json</p>\n<")
			}
			s := New(cfg, Options{Logger: log, SourceTimeout: time.Minute,
				Fetch: func(ctx context.Context, path string) (io.ReadCloser, error) { return src, nil }})
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			res, err := s.generate(context.Background())
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; tc.name == "one endless line" && alloc > 4<<20 {
				t.Errorf("allocated %d MiB reading one %d MiB line", alloc>>20, tc.size>>20)
			}
			if after.HeapInuse > before.HeapInuse+32<<20 {
				t.Errorf("heap grew from %d to %d MiB", before.HeapInuse>>20, after.HeapInuse>>20)
			}
			tc.check(t, lg, parseURLSet(t, filesOf(t, res)["/sitemap.xml"]))
		})
	}
}

func TestHangingSourceServed(t *testing.T) {
	s := New(loadConfig(t, hostileConfig, nil), Options{
		SourceTimeout: 30 * time.Millisecond,
		Fetch: func(ctx context.Context, path string) (io.ReadCloser, error) {
			return newHangingBody(`{"params":{"id":"1"}}` + "\n"), nil
		},
	})
	if w := get(s, "GET", "/sitemap.xml"); w.Code != 503 || w.Header().Get("Retry-After") != "30" {
		t.Errorf("got %d %v", w.Code, w.Header())
	}
}

func TestFetchIgnoresContext(t *testing.T) {
	// A Fetch that blocks without honouring ctx breaks its contract; the
	// generation still ends when Fetch returns, and the body it returns
	// late is closed, not read.
	release := make(chan struct{})
	body := newHangingBody("")
	s := New(loadConfig(t, hostileConfig, nil), Options{
		SourceTimeout: 10 * time.Millisecond,
		Fetch: func(ctx context.Context, path string) (io.ReadCloser, error) {
			<-ctx.Done()
			<-release
			return body, nil
		},
	})
	done := make(chan error)
	go func() { done <- s.WriteTo(context.Background(), io.Discard) }()
	close(release)
	if err := <-done; err == nil {
		t.Error("no error")
	}
	if !body.isClosed() {
		t.Error("the late body was not closed")
	}
}

// FuzzSource: whatever a source holds, a generation either fails cleanly
// or writes files that parse, in which every address is the site's.
//
//	go test -run '^$' -fuzz FuzzSource -fuzztime 60s -fuzzminimizetime 3s -parallel 1 ./sitemap/
//
// With the default -fuzzminimizetime (60s) a short run spends all its
// time minimizing the first new input (5 executions in 35 s, 20,838 with
// 3s, 2026-12-07).
func FuzzSource(f *testing.F) {
	f.Add(strings.Replace(hostileSource(f), strings.Repeat("x", 10000), "x", 1)) // small seeds minimize fast
	f.Add(plainNotes)
	f.Add(`[{"params":{"id":"1"}},{"params":{"id":2}},"x"]`)
	f.Add("\xEF\xBB\xBF{\"params\":{\"id\":\"a\\u0000\"}}\r\n{\"lastmod\":\"2026-02-30\"}")
	cfg := loadConfig(f, `
locales = ["en", "de"]
[sitemap]
max_urls_per_file = 3
[[rule]]
match = "/n/:id"
localized = true
sitemap = true
sitemap_source = "upstream:/s"
[[rule]]
match = "/c/:v{[a-z.]+}/:w{.+}"
sitemap = true
sitemap_source = "upstream:/s"
`, nil)
	f.Fuzz(func(t *testing.T, src string) {
		up := newSource(map[string]string{"/s": src})
		res, err := New(cfg, Options{Fetch: up.Fetch}).generate(context.Background())
		if err != nil {
			return
		}
		for name, doc := range filesOf(t, res) {
			if strings.Contains(doc, "<sitemapindex") {
				var idx xmlIndex
				if err := xml.Unmarshal([]byte(doc), &idx); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				continue
			}
			for _, x := range parseURLSet(t, doc).URLs {
				loc, err := url.Parse(x.Loc)
				if err != nil || loc.Host != "notes.example" || loc.RawQuery != "" || loc.Fragment != "" || !printableASCII(x.Loc) {
					t.Fatalf("%s lists %q", name, x.Loc)
				}
			}
		}
	})
}
