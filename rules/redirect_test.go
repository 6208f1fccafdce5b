package rules

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// redirConfig loads a config of the given [normalize], [[redirect]] and
// [[redirect_table]] text, with data files written beside it.
func redirConfig(t testing.TB, body string, files map[string]string) (*Config, error) {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src := "[server]\nupstream = \"http://127.0.0.1:3000\"\n[site]\nbase_url = \"https://notes.example\"\n" + body
	p := filepath.Join(dir, "headgate.toml")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return Load(p)
}

func mustRedirConfig(t testing.TB, body string, files map[string]string) *Config {
	t.Helper()
	cfg, err := redirConfig(t, body, files)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return cfg
}

// answer is Redirect's result in one line: "301 https://… normalize", or
// "serve".
func answer(cfg *Config, req RedirectRequest) string {
	rd, err := cfg.Redirect(req)
	s := "serve"
	if rd != nil {
		s = itoa(rd.Status)
		if rd.Location != "" {
			s += " " + rd.Location
		}
		s += " " + rd.Source
	}
	if err != nil {
		s += " (error: " + err.Error() + ")"
	}
	return s
}

const allNormalize = `
[normalize]
redirect_hosts = ["www.notes.example", "old-notes.example"]
https = true
trailing_slash = "strip"
lowercase = true
merge_slashes = true
`

func TestNormalize(t *testing.T) {
	type tc struct {
		name, toml string
		req        RedirectRequest
		want       string
	}
	get := func(host string, https bool, target string) RedirectRequest {
		return RedirectRequest{Method: "GET", Host: host, HTTPS: https, Target: target}
	}
	const host = "notes.example"
	cases := []tc{
		{"off by default", "[normalize]\n", get("www.notes.example", false, "//A/"), "serve"},
		{"everything at once", allNormalize, get("WWW.notes.example", false, "//A/"), "301 https://notes.example/a normalize"},
		{"everything, with port and query", allNormalize, get("www.notes.example:8080", false, "//A//B/?Q=1&x=Y"), "301 https://notes.example/a/b?Q=1&x=Y normalize"},
		{"already normal", allNormalize, get(host, true, "/a/b?x=1"), "serve"},
		// §11.1: the query byte for byte, what a browser sends raw included;
		// only what would end the URL or an attribute, and a stray %, are
		// encoded.
		{"the query byte for byte", allNormalize, get(host, true, "/A?q=a|b{c}^d`e'g&e=%c3%a9"), "301 https://notes.example/a?q=a|b{c}^d`e'g&e=%c3%a9 normalize"},
		{"quotes, brackets and a stray % encoded", allNormalize, get(host, true, "/A?q=\"<x>\"\\&p=100%"), "301 https://notes.example/a?q=%22%3Cx%3E%22%5C&p=100%25 normalize"},
		{"root is never stripped", allNormalize, get(host, true, "/"), "serve"},
		{"root from a redirect host", allNormalize, get("old-notes.example", true, "/"), "301 https://notes.example/ normalize"},
		{"host only", "[normalize]\nredirect_hosts = [\"www.notes.example\"]\n", get("www.notes.example", true, "/A//b/"), "301 https://notes.example/A//b/ normalize"},
		{"host, case and port ignored", "[normalize]\nredirect_hosts = [\"www.notes.example\"]\n", get("WWW.Notes.Example:443", true, "/x"), "301 https://notes.example/x normalize"},
		{"a redirect host with a final dot", "[normalize]\nredirect_hosts = [\"www.notes.example\"]\n", get("www.notes.example.", true, "/x"), "301 https://notes.example/x normalize"},
		{"the site's host with a final dot", "[normalize]\nredirect_hosts = [\"www.notes.example\"]\n", get("Notes.Example.:443", true, "/x"), "301 https://notes.example/x normalize"},
		{"the site's host, no redirect hosts: served", "[normalize]\nlowercase = true\n", get("notes.example.", true, "/x"), "serve"},
		{"other host is served", "[normalize]\nredirect_hosts = [\"www.notes.example\"]\n", get("evil.example", true, "/x"), "serve"},
		{"https only", "[normalize]\nhttps = true\n", get(host, false, "/A?b"), "301 https://notes.example/A?b normalize"},
		{"https, already", "[normalize]\nhttps = true\n", get(host, true, "/A"), "serve"},
		{"strip", "[normalize]\ntrailing_slash = \"strip\"\n", get(host, true, "/a/b/"), "301 https://notes.example/a/b normalize"},
		{"strip runs", "[normalize]\ntrailing_slash = \"strip\"\n", get(host, true, "/a//"), "301 https://notes.example/a normalize"},
		{"add", "[normalize]\ntrailing_slash = \"add\"\n", get(host, true, "/a/b"), "301 https://notes.example/a/b/ normalize"},
		{"add, not on a file", "[normalize]\ntrailing_slash = \"add\"\n", get(host, true, "/manual.pdf"), "serve"},
		{"add, dot in an earlier segment", "[normalize]\ntrailing_slash = \"add\"\n", get(host, true, "/v1.2/notes"), "301 https://notes.example/v1.2/notes/ normalize"},
		{"add, root", "[normalize]\ntrailing_slash = \"add\"\n", get(host, true, "/"), "serve"},
		{"keep", "[normalize]\ntrailing_slash = \"keep\"\n", get(host, true, "/a/"), "serve"},
		{"lowercase", "[normalize]\nlowercase = true\n", get(host, true, "/Notes/ABC?Q=X"), "301 https://notes.example/notes/abc?Q=X normalize"},
		{"lowercase leaves escapes", "[normalize]\nlowercase = true\n", get(host, true, "/%e6%9d%b1"), "serve"},
		{"lowercase spells escapes upper-case", "[normalize]\nlowercase = true\n", get(host, true, "/A%e6%9d%b1"), "301 https://notes.example/a%E6%9D%B1 normalize"},
		{"lowercase, %2F stays", "[normalize]\nlowercase = true\n", get(host, true, "/A%2fB"), "301 https://notes.example/a%2Fb normalize"},
		{"merge", "[normalize]\nmerge_slashes = true\n", get(host, true, "//a///b"), "301 https://notes.example/a/b normalize"},
		{"merge, encoded slash is no slash", "[normalize]\nmerge_slashes = true\n", get(host, true, "/a/%2F/b"), "serve"},
		{"query byte for byte", allNormalize, get(host, true, "/A?q=%e6+x&&y"), "301 https://notes.example/a?q=%e6+x&&y normalize"},
		{"POST is never normalized", allNormalize, RedirectRequest{Method: "POST", Host: "www.notes.example", Target: "//A/"}, "serve"},
		{"PUT is never normalized", allNormalize, RedirectRequest{Method: "PUT", Host: host, Target: "/A"}, "serve"},
		{"HEAD is", allNormalize, RedirectRequest{Method: "HEAD", Host: host, HTTPS: true, Target: "/A"}, "301 https://notes.example/a normalize"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := mustRedirConfig(t, c.toml, nil)
			if got := answer(cfg, c.req); got != c.want {
				t.Errorf("%+v:\n got %s\nwant %s", c.req, got, c.want)
			}
		})
	}
}

