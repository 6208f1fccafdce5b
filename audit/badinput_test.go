package audit

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/headgate/headgate/rules"
)

// Bad input of SPEC §15, bounded and reported.
func TestRobotsBadInput(t *testing.T) {
	big := "User-agent: *\n" + strings.Repeat("Disallow: /private/path/that/goes/on\n", 10<<20/37)
	for _, tc := range []struct{ name, ctype, body, want string }{
		{"10 MB", "text/plain", big, "longer than 500 KiB"},
		{"NULs", "text/plain", "User-agent: *\nDis\x00allow: /x\n\x00\x00\x00\n", "NUL"},
		{"one 10 MB line", "text/plain", strings.Repeat("x", 10<<20), "longer than 500 KiB"},
		{"HTML", "text/html; charset=utf-8", "<!doctype html><p>User-agent: *", "an HTML page"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := auditLive(t, map[string]resp{"/robots.txt": text(tc.ctype, tc.body), "/": withHead("/", "")}, Options{})
			ok := false
			for _, f := range findingsOf(r, RobotsTxtInvalid) {
				ok = ok || strings.Contains(f.Detail, tc.want)
			}
			if !ok || len(r.Pages) != 1 {
				t.Errorf("findings %+v, pages %d; want robots-txt-invalid %q", findingsOf(r, RobotsTxtInvalid), len(r.Pages), tc.want)
			}
			if r.Robots == nil || r.Robots.Bytes > maxRobotsBytes {
				t.Errorf("robots %+v: read past 500 KiB", r.Robots)
			}
		})
	}
}

func TestJSONLDBadInput(t *testing.T) {
	deep := strings.Repeat(`{"@type":"Thing","x":`, 5000) + `1` + strings.Repeat(`}`, 5000)
	var many strings.Builder
	many.WriteString(`{"@type":"ItemList","itemListElement":[`)
	for i := range 100000 {
		if i > 0 {
			many.WriteByte(',')
		}
		many.WriteString(`{}`)
	}
	many.WriteString(`]}`)
	cycle := `{"@graph":[{"@type":"Product","@id":"#a","name":"A","isRelatedTo":{"@id":"#b"},"offers":{"@id":"#o"}},` +
		`{"@type":"Product","@id":"#b","name":"B","isRelatedTo":{"@id":"#a"},"review":{"@id":"#a"}},{"@type":"Offer","@id":"#o","price":"1","itemOffered":{"@id":"#a"}}]}`
	for _, tc := range []struct{ name, json, note string }{
		{"5,000 levels deep", deep, "deeper than 64"},
		{"100,000 nodes", many.String(), "more than 10000 nodes"},
		{"@id cycles", cycle, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := parseLD(tc.json)
			if b.err != "" || b.note != "" != (tc.note != "") || !strings.Contains(b.note, tc.note) {
				t.Errorf("err %q, note %q; want note %q", b.err, b.note, tc.note)
			}
			if tc.note == "" && len(b.missing) != 0 {
				t.Errorf("missing %v in a complete graph", b.missing)
			}
		})
	}
	// Deeper than encoding/json takes (10,000 levels): invalid, not a crash.
	if b := parseLD(strings.Repeat("[", 20000) + strings.Repeat("]", 20000)); !strings.Contains(b.err, "not JSON") {
		t.Errorf("20,000 levels: %+v", b)
	}
}

func TestHreflangCodes(t *testing.T) {
	for code, bad := range map[string]bool{"en": false, "en-GB": false, "EN-gb": false, "x-default": false, "zh-Hant": false, "zh-Hant-TW": false,
		"en_US": true, "english": true, "zz-ZZ": true, "en-UK": true, "en-GB-x": true, "": true, "e": true, "en-": true} {
		if got := hreflangProblem(code) != ""; got != bad {
			t.Errorf("%q: problem %q, want bad=%v", code, hreflangProblem(code), bad)
		}
	}
	_ = fmt.Sprint()
}

func FuzzLDWalk(f *testing.F) {
	f.Add(`{"@type":"Product","name":"x"}`)
	f.Add(`[{"@type":"BreadcrumbList","itemListElement":[{"@type":"ListItem"}]}]`)
	f.Fuzz(func(t *testing.T, s string) {
		parseLD(s)
		hreflangProblem(s)
	})
}

// mixed-scheme: on an https site, URLs that name its own host over http.
func TestMixedScheme(t *testing.T) {
	const pub = "https://mixed.example"
	site := map[string]resp{
		"/a": doc(`<title>A</title><link rel="canonical" href="http://mixed.example/a">`, ""),
		"/b": doc(`<title>B</title><link rel="canonical" href="{origin}/b"><meta property="og:url" content="http://mixed.example/b">`, ""),
		"/c": doc(`<title>C</title><link rel="canonical" href="{origin}/c">`+`<link rel="alternate" hreflang="en" href="http://mixed.example/c">`, ""),
		"/d": doc(`<title>D</title><link rel="canonical" href="{origin}/d">`, `<a href="http://mixed.example/a">a</a>`),
		"/e": doc(`<title>E</title><link rel="canonical" href="/e"><meta property="og:url" content="https://mixed.example/e">`,
			`<a href="https://mixed.example/a">a</a> <a href="http://elsewhere.example/">other</a>`),
	}
	srv := serveSite(t, site)
	cfg, err := rules.Parse("t.toml", []byte("[server]\nupstream = \""+srv.URL+"\"\n[site]\nbase_url = \""+pub+"\"\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), Options{Config: cfg, Live: srv.URL}, []string{"/a", "/b", "/c", "/d", "/e"})
	if err != nil {
		t.Fatal(err)
	}
	if got := pathsOf(r, srv.URL, MixedScheme); !slices.Equal(got, []string{"/a", "/b", "/c", "/d"}) {
		t.Errorf("mixed-scheme on %v, want /a /b /c /d", got)
	}
	// An http site: nothing to mix.
	r, _ = auditLive(t, site, Options{}, "/a", "/b", "/c", "/d", "/e")
	if got := findingsOf(r, MixedScheme); len(got) != 0 {
		t.Errorf("http site: mixed-scheme %+v", got)
	}
}
