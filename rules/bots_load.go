package rules

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/headgate/headgate/bots/botconfig"
	"github.com/headgate/headgate/rules/schema"
)

// [bots] (SPEC §18): the keys are read here into botconfig.Config, and every
// problem bots.(*Config).Check finds (HG200–HG209) is reported at its
// key's line. The directory, verification and access decisions are the
// bots package's; the proxy builds them from Config.Bots.

type botsDec struct {
	l *loader
	c *botconfig.Config
}

type botsAccessDec struct {
	l *loader
	a *botconfig.AccessRule
}

type botsCrawlerDec struct {
	l *loader
	c *botconfig.Crawler
}

// botsFields declares the keys of [bots].
var botsFields = &schema.Fields[botsDec]{Name: "bots", List: []schema.Field[botsDec]{
	{Key: "enabled", Read: func(d botsDec, key string, v any) { d.l.boolean(key, v, &d.c.Enabled) }},
	{Key: "ranges_dir", Read: func(d botsDec, key string, v any) { d.l.str(key, v, &d.c.RangesDir) }},
	{Key: "refresh_urls", Read: func(d botsDec, key string, v any) { d.l.boolean(key, v, &d.c.RefreshURLs) }},
	{Key: "refresh", Read: func(d botsDec, key string, v any) { d.l.botsDuration(key, v, &d.c.Refresh) }},
	{Key: "reverse_dns", Read: func(d botsDec, key string, v any) { d.l.boolean(key, v, &d.c.ReverseDNS) }},
	{Key: "resolver", Read: func(d botsDec, key string, v any) { d.l.str(key, v, &d.c.Resolver) }},
	{Key: "dns_wait", Read: func(d botsDec, key string, v any) { d.l.botsDuration(key, v, &d.c.DNSWait) }},
	{Key: "cache_size", Read: func(d botsDec, key string, v any) {
		n, ok := v.(int64)
		if !ok {
			d.l.wrongType(key, v, "an integer")
			return
		}
		if n < 0 || n > 10_000_000 {
			d.l.add(botconfig.HGBadSize, key, "%d: want 1 to 10000000 (0 = the default)", n)
			return
		}
		d.c.CacheSize = int(n)
	}},
	{Key: "cache_ttl", Read: func(d botsDec, key string, v any) { d.l.botsDuration(key, v, &d.c.CacheTTL) }},
	{Key: "web_bot_auth", Read: func(d botsDec, key string, v any) { d.l.boolean(key, v, &d.c.WebBotAuth) }},
	{Key: "upstream_header", Read: func(d botsDec, key string, v any) { d.l.str(key, v, &d.c.UpstreamHeader) }},
	{Key: "spoofed", Read: func(d botsDec, key string, v any) { d.l.str(key, v, &d.c.Spoofed) }},
	{Key: "enforce_robots", Read: func(d botsDec, key string, v any) { d.l.boolean(key, v, &d.c.EnforceRobots) }},
	{Key: "insecure_directories", Read: func(d botsDec, key string, v any) {
		if s, ok := d.l.strList(key, v); ok {
			d.c.InsecureDirectories = s
		}
	}},
	{Key: "access", Read: func(d botsDec, key string, v any) {
		arr, _ := d.l.tables(key, v, "an array of tables ([[bots.access]])")
		for i, t := range arr {
			a := botconfig.AccessRule{}
			decode(d.l, fmt.Sprintf("%s[%d]", key, i), t, botsAccessFields, botsAccessDec{d.l, &a})
			d.c.Access = append(d.c.Access, a)
		}
	}},
	{Key: "crawler", Read: func(d botsDec, key string, v any) {
		arr, _ := d.l.tables(key, v, "an array of tables ([[bots.crawler]])")
		for i, t := range arr {
			c := botconfig.Crawler{}
			decode(d.l, fmt.Sprintf("%s[%d]", key, i), t, botsCrawlerFields, botsCrawlerDec{d.l, &c})
			d.c.Crawler = append(d.c.Crawler, c)
		}
	}},
	{Key: "categories", Read: func(d botsDec, key string, v any) {
		t, ok := d.l.table(key, v)
		if !ok {
			return
		}
		d.c.Categories = map[string]botconfig.Category{}
		for _, name := range sortedKeys(t) {
			var s string
			if d.l.str(schema.Join(key, name), t[name], &s) {
				d.c.Categories[name] = botconfig.Category(s)
			}
		}
	}},
}}

