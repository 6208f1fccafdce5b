package sitemap

import (
	"strings"
	"testing"

	"github.com/temoto/robotstxt"

	"github.com/headgate/headgate/rules"
)

// googleRead is a robots.txt as Google's open-source parser
// (github.com/google/robotstxt, robots.cc) reads it for one agent,
// written from its documented behaviour, not from headgate's code:
//   - it reads the first 500 KiB and skips a UTF-8 byte order mark;
//   - a line ends at LF, CR or CRLF; "#" starts a comment;
//   - a User-agent value names the agent of its leading letters, "-"
//     and "_" (RFC 9309's product token: a digit ends it), compared
//     case-insensitively; "*" is the global group;
//   - only an Allow or Disallow line ends a run of User-agent lines:
//     Sitemap, Crawl-delay and unknown keys leave the run open;
//   - rules of every group that names the agent are merged; with none, the
//     rules of every "*" group.
//
// It returns the merged allow and disallow rules.
func googleRead(body, agent string) (allow, disallow []string) {
	if len(body) > 500<<10 {
		body = body[:500<<10]
	}
	body = strings.TrimPrefix(body, "\ufeff")
	body = strings.ReplaceAll(strings.ReplaceAll(body, "\r\n", "\n"), "\r", "\n")
	agent = strings.ToLower(agent)
	var specA, specD, globA, globD []string
	seenSpec := false
	inRun, sep, runSpec, runGlob := false, false, false, false
	for _, line := range strings.Split(body, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = googleKey(k), strings.TrimSpace(v)
		switch k {
		case "user-agent":
			if sep || !inRun {
				inRun, sep, runSpec, runGlob = true, false, false, false
			}
			if strings.HasPrefix(v, "*") && (len(v) == 1 || v[1] == ' ' || v[1] == '\t') {
				runGlob = true
				continue
			}
			n := 0
			for n < len(v) && (v[n] == '-' || v[n] == '_' || 'a' <= v[n]|0x20 && v[n]|0x20 <= 'z') {
				n++
			}
			if n > 0 && strings.ToLower(v[:n]) == agent {
				runSpec, seenSpec = true, true
			}
		case "allow", "disallow":
			if !inRun {
				continue
			}
			sep = true
			if v == "" {
				continue
			}
			if runSpec {
				if k == "allow" {
					specA = append(specA, v)
				} else {
					specD = append(specD, v)
				}
			}
			if runGlob {
				if k == "allow" {
					globA = append(globA, v)
				} else {
					globD = append(globD, v)
				}
			}
		}
	}
	if seenSpec {
		return specA, specD
	}
	return globA, globD
}

// googleKey is robots.cc's key test, written out here apart from the
// code under test: by prefix, case folded, with the typos it takes.
func googleKey(k string) string {
	k = strings.ToLower(strings.TrimSpace(k))
	for _, c := range []struct{ key, prefixes string }{
		{"user-agent", "user-agent useragent"},
		{"allow", "allow"},
		{"disallow", "disallow dissallow dissalow disalow diasllow disallaw"},
		{"sitemap", "sitemap site-map"},
	} {
		for _, p := range strings.Fields(c.prefixes) {
			if strings.HasPrefix(k, p) {
				return c.key
			}
		}
	}
	if strings.HasPrefix(k, "user agent") {
		return "user-agent"
	}
	return k
}

func googleAllowed(body, agent, path string) bool {
	a, d := googleRead(body, agent)
	return rfc9309Allowed(a, d, path)
}

