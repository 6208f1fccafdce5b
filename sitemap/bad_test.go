package sitemap

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Each kind of bad entry is left out with its rule's one warning, and the
// good entries around it are still listed.
func TestBadEntries(t *testing.T) {
	long := strings.Repeat("a", 2100)
	for _, tc := range []struct {
		name   string
		match  string
		lines  string // the source, between two good lines
		reason string
		n      int
	}{
		{"constraint", "/n/:id{[0-9]+}", `{"params":{"id":"abc"}}`, reasonConstraint, 1},
		{"missing parameter", "/n/:id", `{"params":{"other":"1"}}`, reasonMissing, 1},
		{"no params", "/n/:id", `{"lastmod":"2026-01-01"}`, reasonMissing, 1},
		{"empty parameter", "/n/:id", `{"params":{"id":""}}`, reasonMissing, 1},
		{"dot", "/n/:id", `{"params":{"id":"."}}`, reasonDot, 1},
		{"dot dot", "/n/:id", `{"params":{"id":".."}}`, reasonDot, 1},
		{"dot dot in a spanning value", "/n/:id{.+}", `{"params":{"id":"a/../../etc"}}`, reasonDot, 1},
		{"slash", "/n/:id", `{"params":{"id":"a/b"}}`, reasonSlash, 1},
		{"NUL", "/n/:id", `{"params":{"id":"a\u0000b"}}`, reasonNUL, 1},
		{"loc too long", "/n/:id", `{"params":{"id":"` + long + `"}}`, reasonLocTooLong, 1},
		// A lastmod that does not parse drops the date, not the URL (§16.5):
		// /n/5 is listed, without a date, and counted.
		{"bad lastmod", "/n/:id", `{"params":{"id":"5"},"lastmod":"2026-13-45"}`, reasonBadLastmod, 1},
		{"lastmod not a string", "/n/:id", `{"params":{"id":"5"},"lastmod":20260101}`, reasonBadLine, 1},
		{"not JSON", "/n/:id", `this is not JSON`, reasonBadLine, 1},
		{"not an object", "/n/:id", "[1,2]\n42\n\"x\"\nnull", reasonBadLine, 4},
		{"params not an object", "/n/:id", `{"params":"id=1"}`, reasonBadLine, 1},
		{"param not a string", "/n/:id", `{"params":{"id":{"x":1}}}`, reasonBadLine, 1},
		{"param a float", "/n/:id", `{"params":{"id":1.5}}`, reasonBadLine, 1},
		{"broken JSON", "/n/:id", `{"params":{"id":"1"}`, reasonBadLine, 1},
		{"line too long", "/n/:id", `{"params":{"id":"` + strings.Repeat("x", 70000) + `"}}`, reasonLineTooLong, 1},
		{"several kinds", "/n/:id{[0-9]+}", "x\n{\"params\":{\"id\":\"a\"}}\n{\"params\":{\"id\":\"b\"}}\n{\"params\":{\"id\":\"7\"},\"lastmod\":\"soon\"}", "", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lg, log := newLogs()
			src := `{"params":{"id":"1"}}` + "\n" + tc.lines + "\n" + `{"params":{"id":"2"},"lastmod":"2026-01-02"}` + "\n"
			cfg := loadConfig(t, `
[[rule]]
match = "`+tc.match+`"
sitemap = true
sitemap_source = "file:s.jsonl"
`, map[string]string{"s.jsonl": src})
			u := parseURLSet(t, generated(t, New(cfg, Options{Logger: log}))["/sitemap.xml"])
			want := "https://notes.example/n/1 https://notes.example/n/2"
			switch tc.name {
			case "bad lastmod":
				want = "https://notes.example/n/1 https://notes.example/n/5 https://notes.example/n/2"
			case "several kinds":
				want = "https://notes.example/n/1 https://notes.example/n/7 https://notes.example/n/2"
			}
			if got := locs(u); strings.Join(got, " ") != want {
				t.Errorf("locs = %q, want %s", got, want)
			}
			rec := lg.leftOut(t, tc.match)
			if rec["left_out"] != float64(tc.n) {
				t.Errorf("left_out = %v, want %d", rec["left_out"], tc.n)
			}
			if tc.reason != "" {
				if got := reasons(rec); len(got) != 1 || got[tc.reason] != tc.n {
					t.Errorf("reasons = %v, want %s=%d", got, tc.reason, tc.n)
				}
			}
			if first, _ := rec["first"].(string); !strings.HasPrefix(first, "line 2") || len(first) > 400 {
				t.Errorf("first = %.500q, want the problem of line 2, at most 400 bytes", first)
			}
			if rec["source"] != "file:s.jsonl" || rec["level"] != "WARN" {
				t.Errorf("warning = %v", rec)
			}
		})
	}
}