// Every combination of the path normalizations gives one hop to a path
// that all of them leave alone.
func TestNormalizeCombinations(t *testing.T) {
	paths := []string{"/", "//", "/A", "/a/", "//A//b//", "/X.PDF", "/a.b/C", "/%e6/Z/", "/a//b.html/"}
	for mask := 0; mask < 16; mask++ {
		var b strings.Builder
		b.WriteString("[normalize]\n")
		if mask&1 != 0 {
			b.WriteString("lowercase = true\n")
		}
		if mask&2 != 0 {
			b.WriteString("merge_slashes = true\n")
		}
		switch mask >> 2 {
		case 1:
			b.WriteString("trailing_slash = \"strip\"\n")
		case 2:
			b.WriteString("trailing_slash = \"add\"\n")
		}
		cfg := mustRedirConfig(t, b.String(), nil)
		for _, p := range paths {
			rd, err := cfg.Redirect(RedirectRequest{Method: "GET", Host: "notes.example", HTTPS: true, Target: p})
			if err != nil {
				t.Fatal(err)
			}
			if rd == nil {
				continue
			}
			loc := strings.TrimPrefix(rd.Location, "https://notes.example")
			again, _ := cfg.Redirect(RedirectRequest{Method: "GET", Host: "notes.example", HTTPS: true, Target: loc})
			if again != nil {
				t.Errorf("%q with %q: %s, then again %s: not one hop", b.String(), p, rd.Location, again.Location)
			}
		}
	}
}

func TestRedirectRules(t *testing.T) {
	const rulesTOML = `
[[redirect]]
from = "/old-notes/:id{[0-9]+}"
to = "/notes/{id}"

[[redirect]]
from = "/old-notes/*"
to = "/notes"
status = 302
query = "drop"

[[redirect]]
from = "/blog/:slug"
to = "https://blog.example/posts/{slug}"
status = 308

[[redirect]]
from = "/gone/*"
status = 410

[[redirect]]
from = "/p/:x{.+}"
to = "/q/{x}"
status = 307

[[redirect]]
from = "/wide/*"
to = "{base_url}/narrow{path}"

[[redirect]]
from = "/to-search/:q"
to = "/search?q={q}"
`
	cfg := mustRedirConfig(t, rulesTOML, nil)
	cases := []struct{ target, want string }{
		{"/old-notes/42", "301 https://notes.example/notes/42 rule"},
		{"/old-notes/42?page=2", "301 https://notes.example/notes/42?page=2 rule"},
		{"/old-notes/abc?page=2", "302 https://notes.example/notes rule"},
		{"/old-notes", "302 https://notes.example/notes rule"},
		{"/blog/hello%20world", "308 https://blog.example/posts/hello%20world rule"},
		{"/gone/x/y", "410 rule"},
		{"/p/a/b", "307 https://notes.example/q/a/b rule"},
		{"/wide/x", "301 https://notes.example/narrow/wide/x rule"},
		{"/to-search/a&b=c", "301 https://notes.example/search?q=a%26b%3Dc rule"},
		{"/notes/42", "serve"},
		// A parameter never moves the target off the configured host.
		{"/p/%2F%2Fevil.example", "307 https://notes.example/q///evil.example rule"},
		{"/p/%2f%2fevil.example/x", "307 https://notes.example/q///evil.example/x rule"},
		{"/blog/%2F%2Fevil.example", "serve"}, // a plain :slug holds no "/"
		{"/to-search/%2F%2Fevil", "serve"},
		{"/old-notes/%2F%2Fevil", "302 https://notes.example/notes rule"},
	}
	for _, c := range cases {
		got := answer(cfg, RedirectRequest{Method: "GET", Host: "notes.example", HTTPS: true, Target: c.target})
		if got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.target, got, c.want)
		}
	}
}