// TestAppendedRobotsAsGoogleReads serves, in append mode, upstream files
// whose bytes a careless line reader sees otherwise than Google's parser
// does, and checks the verdicts of headgate's groups and of the
// upstream's other agents as that parser reads them.
func TestAppendedRobotsAsGoogleReads(t *testing.T) {
	cfg := loadConfig(t, "[robots]\nmode = \"append\"\n"+
		"[[robots.group]]\nuser_agents = [\"@ai-training\"]\ndisallow = [\"/\"]\n"+
		"[[robots.group]]\nuser_agents = [\"GPTBot\"]\nallow = [\"/docs/\"]\ndisallow = [\"/\"]\n"+
		"[[rule]]\nmatch = \"/\"\nsitemap = true\n", nil)
	gpt := func(t *testing.T, body string) {
		t.Helper()
		for path, want := range map[string]bool{"/": false, "/private": false, "/docs/a": true} {
			if got := googleAllowed(body, "GPTBot", path); got != want {
				t.Errorf("GPTBot %s: allowed=%v, the config says %v\n%s", path, got, want, body)
			}
		}
		if got := googleAllowed(body, "CCBot", "/x"); got {
			t.Errorf("CCBot (of @ai-training) may crawl /x\n%s", body)
		}
	}
	big := "User-agent: *\nDisallow: /private\n" + strings.Repeat("Disallow: /p"+strings.Repeat("x", 60)+"\n", 600<<10/64)
	for _, c := range []struct {
		name, upstream string
		other          map[string]bool // another agent's verdicts, as in the upstream's file: "Foo /x"
	}{
		{"byte order mark", "\ufeffUser-agent: GPTBot\nAllow: /\n\nUser-agent: *\nDisallow: /private\n",
			map[string]bool{"Foo /private": false, "Foo /a": true}},
		{"CR line ends", "# site robots\rUser-agent: GPTBot\rAllow: /\r\rUser-agent: *\rDisallow: /private\r",
			map[string]bool{"Foo /private": false, "Foo /a": true}},
		{"a stray CR", "User-agent: *\r\nDisallow: /private\rUser-agent: GPTBot\r\nAllow: /\r\n",
			map[string]bool{"Foo /private": false}},
		{"Crawl-delay inside a run", "User-agent: Foo\nCrawl-delay: 5\nUser-agent: GPTBot\nDisallow: /private\n",
			map[string]bool{"Foo /private": false, "Foo /a": true}},
		{"Sitemap inside a run", "User-agent: Foo\nSitemap: https://notes.example/wp-sitemap.xml\nUser-agent: GPTBot\nDisallow: /private\n",
			map[string]bool{"Foo /private": false, "Foo /a": true}},
		{"a run left open at the end", "User-agent: *\nDisallow: /x\n\nUser-agent: Foo\nCrawl-delay: 5\n",
			map[string]bool{"Foo /": true, "Foo /x": true, "Bar /x": false}},
		{"a digit in the upstream's agent", "User-agent: *\nDisallow: /x\n\nUser-agent: GPTBot2\nAllow: /\n",
			map[string]bool{"Foo /x": false}},
		{"larger than Google reads", big, map[string]bool{"Foo /private": false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := serveRobotsCase(t, cfg, c.upstream)
			gpt(t, body)
			for k, want := range c.other {
				agent, path, _ := strings.Cut(k, " ")
				if before := googleAllowed(c.upstream, agent, path); before != want {
					t.Fatalf("the case is wrong: the upstream's own file gives %s allowed=%v", k, before)
				}
				if got := googleAllowed(body, agent, path); got != want {
					t.Errorf("%s: allowed=%v after headgate, %v in the upstream's file\n%s", k, got, want, body)
				}
			}
			if len(body) > 500<<10 {
				t.Errorf("%d bytes: over the 500 KiB Google reads", len(body))
			}
			if !strings.HasSuffix(body, "Sitemap: https://notes.example/sitemap.xml\n") {
				t.Errorf("the file does not end with headgate's Sitemap line")
			}
		})
	}
}

// With upstream_sitemaps = "keep", a Sitemap line inside a group that
// loses all its agents is kept, and one naming headgate's sitemap still
// counts as headgate's line.
func TestAppendKeepSitemapInDroppedGroup(t *testing.T) {
	cfg := loadConfig(t, "[robots]\nmode = \"append\"\nupstream_sitemaps = \"keep\"\n"+
		"[[robots.group]]\nuser_agents = [\"GPTBot\"]\ndisallow = [\"/\"]\n"+
		"[[rule]]\nmatch = \"/\"\nsitemap = true\n", nil)
	for _, sm := range []string{"https://notes.example/sitemap.xml", "https://notes.example/wp.xml"} {
		up := "User-agent: GPTBot\nSitemap: " + sm + "\nDisallow: /x\n\nUser-agent: *\nDisallow: /p\n"
		body := serveRobotsCase(t, cfg, up)
		if !strings.Contains(body, "Sitemap: "+sm+"\n") {
			t.Errorf("the upstream's Sitemap: %s line is lost:\n%s", sm, body)
		}
		if !strings.Contains(body, "Sitemap: https://notes.example/sitemap.xml\n") {
			t.Errorf("no Sitemap line names headgate's sitemap:\n%s", body)
		}
		if googleAllowed(body, "GPTBot", "/docs") {
			t.Errorf("GPTBot may crawl:\n%s", body)
		}
	}
}

// A User-agent value that only starts with "*" ("*bot") is not the global
// group (Google's parser: "*" alone or followed by a space): the
// Content-Signal line goes into the group that is.
func TestAppendSignalNotInStarPrefixedGroup(t *testing.T) {
	cfg := loadConfig(t, "[robots]\nmode = \"append\"\n"+robotsSignal+
		"[[rule]]\nmatch = \"/\"\nsitemap = true\n", nil)
	for _, up := range []string{
		"User-agent: *bot\nDisallow: /x\n\nUser-agent: *\nDisallow: /p\n",
		"User-agent: *bot\nDisallow: /x\n",
	} {
		body := serveRobotsCase(t, cfg, up)
		if n := strings.Count(body, "Content-Signal: "); n != 1 {
			t.Errorf("%d Content-Signal lines, want 1:\n%s", n, body)
		}
		if !contentSignalInStarGroup(body) {
			t.Errorf("the Content-Signal line is not in a group of User-agent: *:\n%s", body)
		}
		if googleAllowed(body, "Foo", "/p") != googleAllowed(up, "Foo", "/p") {
			t.Errorf("Foo on /p: the upstream's verdict changed:\n%s", body)
		}
	}
}

