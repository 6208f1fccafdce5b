package test

// The audit fixture: a small site with ONE planted problem per audit check
// (SPEC §7) and a set of clean pages. Every absolute URL in it names the
// public origin audOrigin, as a site behind headgate does; links are
// relative, so the same site can be crawled live (on the upstream's
// loopback address, with audOrigin as the config's base URL) and in
// process (on audOrigin itself).

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"
)

const audOrigin = "https://fixture.example"

// audPlanted names, per check, the pages that hold its planted problem:
// the URL each finding must name.
var audPlanted = map[string][]string{
	"canonical-missing":             {"/p/canonical-missing"},
	"canonical-multiple":            {"/p/canonical-multiple"},
	"canonical-relative":            {"/p/canonical-relative"},
	"canonical-not-200":             {"/p/canonical-not-200"},
	"canonical-chain":               {"/p/canonical-chain"},
	"canonical-outside-head":        {"/p/canonical-outside-head"},
	"og-url-mismatch":               {"/p/og-url-mismatch"},
	"jsonld-id-mismatch":            {"/p/jsonld-id-mismatch"},
	"jsonld-invalid":                {"/p/jsonld-invalid"},
	"hreflang-not-reciprocal":       {"/p/hreflang/en"},
	"hreflang-no-self":              {"/p/noself/en"},
	"hreflang-no-x-default":         {"/p/noxdefault/en"},
	"hreflang-on-non-canonical":     {"/p/hreflang-duplicate"},
	"sitemap-non-canonical":         {"/p/sitemap-duplicate"},
	"sitemap-noindex":               {"/p/sitemap-noindex"},
	"sitemap-not-200":               {"/p/sitemap-gone"},
	"robots-blocks-duplicate":       {"/p/blocked/print"},
	"pagination-canonical-to-first": {"/list?page=2"},
	"link-to-non-canonical":         {"/p/link-to-non-canonical"},
	"title-missing":                 {"/p/title-missing"},
	"title-duplicate":               {"/p/title-dup-1", "/p/title-dup-2"}, // one problem, found on both pages
	"description-missing":           {"/p/description-missing"},
	"description-duplicate":         {"/p/desc-dup-1", "/p/desc-dup-2"},
	"og-image-relative":             {"/p/og-image-relative"},

	// SPEC §15.
	"robots-blocked":              {"/p/blocked/secret", "/p/robots-blocked"}, // one blocked URL: in the sitemap, and linked
	"robots-txt-invalid":          {"/robots.txt"},
	"robots-conflict":             {"/p/robots-conflict"},
	"canonical-to-noindex":        {"/p/canonical-to-noindex"},
	"canonical-to-blocked":        {"/p/canonical-to-blocked"},
	"hreflang-invalid-code":       {"/p/hreflang-codes"},
	"hreflang-duplicate-code":     {"/p/hreflang-twice"},
	"hreflang-to-non-200":         {"/p/hreflang-gone"},
	"hreflang-to-non-canonical":   {"/p/hreflang-dupe"},
	"hreflang-to-noindex":         {"/p/hreflang-noindex"},
	"link-broken":                 {"/p/link-broken"},
	"link-to-redirect":            {"/p/link-to-redirect", "/p/redirect-chain"}, // a chain is a redirect too
	"redirect-chain":              {"/p/redirect-chain"},
	"duplicate-without-canonical": {"/p/same-text-1", "/p/same-text-2"},
	"sitemap-missing":             {"/p/sitemap-missing"},
	"sitemap-orphan":              {"/p/sitemap-orphan"},
	"title-length":                {"/p/title-length"},
	"description-length":          {"/p/description-length"},
	"jsonld-required":             {"/p/jsonld-required"},
	"mixed-scheme":                {"/p/mixed-scheme"},
}

// audClean are pages with nothing wrong: no finding may name them.
var audClean = []string{
	"/", "/clean/a", "/clean/b", "/clean/c", "/clean/en/page", "/clean/de/page", "/list",
	"/files/guide.pdf", "/p/duplicate", "/p/chain-middle", "/p/hreflang/de", "/p/noself/de", "/p/noxdefault/de",
}

// audStart are the planted pages no clean page links to (a link to a page
// that names another canonical is itself a finding): the test passes them
// as start URLs.
var audStart = []string{"/p/canonical-not-200", "/p/canonical-chain", "/p/hreflang-duplicate", "/p/blocked/print",
	"/p/canonical-to-noindex", "/p/canonical-to-blocked"}

