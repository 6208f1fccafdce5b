package sitemap

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/temoto/robotstxt"

	"github.com/headgate/headgate/rules"
)

// The robots.txt of every mode × groups × signal, pinned in
// testdata/robots/ (testdata/robots/README.md says what each one shows),
// and read back by an RFC 9309 parser that is not headgate's:
// github.com/temoto/robotstxt (docs/crawlers.md says why this one).

const appRobots = `# the app's own robots.txt
User-agent: *
Disallow: /admin/
Content-Signal: ai-train=yes

User-agent: GPTBot
User-agent: OtherBot
Disallow: /gpt-only/

User-agent: CCBot
Disallow: /

Sitemap: https://notes.example/app-sitemap.xml
`

const robotsGroups = `
[[robots.group]]
user_agents = ["@ai-training", "ExampleBot"]
disallow = ["/"]
[[robots.group]]
user_agents = ["GPTBot"]
allow = ["/docs/"]
disallow = ["/", "/*.pdf$"]
[[robots.group]]
user_agents = ["FriendlyBot"]
`

const robotsSignal = "content_signal = { search = \"yes\", ai_input = \"yes\", ai_train = \"no\" }\n"

type robotsCase struct {
	name, config string
	upstream     string // served as the upstream's /robots.txt; "" for none
}

func robotsCases() []robotsCase {
	var cs []robotsCase
	const rule = "[[rule]]\nmatch = \"/\"\nsitemap = true\n"
	for _, mode := range []string{"generate", "append", "append-keep", "staging", "generate-nositemap"} {
		for _, groups := range []string{"nogroups", "groups"} {
			for _, signal := range []string{"nosignal", "signal"} {
				var b strings.Builder
				if mode == "staging" {
					b.WriteString("mode = \"staging\"\n")
				}
				b.WriteString("[robots]\n")
				switch mode {
				case "append":
					b.WriteString("mode = \"append\"\n")
				case "append-keep":
					b.WriteString("mode = \"append\"\nupstream_sitemaps = \"keep\"\n")
				}
				if signal == "signal" {
					b.WriteString(robotsSignal)
				}
				if groups == "groups" {
					b.WriteString(robotsGroups)
				}
				if mode != "generate-nositemap" {
					b.WriteString(rule)
				}
				c := robotsCase{name: mode + "-" + groups + "-" + signal, config: b.String()}
				if strings.HasPrefix(mode, "append") {
					c.upstream = appRobots
				}
				cs = append(cs, c)
			}
		}
	}
	return cs
}

// serveRobotsCase returns the robots.txt a case serves, "" when headgate
// leaves robots.txt to the upstream.
func serveRobotsCase(t *testing.T, cfg *rules.Config, upstream string) string {
	t.Helper()
	up := newSource(map[string]string{})
	if upstream != "" {
		up.set("/robots.txt", upstream, nil)
	}
	s := New(cfg, Options{Fetch: up.Fetch})
	if !s.Handles("/robots.txt") {
		return ""
	}
	w := get(s, "GET", "/robots.txt")
	if w.Code != 200 || w.Header().Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Fatalf("robots.txt: %d %v", w.Code, w.Header())
	}
	return w.Body.String()
}

func TestRobotsGolden(t *testing.T) {
	for _, c := range robotsCases() {
		t.Run(c.name, func(t *testing.T) {
			cfg := loadConfig(t, c.config, nil)
			got := serveRobotsCase(t, cfg, c.upstream)
			golden(t, "robots/"+c.name+".txt", got)
			checkVerdicts(t, cfg, c.upstream, got)
		})
	}
}

