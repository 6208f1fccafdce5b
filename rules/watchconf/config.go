// Package watchconf is `[watch]` (SPEC §20.2) as the configuration reads
// it: the keys, their defaults and their checks (HG220–HG225). It sits on
// the rules/* floor so that rules can decode and check the table at load
// without importing watch, which sits above rules (it reads the
// rewriter's HeadFacts); watch takes this Config as it is.
package watchconf

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// SignalNames are the signals' names, in config, events and the metric;
// watch's Signal constants follow this order.
var SignalNames = [...]string{"status", "robots", "canonical", "title", "description", "hreflang", "jsonld_types"}

// Config is `[watch]` (SPEC §20.2). Decode over Defaults(); every field's
// comment says its default.
type Config struct {
	// Enabled is the caller's switch (default false: nothing is watched);
	// watch.New does not read it.
	Enabled bool `toml:"enabled"`
	// Match lists the §2.2 path patterns of the pages watched (default
	// ["/*"]). The caller compiles them and hands watch.New a matcher.
	Match []string `toml:"match"`
	// Signals are the signals compared (default all of SignalNames).
	Signals []string `toml:"signals"`
	// Confirm is how many responses in a row must show a differing signal
	// before it counts as a change (default 2; 1..100).
	Confirm int `toml:"confirm"`
	// MaxPages bounds the pages remembered, least recently seen forgotten
	// first (default 100000; 1..10,000,000; about 200 B a page).
	MaxPages int `toml:"max_pages"`
	// Webhook is an http(s) URL events are POSTed to, batched (default "":
	// none).
	Webhook string `toml:"webhook"`
	// WebhookFormat is "json" (default: an array of events) or "slack"
	// (a Slack/Mattermost-compatible {"text": …}).
	WebhookFormat string `toml:"webhook_format"`
}

// Defaults returns the documented defaults.
func Defaults() Config {
	return Config{
		Match:         []string{"/*"},
		Signals:       append([]string(nil), SignalNames[:]...),
		Confirm:       2,
		MaxPages:      100000,
		WebhookFormat: FormatJSON,
	}
}

// The webhook formats.
const (
	FormatJSON  = "json"
	FormatSlack = "slack"
)

// Bounds of the numbers.
const (
	maxConfirm  = 100
	maxMaxPages = 10_000_000
)

// Problem is one thing wrong with a Config; the caller adds the file and
// line of the key.
type Problem struct {
	Code    string
	Key     string // "watch.signals[2]"
	Message string
}

func (p Problem) String() string { return fmt.Sprintf("%s %s: %s", p.Code, p.Key, p.Message) }

// The codes; docs/configuration.md lists them.
const (
	HGBadSignal   = "HG220" // an unknown signal name
	HGBadConfirm  = "HG221" // confirm out of 1..100
	HGBadMaxPages = "HG222" // max_pages out of 1..10,000,000
	HGBadWebhook  = "HG223" // a webhook that is not an absolute http(s) URL
	HGBadFormat   = "HG224" // webhook_format not json|slack
	HGNoSignals   = "HG225" // signals empty
)

// KnownSignal reports whether name is one of SignalNames.
func KnownSignal(name string) bool { return slices.Contains(SignalNames[:], name) }

// Check returns every problem in c; it has no side effects. The match
// patterns are the caller's to check, with the §2.2 syntax it owns.
func (c *Config) Check() []Problem {
	var ps []Problem
	add := func(code, key, format string, args ...any) {
		ps = append(ps, Problem{code, key, fmt.Sprintf(format, args...)})
	}
	if len(c.Signals) == 0 {
		add(HGNoSignals, "watch.signals", "no signal to watch (want some of %s)", strings.Join(SignalNames[:], ", "))
	}
	for i, s := range c.Signals {
		if !KnownSignal(s) {
			add(HGBadSignal, fmt.Sprintf("watch.signals[%d]", i), "unknown signal %q (want one of %s)", s, strings.Join(SignalNames[:], ", "))
		}
	}
	if c.Confirm < 1 || c.Confirm > maxConfirm {
		add(HGBadConfirm, "watch.confirm", "%d: a change is confirmed on 1 to %d responses in a row", c.Confirm, maxConfirm)
	}
	if c.MaxPages < 1 || c.MaxPages > maxMaxPages {
		add(HGBadMaxPages, "watch.max_pages", "%d: between 1 and %d pages", c.MaxPages, maxMaxPages)
	}
	if c.Webhook != "" {
		u, err := url.Parse(c.Webhook)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add(HGBadWebhook, "watch.webhook", "%q: want an absolute http or https URL", c.Webhook)
		}
	}
	if c.WebhookFormat != FormatJSON && c.WebhookFormat != FormatSlack {
		add(HGBadFormat, "watch.webhook_format", "%q: want %q or %q", c.WebhookFormat, FormatJSON, FormatSlack)
	}
	return ps
}