func TestTruncatedLastLine(t *testing.T) {
	lg, log := newLogs()
	cfg := loadConfig(t, `
[[rule]]
match = "/n/:id"
sitemap = true
sitemap_source = "file:s.jsonl"
[[rule]]
match = "/m/:id"
sitemap = true
sitemap_source = "file:t.jsonl"
`, map[string]string{
		"s.jsonl": "{\"params\":{\"id\":\"1\"}}\n{\"params\":{\"id\":\"2\"},\"lastm",
		// A last line without newline that parses is a record.
		"t.jsonl": "{\"params\":{\"id\":\"1\"}}\n{\"params\":{\"id\":\"2\"}}",
	})
	u := parseURLSet(t, generated(t, New(cfg, Options{Logger: log}))["/sitemap.xml"])
	want := []string{"https://notes.example/n/1", "https://notes.example/m/1", "https://notes.example/m/2"}
	if got := locs(u); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("locs = %q, want %q", got, want)
	}
	if got := reasons(lg.leftOut(t, "/n/:id")); got[reasonTruncated] != 1 || len(got) != 1 {
		t.Errorf("reasons = %v, want truncated=1", got)
	}
	if n := len(lg.records(t, msgLeftOut)); n != 1 {
		t.Errorf("%d warnings, want 1 (none for the complete source)", n)
	}
}

func TestStaticEntriesAndParameterless(t *testing.T) {
	lg, log := newLogs()
	cfg := loadConfig(t, `
[[rule]]
match = "/n/:id{[0-9]+}"
sitemap = true
sitemap_entries = [{ params = { id = "1" } }, { params = { id = "x" } }, { params = { id = "2" }, lastmod = "bad" }]
[[rule]]
match = "/feed"
sitemap = true
sitemap_source = "file:s.jsonl"
`, map[string]string{"s.jsonl": `{"lastmod":"2026-01-03"}
{"params":{"whatever":"1"},"lastmod":"2026-02-01T00:00:00+01:00"}
{"lastmod":"not a date"}
oops
`})
	u := parseURLSet(t, generated(t, New(cfg, Options{Logger: log}))["/sitemap.xml"])
	// n/2's bad lastmod drops the date, not the URL (§16.5).
	if got := locs(u); len(got) != 3 || got[1] != "https://notes.example/n/2" || got[2] != "https://notes.example/feed" || u.URLs[1].Lastmod != "" {
		t.Fatalf("locs = %q", got)
	}
	// The parameterless rule is listed with the latest good date.
	if got := u.URLs[2].Lastmod; got != "2026-01-31" {
		t.Errorf("/feed lastmod = %q, want 2026-01-31", got)
	}
	if got := reasons(lg.leftOut(t, "/n/:id{[0-9]+}")); got[reasonConstraint] != 1 || got[reasonBadLastmod] != 1 {
		t.Errorf("reasons = %v", got)
	}
	rec := lg.leftOut(t, "/feed")
	if got := reasons(rec); got[reasonBadLastmod] != 1 || got[reasonBadLine] != 1 {
		t.Errorf("reasons = %v", got)
	}
	if first := rec["first"].(string); !strings.HasPrefix(first, "line 3:") {
		t.Errorf("first = %q", first)
	}
}