// A templated parameter that holds another host in any spelling stays in
// the path of the configured origin.
func TestRedirectParamNeverChangesHost(t *testing.T) {
	cfg := mustRedirConfig(t, `
[[redirect]]
from = "/a/:x{.+}"
to = "/{x}"
[[redirect]]
from = "/b/:x"
to = "/{x}"
[[redirect]]
from = "/c/:x{.+}"
to = "https://other.example/{x}"
[[redirect]]
from = "/d/:x{.+}"
to = "{base_url}/{x}"
`, nil)
	evil := []string{"%2F%2Fevil.example", "%2f%2fevil.example", "%5C%5Cevil.example", "%2F%5Cevil.example",
		"https:%2F%2Fevil.example", "%40evil.example", "x%2F..%2F..%2Fevil", "@evil.example", "%0d%0aLocation:%20http://evil"}
	for _, prefix := range []string{"/a/", "/b/", "/c/", "/d/"} {
		for _, e := range evil {
			target := prefix + e
			if CheckPath(target) != nil {
				continue
			}
			rd, _ := cfg.Redirect(RedirectRequest{Method: "GET", Host: "notes.example", HTTPS: true, Target: target})
			if rd == nil {
				continue
			}
			want := "notes.example"
			if prefix == "/c/" {
				want = "other.example"
			}
			u, err := url.Parse(rd.Location)
			if err != nil || u.Host != want || u.Scheme != "https" {
				t.Errorf("%s → %s: host %q, want %q", target, rd.Location, u.Host, want)
			}
			if strings.ContainsAny(rd.Location, "\r\n\\ ") {
				t.Errorf("%s → %q holds a byte no Location may", target, rd.Location)
			}
		}
	}
}

const tableCSV = "from,to,status\n" +
	"/index.php?id=42,/notes/42,\n" +
	"/index.php?id=42&lang=de,/de/notes/42,\n" +
	"/index.php?lang=de&id=42&print=1,/de/notes/42/print,302\n" +
	"/index.php,/,\n" +
	"/old,/older,\n" +
	"/older,/oldest,308\n" +
	"/oldest,/final,\n" +
	"/gone,,410\n" +
	"/to-gone,/gone,\n" +
	"/%e6%9d%b1,/east,\n" +
	"/ext,https://other.example/x?a=1#frag,\n" +
	"/frag,/page#section-2,\n" +
	"https://notes.example/full,/from-full-url,\n" +
	"\"/quoted,comma\",/q,\n"

func TestRedirectTable(t *testing.T) {
	cfg := mustRedirConfig(t, "[[redirect_table]]\nfile = \"r.csv\"\n", map[string]string{"r.csv": tableCSV})
	cases := []struct{ target, want string }{
		{"/index.php?id=42", "301 https://notes.example/notes/42 table"},
		{"/index.php?utm=x&id=42", "301 https://notes.example/notes/42 table"},
		{"/index.php?lang=de&id=42", "301 https://notes.example/de/notes/42 table"},
		{"/index.php?id=42&lang=de", "301 https://notes.example/de/notes/42 table"},
		{"/index.php?print=1&id=42&lang=de", "302 https://notes.example/de/notes/42/print table"},
		{"/index.php?id=43", "301 https://notes.example/?id=43 table"},
		{"/index.php", "301 https://notes.example/ table"},
		{"/index.php?id=%34%32", "301 https://notes.example/notes/42 table"},
		// A chain collapsed at load: the first hop's status, the final target.
		{"/old", "301 https://notes.example/final table"},
		{"/older?x=1", "308 https://notes.example/final?x=1 table"},
		{"/gone", "410 table"},
		{"/to-gone", "410 table"},
		{"/%E6%9D%B1", "301 https://notes.example/east table"},
		{"/%e6%9d%B1", "301 https://notes.example/east table"},
		{"/ext?b=2", "301 https://other.example/x?a=1&b=2#frag table"},
		{"/frag?b=2", "301 https://notes.example/page?b=2#section-2 table"},
		{"/full", "301 https://notes.example/from-full-url table"},
		{"/quoted,comma", "301 https://notes.example/q table"},
		{"/final", "serve"},
		{"/OLD", "serve"},
	}
	for _, c := range cases {
		got := answer(cfg, RedirectRequest{Method: "GET", Host: "notes.example", HTTPS: true, Target: c.target})
		if got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.target, got, c.want)
		}
	}
	rd, _ := cfg.Redirect(RedirectRequest{Method: "GET", Target: "/older"})
	if !strings.HasSuffix(rd.Where(), "r.csv:7") {
		t.Errorf("Where = %q, want …r.csv:7", rd.Where())
	}
}