// audIndexable are the indexable pages: the sitemap lists them all, or
// sitemap-missing would find them.
var audIndexable = []string{"/", "/clean/a", "/clean/b", "/clean/c", "/clean/en/page", "/clean/de/page", "/list",
	"/p/canonical-multiple", "/p/canonical-relative", "/p/canonical-outside-head", "/p/canonical-missing",
	"/p/og-url-mismatch", "/p/jsonld-id-mismatch", "/p/jsonld-invalid", "/p/hreflang/en", "/p/hreflang/de",
	"/p/noself/en", "/p/noself/de", "/p/noxdefault/en", "/p/noxdefault/de", "/p/link-to-non-canonical",
	"/p/title-missing", "/p/title-dup-1", "/p/title-dup-2", "/p/description-missing", "/p/desc-dup-1", "/p/desc-dup-2",
	"/p/og-image-relative",
	"/p/blocked/secret", "/p/robots-blocked", "/p/hreflang-codes", "/p/hreflang-twice", "/p/hreflang-gone", "/p/hreflang-dupe",
	"/p/hreflang-noindex", "/p/link-broken", "/p/link-to-redirect", "/p/redirect-chain", "/p/same-text-1", "/p/same-text-2",
	"/p/sitemap-orphan", "/p/title-length", "/p/description-length", "/p/jsonld-required", "/p/mixed-scheme"}

// audLinked are the pages / links to besides the clean ones.
var audLinked = []string{"/p/canonical-missing", "/p/canonical-multiple", "/p/canonical-relative", "/p/canonical-outside-head",
	"/p/og-url-mismatch", "/p/jsonld-id-mismatch", "/p/jsonld-invalid",
	"/p/hreflang/en", "/p/hreflang/de", "/p/noself/en", "/p/noself/de", "/p/noxdefault/en", "/p/noxdefault/de",
	"/p/link-to-non-canonical", "/p/title-missing", "/p/title-dup-1", "/p/title-dup-2",
	"/p/description-missing", "/p/desc-dup-1", "/p/desc-dup-2", "/p/og-image-relative",
	"/p/robots-blocked", "/p/robots-conflict", "/p/hreflang-codes", "/p/hreflang-twice", "/p/hreflang-gone", "/p/hreflang-dupe",
	"/p/hreflang-noindex", "/p/link-broken", "/p/link-to-redirect", "/p/redirect-chain", "/p/same-text-1", "/p/same-text-2",
	"/p/sitemap-missing", "/p/title-length", "/p/description-length", "/p/jsonld-required", "/p/mixed-scheme"}

type audResp struct {
	status int
	ctype  string
	header map[string]string
	body   string
}

// audHead is a clean head: a title and a description of its own, a
// canonical (when canonical is not "") and og:url to it.
func audHead(title, desc, canonical string) string {
	var b strings.Builder
	b.WriteString(`<meta charset="utf-8"><meta name="viewport" content="width=device-width">`)
	if title != "" {
		if utf8.RuneCountInString(title) < 30 { // the range of title-length
			title += " — headgate audit fixture"
		}
		b.WriteString("<title>" + title + "</title>")
	}
	if desc != "" {
		desc += audDescTail // the range of description-length
		b.WriteString(`<meta name="description" content="` + desc + `">`)
	}
	if canonical != "" {
		b.WriteString(`<link rel="canonical" href="` + audOrigin + canonical + `">`)
		b.WriteString(`<meta property="og:url" content="` + audOrigin + canonical + `">`)
	}
	b.WriteString(`<meta property="og:image" content="` + audOrigin + `/covers/site.png"><link rel="stylesheet" href="/style.css">`)
	return b.String()
}

// audSelf is the clean head of the page at path, its own canonical.
const audDescTail = " One page of the fixture site that the headgate audit crawls."

func audSelf(path string) string {
	return audHead("Fixture "+path, "What "+path+" is about.", path)
}

func audDoc(head, body string) audResp {
	return audResp{body: "<!DOCTYPE html>\n<html lang=\"en\"><head>" + head + "</head>\n<body>" + body + "</body></html>\n"}
}

func audAlternates(pairs ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(pairs); i += 2 {
		b.WriteString(`<link rel="alternate" hreflang="` + pairs[i] + `" href="` + audOrigin + pairs[i+1] + `">`)
	}
	return b.String()
}

func audLinks(paths ...string) string {
	var b strings.Builder
	b.WriteString("<nav>")
	for _, p := range paths {
		fmt.Fprintf(&b, `<a href="%s">%s</a> `, p, p)
	}
	b.WriteString("</nav>")
	return b.String()
}