// TestRobotsVerdictsProperty generates configs at random (a fixed seed, so
// a failure repeats) and checks every file with the parser.
func TestRobotsVerdictsProperty(t *testing.T) {
	agents := []string{"@ai-training", "GPTBot", "ExampleBot", "FriendlyBot", "Some_Bot-2", "Mojeek", "archive_org_bot", "ClaudeBot"}
	paths := []string{"/", "/docs/", "/docs/private/", "/a", "/a/b", "/search", "/*.pdf$", "/img/*"}
	rng := rand.New(rand.NewPCG(15, 9309))
	for i := range 300 {
		var b strings.Builder
		mode := []string{"generate", "append", "staging"}[rng.IntN(3)]
		if mode == "staging" {
			b.WriteString("mode = \"staging\"\n")
		}
		b.WriteString("[robots]\n")
		if mode == "append" {
			b.WriteString("mode = \"append\"\n")
			if rng.IntN(2) == 0 {
				b.WriteString("upstream_sitemaps = \"keep\"\n")
			}
		}
		if rng.IntN(2) == 0 {
			b.WriteString(robotsSignal)
		}
		used := map[string]bool{}
		for range rng.IntN(4) {
			var as []string
			for range 1 + rng.IntN(3) {
				a := agents[rng.IntN(len(agents))]
				if !used[a] {
					used[a] = true
					as = append(as, fmt.Sprintf("%q", a))
				}
			}
			if len(as) == 0 {
				continue
			}
			fmt.Fprintf(&b, "[[robots.group]]\nuser_agents = [%s]\n", strings.Join(as, ", "))
			for _, k := range []string{"allow", "disallow"} {
				var ps []string
				for range rng.IntN(3) {
					ps = append(ps, fmt.Sprintf("%q", paths[rng.IntN(len(paths))]))
				}
				if len(ps) > 0 {
					fmt.Fprintf(&b, "%s = [%s]\n", k, strings.Join(ps, ", "))
				}
			}
		}
		b.WriteString("[[rule]]\nmatch = \"/\"\nsitemap = true\n")
		cfg, err := rules.Parse("headgate.toml", []byte(header+b.String()), nil)
		if err != nil {
			// Two groups may name one agent through @ai-training and by
			// name: that is allowed; anything else is a generator bug.
			t.Fatalf("case %d: %v\n%s", i, err, b.String())
		}
		upstream := ""
		if mode == "append" {
			upstream = appRobots
		}
		got := serveRobotsCase(t, cfg, upstream)
		if t.Failed() {
			return
		}
		checkVerdicts(t, cfg, upstream, got)
		if t.Failed() {
			t.Logf("case %d config:\n%s\nrobots.txt:\n%s", i, b.String(), got)
			return
		}
	}
}

// probes are the paths checked besides each rule's own.
var probes = []string{"/", "/docs/", "/docs/a.pdf", "/docs/private/x", "/a", "/a/b", "/admin/x", "/gpt-only/y", "/img/1.png", "/search?q=1", "/x.pdf", "/x.pdfs"}

