package audit

import "fmt"

// Check IDs (SPEC §7).
const (
	CanonicalMissing           = "canonical-missing"
	CanonicalMultiple          = "canonical-multiple"
	CanonicalRelative          = "canonical-relative"
	CanonicalNot200            = "canonical-not-200"
	CanonicalChain             = "canonical-chain"
	CanonicalOutsideHead       = "canonical-outside-head"
	OGURLMismatch              = "og-url-mismatch"
	JSONLDIDMismatch           = "jsonld-id-mismatch"
	JSONLDInvalid              = "jsonld-invalid"
	HreflangNotReciprocal      = "hreflang-not-reciprocal"
	HreflangNoSelf             = "hreflang-no-self"
	HreflangNoXDefault         = "hreflang-no-x-default"
	HreflangOnNonCanonical     = "hreflang-on-non-canonical"
	SitemapNonCanonical        = "sitemap-non-canonical"
	SitemapNoindex             = "sitemap-noindex"
	SitemapNot200              = "sitemap-not-200"
	RobotsBlocksDuplicate      = "robots-blocks-duplicate"
	PaginationCanonicalToFirst = "pagination-canonical-to-first"
	LinkToNonCanonical         = "link-to-non-canonical"
	TitleMissing               = "title-missing"
	TitleDuplicate             = "title-duplicate"
	DescriptionMissing         = "description-missing"
	DescriptionDuplicate       = "description-duplicate"
	OGImageRelative            = "og-image-relative"

	// SPEC §15.
	RobotsBlocked             = "robots-blocked"
	RobotsTxtInvalid          = "robots-txt-invalid"
	RobotsConflict            = "robots-conflict"
	CanonicalToNoindex        = "canonical-to-noindex"
	CanonicalToBlocked        = "canonical-to-blocked"
	HreflangInvalidCode       = "hreflang-invalid-code"
	HreflangDuplicateCode     = "hreflang-duplicate-code"
	HreflangToNon200          = "hreflang-to-non-200"
	HreflangToNonCanonical    = "hreflang-to-non-canonical"
	HreflangToNoindex         = "hreflang-to-noindex"
	LinkBroken                = "link-broken"
	LinkToRedirect            = "link-to-redirect"
	RedirectChain             = "redirect-chain"
	DuplicateWithoutCanonical = "duplicate-without-canonical"
	SitemapMissing            = "sitemap-missing"
	SitemapOrphan             = "sitemap-orphan"
	TitleLength               = "title-length"
	DescriptionLength         = "description-length"
	JSONLDRequired            = "jsonld-required"
	MixedScheme               = "mixed-scheme"

	// -compare (SPEC §15): what a release changes, per page.
	DiffStatus      = "diff-status"
	DiffCanonical   = "diff-canonical"
	DiffRobots      = "diff-robots"
	DiffTitle       = "diff-title"
	DiffDescription = "diff-description"
	DiffAlternates  = "diff-alternates"
	DiffJSONLDTypes = "diff-jsonld-types"
)

// The ranges title-length and description-length hold pages to, in
// characters (docs/audit.md gives the sources).
const (
	TitleMin, TitleMax             = 30, 60
	DescriptionMin, DescriptionMax = 70, 160
)

// Check describes one check.
type Check struct {
	ID       string
	Severity string
	Finds    string // what it finds, in a few words
}

// check is a row of the audit: the check, and the functions that run it.
// A check runs on each page (page), once the crawl is done (cross), or
// with -compare (diff); a few have two. checkdocs.go holds its doc. The
// functions report through their run's add, which knows the row: were
// they to look a severity up in checks, checks would refer to itself.
type check struct {
	Check
	page  func(*pageRun)  // on one HTML page, in a worker, after pageFacts
	cross func(*crossRun) // across the crawled pages, once the crawl is done
	diff  *diffOf         // -compare: what of a 200 HTML page to hold to production's
}

// diffOf is what a diff-* check compares: a text of each side's page.
type diffOf struct {
	what string
	text func(*crawler, *page) string
}