func audSitemap(paths ...string) audResp {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for _, p := range paths {
		b.WriteString("<url><loc>" + audOrigin + p + "</loc></url>")
	}
	b.WriteString("</urlset>\n")
	return audResp{ctype: "application/xml", body: b.String()}
}

func audFixtureSite() map[string]audResp {
	ld := func(json string) string { return `<script type="application/ld+json">` + json + `</script>` }
	site := map[string]audResp{
		"/robots.txt": {ctype: "text/plain", body: "User-agent: *\nDisallow: /p/blocked/\nCrawl-delay 10\n\nSitemap: " + audOrigin + "/sitemap.xml\n"},
		"/sitemap.xml": {ctype: "application/xml", body: `<?xml version="1.0" encoding="UTF-8"?>` +
			`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>` + audOrigin + `/sitemaps/pages.xml</loc></sitemap></sitemapindex>`},
		"/sitemaps/pages.xml": audSitemap(append([]string{"/files/guide.pdf", "/p/sitemap-duplicate", "/p/sitemap-noindex", "/p/sitemap-gone"}, audIndexable...)...),

		// Clean pages.
		"/": audDoc(audSelf("/"), audLinks(append(append([]string{"/clean/a", "/clean/b", "/clean/c", "/clean/en/page", "/clean/de/page", "/list", "/files/guide.pdf"},
			audLinked...), "#main", "mailto:team@fixture.example", "https://elsewhere.example/")...)),
		"/clean/a": audDoc(audSelf("/clean/a"), audLinks("/", "/clean/b")),
		"/clean/b": audDoc(audSelf("/clean/b"), audLinks("/", "/clean/a")),
		"/clean/c": audDoc(audSelf("/clean/c")+
			ld(`{"@context":"https://schema.org","@graph":[{"@type":"Organization","@id":"`+audOrigin+`/#org","url":"`+audOrigin+`/"},`+
				`{"@type":"WebPage","@id":"`+audOrigin+`/clean/c#webpage","url":"`+audOrigin+`/clean/c"}]}`), audLinks("/")),
		"/clean/en/page": audDoc(audSelf("/clean/en/page")+audAlternates("en", "/clean/en/page", "de", "/clean/de/page", "x-default", "/clean/page"), audLinks("/", "/clean/de/page")),
		"/clean/de/page": audDoc(audHead("Fixture-Seite", "Worum es auf dieser Seite geht.", "/clean/de/page")+
			audAlternates("en", "/clean/en/page", "de", "/clean/de/page", "x-default", "/clean/page"), audLinks("/", "/clean/en/page")),
		"/clean/page":      {status: http.StatusFound, header: map[string]string{"Location": "/clean/en/page"}},
		"/list":            audDoc(audSelf("/list"), audLinks("/list?page=2")),
		"/files/guide.pdf": {ctype: "application/pdf", header: map[string]string{"Link": "<" + audOrigin + "/files/guide.pdf>; rel=\"canonical\""}, body: "%PDF-1.4\n%%EOF\n"},
		"/style.css":       {ctype: "text/css", body: "body{margin:0}"},

		// One planted problem each.
		"/p/canonical-missing":  audDoc(audHead("Fixture canonical missing", "A page without a canonical.", ""), ""),
		"/p/canonical-multiple": audDoc(audSelf("/p/canonical-multiple")+`<link rel="canonical" href="`+audOrigin+`/clean/a">`, ""),
		"/p/canonical-relative": audDoc(audHead("Fixture relative canonical", "A page whose canonical is relative.", "")+
			`<link rel="canonical" href="/p/canonical-relative">`, ""),
		"/p/canonical-not-200": audDoc(audHead("Fixture canonical 404", "A page whose canonical answers 404.", "/p/gone"), ""),
		"/p/canonical-chain":   audDoc(audHead("Fixture canonical chain", "A page whose canonical names another.", "/p/chain-middle"), ""),
		"/p/chain-middle":      audDoc(audHead("Fixture chain middle", "The middle of a canonical chain.", "/clean/b"), ""),
		"/p/canonical-outside-head": {body: "<!DOCTYPE html>\n<html><head><title>Fixture canonical in the body of a page</title>" +
			`<meta name="description" content="A page whose banner ends the head early.` + audDescTail + `">` +
			`<div class="banner">Beta!</div>` +
			`<link rel="canonical" href="` + audOrigin + `/p/canonical-outside-head"></head><body></body></html>`},
		"/p/og-url-mismatch": audDoc(audHead("Fixture og:url", "A page whose og:url leaked the dev origin.", "")+
			`<link rel="canonical" href="`+audOrigin+`/p/og-url-mismatch"><meta property="og:url" content="http://localhost:3000/p/og-url-mismatch">`, ""),
		"/p/jsonld-id-mismatch": audDoc(audSelf("/p/jsonld-id-mismatch")+
			ld(`{"@context":"https://schema.org","@type":"WebPage","@id":"`+audOrigin+`/clean/a#webpage"}`), ""),
		"/p/jsonld-invalid": audDoc(audSelf("/p/jsonld-invalid")+ld(`{"@context":"https://schema.org","@type":"Article","headline":"x",}`), ""),
		"/p/hreflang/en":    audDoc(audSelf("/p/hreflang/en")+audAlternates("en", "/p/hreflang/en", "de", "/p/hreflang/de", "x-default", "/p/hreflang"), ""),
		"/p/hreflang/de":    audDoc(audSelf("/p/hreflang/de")+audAlternates("de", "/p/hreflang/de", "x-default", "/p/hreflang"), ""),
		"/p/hreflang":       {status: http.StatusFound, header: map[string]string{"Location": "/p/hreflang/en"}},
		"/p/noself/en":      audDoc(audSelf("/p/noself/en")+audAlternates("de", "/p/noself/de", "x-default", "/p/noself/de"), ""),
		"/p/noself/de":      audDoc(audSelf("/p/noself/de")+audAlternates("en", "/p/noself/en", "de", "/p/noself/de", "x-default", "/p/noself/de"), ""),
		"/p/noxdefault/en":  audDoc(audSelf("/p/noxdefault/en")+audAlternates("en", "/p/noxdefault/en", "de", "/p/noxdefault/de"), ""),
		"/p/noxdefault/de":  audDoc(audSelf("/p/noxdefault/de")+audAlternates("en", "/p/noxdefault/en", "de", "/p/noxdefault/de", "x-default", "/p/noxdefault/en"), ""),
		"/p/hreflang-duplicate": audDoc(audHead("Fixture hreflang duplicate", "A duplicate with alternates.", "/clean/a")+
			audAlternates("en", "/p/hreflang-duplicate", "x-default", "/p/hreflang-duplicate"), ""),
		"/p/sitemap-duplicate":     audDoc(audHead("Fixture sitemap duplicate", "A duplicate the sitemap lists.", "/clean/b"), ""),
		"/p/sitemap-noindex":       audDoc(audSelf("/p/sitemap-noindex")+`<meta name="robots" content="noindex, follow">`, ""),
		"/p/blocked/print":         audDoc(audHead("Fixture print view", "A print view robots.txt hides.", "/clean/c"), ""),
		"/list?page=2":             audDoc(audHead("Fixture list, page 2", "The second page of the list.", "/list"), audLinks("/list")),
		"/p/link-to-non-canonical": audDoc(audSelf("/p/link-to-non-canonical"), audLinks("/p/duplicate")),
		"/p/duplicate":             audDoc(audHead("Fixture duplicate", "A copy of /clean/a.", "/clean/a"), ""),
		"/p/title-missing":         audDoc(audHead("", "A page without a title.", "/p/title-missing"), ""),
		"/p/title-dup-1":           audDoc(audHead("Fixture twin title", "The first twin.", "/p/title-dup-1"), ""),
		"/p/title-dup-2":           audDoc(audHead("Fixture twin title", "The second twin.", "/p/title-dup-2"), ""),
		"/p/description-missing":   audDoc(audHead("Fixture no description", "", "/p/description-missing"), ""),
		"/p/desc-dup-1":            audDoc(audHead("Fixture first desc twin", "Twin words.", "/p/desc-dup-1"), ""),
		"/p/desc-dup-2":            audDoc(audHead("Fixture second desc twin", "Twin words.", "/p/desc-dup-2"), ""),
		"/p/og-image-relative": audDoc(audHead("Fixture relative og:image", "A page whose og:image is relative.", "/p/og-image-relative")+
			`<meta property="og:image" content="/covers/relative.png">`, ""),

		// SPEC §15, one planted problem each.
		"/p/robots-blocked":       audDoc(audSelf("/p/robots-blocked"), audLinks("/p/blocked/secret")),
		"/p/blocked/secret":       audDoc(audSelf("/p/blocked/secret"), ""),
		"/p/robots-conflict":      {header: map[string]string{"X-Robots-Tag": "noindex"}, body: audDoc(audSelf("/p/robots-conflict")+`<meta name="robots" content="index, follow">`, "").body},
		"/p/canonical-to-noindex": audDoc(audHead("Fixture canonical to noindex", "A page whose canonical is noindex.", "/p/sitemap-noindex"), ""),
		"/p/canonical-to-blocked": audDoc(audHead("Fixture canonical to blocked", "A page whose canonical robots.txt hides.", "/p/blocked/secret"), ""),
		"/p/hreflang-codes": audDoc(audSelf("/p/hreflang-codes")+
			audAlternates("en", "/p/hreflang-codes", "en_US", "/p/hreflang-codes", "english", "/p/hreflang-codes", "zz-ZZ", "/p/hreflang-codes", "x-default", "/p/hreflang-codes"), ""),
		"/p/hreflang-twice":   audDoc(audSelf("/p/hreflang-twice")+audAlternates("en", "/p/hreflang-twice", "de", "/p/hreflang-twice", "DE", "/p/hreflang-twice", "x-default", "/p/hreflang-twice"), ""),
		"/p/hreflang-gone":    audDoc(audSelf("/p/hreflang-gone")+audAlternates("en", "/p/hreflang-gone", "de", "/p/hreflang-gone/de", "x-default", "/p/hreflang-gone"), ""),
		"/p/hreflang-dupe":    audDoc(audSelf("/p/hreflang-dupe")+audAlternates("en", "/p/hreflang-dupe", "de", "/p/duplicate", "x-default", "/p/hreflang-dupe"), ""),
		"/p/hreflang-noindex": audDoc(audSelf("/p/hreflang-noindex")+audAlternates("en", "/p/hreflang-noindex", "de", "/p/sitemap-noindex", "x-default", "/p/hreflang-noindex"), ""),
		"/p/link-broken":      audDoc(audSelf("/p/link-broken"), audLinks("/p/gone")),
		"/p/link-to-redirect": audDoc(audSelf("/p/link-to-redirect"), audLinks("/clean/page")),
		"/p/redirect-chain":   audDoc(audSelf("/p/redirect-chain"), audLinks("/p/hop-1")),
		"/p/hop-1":            {status: http.StatusMovedPermanently, header: map[string]string{"Location": "/p/hop-2"}},
		"/p/hop-2":            {status: http.StatusMovedPermanently, header: map[string]string{"Location": "/clean/b"}},
		"/p/same-text-1":      audDoc(audSelf("/p/same-text-1"), "<main><p>The same words,   twice.</p></main>"),
		"/p/same-text-2":      audDoc(audSelf("/p/same-text-2"), "<main>\n<p>The same words, twice.</p>\n</main>"),
		"/p/sitemap-missing":  audDoc(audSelf("/p/sitemap-missing"), ""),
		"/p/sitemap-orphan":   audDoc(audSelf("/p/sitemap-orphan"), audLinks("/", "/clean/c")),
		"/p/title-length": audDoc(`<meta charset="utf-8"><title>Short</title><meta name="description" content="A page whose title is short.`+audDescTail+`">`+
			`<link rel="canonical" href="`+audOrigin+`/p/title-length">`, ""),
		"/p/description-length": audDoc(`<meta charset="utf-8"><title>Fixture with a description that is too short</title><meta name="description" content="Too short.">`+
			`<link rel="canonical" href="`+audOrigin+`/p/description-length">`, ""),
		"/p/jsonld-required": audDoc(audSelf("/p/jsonld-required")+ld(`{"@context":"https://schema.org","@type":"Product","name":"Kettle"}`), ""),
		"/p/mixed-scheme":    audDoc(audSelf("/p/mixed-scheme"), `<a href="http://fixture.example/clean/a">over http</a>`),
	}
	return site
}

// audFixture serves the fixture; anything else is a 404 page.
func audFixture() http.Handler { return audHandler(audFixtureSite()) }

// audHandler serves a site of canned answers; anything else is a 404 page.
func audHandler(site map[string]audResp) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, ok := site[r.URL.RequestURI()]
		if !ok {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, "<!DOCTYPE html><title>Not found</title><p>Not found.")
			return
		}
		ct := res.ctype
		if ct == "" {
			ct = "text/html; charset=utf-8"
		}
		w.Header().Set("Content-Type", ct)
		for k, v := range res.header {
			w.Header().Set(k, v)
		}
		if res.status != 0 {
			w.WriteHeader(res.status)
		}
		io.WriteString(w, res.body)
	})
}