func TestRedirectTableHeaderCase(t *testing.T) {
	cfg := mustRedirConfig(t, "[[redirect_table]]\nfile = \"r.csv\"\n", map[string]string{"r.csv": "Note,From,To,Status\nmoved,/a,/b,302\n"})
	if got := answer(cfg, RedirectRequest{Target: "/a", HTTPS: true}); got != "302 https://notes.example/b table" {
		t.Errorf("got %s", got)
	}
}

func TestRedirectTableJSONLines(t *testing.T) {
	cfg := mustRedirConfig(t, "[[redirect_table]]\nfile = \"r.jsonl\"\nstatus = 302\nquery = \"drop\"\n", map[string]string{"r.jsonl": `{"from": "/a", "to": "/b", "note": "moved in 2024"}
{"from": "/c", "to": "/d", "status": 308}

{"from": "/e", "to": "/f", "status": "301"}
`})
	cases := []struct{ target, want string }{
		{"/a?x=1", "302 https://notes.example/b table"},
		{"/c", "308 https://notes.example/d table"},
		{"/e", "301 https://notes.example/f table"},
	}
	for _, c := range cases {
		if got := answer(cfg, RedirectRequest{Target: c.target, HTTPS: true}); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.target, got, c.want)
		}
	}
}

// The request order of §11.2: normalization first, then rows, then
// patterns, all in one hop.
func TestRedirectOrder(t *testing.T) {
	cfg := mustRedirConfig(t, allNormalize+`
[[redirect_table]]
file = "r.csv"

[[redirect]]
from = "/old/*"
to = "/pattern"

[[redirect]]
from = "/t/:id"
to = "/T/{id}/X/"
`, map[string]string{"r.csv": "from,to\n/old/exact,/from-table\n/Upper/Row/,/Moved/\n"})
	cases := []struct {
		req  RedirectRequest
		want string
	}{
		{RedirectRequest{Host: "www.notes.example", Target: "//OLD/Exact/"}, "301 https://notes.example/from-table normalize"},
		{RedirectRequest{HTTPS: true, Target: "/old/exact"}, "301 https://notes.example/from-table table"},
		{RedirectRequest{HTTPS: true, Target: "/old/other"}, "301 https://notes.example/pattern rule"},
		// Row keys are normalized like requests, so that they still match.
		{RedirectRequest{HTTPS: true, Target: "/upper/row"}, "301 https://notes.example/moved table"},
		// A templated target is normalized too: still one hop.
		{RedirectRequest{HTTPS: true, Target: "/t/7"}, "301 https://notes.example/t/7/x rule"},
		{RedirectRequest{Method: "POST", Host: "www.notes.example", Target: "/old/exact"}, "301 https://notes.example/from-table table"},
	}
	for _, c := range cases {
		if got := answer(cfg, c.req); got != c.want {
			t.Errorf("%+v:\n got %s\nwant %s", c.req, got, c.want)
		}
	}
}

// Templated chains are followed at request time; a loop among them fails
// open.
func TestRedirectTemplatedChains(t *testing.T) {
	cfg := mustRedirConfig(t, `
[[redirect]]
from = "/a/:x"
to = "/b/{x}"
[[redirect]]
from = "/b/:x"
to = "/c/{x}"
status = 302
[[redirect]]
from = "/loop1/:x"
to = "/loop2/{x}"
[[redirect]]
from = "/loop2/:x"
to = "/loop1/{x}"
[[redirect]]
from = "/self/:x"
to = "/self/{x}"
`, nil)
	if got := answer(cfg, RedirectRequest{Target: "/a/1"}); got != "301 https://notes.example/c/1 rule" {
		t.Errorf("chain: %s", got)
	}
	if got := answer(cfg, RedirectRequest{Target: "/self/1"}); got != "serve" {
		t.Errorf("self: %s", got)
	}
	rd, err := cfg.Redirect(RedirectRequest{Target: "/loop1/1"})
	if rd != nil || !errors.Is(err, ErrRedirectLoop) {
		t.Errorf("loop: %v, %v; want no redirect and ErrRedirectLoop", rd, err)
	}
	// Eleven templated steps: past the bound, fail open.
	var b strings.Builder
	for i := 0; i < 11; i++ {
		b.WriteString("[[redirect]]\nfrom = \"/s" + itoa(i) + "/:x\"\nto = \"/s" + itoa(i+1) + "/{x}\"\n")
	}
	long := mustRedirConfig(t, b.String(), nil)
	if rd, err := long.Redirect(RedirectRequest{Target: "/s0/x"}); rd != nil || !errors.Is(err, ErrRedirectLoop) {
		t.Errorf("11 steps: %v, %v", rd, err)
	}
	if got := answer(long, RedirectRequest{Target: "/s2/x"}); got != "301 https://notes.example/s11/x rule" {
		t.Errorf("9 steps: %s", got)
	}
}

