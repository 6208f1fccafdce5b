package rules

import (
	"fmt"

	"github.com/headgate/headgate/rules/schema"
	"github.com/headgate/headgate/rules/watchconf"
)

// [watch] (SPEC §20.2): the keys are read here into watchconf.Config over
// watchconf.Defaults, the match patterns are checked with the §2.2 syntax
// (HG120), and every problem watchconf.Config.Check finds (HG220–HG225) is
// reported at its key's line. The watcher is the proxy's, built from
// Config.Watch.

type watchDec struct {
	l *loader
	c *watchconf.Config
}

// watchFields declares the keys of [watch].
var watchFields = &schema.Fields[watchDec]{Name: "watch", List: []schema.Field[watchDec]{
	{Key: "enabled", Read: func(d watchDec, key string, v any) { d.l.boolean(key, v, &d.c.Enabled) }},
	{Key: "match", Read: func(d watchDec, key string, v any) {
		list, ok := d.l.strList(key, v)
		if !ok {
			return
		}
		for i, s := range list {
			if _, err := ParsePattern(s); err != nil {
				d.l.add("HG120", fmt.Sprintf("%s[%d]", key, i), "%q: %v", s, err)
			}
		}
		d.c.Match = list
	}},
	{Key: "signals", Read: func(d watchDec, key string, v any) {
		if s, ok := d.l.strList(key, v); ok {
			d.c.Signals = s
		}
	}},
	{Key: "confirm", Read: func(d watchDec, key string, v any) { d.l.watchInt(key, v, &d.c.Confirm) }},
	{Key: "max_pages", Read: func(d watchDec, key string, v any) { d.l.watchInt(key, v, &d.c.MaxPages) }},
	{Key: "webhook", Read: func(d watchDec, key string, v any) { d.l.str(key, v, &d.c.Webhook) }},
	{Key: "webhook_format", Read: func(d watchDec, key string, v any) { d.l.str(key, v, &d.c.WebhookFormat) }},
}}

// watchInt reads an integer of [watch]; its bounds are Check's.
func (l *loader) watchInt(key string, v any, dst *int) {
	n, ok := v.(int64)
	if !ok {
		l.wrongType(key, v, "an integer")
		return
	}
	*dst = int(max(min(n, 1<<31), -1<<31)) // Check reports it out of bounds
}

// watch reads [watch] and reports Check's problems at their keys.
func (l *loader) watch(t map[string]any) {
	c := &l.cfg.Watch
	decode(l, watchFields.Name, t, watchFields, watchDec{l, c})
	for _, p := range c.Check() {
		l.add(p.Code, p.Key, "%s", p.Message)
	}
}
