package watch

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/headgate/headgate/rewrite"
)

// Event is one confirmed change of a page's signal.
type Event struct {
	Time   time.Time `json:"time"`
	URL    string    `json:"url"` // BaseURL, path and query
	Signal string    `json:"signal"`
	// Before and After are the signal's values: a status, robots
	// directives ("noindex, nofollow"), a text when it was short, else
	// "#" and a hash's first 8 hex digits; "" when there was none. After
	// is the text when the response that confirmed it carried it short;
	// Before of a title or description the start the watcher kept (16 and
	// 11 bytes, "…" when it went on); of a canonical, JSON-LD types or
	// hreflang the text as After showed it (names.go says when it is gone
	// and the hash shows instead).
	Before   string `json:"before"`
	After    string `json:"after"`
	Severity string `json:"severity"` // "critical" or "info"

	key string // path and query, for EventsFor
}

// ringSize is how many events the /changes page and EventsFor look back on.
const ringSize = 1000

// ring holds the latest events.
type ring struct {
	mu   sync.Mutex
	ev   []Event // ≤ ringSize; next is where the next one goes once full
	next int
}

func (r *ring) add(e Event) {
	r.mu.Lock()
	if len(r.ev) < ringSize {
		r.ev = append(r.ev, e)
	} else {
		r.ev[r.next] = e
		r.next = (r.next + 1) % ringSize
	}
	r.mu.Unlock()
}

// latest returns the events that keep, newest first.
func (r *ring) latest(keep func(*Event) bool) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Event
	for i := len(r.ev) - 1; i >= 0; i-- {
		e := &r.ev[(r.next+i)%len(r.ev)]
		if keep(e) {
			out = append(out, *e)
		}
	}
	return out
}

// emit reports the changes one Observe confirmed: the metric, the log,
// the ring and the webhook.
func (w *Watcher) emit(path, query string, ch *changes, head *rewrite.HeadFacts) {
	key := path
	if query != "" {
		key += "?" + query
	}
	now := w.now()
	at := pageURL{w.base, key}
	for _, c := range ch.of[:ch.n] {
		e := Event{
			Time:     now,
			URL:      w.base + key,
			Signal:   c.s.String(),
			Before:   beforeText(c.s, c.before, ch, &w.names, at),
			After:    text(c.s, c.after, head, at),
			Severity: severity(c.s, c.before, c.after),
			key:      key,
		}
		crit := 0
		if e.Severity == Critical {
			crit = 1
		}
		w.count[c.s][crit].Inc()
		if w.log != nil {
			lvl := slog.LevelInfo
			if crit == 1 {
				lvl = slog.LevelWarn
			}
			w.log.Log(context.Background(), lvl, "upstream change", "url", e.URL, "signal", e.Signal,
				"before", e.Before, "after", e.After, "severity", e.Severity)
		}
		w.ring.add(e)
		if w.hook != nil {
			w.hook.Send(e)
		}
	}
}

// Events returns the latest events (at most 1,000), newest first; with a
// severity, only those of it.
func (w *Watcher) Events(severity string) []Event {
	return w.ring.latest(func(e *Event) bool { return severity == "" || e.Severity == severity })
}

// EventsFor returns the latest events of one page, newest first: key is
// its path and, when there is one, "?" and its query, as Observe was
// given them.
func (w *Watcher) EventsFor(key string) []Event {
	return w.ring.latest(func(e *Event) bool { return e.key == key })
}
