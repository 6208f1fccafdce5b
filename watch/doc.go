// Package watch is headgate's change alerting (SPEC §20.2): per page, it
// remembers what the upstream said (status, robots directives, canonical,
// title, description, hreflang set, JSON-LD types, before headgate's
// rules) and reports when one of them changes and the change holds.
//
// Call order:
//
//	w, err := watch.New(watch.Options{Config: cfg, Match: matcher, Registerer: reg, Logger: log})
//	// per GET response of a page, once the rewriter read the head:
//	w.Observe(path, query, watch.Response{Status: res.StatusCode, RobotsHeader: res.Header.Values("X-Robots-Tag"), Head: &result.Upstream})
//	admin.Handle("/changes", w.Handler())
//	events := w.EventsFor(pathAndQuery) // for the inspector
//	w.Close(ctx)                        // at shutdown: the webhook's last batch
//
// The signals come from rewrite.HeadFacts, which the rewriter fills during
// its own scan (and replays with a cached plan), so that Observe only
// compares a few numbers: under 2 µs and no allocation when nothing
// changed. A differing signal becomes an event when it is seen on Confirm
// responses in a row, each signal counted on its own: a flapping value
// (A/B heads, a random token) never reaches the count. The first response
// of a page with a head is its baseline (a path never answered with one,
// an image, takes no room). The signals of the head are compared on 2xx
// responses whose head was read only; any response's status is compared.
//
// Memory is bounded: at most MaxPages pages, least recently seen forgotten
// first, about 170 B each (hashes, and the first 16 and 11 bytes of the
// title and description in what the entry would pad), over 64 locked
// shards; plus one table of at most 4,096 texts of canonicals, JSON-LD
// type sets and hreflang sets for the events' before (names.go).
// Events go to the counter headgate_upstream_changes_total{signal,
// severity}, a log line, a ring of the latest 1,000 (Events, EventsFor,
// Handler) and, when configured, a Sender that batches them to a webhook
// from its own goroutine with a bounded queue.
//
// Security: the upstream's titles and URLs are hostile input; the page
// escapes them with html/template and runs no script; the JSON is
// encoding/json's; the Slack text escapes what its markup reads.
package watch