// checkVerdicts parses body and checks, for each group's agents and for
// agents in no group, the verdict the config states.
func checkVerdicts(t *testing.T, cfg *rules.Config, upstream, body string) {
	t.Helper()
	if body == "" {
		if cfg.Robots.HasPolicy() && cfg.Robots.Mode != "upstream" {
			t.Errorf("the config sets a crawler policy but robots.txt is left to the upstream")
		}
		return
	}
	robots, err := robotstxt.FromString(body)
	if err != nil {
		t.Fatalf("the parser refuses the file: %v\n%s", err, body)
	}
	var before *robotstxt.RobotsData
	if upstream != "" {
		if before, err = robotstxt.FromString(upstream); err != nil {
			t.Fatal(err)
		}
	}
	if cfg.Site.Mode == rules.ModeStaging {
		for _, a := range append([]string{"SomeOtherBot", "Googlebot"}, rules.AITrainingAgents()...) {
			for _, p := range probes {
				if robots.TestAgent(p, a) {
					t.Errorf("staging: %s may crawl %s", a, p)
				}
			}
		}
		if strings.Contains(body, "Sitemap:") || strings.Contains(body, "Content-Signal:") {
			t.Errorf("staging writes a Sitemap or Content-Signal line:\n%s", body)
		}
		return
	}
	for _, g := range cfg.Robots.Groups {
		for _, a := range g.UserAgents {
			for _, p := range append(append(append([]string{}, probes...), g.Allow...), g.Disallow...) {
				p = strings.TrimSuffix(strings.ReplaceAll(p, "*", "zz"), "$")
				want := rfc9309Allowed(g.Allow, g.Disallow, p)
				if got := robots.TestAgent(p, a); got != want {
					t.Errorf("%s on %s: parser says allowed=%v, the config says %v\n%s", a, p, got, want, body)
				}
			}
		}
	}
	// An agent in no group: headgate's * group allows everything; in
	// append mode the upstream's verdict stands.
	for _, a := range []string{"SomeOtherBot", "OtherBot", "Googlebot"} {
		inGroup := false
		for _, g := range cfg.Robots.Groups {
			for _, x := range g.UserAgents {
				inGroup = inGroup || strings.EqualFold(x, a)
			}
		}
		if inGroup {
			continue
		}
		for _, p := range probes {
			want := true
			if before != nil {
				want = before.TestAgent(p, a)
			}
			if got := robots.TestAgent(p, a); got != want {
				t.Errorf("%s (in no group) on %s: allowed=%v, want %v\n%s", a, p, got, want, body)
			}
		}
	}
	if sig := cfg.Robots.ContentSignal.Line(); sig != "" {
		if n := strings.Count(body, "Content-Signal: "); n != 1 || !strings.Contains(body, "Content-Signal: "+sig+"\n") {
			t.Errorf("want one Content-Signal: %s line:\n%s", sig, body)
		}
		if !contentSignalInStarGroup(body) {
			t.Errorf("the Content-Signal line is not in the * group:\n%s", body)
		}
	}
	if s := New(cfg, Options{}); s.Enabled() {
		own := "Sitemap: " + cfg.Site.BaseURL + "/sitemap.xml\n"
		if !strings.HasSuffix(body, own) {
			t.Errorf("the file does not end with headgate's Sitemap line:\n%s", body)
		}
		if keep := strings.Contains(body, "app-sitemap.xml"); keep != cfg.Robots.KeepUpstreamSitemaps() {
			t.Errorf("upstream_sitemaps = %q, yet the upstream's Sitemap line kept=%v:\n%s", cfg.Robots.UpstreamSitemaps, keep, body)
		}
	} else if strings.Contains(body, "Sitemap:") {
		t.Errorf("a Sitemap line without a sitemap:\n%s", body)
	}
}

// contentSignalInStarGroup reports whether the Content-Signal line follows
// a run of User-agent lines that names *.
func contentSignalInStarGroup(body string) bool {
	star, inUA := false, false
	for _, line := range strings.Split(body, "\n") {
		k, v, ok, _ := robotsLine(line)
		if !ok {
			continue
		}
		switch k {
		case "user-agent":
			if !inUA {
				star = false
			}
			inUA = true
			star = star || v == "*"
		case "content-signal":
			return star
		default:
			inUA = false
		}
	}
	return false
}

// rfc9309Allowed is RFC 9309 §2.2.2 for one group, written from the RFC:
// the longest matching rule wins, allow on a tie, allowed when none
// matches. * matches any characters, a final $ the end.
func rfc9309Allowed(allow, disallow []string, path string) bool {
	best, allowed := -1, true
	try := func(rs []string, verdict bool) {
		for _, r := range rs {
			if rfc9309Match(r, path) && (len(r) > best || len(r) == best && verdict) {
				best, allowed = len(r), verdict
			}
		}
	}
	try(disallow, false)
	try(allow, true)
	return allowed
}

func rfc9309Match(rule, path string) bool {
	end := strings.HasSuffix(rule, "$")
	rule = strings.TrimSuffix(rule, "$")
	var re strings.Builder
	re.WriteString("^")
	for i, part := range strings.Split(rule, "*") {
		if i > 0 {
			re.WriteString(".*")
		}
		re.WriteString(regexp.QuoteMeta(part))
	}
	if end {
		re.WriteString("$")
	}
	return regexp.MustCompile(re.String()).MatchString(path)
}