// A table row that normalization already answers (/About → /about under
// lowercase, /about/ → /about under strip) is left out and counted, not a
// cycle: migration tables are full of them, and at request time such a row
// could only lead back to where normalization ends.
func TestRedirectRowsNormalizationAnswers(t *testing.T) {
	cfg := mustRedirConfig(t, "[normalize]\nlowercase = true\ntrailing_slash = \"strip\"\n[[redirect_table]]\nfile = \"r.csv\"\n",
		map[string]string{"r.csv": "from,to\n/About,/about\n/faq/,/faq\n/Old-Page/,/new\n"})
	rt := cfg.RedirectTables[0]
	if rt.Rows != 1 || rt.Redundant != 2 {
		t.Errorf("rows %d, left out %d; want 1 and 2", rt.Rows, rt.Redundant)
	}
	for target, want := range map[string]string{
		"/About":     "301 https://notes.example/about normalize",
		"/about":     "serve",
		"/faq/":      "301 https://notes.example/faq normalize",
		"/Old-Page/": "301 https://notes.example/new normalize", // counted under its first hop (§17)
		"/old-page":  "301 https://notes.example/new table",
	} {
		if got := answer(cfg, RedirectRequest{Target: target, HTTPS: true}); got != want {
			t.Errorf("%s: %q, want %q", target, got, want)
		}
	}
	// A row that names itself as written is still a cycle.
	_, err := redirConfig(t, "[[redirect_table]]\nfile = \"r.csv\"\n", map[string]string{"r.csv": "from,to\n/x,/x\n"})
	if err == nil || !strings.Contains(err.Error(), "HG181") {
		t.Errorf("/x,/x: %v, want HG181", err)
	}
}

