// Package sitemap owns /sitemap.xml, its parts /sitemap-N.xml and
// /robots.txt (SPEC §5), /llms.txt and the IndexNow key file (§13): it
// lists the entries of every sitemap = true rule, reads their sources as
// streams, writes the XML compressed as it goes,
// caches the result and serves it.
//
// Call order:
//
//	s := sitemap.New(cfg, sitemap.Options{Fetch: fetch, Logger: log, Registerer: reg})
//	if s.Handles(r.URL.Path) { s.ServeHTTP(w, r) } // per request, before proxying
//	err := s.WriteFiles(ctx, dir)                  // headgate sitemap -o DIR
//	err := s.WriteTo(ctx, os.Stdout)               // headgate sitemap
//
// New reads nothing; the first request generates. A config reload builds a
// new Sitemap (its metrics reuse the collectors already registered); the
// old one needs no closing: a generation it still runs ends within
// SourceTimeout per source.
//
// # Entries and addresses
//
// Rules are listed in file order. A rule without parameters is one entry,
// its pattern's path; with a sitemap_source or sitemap_entries, its lastmod
// is the latest date they give (their params are not used). A rule with
// parameters lists its sitemap_entries, then its source's records, in
// order. Nothing is deduplicated: two rules listing one page list it twice.
//
// Each <loc> is site.base_url's origin plus rules.Pattern.Fill of the
// entry's params (each value percent-encoded), spelled by
// rules.Config.SpellPath when site.path_safe is set (SPEC §23: as the
// page's "self" canonical spells it). An entry is left out when
// Fill refuses it (missing or empty parameter, a value the constraint
// refuses, a "." or ".." segment, a "/" the constraint does not allow, a
// NUL), when its lastmod is neither RFC 3339 nor YYYY-MM-DD (a bad date
// marks a bad record: the entry is left out rather than listed without
// one), when a <loc> of any of its language versions would exceed 2,048
// characters, or when it is not printable ASCII (Fill makes that
// impossible; the check guarantees it). A language version is left out
// when a deny rule matches its path, and, when some rule may do so, when
// the merged rules make it noindex or give it another canonical (the
// audit's sitemap-noindex and sitemap-non-canonical): only addresses a
// deny, noindex or foreign-canonical rule could match (by its literal
// prefix) are resolved, so a large source costs no rule matching. Extra
// params that the pattern does not name are ignored.
//
// Each rule gets at most one warning per generation, "sitemap: entries
// left out", with the count per reason (bad_line, line_too_long,
// truncated, bad_lastmod, missing_param, constraint, dot_segment, slash,
// nul, loc_too_long, denied, noindex, canonical, redirected: an address
// headgate would answer with a redirect of SPEC §11) and the first problem
// (where and why, values quoted and cut to 300 bytes).
//
// # Sources
//
// file:PATH is relative to rules.Config.Dir; upstream:/PATH is read with
// Options.Fetch. Both are JSON Lines, or a JSON array when the first byte
// that is not white space (after an optional BOM) is '['. A record is
// {"params": {"name": "value", …}, "lastmod": "…"}; a param may be a JSON
// string or an integer; other keys are ignored. A source is read as a
// stream within SourceTimeout (default 30 s; the time to read and process
// the whole source):
//
//   - a JSON Lines line that is not such an object is skipped and counted
//     (bad_line); a line over 64 KiB is skipped unread (line_too_long);
//     blank lines are ignored; a last line without a newline is a record
//     when it parses, and counted as truncated when it does not;
//   - an array element that is not such an object is skipped and counted;
//     an array that is not valid JSON, ends before its "]", has data after
//     it, or holds an element over about 64 KiB fails the source: a JSON
//     decoder cannot step over it;
//   - a source whose first byte is '<' (an HTML error or login page
//     answered with 200) fails: listing none of its pages would silently
//     empty the sitemap;
//   - an error from Fetch (HTTP error status), an I/O error or the timeout
//     fails the source.
//
// A failed source fails the whole generation: it is logged once, counted
// in headgate_sitemap_generations_total{result="error"}, and for
// sitemap.retry_after no new generation is tried; the last good files are
// served meanwhile, or 503 with Retry-After when there are none.
//
// # Files
//
// A file holds at most sitemap.max_urls_per_file <url> elements and stays
// under 50 MiB uncompressed. When the URLs need more than one file,
// /sitemap.xml is a <sitemapindex> naming {base}/sitemap-1.xml … with each
// part's latest lastmod. The language versions of one entry go into the
// same file: an entry that does not fit starts the next file (only an
// entry with more versions than a whole file holds is spread). Past
// sitemap.max_urls, and past 50,000 files, the rest is left out and one
// warning says how many URLs; an entry is never cut at the cap. With no URL
// at all, /sitemap.xml is an empty <urlset>: search engines report it as
// empty, although sitemap.xsd asks for one <url>.
//
// A localized rule writes one <url> per locale (/{locale}{path}, the
// configured spelling); each lists every listed version as
// <xhtml:link rel="alternate" hreflang="L" href="…"/>, and x-default (the
// unprefixed path) with site.x_default unless a deny rule matches it. A
// file declares xmlns:xhtml only when it holds a link: each file is one
// gzip member whose root start tag is compressed on its own (a deflate
// sync flush) and chosen when the file ends, so the body is neither
// buffered nor compressed twice.
//
// # Serving
//
// One generation runs at a time; requests that arrive meanwhile wait for
// it (the generation is detached from the request that started it, so a
// client hanging up fails no one else). Its result is kept for
// sitemap.cache_ttl; the request after that waits for the next
// generation (or, if that fails, gets the previous files). Files are kept
// gzip-compressed in memory (about 12 bytes per URL with two languages)
// and sent as they are to clients that accept gzip, decompressed on the
// fly for the others. Answers carry Content-Type application/xml;
// charset=utf-8, Cache-Control public, max-age=300, Vary:
// Accept-Encoding, a strong ETag per representation (If-None-Match gives
// 304), Content-Length, and never Set-Cookie. HEAD is answered, other
// methods get 405.
//
// # robots.txt
//
//   - generate: "User-agent: *" with the Content-Signal line (when
//     robots.content_signal is set) and an empty Disallow, then each
//     [[robots.group]], then the Sitemap line (robots.go shows the shape);
//   - append: the upstream's robots.txt (read through Fetch per request,
//     at most 512 KiB, cut after its last whole line beyond that) with the
//     User-agent lines of headgate's agents taken out, headgate's
//     Content-Signal in its "*" group, its Sitemap lines dropped (unless
//     robots.upstream_sitemaps = "keep"), then the groups and headgate's
//     Sitemap line (with "keep", only when no Sitemap line already names
//     {base}/sitemap.xml). An absent robots.txt (Fetch's error has
//     HTTPStatus() 4xx), or one that is HTML, gives just the Sitemap line
//     block. An unreachable one (5xx, timeout, network error) gives 503
//     with Retry-After: RFC 9309 has a crawler treat that as "disallow
//     everything" for a while, where a bare Sitemap line would mean
//     "allow everything";
//   - upstream, or no sitemap rule and no groups or signal: not handled
//     here; the proxy forwards;
//   - staging (site.mode): exactly "User-agent: *\nDisallow: /\n", whatever
//     the mode and whether or not a sitemap exists. No Sitemap line: a
//     staging copy runs with the production base_url, so the line would
//     name production's sitemap, and the audit reads /sitemap.xml anyway.
//
// # llms.txt and the IndexNow key
//
// With [llms_txt], /llms.txt is built by the same generation as the
// sitemap (llms.go): each <url> written is offered to the first section
// whose pattern matches its path, up to the section's max_links; the file
// is cached, single-flighted and failed with the sitemap's files, and
// bounded at 8 MiB. With [indexnow], /{key}.txt answers the key as
// text/plain, without a generation. Each runs a generation for headgate
// indexnow, calling a function for every URL written.
//
// # Security
//
// Sources are untrusted input. Every record is bounded (64 KiB), no source
// is held whole, and every source is bounded in time. Values reach the XML
// only through Pattern.Fill, which percent-encodes them, and then through
// XML escaping of & < > " '; a <loc> must be printable ASCII. A value
// cannot add a path segment, a dot segment, a query or a fragment, nor
// name another host: every address starts with the configured origin,
// never the request's Host. The endpoints send no cookie and read none.
package sitemap