// checks lists every check in the order of SPEC §7, then §15, then
// -compare. Adding a check is a row here, its function, and its doc in
// checkdocs.go.
var checks = []check{
	{Check: Check{CanonicalMissing, Warning, "no canonical"}, page: canonicalMissing},
	{Check: Check{CanonicalMultiple, Error, "more than one canonical, or a Link header and a tag that disagree"}, page: canonicalMultiple},
	{Check: Check{CanonicalRelative, Error, "a relative canonical"}, page: canonicalRelative},
	{Check: Check{CanonicalNot200, Error, "the canonical target answers a redirect, 4xx or 5xx"}, page: canonicalNotHTTP, cross: canonicalNot200},
	{Check: Check{CanonicalChain, Warning, "the canonical target names yet another canonical"}, cross: canonicalChain},
	{Check: Check{CanonicalOutsideHead, Error, "a canonical in the body"}, page: canonicalOutsideHead},
	{Check: Check{OGURLMismatch, Warning, "og:url (or twitter:url) differs from the canonical"}, page: ogURLMismatch},
	{Check: Check{JSONLDIDMismatch, Warning, "a JSON-LD node's url/@id names another page than the canonical"}, page: jsonldIDMismatch},
	{Check: Check{JSONLDInvalid, Error, "an ld+json block that is not JSON, or has no @type/@graph"}, page: jsonldInvalid},
	{Check: Check{HreflangNotReciprocal, Error, "A names B as an alternate, B does not name A"}, cross: hreflangNotReciprocal},
	{Check: Check{HreflangNoSelf, Warning, "a page's alternates do not include itself"}, page: hreflangNoSelf},
	{Check: Check{HreflangNoXDefault, Warning, "alternates without x-default"}, page: hreflangNoXDefault},
	{Check: Check{HreflangOnNonCanonical, Error, "alternates on a page whose canonical is another address"}, page: hreflangOnNonCanonical},
	{Check: Check{SitemapNonCanonical, Error, "a sitemap URL whose page names another canonical"}, cross: sitemapNonCanonical},
	{Check: Check{SitemapNoindex, Error, "a sitemap URL that is noindex"}, cross: sitemapNoindex},
	{Check: Check{SitemapNot200, Error, "a sitemap URL that does not answer 200"}, cross: sitemapNot200},
	{Check: Check{RobotsBlocksDuplicate, Warning, "robots.txt disallows a URL whose canonical points elsewhere"}, cross: robotsBlocksDuplicate},
	{Check: Check{PaginationCanonicalToFirst, Warning, "page N of a series names page 1 as canonical"}, page: paginationToFirst},
	{Check: Check{LinkToNonCanonical, Warning, "an internal link points to a URL that canonicalizes elsewhere"}, cross: linkToNonCanonical},
	{Check: Check{TitleMissing, Error, "no title"}, page: titleMissing},
	{Check: Check{TitleDuplicate, Warning, "the same title as another page"}, cross: titleDuplicate},
	{Check: Check{DescriptionMissing, Warning, "no meta description"}, page: descriptionMissing},
	{Check: Check{DescriptionDuplicate, Warning, "the same meta description as another page"}, cross: descriptionDuplicate},
	{Check: Check{OGImageRelative, Error, "an og:image that is not absolute"}, page: ogImageRelative},

	{Check: Check{RobotsBlocked, Warning, "a linked or sitemap URL that robots.txt disallows for * or Googlebot"}, cross: robotsBlocked},
	{Check: Check{RobotsTxtInvalid, Error, "robots.txt not 200 text/plain, over 500 KiB, or a line that does not parse"}}, // reported as robots.txt is read (readRobots)
	{Check: Check{RobotsConflict, Warning, "robots meta and X-Robots-Tag disagree, or several robots metas"}, page: robotsConflict},
	{Check: Check{CanonicalToNoindex, Error, "the canonical target is noindex"}, cross: canonicalToNoindex},
	{Check: Check{CanonicalToBlocked, Error, "robots.txt disallows the canonical target"}, cross: canonicalToBlocked},
	{Check: Check{HreflangInvalidCode, Error, "an hreflang that is not ISO 639-1 [+ ISO 3166-1 region] nor x-default"}, page: hreflangInvalidCode},
	{Check: Check{HreflangDuplicateCode, Error, "two alternates of a page with the same code"}, page: hreflangDuplicateCode},
	{Check: Check{HreflangToNon200, Error, "an alternate target that redirects or errors"}, cross: hreflangToNon200},
	{Check: Check{HreflangToNonCanonical, Error, "an alternate target that names another canonical"}, cross: hreflangToNonCanonical},
	{Check: Check{HreflangToNoindex, Error, "an alternate target that is noindex"}, cross: hreflangToNoindex},
	{Check: Check{LinkBroken, Error, "an internal link to a 4xx or 5xx, or to a redirect to one"}, cross: linkBroken},
	{Check: Check{LinkToRedirect, Warning, "an internal link to a redirecting URL"}, cross: linkToRedirect},
	{Check: Check{RedirectChain, Warning, "a linked, canonical, alternate or sitemap URL that takes more than one hop to a 200"}, cross: redirectChain},
	{Check: Check{DuplicateWithoutCanonical, Warning, "pages with the same body text, neither naming the other as canonical"}, cross: duplicateWithoutCanonical},
	{Check: Check{SitemapMissing, Warning, "an indexable page that is not in the sitemap"}, cross: sitemapMissing},
	{Check: Check{SitemapOrphan, Warning, "a sitemap URL that no crawled page links to"}, cross: sitemapOrphan},
	{Check: Check{TitleLength, Warning, "a title shorter than 30 or longer than 60 characters"}, page: titleLength},
	{Check: Check{DescriptionLength, Warning, "a meta description shorter than 70 or longer than 160 characters"}, page: descriptionLength},
	{Check: Check{JSONLDRequired, Warning, "a JSON-LD node that lacks a property its rich result requires"}, page: jsonldRequired},
	{Check: Check{MixedScheme, Warning, "an http:// canonical, og:url, alternate or internal link on an https site"}, page: mixedScheme},

	{Check: Check{DiffStatus, Warning, "-compare: the page answers another status than production"}}, // reported by diff, before the other diff-* checks
	{Check: Check{DiffCanonical, Warning, "-compare: another canonical than production"}, diff: &diffOf{"canonical", (*crawler).canonText}},
	{Check: Check{DiffRobots, Warning, "-compare: other robots directives than production"}, diff: &diffOf{"robots", func(_ *crawler, p *page) string { return p.robots }}},
	{Check: Check{DiffTitle, Warning, "-compare: another title than production"}, diff: &diffOf{"title", func(_ *crawler, p *page) string { return fmt.Sprintf("%q", clip(p.title, 200)) }}},
	{Check: Check{DiffDescription, Warning, "-compare: another meta description than production"}, diff: &diffOf{"description", func(_ *crawler, p *page) string { return fmt.Sprintf("%q", clip(p.desc, 200)) }}},
	{Check: Check{DiffAlternates, Warning, "-compare: other hreflang alternates than production"}, diff: &diffOf{"alternates", (*crawler).altsText}},
	{Check: Check{DiffJSONLDTypes, Warning, "-compare: other JSON-LD types than production"}, diff: &diffOf{"JSON-LD types", func(_ *crawler, p *page) string { return typesText(p.ldTypes) }}},
}

