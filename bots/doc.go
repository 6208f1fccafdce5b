// Package bots tells who is asking (SPEC §18): which known crawler a
// request claims to be, what it crawls for, and whether the claim holds —
// by the crawler's published IP ranges, forward-confirmed reverse DNS, or a
// Web Bot Auth signature (RFC 9421) from its key directory. It also decides
// the `[[bots.access]]` rules, `bots.spoofed` and `bots.enforce_robots`.
//
// It owns the crawler directory (Directory, Merge), the `[bots]` config
// (Config, Defaults, Config.Check with HG200–HG209), the range files
// (ParseRanges, Ranges), the DNS cache, the key directory cache and the
// replay window. The config, the directory and the range parser live in
// bots/botconfig, which imports no net/http, so that rules can read and
// check `[bots]` (this package re-exports them: bots.Config is
// botconfig.Config). It imports only the standard library; the §2.2 path
// patterns and the robots.txt verdict are injected (PathMatcher,
// AccessOptions.Disallowed), and the client address is the caller's
// (§11.1 trusted proxies decide it; this package never reads
// X-Forwarded-For).
//
// Call order, in the proxy:
//
//	problems := cfg.Bots.Check()                  // at load, with the rest of the config
//	v, err := bots.New(cfg.Bots, bots.Options{Logger: log})
//	go v.Run(ctx)                                  // refresh_urls, when on
//	acc, err := bots.NewAccess(cfg.Bots, bots.AccessOptions{Compile: …, Disallowed: …})
//	// per request, after `deny` and before redirects (§11.2 step 1b):
//	id := v.Identify(r.Context(), r, client)
//	if deny, rule := acc.Decide(id, r.URL.Path); deny { … 403, outcome="bot_denied" }
//	out.Header.Set(cfg.Bots.UpstreamHeader, id.Header())  // after deleting the client's copy
//	// on reload: v.Reload() keeps the old table for a file that does not parse.
//
// Security notes. A resolver that fails, times out or lies yields
// "unverified", never "verified": a PTR name must end in the crawler's
// domain and resolve forward to the same address, and only 8 PTR names and
// 64 forward answers are read. A request waits at most dns_wait for a
// first DNS answer or key directory fetch; everything else is in memory. A
// key directory is fetched over https only (http for origins listed in
// insecure_directories), bounded to 64 KiB, cached within 5 min … 24 h. A
// signature header that does not parse is Verified "no" and a log line,
// never a panic (the parsers are fuzzed) and never an error response by
// itself. Identity.Header escapes whatever a name holds.
package bots
