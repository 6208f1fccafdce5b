// Package demo is the website behind upstream = "builtin:demo": "Notes", a
// small legacy notes app whose pages carry the kind of <head> problems
// headgate exists to fix. config.example.toml proxies it so that
//
//	go run ./cmd/headgate -config config.example.toml
//
// shows the product without a real upstream. The pages, templates and
// assets are embedded from site/; [Handler] builds everything it serves when
// it is called and keeps no global mutable state.
//
// # Routes and planted problems
//
// The "fix" column names the kind of config.example.toml rule meant to
// correct the problem.
//
//	path                          | what is wrong with it                                    | fix
//	------------------------------+----------------------------------------------------------+-------------------------------------------
//	/                             | no meta description; two meta robots that disagree       | description rule; robots rule (one tag)
//	                              | ("index,follow", then "noindex"); og:image relative      | og:image made absolute
//	                              | (/covers/home.png)                                       |
//	/notes/, /notes/?page=1|2     | no canonical on either page (?page=1 is /notes/ again;   | canonical rule keeping ?page, dropping the rest
//	                              | the app links page 1 as /notes/); page 2 is              |
//	                              | "noindex, follow" (by design, see below)                 |
//	/notes/1                      | canonical /notes/1?ref=legacy: relative, tracking query  | canonical rule (absolute, query stripped)
//	/notes/2                      | no canonical                                             | canonical rule
//	/notes/3                      | relative canonical /notes/3                              | canonical rule (absolute URL)
//	/notes/4                      | canonical href="javascript:alert(1)"                     | canonical rule (replace unsafe URL)
//	/notes/5                      | two canonicals: /notes/5 and /archive/notes/5            | canonical rule (exactly one)
//	/notes/6                      | <div class="banner">Beta!</div> right after <title>; the | canonical + description rules; the parser
//	                              | description, canonical, viewport and stylesheet that     | sees them in <body>, so headgate must not
//	                              | follow it sit before the literal </head> but parse into  | trust the byte position of </head>
//	                              | <body>                                                   |
//	/notes/7                      | og:url http://localhost:3000/notes/7 (dev origin leaked) | og:url rule (public origin)
//	/notes/8                      | <noscript><link rel="canonical" href="/noscript">        | canonical rule adds a real one; the
//	                              | </noscript> in the head, no real canonical               | noscript must be left untouched
//	/notes/9 … /notes/12          | no canonical                                             | canonical rule
//	/about                        | 302 to /en/about: the unprefixed address of a localized  | hreflang x-default
//	                              | page (no page links it)                                  |
//	/en/about, /de/about,         | no hreflang alternates; canonical always /en/about       | hreflang rule; canonical rule (self,
//	/de-AT/about                  | (relative, and wrong for de and de-AT); the body's       | per locale)
//	                              | language switcher is links, not alternates               |
//	/internal/sitemap/notes.jsonl | (not a page) JSON Lines listing, one line per note:      | read by the sitemap; /internal/* denied
//	                              | {"params":{"id":"1"},"lastmod":"2026-01-02T10:00:00Z"}   | to the public
//	/internal/admin               | internal page that must never be public                  | deny rule for /internal/*
//	/docs/manual.pdf              | tiny PDF, no Link header (no canonical possible in HTML) | Link: rel=canonical header rule
//	/covers/{name}.png            | small PNG placeholder (same image for every name)        | target of og:image
//	/static/style.css             | shared stylesheet                                        | -
//	/robots.txt                   | "User-agent: *" / "Disallow: /internal/", no Sitemap     | robots.txt Sitemap line
//	/legacy/latin1                | text/html; charset=windows-1252, title "Café Müller" in  | description rule; headgate must keep the
//	                              | windows-1252 bytes, no description                       | page's encoding
//	/slow                         | head up to <body> flushed, body 300 ms later (chunked,   | headgate must stream, not buffer
//	                              | no Content-Length)                                       |
//	anything else                 | 404 HTML page                                            | -
//
// Notes exist for ids 1 to 12 exactly as written (/notes/01 and /notes/13
// are 404s) and ignore their query string (?page=, ?utm_source=), like the
// legacy app did. Locale segments of the About pages match
// case-insensitively: /de-at/about serves the de-AT page. Methods other than
// GET and HEAD get a 405 HTML page.
//
// # What the app gets right
//
// Everything that is not a planted head problem is kept as a well-run site
// keeps it, so that an audit of the demo through headgate has nothing left
// to report (cmd/headgate's TestAuditCommand, -fail-on warning) and an
// audit of the app itself reports only what headgate fixes:
//
//   - Every link answers 200: the nav links the page's own language version
//     of About (/en/about, /de/about), never the /about redirect; the About
//     pages link each other in a language switcher (<a hreflang>), so no
//     language version is known to the sitemap alone.
//   - Titles are 30 to 60 characters and descriptions 70 to 160 (the
//     ranges of docs/audit.md) on every indexable page: notes.json and the
//     templates hold real texts, which the example config keeps.
//   - Listing page 2 and later are "noindex, follow": pages for browsing,
//     whose every note is linked from its neighbours and in the sitemap, so
//     the sitemap lists /notes/ alone.
//
// TestLinksAnswer200 and TestTextsReadWell crawl the app from / and keep
// it so.
//
// # HTTP behaviour
//
// Every response other than the /about redirect has a strong ETag derived
// from a SHA-256 of the body and answers a matching If-None-Match with 304.
// Text responses (HTML, CSS, robots.txt, JSON Lines) carry
// Vary: Accept-Encoding and are gzipped when the request accepts gzip; the
// gzipped representation has its own ETag (suffix -gzip). Responses carry
// Content-Length, except /slow, which streams. HEAD gets the headers only.
package demo