func TestArraySource(t *testing.T) {
	lg, log := newLogs()
	up := newSource(map[string]string{"/list.json": ` [
		{"params": {"id": "1"}, "lastmod": "2026-01-01"},
		{"params": {"id": 2}},
		"junk",
		{"params": {"id": "x y"}, "extra": [1, {"a": null}]}
	]
	`})
	cfg := loadConfig(t, `
[[rule]]
match = "/n/:id"
sitemap = true
sitemap_source = "upstream:/list.json"
`, nil)
	u := parseURLSet(t, generated(t, New(cfg, Options{Logger: log, Fetch: up.Fetch}))["/sitemap.xml"])
	want := "https://notes.example/n/1 https://notes.example/n/2 https://notes.example/n/x%20y"
	if got := strings.Join(locs(u), " "); got != want {
		t.Errorf("locs = %s, want %s", got, want)
	}
	rec := lg.leftOut(t, "/n/:id")
	if got := reasons(rec); got[reasonBadLine] != 1 || len(got) != 1 || !strings.HasPrefix(rec["first"].(string), "element 3:") {
		t.Errorf("warning = %v", rec)
	}
}

func TestSourceEncodings(t *testing.T) {
	// BOM, CRLF, blank lines, escapes and integers all read the same.
	cfg := loadConfig(t, `
[[rule]]
match = "/n/:id"
sitemap = true
sitemap_source = "file:s.jsonl"
`, map[string]string{"s.jsonl": "\xEF\xBB\xBF{\"params\":{\"id\":\"a\\u0062c\"}}\r\n\r\n  {\"params\" : { \"id\" : 42 } , \"lastmod\" : \"2026-01-01\" }\r\n{\"Params\":{\"id\":\"\\\"q\\\"\"}}\n"})
	u := parseURLSet(t, generated(t, New(cfg, Options{}))["/sitemap.xml"])
	want := "https://notes.example/n/abc https://notes.example/n/42 https://notes.example/n/%22q%22"
	if got := strings.Join(locs(u), " "); got != want {
		t.Errorf("locs = %s, want %s", got, want)
	}
}

// The fast decoder and encoding/json agree on what the fast one accepts.
func TestFastDecoder(t *testing.T) {
	for _, tc := range []struct {
		line string
		fast bool // the fast decoder takes it
	}{
		{`{"params":{"id":"1"},"lastmod":"2026-01-01"}`, true},
		{`{"lastmod":"x","params":{"a":"1","b":"2"}}`, true},
		{`{}`, true},
		{`{"params":{}}`, true},
		{`{"params":{"a":"1"},"params":{"b":"2"}}`, true},
		{` { "params" : { "id" : "é" } } `, true},
		{`{"params":{"id":"a\"b"}}`, false},
		{`{"params":{"id":"1"},"other":true}`, false},
		{`{"PARAMS":{"id":"1"}}`, false},
		{`{"params":{"id":"1"}`, false},
		{`{"params":{"id":"1"}}x`, false},
		{"{\"params\":{\"id\":\"\xff\"}}", false},
		{`{"params":{"id":"1",}}`, false},
		{`{"params":{"id":1}}`, false},
	} {
		line := tc.line
		var fast, slow lineDecoder
		fast.params, fast.rec.Params = map[string]paramValue{}, map[string]string{}
		slow.params, slow.rec.Params = map[string]paramValue{}, map[string]string{}
		okFast := fast.fast([]byte(line))
		if okFast != tc.fast {
			t.Errorf("%s: fast decoder takes it: %v, want %v", line, okFast, tc.fast)
		}
		_, p := slow.decode([]byte(strings.TrimSpace(line)))
		if !okFast {
			continue
		}
		if p.reason != "" {
			t.Errorf("%s: fast accepts, encoding/json refuses (%s)", line, p.detail())
			continue
		}
		// decode itself went the fast way; compare with encoding/json alone.
		var ref lineDecoder
		ref.params, ref.rec.Params = map[string]paramValue{}, map[string]string{}
		ref.in.Params = ref.params
		if err := json.Unmarshal([]byte(line), &ref.in); err != nil {
			t.Errorf("%s: %v", line, err)
			continue
		}
		lm := ""
		if ref.in.Lastmod != nil {
			lm = *ref.in.Lastmod
		}
		if lm != fast.rec.Lastmod || len(ref.in.Params) != len(fast.rec.Params) {
			t.Errorf("%s: fast %v %q, encoding/json %v %q", line, fast.rec.Params, fast.rec.Lastmod, ref.in.Params, lm)
		}
		for k, v := range ref.in.Params {
			if fast.rec.Params[k] != string(v) {
				t.Errorf("%s: param %s: fast %q, encoding/json %q", line, k, fast.rec.Params[k], v)
			}
		}
	}
}