func TestRedirectProblems(t *testing.T) {
	cases := []struct {
		name, toml string
		files      map[string]string
		want       []string // substrings of the report, in order
	}{
		{"rule cycle", "[[redirect]]\nfrom = \"/a\"\nto = \"/b\"\n[[redirect]]\nfrom = \"/b\"\nto = \"/a\"\n", nil,
			[]string{"HG181", "headgate.toml:5: redirect[0]: redirect cycle: /a → /b → /a"}},
		{"table cycle", "[[redirect_table]]\nfile = \"r.csv\"\n", map[string]string{"r.csv": "from,to\n/x,/y\n/y,/z\n/z,/x\n"},
			[]string{"HG181", "r.csv:2: redirect_table[0]: redirect cycle: /x → /y → /z → /x"}},
		// Targets that normalization sends back to their own source: each
		// would answer its request with a redirect to itself.
		{"target on a redirect host", "[normalize]\nredirect_hosts = [\"www.notes.example\"]\n[[redirect]]\nfrom = \"/x\"\nto = \"https://www.notes.example/x\"\n", nil,
			[]string{"HG181", "redirect cycle: /x → /x"}},
		{"http target with https on", "[normalize]\nhttps = true\n[[redirect]]\nfrom = \"/y\"\nto = \"http://notes.example/y\"\n", nil,
			[]string{"HG181", "redirect cycle: /y → /y"}},
		{"explicit default port", "[[redirect_table]]\nfile = \"r.csv\"\n", map[string]string{"r.csv": "from,to\n/r,https://notes.example:443/r\n"},
			[]string{"HG181", "redirect cycle: /r → /r"}},
		{"redirect host with a scheme", "[normalize]\nredirect_hosts = [\"www.notes.example\", \"https://old.example\"]\n", nil,
			[]string{"HG141", "normalize.redirect_hosts[1]: \"https://old.example\" is not a host name"}},
		{"own host after a bad one", "[normalize]\nredirect_hosts = [\"*bad\", \"https://old.example\", \"notes.example\"]\n", nil,
			[]string{"normalize.redirect_hosts[0]", "normalize.redirect_hosts[1]", "normalize.redirect_hosts[2]: \"notes.example\" is site.base_url's own host"}},
		{"bad status", "[[redirect]]\nfrom = \"/a\"\nto = \"/b\"\nstatus = 303\n", nil, []string{"HG180", "redirect[0].status: 303 is not one of"}},
		{"410 with to", "[[redirect]]\nfrom = \"/a\"\nto = \"/b\"\nstatus = 410\n", nil, []string{"HG180", "a 410 (gone) has no target"}},
		{"no to", "[[redirect]]\nfrom = \"/a\"\n", nil, []string{"HG180", "has no to"}},
		{"user info in the target", "[[redirect]]\nfrom = \"/a\"\nto = \"https://notes.example@evil.example/x\"\n", nil, []string{"HG180", "must not hold user info"}},
		{"a port that is no port", "[[redirect]]\nfrom = \"/a\"\nto = \"https://blog.example:99999/x\"\n", nil, []string{"HG180", "redirect[0].to"}},
		{"javascript", "[[redirect]]\nfrom = \"/a\"\nto = \"javascript:alert(1)\"\n", nil, []string{"HG180", "only http: and https: URLs with // are redirect targets"}},
		{"other host", "[[redirect]]\nfrom = \"/a/:x\"\nto = \"//evil.example/{x}\"\n", nil, []string{"HG180", "names another host"}},
		{"variable host", "[[redirect]]\nfrom = \"/a/:x\"\nto = \"https://{x}.example/\"\n", nil, []string{"HG180", "can not be part of a target's host"}},
		{"variable first", "[[redirect]]\nfrom = \"/a/:x\"\nto = \"{x}\"\n", nil, []string{"HG180", "can not decide where it points"}},
		{"unknown var", "[[redirect]]\nfrom = \"/a/:x\"\nto = \"/{y}\"\n", nil, []string{"HG180", "unknown template variable {y}"}},
		{"bad pattern", "[[redirect]]\nfrom = \"old\"\nto = \"/b\"\n", nil, []string{"HG180", "a pattern starts with /"}},
		{"canonical names a redirect source", "[[rule]]\nmatch = \"/x\"\ncanonical = \"/old\"\n[[redirect]]\nfrom = \"/old\"\nto = \"/new\"\n", nil,
			[]string{"HG182", "rule[0].canonical"}},
		{"canonical on the own origin spelled with :443", "[[rule]]\nmatch = \"/x\"\ncanonical = \"https://notes.example:443/old\"\n[[redirect]]\nfrom = \"/old\"\nto = \"/new\"\n", nil,
			[]string{"HG182", "rule[0].canonical: \"https://notes.example:443/old\" is redirected"}},
		{"canonical on the own origin in upper case", "[[rule]]\nmatch = \"/x\"\ncanonical = \"https://NOTES.example/old?a=1\"\n[[redirect]]\nfrom = \"/old\"\nto = \"/new\"\n", nil,
			[]string{"HG182", "rule[0].canonical: \"https://NOTES.example/old?a=1\" is redirected"}},
		{"canonical on a redirect host", "[[rule]]\nmatch = \"/x\"\ncanonical = \"https://www.notes.example/x\"\n[normalize]\nredirect_hosts = [\"www.notes.example\"]\n", nil,
			[]string{"HG182", "rule[0].canonical: \"https://www.notes.example/x\" is redirected by [normalize] to https://notes.example"}},
		{"http canonical with https on", "[[rule]]\nmatch = \"/x\"\ncanonical = \"http://notes.example/x\"\n[normalize]\nhttps = true\n", nil,
			[]string{"HG182", "rule[0].canonical: \"http://notes.example/x\" is redirected by [normalize]"}},
		{"sitemap names a redirect source", "[[rule]]\nmatch = \"/Old\"\nsitemap = true\n[normalize]\nlowercase = true\n", nil,
			[]string{"HG182", "rule[0].sitemap: /Old is redirected"}},
		{"missing file", "[[redirect_table]]\nfile = \"nope.csv\"\n", nil, []string{"HG180", "redirect_table[0].file", "nope.csv: cannot be read"}},
		{"unknown format", "[[redirect_table]]\nfile = \"r.txt\"\n", map[string]string{"r.txt": "x"}, []string{"HG180", "unknown format"}},
		{"no header", "[[redirect_table]]\nfile = \"r.csv\"\n", map[string]string{"r.csv": "/a,/b\n"}, []string{"HG180", "r.csv:1: redirect_table[0]: the header row has no from column"}},
		{"rows", "[[redirect_table]]\nfile = \"r.csv\"\n", map[string]string{"r.csv": "\ufefffrom,to,status\r\n" +
			"/ok,/fine,\r\n" +
			"/ctl\x01,/x,\r\n" +
			"/a,javascript:alert(1),\r\n" +
			"/b,../../etc,\r\n" +
			"/c,/a/../../b,\r\n" +
			"old-page,/x,\r\n" +
			"https://other.example/x,/x,\r\n" +
			"/ok,/other,\r\n" +
			"/d,/x,303\r\n" +
			"/e,,\r\n" +
			"/f,/x,410\r\n" +
			"/g\r\n"},
			[]string{
				"r.csv:3: redirect_table[0]: from \"/ctl\\x01\" holds a control character",
				"r.csv:4: redirect_table[0]: to \"javascript:alert(1)\": only http: and https: URLs with // are written",
				"r.csv:5: redirect_table[0]: to \"../../etc\": a relative target must start with /",
				"r.csv:6: redirect_table[0]: to \"/a/../../b\": its path holds a dot segment",
				"r.csv:7: redirect_table[0]: from \"old-page\" is not a path",
				"r.csv:8: redirect_table[0]: from \"https://other.example/x\" is not a path on site.base_url's origin",
				"r.csv:9: redirect_table[0]: from \"/ok\" is also on line 2",
				"r.csv:10: redirect_table[0]: status \"303\" is not one of",
				"r.csv:11: redirect_table[0]: to is empty",
				"r.csv:12: redirect_table[0]: status 410 (gone) has no target",
				"r.csv:13: redirect_table[0]: this row has a different number of fields",
			}},
		{"invalid UTF-8", "[[redirect_table]]\nfile = \"r.csv\"\n", map[string]string{"r.csv": "from,to\n/a\xff,/b\n"}, []string{"r.csv:2", "not valid UTF-8"}},
		{"every bad row, after a ragged one", "[[redirect_table]]\nfile = \"r.csv\"\n", map[string]string{"r.csv": "from,to\n/a,/b,extra\n/c,javascript:x\n/d\xff,/e\n/f,javascript:y\n/g,\"/h\"i\n/j,javascript:z\n"},
			[]string{"r.csv:2: redirect_table[0]: this row has a different number of fields", "r.csv:3:", "r.csv:4:", "not valid UTF-8", "r.csv:5:", "r.csv:6:", "quote is out of place", "r.csv:7:"}},
		{"every bad JSON line", "[[redirect_table]]\nfile = \"r.jsonl\"\n", map[string]string{"r.jsonl": "{\"from\":\"/a\",\"to\":\"/b\"}\nnot json\n{\"from\":\"/c\",\"to\":\"javascript:x\"}\n[1,2]\n{\"from\":\"/d\",\"status\":\"410\",\"to\":\"/e\"}\n"},
			[]string{"r.jsonl:2", "r.jsonl:3", "r.jsonl:4", "r.jsonl:5"}},
		{"bad JSON line", "[[redirect_table]]\nfile = \"r.jsonl\"\n", map[string]string{"r.jsonl": "{\"from\":\"/a\",\"to\":\"/b\"}\n{\"from\":\"/c\",\n"}, []string{"r.jsonl:2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := redirConfig(t, c.toml, c.files)
			var ps Problems
			if !errors.As(err, &ps) {
				t.Fatalf("err = %v, want Problems", err)
			}
			report := ps.Error()
			rest := report
			for _, w := range c.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("report lacks %q (in order):\n%s", w, report)
				}
				rest = rest[i+len(w):]
			}
		})
	}
	_, err := Parse("h.toml", []byte("[server]\nupstream = \"http://127.0.0.1:1\"\n[site]\nbase_url = \"http://notes.example\"\n[normalize]\nhttps = true\nredirect_hosts = [\"notes.example\"]\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "HG141 h.toml:6: normalize.https") || !strings.Contains(err.Error(), "site.base_url's own host") {
		t.Errorf("https with an http base_url, own host: %v", err)
	}
}