// botsAccessFields declares the keys of [[bots.access]].
var botsAccessFields = &schema.Fields[botsAccessDec]{Name: "bots.access", List: []schema.Field[botsAccessDec]{
	{Key: "crawlers", Read: func(d botsAccessDec, key string, v any) {
		if s, ok := d.l.strList(key, v); ok {
			d.a.Crawlers = s
		}
	}},
	{Key: "verified", Read: func(d botsAccessDec, key string, v any) { d.l.str(key, v, &d.a.Verified) }},
	{Key: "match", Read: func(d botsAccessDec, key string, v any) {
		if d.l.str(key, v, &d.a.Match) && d.a.Match != "" {
			if _, err := ParsePattern(d.a.Match); err != nil {
				d.l.add("HG120", key, "%q: %v", d.a.Match, err)
			}
		}
	}},
	{Key: "action", Read: func(d botsAccessDec, key string, v any) { d.l.str(key, v, &d.a.Action) }},
}}

// botsCrawlerFields declares the keys of [[bots.crawler]].
var botsCrawlerFields = &schema.Fields[botsCrawlerDec]{Name: "bots.crawler", List: []schema.Field[botsCrawlerDec]{
	{Key: "name", Read: func(d botsCrawlerDec, key string, v any) { d.l.str(key, v, &d.c.Name) },
		NeedCode: botconfig.HGBadCrawler, Need: `has no name (a lower-case directory name, such as name = "examplebot")`},
	{Key: "tokens", Read: func(d botsCrawlerDec, key string, v any) {
		if s, ok := d.l.strList(key, v); ok {
			d.c.Tokens = s
		}
	}},
	{Key: "category", Read: func(d botsCrawlerDec, key string, v any) {
		var s string
		if d.l.str(key, v, &s) {
			d.c.Category = botconfig.Category(s)
		}
	}},
	{Key: "ranges_url", Read: func(d botsCrawlerDec, key string, v any) { d.l.str(key, v, &d.c.RangesURL) }},
	{Key: "ranges_format", Read: func(d botsCrawlerDec, key string, v any) {
		var s string
		if d.l.str(key, v, &s) {
			d.c.RangesFormat = botconfig.RangesFormat(s)
		}
	}},
	{Key: "domains", Read: func(d botsCrawlerDec, key string, v any) {
		if s, ok := d.l.strList(key, v); ok {
			d.c.Domains = s
		}
	}},
	{Key: "signature_agent", Read: func(d botsCrawlerDec, key string, v any) { d.l.str(key, v, &d.c.SignatureAgent) }},
	{Key: "operator", Read: func(d botsCrawlerDec, key string, v any) { d.l.str(key, v, &d.c.Operator) }},
	{Key: "source", Read: func(d botsCrawlerDec, key string, v any) { d.l.str(key, v, &d.c.Source) }},
}}

// botsDuration reads a [bots] duration: one that is not a Go duration is
// HG203 (its bounds are bots.Check's, also HG203).
func (l *loader) botsDuration(key string, v any, dst *botconfig.Duration) {
	s, ok := v.(string)
	if !ok {
		l.wrongType(key, v, `a duration string such as "150ms"`)
		return
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		l.add(botconfig.HGBadDuration, key, `%q is not a duration (use Go syntax such as "150ms", "6h")`, s)
		return
	}
	dst.Duration = d
}

// bots reads [bots] over botconfig.Defaults, makes ranges_dir relative to the
// config's directory, and reports every problem of botconfig.Config.Check at
// its key.
func (l *loader) bots(t map[string]any) {
	c := &l.cfg.Bots
	decode(l, botsFields.Name, t, botsFields, botsDec{l, c})
	if c.RangesDir != "" && !filepath.IsAbs(c.RangesDir) {
		c.RangesDir = filepath.Join(l.cfg.Dir, c.RangesDir)
	}
	for _, p := range c.Check() {
		l.add(p.Code, p.Key, "%s", p.Message)
	}
}