// Checks lists every check in the order of SPEC §7, then §15.
func Checks() []Check {
	out := make([]Check, len(checks))
	for i, c := range checks {
		out[i] = c.Check
	}
	return out
}

func severity(id string) string {
	for _, c := range checks {
		if c.ID == id {
			return c.Severity
		}
	}
	return Error
}

// pageRun is what a page check reads: the page with the facts pageFacts
// filled in, what extract read, and the check running (add reports for it).
type pageRun struct {
	c         *crawler
	p         *page
	f         *facts
	linkCanon []string // the Link header's canonicals
	xRobots   []string // the X-Robots-Tag values
	res       *result
	check     *check
}

func (r *pageRun) add(detail string) {
	r.res.findings = append(r.res.findings, Finding{Check: r.check.ID, Severity: r.check.Severity, URL: r.c.site.url(r.p.key), Detail: detail})
}

// pageChecks fills in what the page's own checks and the cross-page checks
// read of it (pageFacts), then runs each page check. It runs in a worker.
func (c *crawler) pageChecks(p *page, f *facts, linkCanon, xRobots []string, res *result) {
	c.pageFacts(p, f, linkCanon, xRobots, res)
	r := &pageRun{c: c, p: p, f: f, linkCanon: linkCanon, xRobots: xRobots, res: res}
	for i := range checks {
		if checks[i].page != nil {
			r.check = &checks[i]
			checks[i].page(r)
		}
	}
}

// crossRun is what a cross-page check reads: the crawler, once the crawl
// is done, and the check running (add reports for it).
type crossRun struct {
	c        *crawler
	check    *check
	verdicts map[string]string // robots.txt: key → "" allowed, else why
}

func (r *crossRun) add(key, detail string) {
	r.c.findings = append(r.c.findings, Finding{Check: r.check.ID, Severity: r.check.Severity, URL: r.c.site.url(key), Detail: detail})
}

// crossChecks runs the checks between pages, once the crawl is done.
func (c *crawler) crossChecks() {
	r := &crossRun{c: c, verdicts: map[string]string{}}
	for i := range checks {
		if checks[i].cross != nil {
			r.check = &checks[i]
			checks[i].cross(r)
		}
	}
}