// A table of any size that has one bad row is not loaded at all.
func TestRedirectTableAllOrNothing(t *testing.T) {
	var b strings.Builder
	b.WriteString("from,to\n")
	for i := 0; i < 5000; i++ {
		b.WriteString("/o/" + itoa(i) + ",/n/" + itoa(i) + "\n")
	}
	b.WriteString("/bad,javascript:x\n")
	cfg, err := redirConfig(t, "[[redirect_table]]\nfile = \"r.csv\"\n", map[string]string{"r.csv": b.String()})
	if cfg != nil || err == nil || !strings.Contains(err.Error(), "r.csv:5002") {
		t.Fatalf("cfg %v, err %v", cfg != nil, err)
	}
}

func TestRedirectTableTooLarge(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "big.csv")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	// A sparse 2 GB file: refused by its size before a byte is read.
	if err := f.Truncate(2 << 30); err != nil {
		t.Skipf("no sparse file: %v", err)
	}
	f.Close()
	src := "[server]\nupstream = \"http://127.0.0.1:3000\"\n[site]\nbase_url = \"https://notes.example\"\n[[redirect_table]]\nfile = \"big.csv\"\n"
	_, err = Parse(filepath.Join(dir, "h.toml"), []byte(src), nil)
	if err == nil || !strings.Contains(err.Error(), "HG180") || !strings.Contains(err.Error(), "over the limit") {
		t.Fatalf("err = %v", err)
	}
}

func TestRedirectFilesHashed(t *testing.T) {
	files := map[string]string{"r.csv": "from,to\n/a,/b\n"}
	a := mustRedirConfig(t, "[[redirect_table]]\nfile = \"r.csv\"\n", files)
	files["r.csv"] = "from,to\n/a,/c\n"
	b := mustRedirConfig(t, "[[redirect_table]]\nfile = \"r.csv\"\n", files)
	if len(a.Files) != 1 || !strings.HasSuffix(a.Files[0], "r.csv") {
		t.Errorf("Files = %v", a.Files)
	}
	if a.Hash == b.Hash {
		t.Error("a changed table leaves the config hash as it was")
	}
}

func TestWouldRedirect(t *testing.T) {
	cfg := mustRedirConfig(t, allNormalize+"[[redirect]]\nfrom = \"/old\"\nto = \"/new\"\n", nil)
	for target, want := range map[string]bool{"/old": true, "/new": false, "/New": true, "/a/": true, "/a": false} {
		if got := cfg.WouldRedirect(target); got != want {
			t.Errorf("WouldRedirect(%q) = %v", target, got)
		}
	}
}

// A pattern that normalization makes unreachable is a config error, not a
// rule that silently never matches.
func TestDeadPatterns(t *testing.T) {
	for _, c := range []struct{ normalize, from, want string }{
		{"lowercase = true", "/Old-Page", "has upper-case letters"},
		{"lowercase = true", "/old/:ID", ""}, // a parameter's name is no literal
		{"trailing_slash = \"strip\"", "/old/", "ends with /"},
		{"trailing_slash = \"strip\"", "/", ""},
		{"trailing_slash = \"add\"", "/old", "does not end with /"},
		{"trailing_slash = \"add\"", "/old/", ""},
		{"trailing_slash = \"add\"", "/old.html", ""},
		{"trailing_slash = \"add\"", "/old/:id", ""},
		{"trailing_slash = \"add\"", "/old/*", ""},
		// A constrained last parameter that never holds a dot only ever
		// sees paths that normalization gives a slash first.
		{"trailing_slash = \"add\"", "/old-notes/:id{[0-9]+}", "never holds a dot"},
		{"trailing_slash = \"add\"", "/old/:f{[a-z]+\\\\.pdf}", ""},
		{"trailing_slash = \"add\"", "/old/:f{[^/]+}", ""},
		{"trailing_slash = \"add\"", "/old/:rest{.+}", ""},
		{"trailing_slash = \"add\"", "/old/:id{[0-9]+}/", ""},
	} {
		_, err := redirConfig(t, "[normalize]\n"+c.normalize+"\n[[redirect]]\nfrom = \""+c.from+"\"\nto = \"/new/\"\n", nil)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s, %s: %v", c.normalize, c.from, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), "HG180") || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s, %s: %v, want HG180 %q", c.normalize, c.from, err, c.want)
		}
	}
}

