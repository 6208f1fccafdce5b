package sitemap

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/temoto/robotstxt"
)

// FuzzAppendRobots: whatever the upstream's robots.txt holds, append mode
// writes headgate's groups and Sitemap line intact at its end, one
// Content-Signal line, and a file the parser reads with headgate's
// verdicts for headgate's agents.
//
//	go test -run '^$' -fuzz FuzzAppendRobots -fuzztime 3m -parallel 1 ./sitemap/
func FuzzAppendRobots(f *testing.F) {
	f.Add(appRobots)
	f.Add("User-agent: GPTBot\nUser-agent: *\n")
	f.Add("user-agent:gptbot\r\ndisallow:\r\nSitemap: x\r\ncontent-signal: a=b")
	f.Add("User-agent: *\nUser-agent: CCBot\n# c\nAllow: /\n\n\n\nUser-agent: GPTBot")
	f.Add("\xef\xbb\xbfUser-agent: *\x00\nDisallow: /a#b\n")
	cfg := loadConfig(f, "[robots]\nmode = \"append\"\n"+robotsSignal+robotsGroups+"[[rule]]\nmatch = \"/\"\nsitemap = true\n", nil)
	s := New(cfg, Options{})
	f.Fuzz(func(t *testing.T, up string) {
		if len(up) > 4096 {
			return
		}
		out := string(s.appendedRobots([]byte(up)))
		if !strings.HasSuffix(out, "\nSitemap: https://notes.example/sitemap.xml\n") && out != "Sitemap: https://notes.example/sitemap.xml\n" {
			t.Fatalf("no Sitemap line at the end:\n%q", out)
		}
		if n := strings.Count(out, "Content-Signal: search=yes, ai-input=yes, ai-train=no\n"); n != 1 {
			t.Fatalf("%d Content-Signal lines:\n%q", n, out)
		}
		if !utf8.ValidString(up) {
			return
		}
		r, err := robotstxt.FromString(out)
		if err != nil {
			return
		}
		for _, g := range cfg.Robots.Groups {
			for _, a := range g.UserAgents {
				for _, p := range []string{"/", "/docs/x", "/a.pdf", "/x"} {
					if got, want := r.TestAgent(p, a), rfc9309Allowed(g.Allow, g.Disallow, p); got != want {
						t.Fatalf("%s on %s: %v, want %v\nupstream %q\nout:\n%s", a, p, got, want, up, out)
					}
				}
			}
		}
	})
}
