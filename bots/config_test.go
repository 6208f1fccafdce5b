package bots

import (
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

// TestConfigDecodes decodes `[bots]` the way the loader does (over the
// defaults, unknown keys reported) so the TOML tags and durations are
// pinned.
func TestConfigDecodes(t *testing.T) {
	const doc = `
[bots]
enabled = true
ranges_dir = "testdata/ranges"
refresh_urls = true
refresh = "12h"
reverse_dns = false
resolver = "127.0.0.1:5353"
dns_wait = "80ms"
cache_size = 5000
cache_ttl = "1h"
web_bot_auth = false
upstream_header = "Headgate-Bot"
spoofed = "deny"
enforce_robots = true
insecure_directories = ["http://127.0.0.1:8080"]

[[bots.access]]
crawlers = ["@ai-training", "bytespider"]
verified = "any"
match = "/*"
action = "deny"

[[bots.crawler]]
name = "mybot"
tokens = ["MyBot"]
category = "monitor"
ranges_url = "https://mybot.example/ranges.json"
domains = ["crawl.mybot.example"]
signature_agent = "https://mybot.example"

[bots.categories]
bytespider = "ai-search"
`
	var f struct {
		Bots Config `toml:"bots"`
	}
	f.Bots = Defaults()
	md, err := toml.Decode(doc, &f)
	if err != nil {
		t.Fatal(err)
	}
	if u := md.Undecoded(); len(u) > 0 {
		t.Errorf("keys not decoded: %v", u)
	}
	c := f.Bots
	if !c.Enabled || c.Refresh.Duration != 12*time.Hour || c.DNSWait.Duration != 80*time.Millisecond || c.CacheSize != 5000 ||
		c.ReverseDNS || c.WebBotAuth || c.Spoofed != "deny" || len(c.Access) != 1 || len(c.Crawler) != 1 ||
		c.Crawler[0].SignatureAgent != "https://mybot.example" || c.Categories["bytespider"] != AISearch {
		t.Errorf("decoded %+v", c)
	}
	if ps := c.Check(); len(ps) != 0 {
		t.Errorf("problems: %v", ps)
	}
	var g struct {
		Bots Config `toml:"bots"`
	}
	_, err = toml.Decode("[bots]\ndns_wait = \"soon\"\n", &g)
	if err == nil || !strings.Contains(err.Error(), "soon") {
		t.Errorf("a bad duration decoded: %v", err)
	}
}