// A target on another origin is spelled as base_url is: its host's
// A-label (a Location header holds ASCII), lower case, no default port.
func TestRedirectTargetOriginSpelling(t *testing.T) {
	cfg := mustRedirConfig(t, "[[redirect]]\nfrom = \"/a\"\nto = \"https://Bücher.example:443/x\"\n"+
		"[[redirect]]\nfrom = \"/b/:x\"\nto = \"https://BLOG.example:8443/{x}\"\n"+
		"[[redirect]]\nfrom = \"/c\"\nto = \"https://NOTES.example/c2\"\n", nil)
	for target, want := range map[string]string{
		"/a":   "301 https://xn--bcher-kva.example/x rule",
		"/b/y": "301 https://blog.example:8443/y rule",
		"/c":   "301 https://notes.example/c2 rule",
	} {
		if got := answer(cfg, RedirectRequest{Target: target, HTTPS: true}); got != want {
			t.Errorf("%s: %s, want %s", target, got, want)
		}
	}
}

// A target is spelled as every URL headgate builds from a path (§16.4).
func TestRedirectTargetSpelling(t *testing.T) {
	cfg := mustRedirConfig(t, "[[redirect]]\nfrom = \"/a\"\nto = \"/%7euser/%e6%9d%b1\"\n[[redirect]]\nfrom = \"/b/:x\"\nto = \"/c/{x}\"\n", nil)
	for target, want := range map[string]string{
		"/a":        "301 https://notes.example/~user/%E6%9D%B1 rule",
		"/b/%7e%41": "301 https://notes.example/c/~A rule",
	} {
		if got := answer(cfg, RedirectRequest{Target: target, HTTPS: true}); got != want {
			t.Errorf("%s: %s, want %s", target, got, want)
		}
	}
}

// A target that normalization would redirect again is written as the
// address normalization ends at: one hop, not two.
func TestRedirectTargetThroughNormalization(t *testing.T) {
	cfg := mustRedirConfig(t, "[normalize]\nhttps = true\nredirect_hosts = [\"www.notes.example\"]\nlowercase = true\n"+
		"[[redirect]]\nfrom = \"/a\"\nto = \"https://www.notes.example/B\"\n"+
		"[[redirect]]\nfrom = \"/c\"\nto = \"http://notes.example/d\"\n"+
		"[[redirect]]\nfrom = \"/e\"\nto = \"https://NOTES.example:443/f\"\n"+
		"[[redirect]]\nfrom = \"/g\"\nto = \"http://notes.example:8080/h\"\n"+
		"[[redirect]]\nfrom = \"/i/:x\"\nto = \"https://www.notes.example/J/{x}\"\n", nil)
	for _, c := range []struct{ target, want string }{
		{"/a", "301 https://notes.example/b rule"},
		{"/c", "301 https://notes.example/d rule"},
		{"/e", "301 https://notes.example/f rule"},
		{"/g", "301 http://notes.example:8080/h rule"}, // another port: another server
		{"/i/k", "301 https://notes.example/j/k rule"},
	} {
		if got := answer(cfg, RedirectRequest{Target: c.target, HTTPS: true}); got != c.want {
			t.Errorf("%s: %s, want %s", c.target, got, c.want)
		}
	}
}

// site.base_url is kept in the one spelling clients compare: no default
// port, an internationalized host as its A-label, lower case.
func TestBaseURLSpelling(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://notes.example", "https://notes.example"},
		{"https://Notes.Example:443", "https://notes.example"},
		{"http://notes.example:80/", "http://notes.example"},
		{"https://notes.example:8443", "https://notes.example:8443"},
		{"http://notes.example:443", "http://notes.example:443"},
		{"https://bücher.example", "https://xn--bcher-kva.example"},
		{"https://BÜCHER.example:443", "https://xn--bcher-kva.example"},
		{"http://[::1]:8080", "http://[::1]:8080"},
		{"https://notes.example:0443", "https://notes.example"},
		{"https://notes.example:08443", "https://notes.example:8443"},
	} {
		got, err := checkBaseURL(c.in)
		if err != nil || got != c.want {
			t.Errorf("checkBaseURL(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"https://a\u200b\u0000b.example", "http://[fe80::1%25eth0]:8080", "https://notes.example:99999", "https://notes.example:0"} {
		if got, err := checkBaseURL(bad); err == nil {
			t.Errorf("checkBaseURL(%q) = %q, accepted", bad, got)
		}
	}
}

// A canonical on the site's own origin spelled with its default port is
// no redirect source: not HG182.
func TestCanonicalDefaultPortNotRedirected(t *testing.T) {
	if _, err := redirConfig(t, "[[rule]]\nmatch = \"/x\"\ncanonical = \"https://notes.example:443/x\"\n[normalize]\nhttps = true\nredirect_hosts = [\"www.notes.example\"]\n", nil); err != nil {
		t.Fatal(err)
	}
}
