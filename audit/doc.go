// Package audit crawls a site and reports the head problems of SPEC §7:
// canonicals, social tags, JSON-LD, hreflang, the sitemap, robots.txt,
// titles and descriptions. It is what `headgate audit` runs.
//
// Call order:
//
//	r, err := audit.Run(ctx, audit.Options{Config: cfg, Upstream: up}, urls)
//	r.WriteText(os.Stdout) // or WriteJSON, WriteHTML
//	if r.Fails("error") { exit 1 }
//
// # Modes
//
// In process (Live == ""), every URL is on the base URL (site.base_url)
// and is fetched from Upstream, then goes through the rewrite engine as
// the proxy would: the path is refused (400) as CheckPath says, a deny rule
// answers 404 without asking the upstream, the Host header is the public
// one under preserve_host, a 200 HTML page goes through rewrite.NewReader
// with the proxy's options, any other response gets the canonical Link
// header and X-Robots-Tag of SPEC §4.8, the rules' headers apply, and
// shadow mode serves the upstream's bytes while listing the changes. Each
// page records what the rewriter did (Page.Changes). Options.Sitemap, when
// set, answers the paths it Handles, as headgate does.
//
// Live (Live set), the site is crawled as it answers. When Config is also
// given, its base URL's origin counts as the site's too: a staging copy's
// canonicals name production, and are checked on the staging copy.
//
// # The crawl
//
// Seeds: in live mode "/", the sitemap and the start URLs; in process the
// start URLs, else "/" and the sitemap. The sitemap is /sitemap.xml plus
// every Sitemap line of robots.txt, a sitemap index followed one level
// down; it is read in any case, for the sitemap checks. The crawl follows
// same-origin <a href> and <area href> (not in <template>, nor in
// <noscript>, which a browser with scripts reads as text), canonical and
// hreflang targets (fetched first: the checks need them) and redirects
// within the site (at most 10 in a row; loops are noted). A URL is its
// path and query without fragment; dot segments are resolved; each is
// fetched once. MaxPages bounds the fetches, Concurrency the requests at
// once, Timeout each request with its body, MaxBytes each body.
//
// robots.txt is read but not obeyed: an auditor audits staging, which
// disallows everything. It serves robots-blocked, robots-blocks-duplicate
// and canonical-to-blocked (RFC 9309 groups for "User-agent: *" and for
// Googlebot, longest match, Allow wins a tie, "*" and a final "$", 500
// KiB); what is wrong with the file is robots-txt-invalid.
//
// Staging: when the config's site.mode is staging, pages are judged as
// production will serve them: the X-Robots-Tag headgate puts on every
// staging response is not judged (in process the production header is
// known; live, X-Robots-Tag is ignored), nor is a robots.txt that
// disallows everything. Skipped says so.
//
// # Reading a page
//
// The head, and the token that ends it, go through html.Parse, so that an
// element the parser moves into the body (a canonical after a <div> in the
// head) counts as in the body, and one after a literal </head> but before
// the body counts as in the head. The rest of the page is tokenized and
// dropped token by token; only the facts the checks need are kept (title,
// descriptions, canonicals, robots, og:url, twitter:url, images,
// alternates, JSON-LD ids, links). Memory per page is bounded by 1 MiB of
// head and 1 MiB per token, whatever the page's size; a longer head or
// token, a page cut at MaxBytes and a body that stops coming are noted in
// Skipped, and the page is checked as far as it was read. Pages are
// decoded from their charset (header, BOM or <meta>; UTF-8 when none is
// declared) and their content coding.
//
// # Checks
//
// Each check is a row of the table in checks.go: its id, severity and
// words, and the function that runs it. A page check (pagechecks.go) runs
// on one HTML page in a worker, after pageFacts has filled in what the
// checks read of it; a cross check (crosschecks.go) runs once the crawl is
// done; a diff check compares a text of each page with production's under
// -compare. What docs/audit.md and the HTML report say of a check is its
// entry in checkdocs.go. Adding a check is a constant, a row, a function
// and a doc; the tests hold the docs to the table.
//
// # Judgement calls
//
//   - The canonical crawlers read is the first in the head, else the Link
//     header's. A page whose only canonical is in the body is
//     canonical-outside-head, not also canonical-missing.
//   - og-url-mismatch and jsonld-id-mismatch compare with that canonical,
//     and only when the page has one. JSON-LD nodes that describe the page
//     (WebPage and its kinds, Article and its kinds, Product, Event, …) and
//     any mainEntityOfPage are compared; an Organization's or a WebSite's
//     url names the site and is not.
//   - hreflang-not-reciprocal is reported on the page whose annotation is
//     unconfirmed (A), naming B; any return link confirms it. An x-default
//     target need not link back (it is often a redirect by language).
//   - Duplicates (titles, descriptions) are looked for among indexable
//     pages (200, HTML, not noindex, their own canonical), and pages that
//     name each other as alternates (translations) may share them.
//     description-missing concerns indexable pages only.
//   - A page N of a series (?page=N and the like, /page/N) whose canonical
//     is page 1 is pagination-canonical-to-first; links to it are not also
//     link-to-non-canonical.
//   - A noindex in X-Robots-Tag for any crawler ("googlebot: noindex")
//     counts for sitemap-noindex.
//   - A canonical that is no http(s) URL (javascript:) is canonical-not-200:
//     no crawler can fetch it.
//   - A target that answers badly is reported once, by what is wrong with
//     it: an alternate that errors is hreflang-to-non-200, not also
//     hreflang-not-reciprocal; an x-default that redirects (a language
//     chooser) is fine. A link to a chain is link-to-redirect and
//     redirect-chain. Loops and chains past 10 hops are redirect-chain.
//   - A 4xx robots.txt is no robots.txt (RFC 9309 §2.3.1.3), not
//     robots-txt-invalid; a 5xx, a redirect, no answer or another type
//     than text/plain is.
//   - title-length and description-length judge indexable pages only, as
//     description-missing does; sitemap-missing needs a sitemap that
//     parsed; sitemap-orphan needs a crawl that reached every URL it found,
//     and leaves sitemap URLs the other sitemap checks report alone.
//   - mixed-scheme names URLs on the site's own host over http, when the
//     base URL or the live URL is https.
//
// # Baselines and comparisons
//
// ReadBaseline reads an earlier JSON report (its "version" must be
// ReportVersion); Report.ApplyBaseline marks each finding new or known by
// (check, URL), lists the fixed ones, and makes Fails count new findings
// only. Options.Compare crawls a second site along the crawled paths and
// reports the diff-* findings; of each of its pages only the same few
// facts are kept.
//
// # Security
//
// Pages are untrusted. Nothing runs them; every buffer is bounded; no
// request leaves the site's origins (other hosts and non-http links are
// only noted); the HTML report is html/template output with no external
// resources and one inline script of its own, the only one its
// Content-Security-Policy allows (by hash), so a hostile title or URL
// stays text.
package audit
