package audit

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// Cases from Google's robots.txt documentation and RFC 9309.
func TestRobotsBlocks(t *testing.T) {
	tests := []struct {
		name, txt string
		allowed   []string
		blocked   []string
	}{
		{"disallow all", "User-agent: *\nDisallow: /", nil, []string{"/", "/a", "/a?b"}},
		{"empty disallow", "User-agent: *\nDisallow:", []string{"/", "/a"}, nil},
		{"longest match wins", "User-agent: *\nAllow: /p\nDisallow: /", []string{"/page", "/p"}, []string{"/", "/q"}},
		{"allow wins a tie", "user-agent: *\nallow: /folder\ndisallow: /folder", []string{"/folder/page"}, nil},
		{"a wildcard counts its length", "User-agent: *\nAllow: /page\nDisallow: /*.htm", []string{"/page"}, []string{"/page.htm"}},
		{"end anchor", "User-agent: *\nAllow: /$\nDisallow: /", []string{"/"}, []string{"/page.htm"}},
		{"wildcard and anchor", "User-agent: *\nDisallow: /*.php$", []string{"/filename.php?parameters", "/filename.php5", "/windows.PHP"},
			[]string{"/filename.php", "/folder/filename.php"}},
		{"prefix, case-sensitive", "User-agent: *\nDisallow: /fish*", []string{"/Fish.asp", "/catfish"}, []string{"/fish", "/fish.html", "/fishheads/yummy.html"}},
		{"trailing slash", "User-agent: *\nDisallow: /fish/", []string{"/fish", "/fish.html"}, []string{"/fish/", "/fish/salmon.htm"}},
		{"query", "User-agent: *\nDisallow: /*?", []string{"/a"}, []string{"/a?b=1", "/?"}},
		{"$ inside a pattern is literal", "User-agent: *\nDisallow: /a$b", []string{"/a"}, []string{"/a$b", "/a$bc"}},
		{"only the * group applies", "User-agent: googlebot\nDisallow: /g\n\nUser-agent: *\nDisallow: /s", []string{"/g"}, []string{"/s"}},
		{"consecutive user-agents share a group", "User-agent: a\nUser-agent: *\nDisallow: /x\n\nUser-agent: b\nDisallow: /y", []string{"/y"}, []string{"/x"}},
		{"* groups merge", "User-agent: *\nDisallow: /x\n\nUser-agent: *\nDisallow: /y", nil, []string{"/x", "/y"}},
		{"comments, BOM, blanks and key case", "\ufeff# robots\nUSER-AGENT: * # all\n\nDISALLOW: /x # no\nCrawl-delay: 5\n", []string{"/y"}, []string{"/x"}},
		{"an unknown key does not end a run of user-agents", "User-agent: *\nCrawl-delay: 5\nUser-agent: googlebot\nDisallow: /x", []string{"/y"}, []string{"/x"}},
		{"a blank instead of a colon", "User-agent: *\nDisallow /x", nil, []string{"/x"}},
		{"user-agent with a version", "User-agent: */1.0\nDisallow: /x", nil, []string{"/x"}},
		// Keys as Google's parser reads them: by prefix, with its typos.
		{"a typo ends a run of user-agents", "User-agent: *\nDisalow: /x\nUser-agent: foo\nDisallowed: /y", []string{"/z"}, []string{"/x"}},
		{"user agent with a space", "User agent: *\nDisallow: /x", nil, []string{"/x"}},
		{"a run of stars is one star, its length its own", "User-agent: *\nAllow: /a***\nDisallow: /a*b", []string{"/axb"}, nil},
		// RFC 9309 §2.2.2: one spelling before comparison.
		{"a UTF-8 pattern matches its escapes", "User-agent: *\nDisallow: /café", []string{"/cafe", "/caf%C3%A8"}, []string{"/caf%C3%A9", "/caf%c3%a9/menu", "/café"}},
		{"an escaped unreserved character is the character", "User-agent: *\nDisallow: /%7Euser\nDisallow: /b%2d", []string{"/%7Fuser"}, []string{"/~user/x", "/%7euser", "/b-c"}},
		{"an escaped reserved character is not", "User-agent: *\nDisallow: /a%2Fb", []string{"/a/b"}, []string{"/a%2Fb", "/a%2fb"}},
		{"escape length decides the longest match", "User-agent: *\nDisallow: /é\nAllow: /%C3%A9", []string{"/%C3%A9"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := parseRobots(strings.NewReader(tc.txt))
			for _, p := range tc.allowed {
				if b, rule := rt.blocks(p); b {
					t.Errorf("%s blocked by %q, want allowed", p, rule)
				}
			}
			for _, p := range tc.blocked {
				if b, _ := rt.blocks(p); !b {
					t.Errorf("%s allowed, want blocked", p)
				}
			}
		})
	}
}

func TestRobotsParse(t *testing.T) {
	rt := parseRobots(strings.NewReader("Sitemap: https://a.example/s.xml\nUser-agent: *\nDisallow: /x\n<html>\njunk line\nAllow /y\nsitemap:/rel.xml\n"))
	if !slices.Equal(rt.sitemaps, []string{"https://a.example/s.xml", "/rel.xml"}) {
		t.Errorf("sitemaps = %q", rt.sitemaps)
	}
	// "Allow /y" is read, as Google reads it, and reported (SPEC §17).
	if rt.badCount != 3 || len(rt.bad) != 3 || !strings.Contains(rt.bad[0].String(), "line 4") || !strings.Contains(rt.bad[2].String(), `line 6: "Allow /y" is not "key: value"`) {
		t.Errorf("bad = %q (%d)", rt.bad, rt.badCount)
	}
	if len(rt.rules) != 2 {
		t.Errorf("rules = %+v", rt.rules)
	}
	if !parseRobots(strings.NewReader("User-agent: *\nDisallow: /\n")).disallowAll() {
		t.Error("Disallow: / does not disallow all")
	}
	if parseRobots(strings.NewReader("User-agent: *\nDisallow: /\nAllow: /public")).disallowAll() {
		t.Error("an Allow does not make it disallow all")
	}
}

func FuzzRobots(f *testing.F) {
	f.Add("User-agent: *\nDisallow: /*.php$\nAllow: /a*b*c$", "/a/b/c")
	f.Add("User-agent: *\nDisallow: ****$$", "/x")
	f.Fuzz(func(t *testing.T, txt, path string) {
		rt := parseRobots(strings.NewReader(txt))
		rt.blocks(path)
		rt.disallowAll()
	})
}

// A robots.txt built to cost: a pattern of 400,000 stars decides in
// microseconds, not the tens of milliseconds a star-by-star match takes
// per path.
func TestRobotsStarRunCost(t *testing.T) {
	rt := parseRobots(strings.NewReader("User-agent: *\nDisallow: /" + strings.Repeat("*", 400000) + "z\n"))
	path := "/" + strings.Repeat("a", 66)
	start := time.Now()
	for range 100 {
		if b, _ := rt.blocks(path); b {
			t.Fatal("blocked")
		}
	}
	if b, _ := rt.blocks(path + "z"); !b {
		t.Error("/…z is not blocked")
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("100 decisions took %v", d)
	}
}
