package proxy

import (
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/headgate/headgate/bots"
	"github.com/headgate/headgate/internal/hgtest"
	"github.com/headgate/headgate/rules"
	"github.com/headgate/headgate/sitemap"
)

const (
	uaGooglebot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	uaGPTBot    = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
	uaClaudeBot = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)"
	uaBrowser   = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36"
)

// rangesDir writes googlebot.json and gptbot.json (Google's and OpenAI's
// published format) with loopback prefixes into a temp directory.
func rangesDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name, prefixes string) {
		body := `{"creationTime": "2026-12-05T23:00:00.000000", "prefixes": [` + prefixes + `]}`
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("googlebot.json", `{"ipv6Prefix": "2001:4860:4801:10::/64"}, {"ipv4Prefix": "127.66.0.0/16"}`)
	write("gptbot.json", `{"ipv4Prefix": "127.77.0.0/16"}`)
	return dir
}

// botsProxy is a proxy over a counting upstream with [bots] on, the
// generated robots.txt of the real sitemap handler, a JSON access log,
// and the rest of the config in extra (after [bots]'s own keys).
func botsProxy(t testing.TB, server, botsKeys, extra string) (*Proxy, *seen, *hgtest.LogBuffer) {
	t.Helper()
	up := &seen{}
	srv := httptest.NewServer(http.HandlerFunc(up.handler))
	t.Cleanup(srv.Close)
	log := &hgtest.LogBuffer{}
	src := "[server]\n" + server + "\n\n[bots]\nenabled = true\nreverse_dns = false\nranges_dir = " + quote(rangesDir(t)) + "\n" + botsKeys + "\n" + extra
	cfg := testConfig(t, srv.URL, src)
	p, err := New(cfg, Options{
		Logger: slog.New(slog.NewJSONHandler(log, nil)),
		Sitemap: func(cfg *rules.Config, fetch fetchFunc) SitemapHandler {
			return sitemap.New(cfg, sitemap.Options{Fetch: fetch})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, up, log
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// identityOf serves one request and returns its Record.
func identityOf(t *testing.T, p *Proxy, target, remote string, headers ...string) (*Record, *httptest.ResponseRecorder) {
	t.Helper()
	var rec *Record
	req := httptest.NewRequest("GET", "http://notes.example"+target, nil)
	req = req.WithContext(Observe(req.Context(), func(r *Record) { rec = r }))
	req.RemoteAddr = remote
	for _, kv := range headers {
		k, v, _ := strings.Cut(kv, ": ")
		req.Header.Add(k, v)
	}
	w := httptest.NewRecorder()
	p.ServeHTTP(w, req)
	if rec == nil {
		t.Fatal("no record")
	}
	return rec, w
}

func TestBotsIdentify(t *testing.T) {
	p, _, _ := botsProxy(t, `trusted_proxies = ["10.0.0.0/8"]`, "", "")
	for _, c := range []struct {
		name, remote, ua, xff string
		want                  bots.Identity
	}{
		{"in ranges", "127.66.1.2:4000", uaGooglebot, "", bots.Identity{Name: "googlebot", Category: "search", Verified: bots.VerifiedIP}},
		{"out of ranges", "127.0.0.9:4000", uaGooglebot, "", bots.Identity{Name: "googlebot", Category: "search", Verified: bots.VerifiedNo}},
		{"ipv6 in ranges", "[2001:4860:4801:10::7]:4000", uaGooglebot, "", bots.Identity{Name: "googlebot", Category: "search", Verified: bots.VerifiedIP}},
		{"a person", "127.66.1.2:4000", uaBrowser, "", bots.None},
		{"no way to verify", "127.0.0.9:4000", uaClaudeBot, "", bots.Identity{Name: "claudebot", Category: "ai-training", Verified: bots.VerifiedUnverifiable}},
		// §11.1: behind trusted proxies the client is the rightmost
		// X-Forwarded-For entry that is not itself one.
		{"trusted proxy", "10.0.0.1:4000", uaGooglebot, "192.0.2.7, 127.66.3.4, 10.0.0.2", bots.Identity{Name: "googlebot", Category: "search", Verified: bots.VerifiedIP}},
		{"trusted proxy, spoofer behind", "10.0.0.1:4000", uaGooglebot, "127.66.3.4, 192.0.2.7", bots.Identity{Name: "googlebot", Category: "search", Verified: bots.VerifiedNo}},
		// An untrusted peer's X-Forwarded-For is ignored.
		{"forged XFF", "127.0.0.9:4000", uaGooglebot, "127.66.3.4", bots.Identity{Name: "googlebot", Category: "search", Verified: bots.VerifiedNo}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := []string{"User-Agent: " + c.ua}
			if c.xff != "" {
				h = append(h, "X-Forwarded-For: "+c.xff)
			}
			rec, w := identityOf(t, p, "/notes/1", c.remote, h...)
			if rec.Bot != c.want {
				t.Errorf("Bot = %+v, want %+v", rec.Bot, c.want)
			}
			if w.Code != 200 {
				t.Errorf("status %d", w.Code)
			}
		})
	}
}

// A client's own Headgate-Bot (or upstream_header) never reaches the
// upstream; with upstream_header, headgate's does.
func TestBotsUpstreamHeader(t *testing.T) {
	forged := []string{"User-Agent: " + uaGooglebot, "Headgate-Bot: name=googlebot, category=search, verified=ip", "X-Bot: name=googlebot"}
	for _, c := range []struct {
		name, keys, extra string
		wantHG, wantX     string
	}{
		{"bots off", "", "", "", "name=googlebot"},
		{"no upstream_header", "", "", "", "name=googlebot"},
		{"Headgate-Bot", `upstream_header = "Headgate-Bot"`, "", "name=googlebot, category=search, verified=no", "name=googlebot"},
		{"another name", `upstream_header = "x-bot"`, "", "", "name=googlebot, category=search, verified=no"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, up, _ := botsProxy(t, "", c.keys, "")
			if c.name == "bots off" {
				cfg := *p.Config()
				cfg.Bots.Enabled = false
				if err := p.Swap(&cfg); err != nil {
					t.Fatal(err)
				}
			}
			w := do(p, "GET", "notes.example", "/notes/1", "127.0.0.9:4000", forged...)
			if w.Code != 200 || up.count() != 1 {
				t.Fatalf("status %d, upstream hits %d", w.Code, up.count())
			}
			if got := up.last.Get("Headgate-Bot"); got != c.wantHG {
				t.Errorf("upstream Headgate-Bot = %q, want %q", got, c.wantHG)
			}
			if got := up.last.Get("X-Bot"); got != c.wantX {
				t.Errorf("upstream X-Bot = %q, want %q", got, c.wantX)
			}
		})
	}
}

// A request that names no crawler sends name="-" upstream (a value made
// once and shared: a client's forged copy neither reaches the upstream nor
// changes what the next request sends).
func TestBotsUpstreamHeaderNone(t *testing.T) {
	p, up, _ := botsProxy(t, "", `upstream_header = "Headgate-Bot"`, "")
	for i := range 3 {
		hs := []string{"User-Agent: " + uaBrowser}
		if i == 1 {
			hs = append(hs, "Headgate-Bot: name=googlebot")
		}
		w := do(p, "GET", "notes.example", "/notes/1", "127.0.0.9:4000", hs...)
		if w.Code != 200 {
			t.Fatalf("status %d", w.Code)
		}
		if got := up.last.Values("Headgate-Bot"); len(got) != 1 || got[0] != `name="-"` {
			t.Errorf("request %d: upstream Headgate-Bot = %q, want name=\"-\"", i, got)
		}
	}
	if got := noneHeader; len(got) != 1 || got[0] != `name="-"` {
		t.Errorf("noneHeader = %q", got)
	}
}

func TestBotsSpoofedDenied(t *testing.T) {
	p, up, log := botsProxy(t, "", `spoofed = "deny"`, "")
	w := do(p, "GET", "notes.example", "/notes/1", "127.0.0.9:4000", "User-Agent: "+uaGooglebot)
	if w.Code != http.StatusForbidden || up.count() != 0 {
		t.Fatalf("status %d, upstream hits %d; want 403, never forwarded", w.Code, up.count())
	}
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") || !strings.Contains(w.Body.String(), "403") {
		t.Errorf("Content-Type %q, body %q", ct, w.Body.String())
	}
	// The real Googlebot, robots.txt and a person are served.
	if w := do(p, "GET", "notes.example", "/notes/1", "127.66.0.1:4000", "User-Agent: "+uaGooglebot); w.Code != 200 {
		t.Errorf("verified: status %d", w.Code)
	}
	if w := do(p, "GET", "notes.example", "/robots.txt", "127.0.0.9:4000", "User-Agent: "+uaGooglebot); w.Code != 200 {
		t.Errorf("robots.txt to a spoofer: status %d", w.Code)
	}
	if w := do(p, "GET", "notes.example", "/notes/1", "127.0.0.9:4000", "User-Agent: "+uaBrowser); w.Code != 200 {
		t.Errorf("a person: status %d", w.Code)
	}
	if up.count() != 3 { // robots.txt too: no [robots] policy, so the upstream's
		t.Errorf("upstream hits %d, want 3", up.count())
	}
	if v := testutil.ToFloat64(p.m.requests.WithLabelValues("bot_denied")); v != 1 {
		t.Errorf(`headgate_requests_total{outcome="bot_denied"} = %v, want 1`, v)
	}
	// The access log line says who and why, as JSON fields.
	var line map[string]any
	for _, l := range strings.Split(log.String(), "\n") {
		if strings.Contains(l, `"outcome":"bot_denied"`) {
			if err := json.Unmarshal([]byte(l), &line); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := map[string]any{"bot": "googlebot", "bot_category": "search", "bot_verified": "no", "bot_rule": "bots.spoofed", "status": 403.0}
	for k, v := range want {
		if line[k] != v {
			t.Errorf("access log %s = %v, want %v (line %v)", k, line[k], v, line)
		}
	}
}

// An escaped user agent: every value of the log line is escaped by slog,
// in JSON and in text.
func TestBotsLogEscaped(t *testing.T) {
	var text strings.Builder
	up := httptest.NewServer(http.HandlerFunc((&seen{}).handler))
	defer up.Close()
	cfg := testConfig(t, up.URL, "[bots]\nenabled = true\nreverse_dns = false\n\n[[bots.crawler]]\nname = \"evil\"\ntokens = [\"EvilBot\"]\ncategory = \"monitor\"\n")
	p, err := New(cfg, Options{Logger: slog.New(slog.NewTextHandler(&text, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	do(p, "GET", "notes.example", "/a", "127.0.0.9:4000", "User-Agent: EvilBot/1 \"quoted\" bot=x")
	got := text.String()
	if !strings.Contains(got, "bot=evil bot_category=monitor bot_verified=unverifiable") || !strings.Contains(got, `user_agent="EvilBot/1 \"quoted\" bot=x"`) {
		t.Errorf("text log line: %s", got)
	}
}

func TestBotsAccessRules(t *testing.T) {
	p, up, _ := botsProxy(t, "", "", `
[[bots.access]]
crawlers = ["googlebot"]
verified = "yes"
action = "allow"

[[bots.access]]
crawlers = ["googlebot"]
verified = "no"
match = "/private/*"
action = "deny"

[[bots.access]]
crawlers = ["@ai-training"]
match = "/notes/*"
action = "deny"

[[bots.access]]
crawlers = ["*"]
match = "/members/*"
action = "deny"
`)
	for _, c := range []struct {
		name, path, remote, ua string
		status                 int
		rule                   string
	}{
		{"verified googlebot: first entry allows", "/private/x", "127.66.0.1:1", uaGooglebot, 200, "bots.access[0]"},
		{"spoofed googlebot, denied path", "/private/x", "127.0.0.9:1", uaGooglebot, 403, "bots.access[1]"},
		{"spoofed googlebot, other path", "/notes/x", "127.0.0.9:1", uaGooglebot, 200, ""},
		{"@ai-training, verified or not", "/notes/x", "127.77.0.1:1", uaGPTBot, 403, "bots.access[2]"},
		{"@ai-training, unverifiable", "/notes/x", "127.0.0.9:1", uaClaudeBot, 403, "bots.access[2]"},
		{"@ai-training elsewhere", "/about", "127.77.0.1:1", uaGPTBot, 200, ""},
		{"* any crawler", "/members/1", "127.0.0.9:1", uaClaudeBot, 403, "bots.access[3]"},
		{"* but a person", "/members/1", "127.0.0.9:1", uaBrowser, 200, ""},
		{"robots.txt always served", "/robots.txt", "127.77.0.1:1", uaGPTBot, 200, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := up.count()
			rec, w := identityOf(t, p, c.path, c.remote, "User-Agent: "+c.ua)
			if w.Code != c.status || rec.BotRule != c.rule {
				t.Errorf("status %d rule %q, want %d %q", w.Code, rec.BotRule, c.status, c.rule)
			}
			if c.status == 403 && (up.count() != before || rec.Outcome != BotDenied || rec.Kind != KindBotDenied || !rec.BotDenied) {
				t.Errorf("denied but forwarded (%d → %d) or recorded %q/%q", before, up.count(), rec.Outcome, rec.Kind)
			}
		})
	}
}

func TestBotsEnforceRobots(t *testing.T) {
	p, up, _ := botsProxy(t, "", "enforce_robots = true", `
[[bots.access]]
crawlers = ["gptbot"]
match = "/secret/*"
action = "deny"

[robots]
mode = "generate"

[[robots.group]]
user_agents = ["GPTBot"]
disallow = ["/private/", "/*.pdf$"]
allow = ["/private/open"]
`)
	for _, c := range []struct {
		path, ua string
		status   int
		rule     string
	}{
		{"/private/x", uaGPTBot, 403, "bots.enforce_robots"},
		{"/private/open/1", uaGPTBot, 200, ""},
		{"/files/a.pdf", uaGPTBot, 403, "bots.enforce_robots"},
		{"/files/a.pdf?x=1", uaGPTBot, 200, ""}, // robots.txt rules see the query: $ is not at the end
		{"/public", uaGPTBot, 200, ""},
		{"/private/x", uaGooglebot, 200, ""}, // the * group disallows nothing
		{"/private/x", uaBrowser, 200, ""},
		{"/robots.txt", uaGPTBot, 200, ""},
		{"/secret/robots.txt", uaGPTBot, 403, "bots.access[0]"},
	} {
		rec, w := identityOf(t, p, c.path, "127.77.0.1:1", "User-Agent: "+c.ua)
		if w.Code != c.status || rec.BotRule != c.rule {
			t.Errorf("%s %s: status %d rule %q, want %d %q", c.ua[:30], c.path, w.Code, rec.BotRule, c.status, c.rule)
		}
	}
	// Without enforce_robots the record still says the file disallows it
	// (for §20.1's violations), and nothing is denied.
	cfg := *p.Config()
	cfg.Bots.EnforceRobots = false
	if err := p.Swap(&cfg); err != nil {
		t.Fatal(err)
	}
	rec, w := identityOf(t, p, "/private/x", "127.77.0.1:1", "User-Agent: "+uaGPTBot)
	if w.Code != 200 || !rec.BotRobotsDisallowed || rec.BotRule != "" {
		t.Errorf("enforce_robots off: %d, disallowed %v, rule %q", w.Code, rec.BotRobotsDisallowed, rec.BotRule)
	}
	rec, _ = identityOf(t, p, "/public", "127.77.0.1:1", "User-Agent: "+uaGPTBot)
	if rec.BotRobotsDisallowed {
		t.Error("/public: disallowed")
	}
	// robots.txt is served to the crawler it keeps out, and says so.
	_, w = identityOf(t, p, "/robots.txt", "127.77.0.1:1", "User-Agent: "+uaGPTBot)
	if !strings.Contains(w.Body.String(), "User-agent: GPTBot") || !strings.Contains(w.Body.String(), "Disallow: /private/") {
		t.Errorf("robots.txt:\n%s", w.Body.String())
	}
	_ = up
}

// A range file that breaks between loads keeps its old table: the
// verifier (and its caches) is the Proxy's, reloaded in place.
func TestBotsReloadBrokenRanges(t *testing.T) {
	p, _, _ := botsProxy(t, "", "", "")
	v := p.bots.v
	rec, _ := identityOf(t, p, "/a", "127.66.0.1:1", "User-Agent: "+uaGooglebot)
	if rec.Bot.Verified != bots.VerifiedIP {
		t.Fatalf("before: %+v", rec.Bot)
	}
	dir := p.Config().Bots.RangesDir
	if err := os.WriteFile(filepath.Join(dir, "googlebot.json"), []byte(`{"prefixes": [{"ipv4Prefix": "nope"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// A reload that changes only the access part keeps the verifier.
	cfg := *p.Config()
	cfg.Bots.Spoofed = "deny"
	if err := p.Swap(&cfg); err != nil {
		t.Fatal(err)
	}
	if p.bots.v != v {
		t.Error("a reload that changes only access rules built a new verifier (its caches lost)")
	}
	if n := v.Stats().RangeReloadFailures.Load(); n != 1 {
		t.Errorf("RangeReloadFailures = %d, want 1", n)
	}
	rec, _ = identityOf(t, p, "/a", "127.66.0.1:1", "User-Agent: "+uaGooglebot)
	if rec.Bot.Verified != bots.VerifiedIP {
		t.Errorf("after a broken reload: %+v, want the old table's ip", rec.Bot)
	}
	// At load, the same file is HG200 with its name.
	_, err := rules.Parse("test.toml", []byte("[server]\nupstream = \"http://127.0.0.1:1\"\n[site]\nbase_url = \"https://notes.example\"\n[bots]\nenabled = true\nranges_dir = "+quote(dir)+"\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "HG200 test.toml:7: bots.ranges_dir: "+filepath.Join(dir, "googlebot.json")) {
		t.Errorf("Parse = %v, want HG200 naming the file", err)
	}
}

// A client bound to a loopback source address in the ranges, over a real
// listener: the address the proxy sees is the connection's.
func TestBotsRealSourceAddress(t *testing.T) {
	p, up, _ := botsProxy(t, "", `spoofed = "deny"`, "")
	front := httptest.NewServer(p)
	defer front.Close()
	get := func(src string) int {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
		c := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
		req, _ := http.NewRequest("GET", front.URL+"/notes/1", nil)
		req.Header.Set("User-Agent", uaGooglebot)
		res, err := c.Do(req)
		if err != nil {
			t.Skipf("binding %s: %v", src, err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if s := get("127.66.0.9"); s != 200 {
		t.Errorf("from the ranges: %d", s)
	}
	if s := get("127.0.0.1"); s != 403 {
		t.Errorf("from outside: %d", s)
	}
	if up.count() != 1 {
		t.Errorf("upstream hits %d, want 1", up.count())
	}
}

// The inspector identifies a ua= and ip= as the proxy does any request,
// and shows the Record's identity and access decision.
func TestBotsInspector(t *testing.T) {
	p, up, _ := botsProxy(t, "", `spoofed = "deny"`, "")
	admin := httptest.NewServer(p.Admin())
	defer admin.Close()
	get := func(q string) (int, string) {
		res, err := http.Get(admin.URL + "/inspect?path=/notes/1&" + q)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b strings.Builder
		_, _ = io.Copy(&b, res.Body)
		return res.StatusCode, b.String()
	}
	var rep inspectReport
	_, body := get("format=json&ip=127.66.0.1&ua=" + url.QueryEscape(uaGooglebot))
	if err := json.Unmarshal([]byte(body), &rep); err != nil {
		t.Fatal(err, body)
	}
	if id := rep.Identity; id == nil || id.Name != "googlebot" || id.Category != "search" || id.Verified != "ip" || id.Access != "allow" {
		t.Errorf("verified: identity %+v", rep.Identity)
	}
	_, body = get("format=json&ip=192.0.2.9&ua=" + url.QueryEscape(uaGooglebot))
	rep = inspectReport{}
	if err := json.Unmarshal([]byte(body), &rep); err != nil {
		t.Fatal(err)
	}
	if id := rep.Identity; id == nil || id.Verified != "no" || id.Access != "deny" || id.Rule != "bots.spoofed" || rep.Decision.Kind != "bot_denied" || rep.Served.Status != 403 {
		t.Errorf("spoofed: identity %+v, decision %+v, status %d", rep.Identity, rep.Decision, rep.Served.Status)
	}
	code, page := get("ip=192.0.2.9&ua=" + url.QueryEscape(uaGooglebot))
	if code != 200 || !strings.Contains(page, `<h2 id="identity">Identity</h2>`) || !strings.Contains(page, "bots.spoofed") {
		t.Errorf("HTML page %d lacks the Identity section", code)
	}
	if code, _ := get("ip=nope"); code != 400 {
		t.Errorf("ip=nope: %d, want 400", code)
	}
	if up.count() != 1 {
		t.Errorf("upstream hits %d, want 1 (the spoofed requests are never forwarded)", up.count())
	}
}

// Proxy.Reload reads the config again: a range file that no longer parses
// is HG200 there, the reload is refused and counted, and the running
// tables (the config's and the verifier's) keep serving.
func TestBotsReloadRefused(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc((&seen{}).handler))
	defer up.Close()
	dir := rangesDir(t)
	file := filepath.Join(t.TempDir(), "h.toml")
	src := "[server]\nupstream = " + quote(up.URL) + "\n[site]\nbase_url = \"https://notes.example\"\n[bots]\nenabled = true\nreverse_dns = false\nranges_dir = " + quote(dir) + "\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := rules.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := os.WriteFile(filepath.Join(dir, "googlebot.json"), []byte("not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.Reload("test")
	if v := testutil.ToFloat64(p.m.reloads.WithLabelValues("refused")); v != 1 {
		t.Errorf(`headgate_config_reloads_total{result="refused"} = %v, want 1`, v)
	}
	if p.Config() != cfg {
		t.Error("the refused config was swapped in")
	}
	rec, _ := identityOf(t, p, "/a", "127.66.0.1:1", "User-Agent: "+uaGooglebot)
	if rec.Bot.Verified != bots.VerifiedIP {
		t.Errorf("after a refused reload: %+v, want the old table's ip", rec.Bot)
	}
}

// A HEAD gets the 403 without a body; in shadow mode the decision is
// recorded and logged, and the request is forwarded.
func TestBotsHeadAndShadow(t *testing.T) {
	p, up, _ := botsProxy(t, "", `spoofed = "deny"`, "")
	if w := do(p, "HEAD", "notes.example", "/a", "127.0.0.9:1", "User-Agent: "+uaGooglebot); w.Code != 403 || w.Body.Len() != 0 || up.count() != 0 {
		t.Errorf("HEAD: %d, body %q, upstream hits %d", w.Code, w.Body.String(), up.count())
	}
	cfg := *p.Config()
	cfg.Site.Mode = rules.ModeShadow
	if err := p.Swap(&cfg); err != nil {
		t.Fatal(err)
	}
	rec, w := identityOf(t, p, "/a", "127.0.0.9:1", "User-Agent: "+uaGooglebot)
	if w.Code != 200 || up.count() != 1 || !rec.BotDenied || rec.BotRule != "bots.spoofed" || rec.Outcome == BotDenied {
		t.Errorf("shadow: %d, hits %d, record %+v", w.Code, up.count(), rec)
	}
}
