// Package indexnow owns headgate indexnow (SPEC §13.3): it tells search
// engines which sitemap URLs are new or changed since the last successful
// run, through the IndexNow protocol.
//
// Call order:
//
//	sm := sitemap.New(cfg, sitemap.Options{Fetch: fetch})
//	sum, err := indexnow.Run(ctx, indexnow.Options{Config: cfg, URLs: sm.Each, State: path})
//
// Run generates the sitemap once (Options.URLs), compares each URL's
// lastmod with the state file, and POSTs the new and changed URLs as
// {host, key, keyLocation, urlList} to indexnow.endpoint in batches of at
// most 10,000. A first run (no state file) records the state and submits
// nothing, unless Options.All. A URL listed twice is submitted once.
//
// # State
//
// The state file is text: a header line, then "lastmod TAB url" per URL.
// While the sitemap is generated, the new state and the URLs to submit are
// spooled to temporary files beside it; only after every batch was
// accepted is the new state fsynced and renamed over the old one. A failed
// run (generation error, refused batch, timeout, signal) leaves the old
// state, so the next run submits the same URLs again. The old state is
// held as one map of 64-bit hashes, url → lastmod (16 bytes a URL plus map
// overhead), never as strings, and the same map marks the URLs this run
// has listed; a hash collision could hide one change, with odds of about
// n²/2⁶⁵. TestRun1M: a second run over 1,000,000 URLs grows the heap by
// about 70 MiB at its peak, garbage included.
//
// # Receivers
//
// 200 and 202 succeed, whatever the body (only its first 512 bytes are
// read, for the log). 429, 5xx, a timeout or a network error is retried
// up to Options.Attempts times per batch: after Retry-After (seconds or an
// HTTP date) when the answer has one, else after Options.Backoff, doubled
// each time; a Retry-After longer than Options.MaxWait fails the run at
// once. Any other status fails the run, a redirect included: redirects are
// never followed (a receiver's redirect could send the key and the URLs
// to another host). Each attempt is bounded by Options.AttemptTimeout,
// headers and body, so with the defaults (3 attempts of 20 s, waits of at
// most 20 s) a receiver that hangs ends the run within 100 s
// (Options.WorstCase).
//
// # Security
//
// Only URLs on site.base_url's origin (scheme, host and port) are ever
// sent; others are counted as skipped_host and logged. host and
// keyLocation come from base_url, never from a request. The key is public
// by design (it is served at /{key}.txt), so the config may hold it.
package indexnow
