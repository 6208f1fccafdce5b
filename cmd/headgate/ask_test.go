package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// explain and rewrite send the request through the proxy: what they print
// is what headgate serve answers, for every kind of decision the proxy
// makes (a redirect, a deny, its own files, a fragment it leaves alone),
// not what a copy of its rules in cmd would say.
func TestOneShotAsksTheProxy(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "h.toml")
	if err := os.WriteFile(cfg, []byte(`[server]
upstream = "http://127.0.0.1:9"
[site]
base_url = "https://notes.example"
[robots]
mode = "generate"
[[redirect]]
from = "/old/:id"
to = "/notes/{id}"
[[rule]]
match = "/*"
description = "Notes."
canonical = "{path}"
[[rule]]
match = "/"
sitemap = true
[[rule]]
match = "/private/*"
deny = true
`), 0o644); err != nil {
		t.Fatal(err)
	}
	page := "<html><head><title>T</title></head><body>b</body></html>"

	// A redirect: rewrite has no page to write; it says what the proxy answers.
	code, out, errs := runCmd(t, page, "rewrite", "-config", cfg, "-path", "/old/7")
	if code != exitFix || out != "" || !strings.Contains(errs, "answers 301 with Location https://notes.example/notes/7") {
		t.Errorf("rewrite of a redirected path: exit %d\nstdout %q\nstderr %s", code, out, errs)
	}
	// A deny rule: 404, nothing forwarded.
	code, _, errs = runCmd(t, page, "rewrite", "-config", cfg, "-path", "/private/x")
	if code != exitFix || !strings.Contains(errs, "404") {
		t.Errorf("rewrite of a denied path: exit %d\n%s", code, errs)
	}
	// headgate's own /robots.txt is not the upstream's page.
	code, _, errs = runCmd(t, page, "rewrite", "-config", cfg, "-path", "/robots.txt")
	if code != exitFix || !strings.Contains(errs, "serves this path itself (robots)") {
		t.Errorf("rewrite of /robots.txt: exit %d\n%s", code, errs)
	}
	code, out, _ = runCmd(t, "", "explain", "-config", cfg, "/robots.txt")
	if code != exitOK || !strings.Contains(out, "headgate serves this itself (robots): 200 text/plain") {
		t.Errorf("explain /robots.txt: exit %d\n%s", code, out)
	}
	// A fragment (an htmx partial) passes through byte for byte, as served.
	frag := "<li>one</li><li>two</li>"
	code, out, errs = runCmd(t, frag, "rewrite", "-config", cfg, "-path", "/list", "-changes")
	if code != exitOK || out != frag || !strings.Contains(errs, "skipped_fragment") {
		t.Errorf("rewrite of a fragment: exit %d\nstdout %q\nstderr %s", code, out, errs)
	}
	// A page is rewritten, and explain shows the proxy's outcome.
	code, out, _ = runCmd(t, page, "rewrite", "-config", cfg, "-path", "/notes/1")
	if code != exitOK || !strings.Contains(out, `<link rel="canonical" href="https://notes.example/notes/1">`) {
		t.Errorf("rewrite of a page: exit %d\n%s", code, out)
	}
	code, out, _ = runCmd(t, "", "explain", "-config", cfg, "/notes/1")
	if code != exitOK || !strings.Contains(out, "headgate writes (rewritten)") || !strings.Contains(out, `Link: <https://notes.example/notes/1>; rel="canonical"`) {
		t.Errorf("explain of a page: exit %d\n%s", code, out)
	}
}

// explain -ua -ip sends the request as that client through the proxy:
// the identity and the access decision it prints are the Record's.
func TestExplainBot(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "ranges"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ranges", "googlebot.json"), []byte(`{"creationTime": "2026-12-05T23:00:00.000000", "prefixes": [{"ipv4Prefix": "66.249.64.0/19"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "h.toml")
	if err := os.WriteFile(cfg, []byte(`[server]
upstream = "http://127.0.0.1:9"
[site]
base_url = "https://notes.example"
[bots]
enabled = true
ranges_dir = "ranges"
reverse_dns = false
spoofed = "deny"
[[bots.access]]
crawlers = ["@ai-training"]
match = "/notes/*"
action = "deny"
[[rule]]
match = "/*"
description = "Notes."
`), 0o644); err != nil {
		t.Fatal(err)
	}
	const google = "Googlebot/2.1 (+http://www.google.com/bot.html)"
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"-ua", google, "-ip", "66.249.66.1", "/notes/1"},
			[]string{"identity: googlebot (search), verified: ip", "access: allowed (no access rule matches)", "headgate writes"}},
		{[]string{"-ua", google, "-ip", "203.0.113.9", "/notes/1"},
			[]string{"identity: googlebot (search), verified: no", "access: denied by bots.spoofed: headgate answers 403; nothing is forwarded"}},
		{[]string{"-ua", "Mozilla/5.0 (compatible; ClaudeBot/1.0)", "/notes/1"},
			[]string{"identity: claudebot (ai-training), verified: unverifiable", "access: denied by bots.access[0]"}},
		{[]string{"-ua", "Mozilla/5.0 (compatible; ClaudeBot/1.0)", "/about"},
			[]string{"identity: claudebot (ai-training), verified: unverifiable", "access: allowed (no access rule matches)"}},
		{[]string{"/notes/1"}, []string{"identity: no known crawler"}},
	} {
		code, out, errs := runCmd(t, "", append([]string{"explain", "-config", cfg}, c.args...)...)
		for _, w := range c.want {
			if code != exitOK || !strings.Contains(out, w) {
				t.Errorf("explain %q: exit %d, want %q in\n%s%s", c.args, code, w, out, errs)
			}
		}
	}
	if code, _, _ := runCmd(t, "", "explain", "-config", cfg, "-ip", "nope", "/"); code != exitUsage {
		t.Errorf("-ip nope: exit %d, want %d", code, exitUsage)
	}
}
