package rules

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkLocation holds for every redirect headgate answers: an absolute
// http(s) URL on the site's origin, or on a host an operator wrote, with
// no byte a header or an HTML attribute must not carry raw.
func checkLocation(t *testing.T, target string, rd *Redirect, hosts ...string) {
	t.Helper()
	if rd == nil {
		return
	}
	switch rd.Status {
	case 301, 302, 307, 308:
	case 410:
		if rd.Location != "" {
			t.Fatalf("%q: 410 with Location %q", target, rd.Location)
		}
		return
	default:
		t.Fatalf("%q: status %d", target, rd.Status)
	}
	for i := 0; i < len(rd.Location); i++ {
		if c := rd.Location[i]; c <= ' ' || c >= 0x7f || c == '"' || c == '<' || c == '>' || c == '\\' {
			t.Fatalf("%q → %q holds byte %#x", target, rd.Location, c)
		}
	}
	u, err := url.Parse(rd.Location)
	if err != nil || u.Scheme != "https" && u.Scheme != "http" {
		t.Fatalf("%q → %q: not an absolute http(s) URL (%v)", target, rd.Location, err)
	}
	ok := u.Host == "notes.example" && strings.HasPrefix(rd.Location, "https://notes.example/")
	for _, h := range hosts {
		ok = ok || u.Host == h
	}
	if !ok {
		t.Fatalf("%q → %q: off the configured hosts", target, rd.Location)
	}
}

// FuzzRedirectLookup sends request targets to a config with every kind of
// redirect: the Location never leaves the configured hosts, never holds a
// control character, and a lookup never panics.
//
//	go test ./rules -run '^$' -fuzz FuzzRedirectLookup -fuzztime 3m -parallel 1
func FuzzRedirectLookup(f *testing.F) {
	cfg := mustRedirConfig(f, allNormalize+`
[[redirect]]
from = "/a/:x{.+}"
to = "/{x}"
[[redirect]]
from = "/b/:x"
to = "/b2/{x}?q={x}#{x}"
[[redirect]]
from = "/c/:x{.+}"
to = "https://other.example/{x}"
[[redirect]]
from = "/d/*"
to = "{base_url}/e{path}"
[[redirect]]
from = "/loop/:x"
to = "/loop/{x}/x"
[[redirect_table]]
file = "r.csv"
`, map[string]string{"r.csv": tableCSV})
	for _, s := range []string{"/a/%2F%2Fevil.example", "/b/x", "/c/%2f%2f", "/d/a//b", "/index.php?id=42&lang=de", "/old", "/%e6%9d%b1",
		"/loop/a", "/a/%0d%0a", "/b/%22%3E%3Cscript%3E", "//A/?x=%zz"} {
		f.Add(s, "www.notes.example", false)
	}
	f.Fuzz(func(t *testing.T, target, host string, https bool) {
		if !strings.HasPrefix(target, "/") || CheckPath(strings.SplitN(target, "?", 2)[0]) != nil {
			return // the proxy answers 400 first
		}
		for _, m := range []string{"GET", "POST"} {
			rd, _ := cfg.Redirect(RedirectRequest{Method: m, Host: host, HTTPS: https, Target: target})
			checkLocation(t, target, rd, "other.example", "blog.example")
			if rd != nil && rd.Location != "" && strings.HasPrefix(rd.Location, "https://notes.example/") {
				// One hop: the final address is not redirected again.
				next := strings.TrimPrefix(rd.Location, "https://notes.example")
				if i := strings.IndexByte(next, '#'); i >= 0 {
					next = next[:i]
				}
				if again, err := cfg.Redirect(RedirectRequest{Method: "GET", Host: "notes.example", HTTPS: true, Target: next}); again != nil && err == nil {
					t.Fatalf("%q → %s → %s: two hops", target, rd.Location, again.Location)
				}
			}
		}
	})
}

// FuzzRedirectTable loads arbitrary bytes as a redirect table: it loads
// whole or is refused with HG180/HG181 problems, never panics, and what it
// loads answers only with Locations on the configured hosts or on a host a
// row names.
//
//	go test ./rules -run '^$' -fuzz FuzzRedirectTable -fuzztime 3m -parallel 1
func FuzzRedirectTable(f *testing.F) {
	f.Add([]byte(tableCSV), "/index.php?lang=de&id=42")
	f.Add([]byte("\ufefffrom,to,status\r\n\"/a,b\",/c,308\r\n"), "/a,b")
	f.Add([]byte("from,to\n/x,/y\n/y,/x\n"), "/x")
	f.Add([]byte("from,to\n/a?x=1&y=2,/b\n/a?y=2,/c\n/a,/d\n"), "/a?y=2&x=1")
	f.Add([]byte("from,to\n/a,https://evil.example/\n"), "/a")
	dir := f.TempDir()
	cfgPath := filepath.Join(dir, "headgate.toml")
	os.WriteFile(cfgPath, []byte("[server]\nupstream = \"http://127.0.0.1:3000\"\n[site]\nbase_url = \"https://notes.example\"\n[normalize]\nlowercase = true\n[[redirect_table]]\nfile = \"r.csv\"\n"), 0o644)
	f.Fuzz(func(t *testing.T, table []byte, target string) {
		if err := os.WriteFile(filepath.Join(dir, "r.csv"), table, 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(cfgPath)
		if err != nil {
			ps, ok := err.(Problems)
			if !ok {
				t.Fatalf("error %T %v, want Problems", err, err)
			}
			for _, p := range ps {
				if p.Code != "HG180" && p.Code != "HG181" {
					t.Fatalf("problem %s", p)
				}
			}
			return
		}
		// The hosts rows may name.
		var hosts []string
		for _, line := range strings.Split(string(table), "\n") {
			for _, cell := range strings.Split(line, ",") {
				if u, err := url.Parse(strings.Trim(cell, " \t\r\"")); err == nil && u.Host != "" {
					hosts = append(hosts, u.Host)
				}
			}
		}
		if !strings.HasPrefix(target, "/") || CheckPath(strings.SplitN(target, "?", 2)[0]) != nil {
			target = "/"
		}
		rd, _ := cfg.Redirect(RedirectRequest{Method: "GET", Host: "notes.example", HTTPS: true, Target: target})
		if rd != nil && rd.Location != "" {
			u, _ := url.Parse(rd.Location)
			if u != nil && u.Host != "notes.example" {
				hosts = append(hosts, u.Host) // checked below to be named by the table
				found := false
				for _, h := range hosts[:len(hosts)-1] {
					found = found || strings.EqualFold(h, u.Host)
				}
				if !found {
					t.Fatalf("%q → %q: a host no row names", target, rd.Location)
				}
			}
		}
		checkLocation(t, target, rd, hosts...)
	})
}
