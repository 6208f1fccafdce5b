// Package insight counts what crawlers do and which search engines and AI
// assistants send visits back (SPEC §20.1): the Prometheus families
// headgate_bot_requests_total{bot, category, verified, code_class[, group]},
// headgate_bot_response_bytes_total{bot},
// headgate_bot_robots_violations_total{bot, verified} and
// headgate_referrals_total{source}; the last 24 hours in memory per
// crawler; and the admin /crawlers page that shows them (HTML with inline
// SVG, or ?format=json).
//
// It owns the referral host list (Source, Sources; docs/operations.md
// carries the same table), the per-crawler window and the page. It does
// not identify anyone or read robots.txt: the proxy hands it each
// request's bots.Identity and its robots verdict, from the decision
// record it fills in anyway.
//
// Call order, in the proxy:
//
//	tr, err := insight.New(insight.Options{Registerer: reg, Crawlers: merged, Logger: log})
//	adminMux.Handle("/crawlers", tr.Handler())
//	// per request, once, where the access log line is written:
//	tr.Observe(insight.Request{Identity: id, Path: escapedPath, Status: status,
//		Bytes: written, RobotsViolation: disallowed, Referer: r.Header.Get("Referer"), Time: start})
//
// Bounds. Labels: bot is one of Options.Crawlers' names (or of a later
// SetCrawlers', at most MaxCrawlers over the Tracker's life) or "other"
// (whatever a client claims); category is one of bots.Categories or
// "unknown"; verified is ip, dns, signature, no or unverifiable; code_class
// 2xx…5xx; source one of Sources(). Memory is fixed at New: per crawler 24
// hourly buckets of atomic counters and two Space-Saving sketches of
// TopPaths counters, each holding at most MaxPathBytes of a path in its
// own array (about 18 KiB per sketch at 32 counters); referrals 24 × the
// sources. Nothing grows with traffic or with the number of paths; only a
// reload that names new crawlers adds a window each, up to MaxCrawlers.
//
// Cost. Observe takes no lock on its counters (atomics; label children
// are resolved once per combination and cached in a pointer, so no
// CounterVec hashing per request); it takes the crawler's own mutex for
// the sketch (a linear scan of ≤ 64 slots) and, once an hour, to clear a
// bucket. It does not allocate. bench_test.go measures it.
//
// Window. Hours are UTC clock hours; the page shows the 24 ending with
// the current one. Top paths cover the current and the previous half-day
// (12 to 24 hours), which bounds the sketch memory; the page says since
// when. Each replica counts what it serves: the page is one replica's
// view, the metrics summed in Prometheus are the whole.
//
// Split tests (SPEC §21). Request.Group ("control" or "variant"; ""
// outside any experiment) is the `group` label of
// headgate_bot_requests_total on experiment pages' series only: a page
// outside any experiment counts in series without the label (not
// group=""). crawler.requests has a dimension of three for it (none,
// control, variant), so the series stay bounded; the two label sets are
// two vectors under one name, registered as one unchecked collector.
//
// Security notes. Paths and Referers are client input: they are cut to
// MaxPathBytes, kept only in the sketches and escaped by html/template on
// the page (JSON by encoding/json). A Referer proves nothing — anyone can
// send "https://www.google.com/" — so referral counts are visits as
// clients describe them. The page has no script and no external asset; its
// Content-Security-Policy allows only its own inline style by hash. It
// belongs on the admin listener, not the public one: top paths can reveal
// URLs the site does not link.
package insight
