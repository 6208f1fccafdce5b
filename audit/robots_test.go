package audit

import (
	"github.com/headgate/headgate/internal/hgtest"
	"github.com/headgate/headgate/internal/robotspath"
	"slices"
	"strconv"
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

// A robots.txt built to cost: a pattern of 400,000 stars, and 240 rules
// of a thousand stars between literals ("/*a*a*a…z"), each decide a
// distinct 2,000-byte path in about one pass over it. Matched a star at a
// time, the second took over a second a decision, so 100 of them minutes;
// the bound leaves a slow machine fifty times the room.
func TestRobotsStarRunCost(t *testing.T) {
	rt := parseRobots(strings.NewReader("User-agent: *\nDisallow: /" + strings.Repeat("*", 400000) + "z\n"))
	path := "/" + strings.Repeat("a", 66)
	if b, _ := rt.blocks(path); b {
		t.Fatal("blocked")
	}
	if b, _ := rt.blocks(path + "z"); !b {
		t.Error("/…z is not blocked")
	}
	var txt strings.Builder
	txt.WriteString("User-agent: *\n")
	for range 240 {
		txt.WriteString("Disallow: /" + strings.Repeat("*a", 1000) + "z\n")
	}
	rt = parseRobots(strings.NewReader(txt.String()))
	// Thread CPU, not wall time: the bound is on the matcher's work, and a
	// loaded machine stretched wall time past it (7.3 s at load 15).
	d := hgtest.ThreadCPU(func() {
		for i := range 100 {
			p := "/" + strings.Repeat("a", 2000) + strconv.Itoa(i)
			if b, _ := rt.blocks(p); b {
				t.Errorf("%.20s… is blocked", p)
				return
			}
		}
		if b, _ := rt.blocks("/" + strings.Repeat("a", 1000) + "z"); !b {
			t.Error("/a…az is not blocked")
		}
	})
	if d > 5*time.Second {
		t.Errorf("100 decisions took %v of CPU", d)
	}
}

// robotsMatchStepwise is the matcher robotsMatch replaced, kept as the
// reference it is fuzzed against: the set of path offsets the pattern so
// far can end at, advanced a byte at a time.
func robotsMatchStepwise(pattern, path string) bool {
	pos := []int{0}
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c == '$' && i == len(pattern)-1 {
			return pos[len(pos)-1] == len(path)
		}
		if c == '*' {
			from := pos[0]
			pos = pos[:0]
			for p := from; p <= len(path); p++ {
				pos = append(pos, p)
			}
			continue
		}
		next := pos[:0]
		for _, p := range pos {
			if p < len(path) && path[p] == c {
				next = append(next, p+1)
			}
		}
		if len(next) == 0 {
			return false
		}
		pos = next
	}
	return true
}

func TestRobotsMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, path string
		want          bool
	}{
		{"/", "/", true},
		{"/fish", "/fish.html", true},
		{"/fish", "/Fish", false},
		{"/fish$", "/fish", true},
		{"/fish$", "/fish/", false},
		{"/*.php", "/index.php", true},
		{"/*.php", "/filename.php?x", true},
		{"/*.php", "/windows.PHP", false},
		{"/*.php$", "/filename.php", true},
		{"/*.php$", "/filename.php?parameters", false},
		{"/*.php$", "/a.php.php", true},
		{"/fish*.php", "/fishheads/catfish.php?parameters", true},
		{"/fish*.php", "/Fish.PHP", false},
		{"/a*b*c", "/abc", true},
		{"/a*b*c", "/acb", false},
		{"/a*ab", "/aab", true},
		{"/a*a$", "/a", false},
		{"/a*a$", "/aa", true},
		{"*$", "", true},
		{"$", "", true},
		{"$", "/", false},
		{"/a$b", "/a$b", true},
		{"/*$", "/anything", true},
		{"/**x", "/yx", true},
	} {
		if got := robotspath.Match(tc.pattern, tc.path); got != tc.want {
			t.Errorf("robotsMatch(%q, %q) = %v, want %v", tc.pattern, tc.path, got, tc.want)
		}
		if got := robotsMatchStepwise(tc.pattern, tc.path); got != tc.want {
			t.Errorf("reference(%q, %q) = %v, want %v", tc.pattern, tc.path, got, tc.want)
		}
	}
}

// FuzzRobotsMatch holds robotsMatch to the stepwise matcher on any
// pattern and path.
func FuzzRobotsMatch(f *testing.F) {
	f.Add("/*.php$", "/a.php")
	f.Add("/a*ab*b$", "/aabab")
	f.Add("*a*$", "xa")
	f.Fuzz(func(t *testing.T, pattern, path string) {
		if len(pattern) > 64 || len(path) > 256 {
			return
		}
		if got, want := robotspath.Match(pattern, path), robotsMatchStepwise(pattern, path); got != want {
			t.Errorf("robotsMatch(%q, %q) = %v, the stepwise matcher %v", pattern, path, got, want)
		}
	})
}