// In append mode, headgate's Content-Signal replaces the * group's only: a
// signal in another group is that group's agents' own (Googlebot obeys its
// group and never reads *'s), and stays; one in a group that loses all its
// agents to headgate's groups goes with it.
func TestAppendKeepsOtherGroupsSignals(t *testing.T) {
	cfg := loadConfig(t, "[robots]\nmode = \"append\"\n"+robotsSignal+
		"[[robots.group]]\nuser_agents = [\"GPTBot\"]\ndisallow = [\"/\"]\n"+
		"[[rule]]\nmatch = \"/\"\nsitemap = true\n", nil)
	up := "User-agent: *\nContent-Signal: search=yes\nDisallow: /admin\n\n" +
		"User-agent: Googlebot\nContent-Signal: search=yes, ai-input=no\nDisallow: /nogoogle\n\n" +
		"User-agent: GPTBot\nContent-Signal: ai-train=yes\nDisallow: /x\n"
	body := serveRobotsCase(t, cfg, up)
	if !strings.Contains(body, "User-agent: Googlebot\nContent-Signal: search=yes, ai-input=no\nDisallow: /nogoogle\n") {
		t.Errorf("the Googlebot group lost its own signal:\n%s", body)
	}
	if strings.Contains(body, "Content-Signal: search=yes\n") || strings.Contains(body, "ai-train=yes") {
		t.Errorf("the * group's old signal, or the dropped GPTBot group's, stayed:\n%s", body)
	}
	if !contentSignalInStarGroup(body) {
		t.Errorf("headgate's signal is not in the * group:\n%s", body)
	}
}

// Append mode reads keys as Google's parser does (by prefix, with its
// typos): "Disalow: /x" ends the run of GPTBot's User-agent lines there,
// so FooBot, below it, is another group, and keeps Google's verdict.
func TestAppendReadsGoogleKeyTypos(t *testing.T) {
	cfg := loadConfig(t, "[robots]\nmode = \"append\"\n[[robots.group]]\nuser_agents = [\"GPTBot\"]\ndisallow = [\"/\"]\n"+
		"[[rule]]\nmatch = \"/\"\nsitemap = true\n", nil)
	up := "User-agent: GPTBot\nDisalow: /x\nUser-agent: FooBot\nDisallow: /y\n"
	body := serveRobotsCase(t, cfg, up)
	for _, p := range []string{"/x", "/y", "/z"} {
		if got, want := googleAllowed(body, "FooBot", p), googleAllowed(up, "FooBot", p); got != want {
			t.Errorf("FooBot on %s: allowed=%v, the upstream's verdict %v:\n%s", p, got, want, body)
		}
	}
	if googleAllowed(body, "GPTBot", "/z") {
		t.Errorf("GPTBot is not disallowed:\n%s", body)
	}
}

// A group whose only rule is one of Google's typos (or a rule without its
// colon) ends the upstream part
// with "Disallow:", so that a parser that skips the typo does not read the
// groups headgate appends as that group's (OtherBot is in no group of the
// config: every parser gives it the upstream's verdict or allows it).
func TestAppendClosesATypoOnlyGroup(t *testing.T) {
	cfg := loadConfig(t, "[robots]\nmode = \"append\"\n[[robots.group]]\nuser_agents = [\"GPTBot\"]\ndisallow = [\"/\"]\n"+
		"[[rule]]\nmatch = \"/\"\nsitemap = true\n", nil)
	for _, up := range []string{
		"User-agent: *\nDisallow: /admin\n\nUser-agent: OtherBot\nDisalow: /x\n",
		// headgate's own agent's group, after it, is dropped whole.
		"User-agent: *\nDisallow: /admin\n\nUser-agent: OtherBot\nDisalow: /x\n\nUser-agent: GPTBot\nAllow: /y\n",
		// Without the colon the rule is Google's alone, as a typo is.
		"User-agent: *\nDisallow: /admin\n\nUser-agent: OtherBot\nDisallow /x\n",
	} {
		appendClosesTypoGroup(t, cfg, up)
	}
}

func appendClosesTypoGroup(t *testing.T, cfg *rules.Config, up string) {
	t.Helper()
	body := serveRobotsCase(t, cfg, up)
	strict, err := robotstxt.FromString(body)
	if err != nil {
		t.Fatal(err)
	}
	if !strict.TestAgent("/page", "OtherBot") {
		t.Errorf("an RFC 9309 parser reads OtherBot into headgate's GPTBot group:\n%s", body)
	}
	if googleAllowed(body, "OtherBot", "/x") != googleAllowed(up, "OtherBot", "/x") || googleAllowed(body, "GPTBot", "/page") {
		t.Errorf("Google's verdicts changed:\n%s", body)
	}
}
