// Package proxy is headgate's HTTP side: the reverse proxy in front of the
// upstream, content codings, response headers, the admin listener, metrics,
// config reload and the process's listeners (Serve).
//
// It owns everything that touches HTTP; the head rewrite itself is package
// rewrite (tokens in, bytes out) and the rules are package rules.
//
// # Entry points
//
//	p, err := proxy.New(cfg, proxy.Options{Logger: log})  // an http.Handler for the public port
//	admin := p.Admin()                                      // /metrics, /healthz, /readyz
//	p.Swap(newCfg)                                          // atomic; requests in flight keep theirs
//	defer p.Close()                                         // after the last request: stops the upstream_timeout sweeper
//
//	// or as middleware of any Go server (server.upstream = "builtin:next"):
//	mw, p, err := proxy.Middleware(cfg, proxy.Options{})  // mw(next): next is the upstream, in process
//
//	// or the whole process, as `headgate serve` runs it:
//	err := proxy.Serve(ctx, "headgate.toml", proxy.ServeOptions{Options: o, Reload: hup})
//
// cmd/headgate turns SIGHUP into sends on ServeOptions.Reload and SIGTERM
// or SIGINT into the end of ctx.
//
// # Request flow
//
//  1. ServeHTTP takes the request target as it arrived. A path that
//     rules.CheckPath refuses (dot segments, also percent-encoded; NUL;
//     bad escapes) is answered 400 by headgate and forwarded nowhere.
//  2. The config in force is loaded once (an atomic pointer) and resolves
//     the target. A deny rule is answered 404 by headgate.
//     With [bots] on, the client (server.trusted_proxies, as for the
//     access log) and its user agent are identified (bots.Verifier).
//  3. Paths the SitemapHandler Handles (/sitemap.xml, /robots.txt) are
//     answered by it, to every crawler. Then [bots]' access rules,
//     bots.spoofed and bots.enforce_robots may answer 403
//     (outcome="bot_denied"; proxy/bots.go).
//     Then SPEC §11's redirects (proxy/redirect.go): rules.Config.RedirectInto
//     decides from the method, the Host (compared, never copied), the
//     scheme headgate believes (server.trusted_proxies, asked of
//     internal/clientaddr, as the access log asks it for the client) and
//     the target;
//     headgate answers one redirect (or a 410) itself, counted in
//     headgate_redirects_total{source,status} and outcome="redirected".
//     Before the redirects, [markdown] (proxy/markdown.go, SPEC §19):
//     a request that prefers text/markdown, or names the .md path form
//     (resolved, denied and redirected as its page), is marked for
//     ModifyResponse to convert the page as served; it fails open to the
//     HTML. agentHeaders adds Content-Signal/Content-Usage and, on HTML
//     answers of pages with a Markdown version, Vary and the alternate Link.
//  4. Everything else is proxied: a GET or HEAD without a body or an
//     upgrade (nearly every request) by forward (forward.go), which does
//     what httputil.ReverseProxy does with the same hooks, any other
//     request by an httputil.ReverseProxy. The Rewrite hook
//     sets the upstream URL, the Host (server.preserve_host) and
//     X-Forwarded-For/Proto/Host (a trusted proxy's X-Forwarded-For is
//     extended and its X-Forwarded-Proto kept; anyone else's replaced); on GET and HEAD it limits Accept-Encoding
//     to the codings headgate decodes (gzip, deflate, br, zstd), or drops
//     it for a page headgate will decode anyway (asksIdentity, decided in
//     ServeHTTP with the request's Kind: server.upstream_page_coding; a
//     path with an asset's extension keeps the client's codings), and
//     maps headgate's ETags in If-None-Match and If-Match back to the
//     upstream's.
//  5. ModifyResponse decides. A GET or HEAD answered 200 with text/html or
//     application/xhtml+xml in a coding headgate decodes goes to the
//     rewriter: the body is decoded and rewrite.Reader.Prepare reads
//     through the end of the head before any header goes out, so that the
//     length change is known. When the rewriter changes the page, the
//     response gets the exact Content-Length (identity both ways) or none,
//     a weak ETag W/"hg.<config hash>.<base64url(upstream ETag)>", no
//     Accept-Ranges, Vary: Accept-Encoding, and is encoded in the client's
//     best coding from server.compress by the response writer (so that
//     flushes pass through the encoder). When it does not (nothing to
//     change, shadow mode, a head too large, a charset it can not read),
//     the upstream's own bytes are replayed unchanged, coding and all, or,
//     when headgate asked the upstream for identity, encoded as the client
//     allows with headgate's ETag (encodeUnchanged).
//     Everything else passes through byte for byte, but what headgate asked
//     identity for and does not rewrite (an error page, JSON, a feed),
//     which goes out compressed as the client allows when its type
//     compresses (encodeOnBehalf): the same bytes once decoded.
//  6. Headers: rule headers (§4.9) on 2xx and 304 responses of matching
//     paths; for responses that were not rewritten the canonical becomes a
//     Link header and robots an X-Robots-Tag (§4.8); in staging every
//     response says X-Robots-Tag: noindex, nofollow; with
//     server.change_header a rewritten response says Headgate-Changes.
//     Once decided, the response's fields are moved into the client's
//     header map (handOver) rather than copied by ReverseProxy, all but
//     Content-Type, which ReverseProxy still reads to flush event streams.
//  7. Each request is counted once in headgate_requests_total{outcome} and,
//     with server.access_log, logged once.
//
// Rewritten responses flush on a 50 ms timer rather than after every write,
// so a rewriter that returns a head token by token costs no syscall per
// token, while the head of an upstream that pauses after it still reaches
// the client within 50 ms. A response passed through flushes as
// ReverseProxy decides for it: after every write when the upstream gave no
// length (a stream, or text/event-stream), on the same timer when it did.
//
// A body whose length is known and which nothing encodes, to a client on
// plain HTTP/1.x, goes the direct way (direct.go): the bytes headgate
// holds (the head, rewritten or not, and what was read with it) in one
// Write, then the rest from the upstream's connection to the client's by
// the response writer's ReadFrom, which on Linux is splice(2): the page's
// bytes past the head never enter headgate's memory. ReverseProxy's copy
// (Read and Write through a pooled buffer) takes everything else.
//
// # Observing a request
//
// Observe(ctx, fn) makes the requests of ctx report a Record — the
// decision (Kind: refused, answered by headgate, forwarded with or without
// rules), the Outcome, why a forwarded response passed the rewriter by
// (Skip, set where decideResponse decides), the matched rules or redirect,
// the upstream's status and headers as they came, a bounded copy of the
// bytes the rewriter read, the upstream head it read
// (Result.UpstreamHead) and the change record — once, before the headers
// go out. It is the one place the proxy tells what it did: the in-process
// audit (through app), `headgate explain` and the inspector (GET /inspect
// on the admin listener) render it and decide nothing; every other
// request pays nothing for it.
//
// # Failures
//
// headgate fails open: a panic in the rewriter sends the page unchanged.
// An upstream that refuses or does not send its headers within
// server.upstream_timeout gets a 502 or 504 page of headgate's own; one
// whose head does not arrive within upstream_timeout after its headers, a
// 504. A body that does not decode or ends early before the head is read is
// a 502; after the headers went out the response is aborted (the client
// sees a cut connection, never a truncated page that looks complete). Each
// is logged and counted in headgate_upstream_errors_total{kind}.
//
// # Metrics
//
// headgate_requests_total{outcome}: one value per Outcome constant —
// rewritten, passthrough, skipped_too_large, skipped_encoding,
// skipped_charset, skipped_fragment, unchanged_truncated, skipped_rule, shadow, redirected,
// denied, bot_denied (SPEC §18.3), sitemap, robots, llms_txt, upstream_error, and besides SPEC §8:
// bad_request (a path refused with 400), canceled (the client left before
// the upstream answered), panic.
// headgate_rewrite_duration_seconds, headgate_tags_written_total{kind},
// headgate_tags_removed_total{kind}, headgate_urls_dropped_total{reason},
// headgate_config_reloads_total{result} (ok, error, refused), and
// headgate_upstream_errors_total{kind} (connect, timeout, corrupt,
// aborted). No package-level registry: Options.Registry or a new one.
//
// # Security
//
//   - Client headers never reach what headgate writes: every URL comes from
//     site.base_url through the rules. Host, X-Forwarded-Host and Forwarded
//     only go upstream (ReverseProxy drops the client's X-Forwarded-* and
//     Forwarded; SetXForwarded writes fresh ones).
//   - Paths that could lead an upstream around a deny rule are refused
//     before matching; denied paths never reach the upstream.
//   - A client's If-None-Match is decoded back to an upstream ETag only if
//     it is a syntactically valid entity tag; anything else is dropped.
//   - Memory per request is bounded: the head (server.max_head_bytes),
//     copies of the compressed bytes read with it, 32 KiB copy buffers, and
//     pooled coders; zstd windows are capped at 8 MiB.
//   - A client's Headgate-Bot field (and bots.upstream_header's) is removed
//     from every forwarded request, [bots] on or off; the identity sent in
//     its place comes from the verifier, whose client address is
//     server.trusted_proxies' (never an untrusted peer's X-Forwarded-For).
//   - The admin listener is separate from the public one; the sitemap's
//     upstream fetches carry none of the client's cookies or headers.
//   - The admin listener answers only a Host that is an IP literal,
//     localhost or one of server.admin_hosts (421 otherwise), against DNS
//     rebinding; the inspector's link card loads an image only from
//     base_url's origin or inspector.image_hosts, and its CSP img-src says so.
package proxy