// A source that cannot be read fails the generation, with one error.
func TestSourceFailures(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		err        error
		fetch      bool // false: Options.Fetch is nil
		want       string
	}{
		{"HTTP error", "", &StatusError{Path: "/s", StatusCode: http.StatusInternalServerError}, true, "upstream answered 500"},
		{"I/O error", "", errBoom, true, "connection reset"},
		{"no fetcher", "", nil, false, "Options.Fetch is nil"},
		{"HTML", "\n  <!DOCTYPE html><html><body>Log in</body></html>", nil, true, "starts like HTML"},
		{"array cut short", `[{"params":{"id":"1"}},`, nil, true, "JSON array"},
		{"array without ]", `[{"params":{"id":"1"}}`, nil, true, "ends before the closing ]"},
		{"array syntax", `[{"params":{"id":"1"}} {"params":{"id":"2"}}]`, nil, true, "JSON array"},
		{"data after the array", `[] []`, nil, true, "data after"},
		{"huge array element", `[{"params":{"id":"` + strings.Repeat("9", 200000) + `"}}]`, nil, true, "longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lg, log := newLogs()
			up := newSource(map[string]string{"/s": tc.body})
			if tc.err != nil {
				up.set("/s", "", tc.err)
			}
			o := Options{Logger: log}
			if tc.fetch {
				o.Fetch = up.Fetch
			}
			cfg := loadConfig(t, `
[[rule]]
match = "/"
sitemap = true
[[rule]]
match = "/n/:id"
sitemap = true
sitemap_source = "upstream:/s"
`, nil)
			s := New(cfg, o)
			err := s.WriteTo(context.Background(), &strings.Builder{})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `"upstream:/s"`) {
				t.Errorf("err = %v, want one naming the source and %q", err, tc.want)
			}
			// Served: 503, logged once.
			w := get(s, "GET", "/sitemap.xml")
			if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "30" {
				t.Errorf("got %d Retry-After %q, want 503 and 30", w.Code, w.Header().Get("Retry-After"))
			}
			if n := len(lg.records(t, "sitemap: generation failed; serving the last good sitemap until retry_after has passed")); n != 1 {
				t.Errorf("%d failure logs, want 1:\n%s", n, lg)
			}
		})
	}
}

func TestFileSourceVanished(t *testing.T) {
	cfg := loadConfig(t, `
[[rule]]
match = "/n/:id"
sitemap = true
sitemap_source = "file:s.jsonl"
`, map[string]string{"s.jsonl": "{}\n"})
	s := New(cfg, Options{})
	cfg.Dir = t.TempDir() // as if the file were deleted after the config loaded
	err := s.WriteTo(context.Background(), &strings.Builder{})
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("err = %v, want a file-not-found error", err)
	}
}

func TestSourceTimeout(t *testing.T) {
	// Fetch honours ctx (as Options.Fetch must); the body it returns hangs
	// until closed, like an HTTP body whose server stalls.
	release := make(chan struct{})
	defer close(release)
	var body *hangingBody
	cfg := loadConfig(t, `
[[rule]]
match = "/n/:id"
sitemap = true
sitemap_source = "upstream:/s"
`, nil)
	s := New(cfg, Options{
		SourceTimeout: 50 * time.Millisecond,
		Fetch: func(ctx context.Context, path string) (io.ReadCloser, error) {
			body = newHangingBody(`{"params":{"id":"1"}}` + "\n")
			return body, nil
		},
	})
	start := time.Now()
	err := s.WriteTo(context.Background(), &strings.Builder{})
	if err == nil || !strings.Contains(err.Error(), "not read within 50ms") {
		t.Errorf("err = %v, want a timeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	if !body.isClosed() {
		t.Error("the hanging body was not closed")
	}
}
