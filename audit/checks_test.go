package audit

import (
	"flag"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

type checkCase struct {
	name  string
	check string
	site  map[string]resp
	start []string
	want  []string // paths of the pages that hold a finding of check
}

// ogHead is a clean head plus og/twitter tags.
func withHead(path, extra string) resp { return doc(clean(path)+extra, "") }

// cutInTitle is a page whose 5 MiB (DefaultMaxBytes) end n characters
// into its <title>, which goes on after them.
func cutInTitle(n int) string {
	start := "<!doctype html><html><head>"
	meta := `<meta name="x" content="y">`
	pad := DefaultMaxBytes - len(start) - len("<title>") - n
	fill := strings.Repeat(meta, pad/len(meta)) + strings.Repeat(" ", pad%len(meta))
	return start + fill + "<title>" + strings.Repeat("t", n+500) + "</title></head><body></body></html>"
}

const ldScript = `<script type="application/ld+json">`

var checkCases = []checkCase{
	// canonical-missing
	{"no canonical", CanonicalMissing, map[string]resp{
		"/a": doc(`<title>A</title><meta name="description" content="a">`, ""),
	}, []string{"/a"}, []string{"/a"}},
	{"a head too long to read to its end", CanonicalMissing, map[string]resp{
		"/a": doc(`<title>A</title>`+strings.Repeat(`<meta name="x" content="y">`, maxPrefix/27+10)+canon("/a"), ""),
	}, []string{"/a"}, nil}, // not known to be missing: the page's note says where reading stopped
	{"canonical only in a Link header", CanonicalMissing, map[string]resp{
		"/a": {header: map[string]string{"Link": `<{origin}/a>; rel="canonical"`}, body: "<title>A</title>"},
	}, []string{"/a"}, nil},
	{"canonical tag", CanonicalMissing, map[string]resp{"/a": withHead("/a", "")}, []string{"/a"}, nil},
	{"non-HTML needs no canonical", CanonicalMissing, map[string]resp{"/a.pdf": text("application/pdf", "%PDF-1.4")}, []string{"/a.pdf"}, nil},
	{"a noindex page needs no canonical (meta)", CanonicalMissing, map[string]resp{
		"/a?action=edit": doc(`<title>A</title><meta name="robots" content="noindex,nofollow">`, ""),
	}, []string{"/a?action=edit"}, nil},
	{"a noindex page needs no canonical (googlebot meta)", CanonicalMissing, map[string]resp{
		"/a": doc(`<title>A</title><meta name="googlebot" content="noindex">`, ""),
	}, []string{"/a"}, nil},
	{"a noindex page needs no canonical (X-Robots-Tag)", CanonicalMissing, map[string]resp{
		"/a": {header: map[string]string{"X-Robots-Tag": "noindex"}, body: "<title>A</title>"},
	}, []string{"/a"}, nil},
	{"index, follow still needs one", CanonicalMissing, map[string]resp{
		"/a": {header: map[string]string{"X-Robots-Tag": "noarchive"}, body: `<title>A</title><meta name="robots" content="index, follow">`},
	}, []string{"/a"}, []string{"/a"}},

	// canonical-multiple
	{"two canonical tags", CanonicalMultiple, map[string]resp{
		"/a": doc(clean("/a")+canon("/b"), ""), "/b": withHead("/b", ""),
	}, []string{"/a"}, []string{"/a"}},
	{"Link header disagrees with the tag", CanonicalMultiple, map[string]resp{
		"/a": {header: map[string]string{"Link": `<{origin}/b>; rel="canonical"`}, body: doc(clean("/a"), "").body},
		"/b": withHead("/b", ""),
	}, []string{"/a"}, []string{"/a"}},
	{"Link header agrees with the tag", CanonicalMultiple, map[string]resp{
		"/a": {header: map[string]string{"Link": `<{origin}/style.css>; rel=preload, <{origin}/a>; rel="canonical"`}, body: doc(clean("/a"), "").body},
	}, []string{"/a"}, nil},

	// canonical-relative
	{"relative canonical", CanonicalRelative, map[string]resp{
		"/a": doc(`<title>A</title><link rel="canonical" href="/a">`, ""),
	}, []string{"/a"}, []string{"/a"}},
	{"scheme-relative canonical", CanonicalRelative, map[string]resp{
		"/a": doc(`<title>A</title><link rel="canonical" href="//example.com/a">`, ""),
	}, []string{"/a"}, []string{"/a"}},
	{"relative canonical in a Link header", CanonicalRelative, map[string]resp{
		"/a.pdf": {ctype: "application/pdf", header: map[string]string{"Link": `</a.pdf>; rel=canonical`}, body: "%PDF"},
	}, []string{"/a.pdf"}, []string{"/a.pdf"}},
	{"absolute canonical", CanonicalRelative, map[string]resp{"/a": withHead("/a", "")}, []string{"/a"}, nil},

	// canonical-not-200
	{"canonical to a 404", CanonicalNot200, map[string]resp{
		"/a": doc(`<title>A</title>`+canon("/gone"), ""),
	}, []string{"/a"}, []string{"/a"}},
	{"canonical to a redirect", CanonicalNot200, map[string]resp{
		"/a": doc(`<title>A</title>`+canon("/moved"), ""), "/moved": redirect(301, "/b"), "/b": withHead("/b", ""),
	}, []string{"/a"}, []string{"/a"}},
	{"javascript: canonical", CanonicalNot200, map[string]resp{
		"/a": doc(`<title>A</title><link rel="canonical" href="javascript:alert(1)">`, ""),
	}, []string{"/a"}, []string{"/a"}},
	{"canonical to a 200", CanonicalNot200, map[string]resp{
		"/a": doc(`<title>A</title>`+canon("/b"), ""), "/b": withHead("/b", ""),
	}, []string{"/a"}, nil},

	// canonical-chain
	{"canonical names a page with another canonical", CanonicalChain, map[string]resp{
		"/a": doc(`<title>A</title>`+canon("/b"), ""), "/b": doc(`<title>B</title>`+canon("/c"), ""), "/c": withHead("/c", ""),
	}, []string{"/a"}, []string{"/a"}},
	{"canonical names its own original", CanonicalChain, map[string]resp{
		"/a": doc(`<title>A</title>`+canon("/b"), ""), "/b": withHead("/b", ""),
	}, []string{"/a"}, nil},

	// canonical-outside-head
	{"a div ends the head", CanonicalOutsideHead, map[string]resp{
		"/a": {body: `<!doctype html><html><head><title>A</title><div class="banner">Beta!</div>` + canon("/a") + `</head><body></body></html>`},
	}, []string{"/a"}, []string{"/a"}},
	{"text ends the head", CanonicalOutsideHead, map[string]resp{
		"/a": {body: `<html><head><title>A</title>Hello` + canon("/a") + `</head><body></body></html>`},
	}, []string{"/a"}, []string{"/a"}},
	{"canonical in the body", CanonicalOutsideHead, map[string]resp{
		"/a": doc(`<title>A</title>`, `<p>text</p>`+canon("/a")),
	}, []string{"/a"}, []string{"/a"}},
	{"canonical after </head> goes back into the head", CanonicalOutsideHead, map[string]resp{
		"/a": {body: `<!doctype html><html><head><title>A</title></head>` + "\n" + canon("/a") + "\n<body></body></html>"},
	}, []string{"/a"}, nil},
	{"template and noscript are not the head", CanonicalOutsideHead, map[string]resp{
		"/a": doc(clean("/a")+`<noscript><link rel="canonical" href="/noscript"></noscript>`,
			`<template><link rel="canonical" href="/template"></template>`),
	}, []string{"/a"}, nil},

	// og-url-mismatch
	{"og:url names another page", OGURLMismatch, map[string]resp{
		"/a": withHead("/a", `<meta property="og:url" content="http://localhost:3000/a">`),
	}, []string{"/a"}, []string{"/a"}},
	{"twitter:url names another page", OGURLMismatch, map[string]resp{
		"/a": withHead("/a", `<meta name="twitter:url" content="{origin}/b">`),
	}, []string{"/a"}, []string{"/a"}},
	{"og:url is the canonical", OGURLMismatch, map[string]resp{
		"/a": withHead("/a", `<meta property="og:url" content="{origin}/a"><meta name="twitter:url" content="{origin}/a#top">`),
	}, []string{"/a"}, nil},

	// jsonld-id-mismatch
	{"WebPage @id names another page", JSONLDIDMismatch, map[string]resp{
		"/a": withHead("/a", ldScript+`{"@context":"https://schema.org","@type":"WebPage","@id":"{origin}/b#webpage"}</script>`),
	}, []string{"/a"}, []string{"/a"}},
	{"Article url in a @graph names another page", JSONLDIDMismatch, map[string]resp{
		"/a": withHead("/a", ldScript+`{"@context":"https://schema.org","@graph":[{"@type":"Organization","url":"{origin}/"},{"@type":"Article","url":"{origin}/b"}]}</script>`),
	}, []string{"/a"}, []string{"/a"}},
	{"mainEntityOfPage names another page", JSONLDIDMismatch, map[string]resp{
		"/a": withHead("/a", ldScript+`{"@context":"https://schema.org","@type":"Thing","mainEntityOfPage":{"@id":"{origin}/b"}}</script>`),
	}, []string{"/a"}, []string{"/a"}},
	{"page nodes name the canonical, site nodes the site", JSONLDIDMismatch, map[string]resp{
		"/a": withHead("/a", ldScript+`[{"@context":"https://schema.org","@type":"Organization","@id":"{origin}/#org","url":"{origin}/"},`+
			`{"@context":"https://schema.org","@type":["Article"],"@id":"{origin}/a#article","url":"/a"}]</script>`),
	}, []string{"/a"}, nil},
	{"a blank node or a urn names no page", JSONLDIDMismatch, map[string]resp{
		"/a": withHead("/a", ldScript+`[{"@context":"https://schema.org","@type":"WebPage","@id":"_:b0"},`+
			`{"@context":"https://schema.org","@type":"Article","@id":"urn:uuid:6e8bc430-9c3a-11d9-9669-0800200c9a66"}]</script>`),
	}, []string{"/a"}, nil},

	// jsonld-invalid
	{"ld+json that is not JSON", JSONLDInvalid, map[string]resp{
		"/a": withHead("/a", ldScript+`{"@context":"https://schema.org","@type":"Article",}</script>`),
	}, []string{"/a"}, []string{"/a"}},
	{"ld+json without @type or @graph", JSONLDInvalid, map[string]resp{
		"/a": doc(clean("/a"), ldScript+`{"@context":"https://schema.org","name":"x"}</script>`),
	}, []string{"/a"}, []string{"/a"}},
	{"empty ld+json", JSONLDInvalid, map[string]resp{
		"/a": withHead("/a", ldScript+`</script>`),
	}, []string{"/a"}, []string{"/a"}},
	{"valid ld+json", JSONLDInvalid, map[string]resp{
		"/a": doc(clean("/a")+ldScript+`{"@context":"https://schema.org","@graph":[{"@type":"WebSite","url":"{origin}/"}]}</script>`,
			`<script type="application/json">{not ld</script>`+ldScript+`{"@type":"Thing"}</script>`),
	}, []string{"/a"}, nil},

	// hreflang-not-reciprocal
	{"alternate does not name it back", HreflangNotReciprocal, map[string]resp{
		"/en": withHead("/en", alts("en", "/en", "de", "/de", "x-default", "/lang")),
		"/de": withHead("/de", alts("de", "/de", "x-default", "/lang")),
	}, []string{"/en"}, []string{"/en"}},
	{"alternate answers 404: hreflang-to-non-200, not this", HreflangNotReciprocal, map[string]resp{
		"/en": withHead("/en", alts("en", "/en", "de", "/de", "x-default", "/en")),
	}, []string{"/en"}, nil},
	{"alternates name each other; x-default redirects", HreflangNotReciprocal, map[string]resp{
		"/en":   withHead("/en", alts("en", "/en", "de", "/de", "x-default", "/lang")),
		"/de":   withHead("/de", alts("en", "/en", "de", "/de", "x-default", "/lang")),
		"/lang": redirect(302, "/en"),
	}, []string{"/en"}, nil},

	// hreflang-no-self
	{"alternates without the page", HreflangNoSelf, map[string]resp{
		"/en": withHead("/en", alts("de", "/de", "x-default", "/de")),
		"/de": withHead("/de", alts("en", "/en", "de", "/de", "x-default", "/de")),
	}, []string{"/en"}, []string{"/en"}},
	{"alternates with the page", HreflangNoSelf, map[string]resp{
		"/en": withHead("/en", alts("en", "/en", "x-default", "/en")),
	}, []string{"/en"}, nil},

	// hreflang-no-x-default
	{"alternates without x-default", HreflangNoXDefault, map[string]resp{
		"/en": withHead("/en", alts("en", "/en", "de", "/de")),
		"/de": withHead("/de", alts("en", "/en", "de", "/de", "x-default", "/en")),
	}, []string{"/en"}, []string{"/en"}},
	{"alternates with x-default", HreflangNoXDefault, map[string]resp{
		"/en": withHead("/en", alts("en", "/en", "X-Default", "/en")),
	}, []string{"/en"}, nil},

	// hreflang-on-non-canonical
	{"alternates on a duplicate", HreflangOnNonCanonical, map[string]resp{
		"/a": doc(`<title>A</title>`+canon("/b")+alts("en", "/a", "x-default", "/a"), ""),
		"/b": withHead("/b", ""),
	}, []string{"/a"}, []string{"/a"}},
	{"alternates on a canonical page", HreflangOnNonCanonical, map[string]resp{
		"/a": withHead("/a", alts("en", "/a", "x-default", "/a")),
	}, []string{"/a"}, nil},

	// sitemap-non-canonical
	{"sitemap lists a duplicate", SitemapNonCanonical, map[string]resp{
		"/sitemap.xml": sitemapOf("/a", "/b"),
		"/a":           doc(`<title>A</title>`+canon("/b"), ""),
		"/b":           withHead("/b", ""),
	}, nil, []string{"/a"}},
	{"sitemap lists a PDF whose Link header names another", SitemapNonCanonical, map[string]resp{
		"/sitemap.xml": sitemapOf("/a.pdf"),
		"/a.pdf":       {ctype: "application/pdf", header: map[string]string{"Link": `<{origin}/b.pdf>; rel="canonical"`}, body: "%PDF"},
		"/b.pdf":       text("application/pdf", "%PDF"),
	}, nil, []string{"/a.pdf"}},
	{"sitemap lists canonical pages", SitemapNonCanonical, map[string]resp{
		"/sitemap.xml": sitemapOf("/a", "/b"),
		"/a":           withHead("/a", ""),
		"/b":           doc(`<title>B</title>`, ""), // no canonical: its own
	}, nil, nil},

	// sitemap-noindex
	{"sitemap lists a noindex page", SitemapNoindex, map[string]resp{
		"/sitemap.xml": sitemapOf("/a", "/b", "/c"),
		"/a":           withHead("/a", `<meta name="robots" content="noindex, follow">`),
		"/b":           {header: map[string]string{"X-Robots-Tag": "noarchive, noindex"}, body: doc(clean("/b"), "").body},
		"/c":           {header: map[string]string{"X-Robots-Tag": "googlebot: none"}, body: doc(clean("/c"), "").body},
	}, nil, []string{"/a", "/b", "/c"}},
	{"sitemap lists indexable pages", SitemapNoindex, map[string]resp{
		"/sitemap.xml": sitemapOf("/a", "/b"),
		"/a":           withHead("/a", `<meta name="robots" content="index, follow, max-image-preview:large">`),
		"/b":           {header: map[string]string{"X-Robots-Tag": "unavailable_after: 2030-01-01"}, body: doc(clean("/b"), `<meta name="robots" content="noindex">`).body},
	}, nil, nil},

	// sitemap-not-200
	{"sitemap lists a 404 and a redirect", SitemapNot200, map[string]resp{
		"/sitemap.xml": sitemapOf("/gone", "/moved", "/a"),
		"/moved":       redirect(301, "/a"),
		"/a":           withHead("/a", ""),
	}, nil, []string{"/gone", "/moved"}},
	{"sitemap index part lists a 404", SitemapNot200, map[string]resp{
		"/sitemap.xml":   text("application/xml", `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>{origin}/sitemap-1.xml</loc></sitemap></sitemapindex>`),
		"/sitemap-1.xml": sitemapOf("/gone"),
	}, nil, []string{"/gone"}},
	{"sitemap from robots.txt lists 200s", SitemapNot200, map[string]resp{
		"/robots.txt":     text("text/plain", "User-agent: *\nDisallow:\n\nSitemap: {origin}/maps/pages.xml\n"),
		"/maps/pages.xml": sitemapOf("/a"),
		"/a":              withHead("/a", ""),
	}, nil, nil},

	// robots-blocks-duplicate
	{"robots.txt hides a duplicate's canonical", RobotsBlocksDuplicate, map[string]resp{
		"/robots.txt": text("text/plain", "User-agent: *\nDisallow: /print/\n"),
		"/print/a":    doc(`<title>A</title>`+canon("/a"), ""),
		"/a":          withHead("/a", ""),
	}, []string{"/print/a"}, []string{"/print/a"}},
	{"robots.txt allows the duplicate", RobotsBlocksDuplicate, map[string]resp{
		"/robots.txt": text("text/plain", "User-agent: googlebot\nDisallow: /print/\nAllow: /print/a$\n\nUser-agent: *\nDisallow: /print/\nAllow: /print/a$\n"),
		"/print/a":    doc(`<title>A</title>`+canon("/a"), ""),
		"/a":          withHead("/a", ""),
	}, []string{"/print/a"}, nil},
	{"robots.txt hides a duplicate's canonical from Googlebot only", RobotsBlocksDuplicate, map[string]resp{
		"/robots.txt": text("text/plain", "User-agent: googlebot\nDisallow: /print/\n\nUser-agent: *\nAllow: /\n"),
		"/print/a":    doc(`<title>A</title>`+canon("/a"), ""),
		"/a":          withHead("/a", ""),
	}, []string{"/print/a"}, []string{"/print/a"}},
	{"robots.txt blocks a canonical page", RobotsBlocksDuplicate, map[string]resp{
		"/robots.txt": text("text/plain", "User-agent: *\nDisallow: /\n"),
		"/a":          withHead("/a", ""),
	}, []string{"/a"}, nil},

	// pagination-canonical-to-first
	{"?page=2 names page 1", PaginationCanonicalToFirst, map[string]resp{
		"/list?page=2": doc(`<title>List 2</title>`+canon("/list"), ""),
		"/list":        withHead("/list", ""),
	}, []string{"/list?page=2"}, []string{"/list?page=2"}},
	{"/page/3/ names page 1", PaginationCanonicalToFirst, map[string]resp{
		"/blog/page/3/": doc(`<title>Blog 3</title>`+canon("/blog/"), ""),
		"/blog/":        withHead("/blog/", ""),
	}, []string{"/blog/page/3/"}, []string{"/blog/page/3/"}},
	{"?page=2 is its own canonical", PaginationCanonicalToFirst, map[string]resp{
		"/list?page=2": withHead("/list?page=2", ""),
		"/list?id=7":   doc(`<title>Item</title>`+canon("/list"), ""), // a duplicate, not a page of a series
		"/list":        withHead("/list", ""),
	}, []string{"/list?page=2", "/list?id=7"}, nil},

	// link-to-non-canonical
	{"a link to a duplicate", LinkToNonCanonical, map[string]resp{
		"/":    doc(clean("/"), `<a href="/dup">dup</a>`),
		"/dup": doc(`<title>Dup</title>`+canon("/b"), ""),
		"/b":   withHead("/b", ""),
	}, nil, []string{"/"}},
	{"links to canonical pages and to page 2 of a series", LinkToNonCanonical, map[string]resp{
		"/":            doc(clean("/"), `<a href="/b">b</a> <a href="/list?page=2">2</a> <a href="#top">top</a>`),
		"/b":           withHead("/b", ""),
		"/list?page=2": doc(`<title>List 2</title>`+canon("/list"), ""),
		"/list":        withHead("/list", ""),
	}, nil, nil},

	// title-missing
	{"no title", TitleMissing, map[string]resp{
		"/a": doc(`<meta name="description" content="a">`+canon("/a"), ""),
		"/b": doc(`<title>  </title>`+canon("/b"), ""),
	}, []string{"/a", "/b"}, []string{"/a", "/b"}},
	{"a title", TitleMissing, map[string]resp{"/a": withHead("/a", "")}, []string{"/a"}, nil},

	// title-duplicate
	{"two pages, one title", TitleDuplicate, map[string]resp{
		"/a": doc(`<title>Same</title>`+canon("/a"), ""),
		"/b": doc(`<title> Same </title>`+canon("/b"), ""),
	}, []string{"/a", "/b"}, []string{"/a", "/b"}},
	{"a duplicate, a noindex page and a translation share a title", TitleDuplicate, map[string]resp{
		"/a":    doc(`<title>Same</title>`+canon("/a")+alts("en", "/a", "de", "/de/a", "x-default", "/a"), ""),
		"/dup":  doc(`<title>Same</title>`+canon("/a"), ""),
		"/n":    doc(`<title>Same</title><meta name="robots" content="noindex">`, ""),
		"/de/a": doc(`<title>Same</title>`+canon("/de/a")+alts("en", "/a", "de", "/de/a", "x-default", "/a"), ""),
	}, []string{"/a", "/dup", "/n", "/de/a"}, nil},

	// description-missing
	{"no description", DescriptionMissing, map[string]resp{
		"/a": doc(`<title>A</title>`+canon("/a"), ""),
		"/b": doc(`<title>B</title><meta name="description" content=" ">`+canon("/b"), ""),
	}, []string{"/a", "/b"}, []string{"/a", "/b"}},
	{"description only in the body", DescriptionMissing, map[string]resp{
		"/a": doc(`<title>A</title>`+canon("/a"), `<meta name="description" content="late">`),
	}, []string{"/a"}, []string{"/a"}},
	{"noindex pages and duplicates need none", DescriptionMissing, map[string]resp{
		"/a": doc(`<title>A</title><meta name="robots" content="noindex">`, ""),
		"/b": doc(`<title>B</title>`+canon("/c"), ""),
		"/c": withHead("/c", ""),
	}, []string{"/a", "/b"}, nil},

	// description-duplicate
	{"two pages, one description", DescriptionDuplicate, map[string]resp{
		"/a": doc(`<title>A</title><meta name="description" content="Same words">`+canon("/a"), ""),
		"/b": doc(`<title>B</title><meta name="description" content="Same  words">`+canon("/b"), ""),
	}, []string{"/a", "/b"}, []string{"/a", "/b"}},
	{"descriptions of their own", DescriptionDuplicate, map[string]resp{
		"/a": withHead("/a", ""), "/b": withHead("/b", ""),
	}, []string{"/a", "/b"}, nil},

	// og-image-relative
	{"relative og:image", OGImageRelative, map[string]resp{
		"/a": withHead("/a", `<meta property="og:image" content="/covers/a.png">`),
	}, []string{"/a"}, []string{"/a"}},
	{"relative twitter:image", OGImageRelative, map[string]resp{
		"/a": withHead("/a", `<meta name="twitter:image" content="covers/a.png">`),
	}, []string{"/a"}, []string{"/a"}},
	{"absolute og:image", OGImageRelative, map[string]resp{
		"/a": withHead("/a", `<meta property="og:image" content="https://cdn.example/a.png"><meta property="og:image:width" content="1200">`),
	}, []string{"/a"}, nil},

	// SPEC §15.
	{"a link robots.txt disallows", RobotsBlocked, map[string]resp{
		"/robots.txt": text("text/plain", "User-agent: *\nDisallow: /private/\n"),
		"/a":          withHead("/a", ""+`<p><a href="/private/x">x</a></p>`), "/private/x": withHead("/private/x", ""),
	}, []string{"/a"}, []string{"/a"}},
	{"a link only Googlebot may not fetch", RobotsBlocked, map[string]resp{
		"/robots.txt": text("text/plain", "User-agent: Googlebot\nDisallow: /g/\n\nUser-agent: *\nDisallow:\n"),
		"/a":          doc(clean("/a"), `<a href="/g/x">x</a>`), "/g/x": withHead("/g/x", ""),
	}, []string{"/a"}, []string{"/a"}},
	{"a robots.txt that redirects: its target's rules", RobotsBlocked, map[string]resp{
		"/robots.txt": redirect(301, "/robots-real.txt"), "/robots-real.txt": text("text/plain", "User-agent: *\nDisallow: /private/\n"),
		"/a": withHead("/a", ""+`<p><a href="/private/x">x</a></p>`), "/private/x": withHead("/private/x", ""),
	}, []string{"/a"}, []string{"/a"}},
	{"a sitemap URL robots.txt disallows", RobotsBlocked, map[string]resp{
		"/robots.txt":  text("text/plain", "User-agent: *\nDisallow: /private/\n"),
		"/sitemap.xml": sitemapOf("/private/x"), "/private/x": withHead("/private/x", ""),
	}, nil, []string{"/private/x"}},
	{"allowed links", RobotsBlocked, map[string]resp{
		"/robots.txt": text("text/plain", "User-agent: *\nDisallow: /private/\nAllow: /private/ok\n"),
		"/a":          doc(clean("/a"), `<a href="/private/ok">x</a>`), "/private/ok": withHead("/private/ok", ""),
	}, []string{"/a"}, nil},

	{"robots.txt with a line that does not parse", RobotsTxtInvalid, map[string]resp{
		"/robots.txt": text("text/plain", "User-agent: *\nDisallow /x /y\n"), "/": withHead("/", ""),
	}, nil, []string{"/robots.txt"}},
	{"robots.txt as text/html", RobotsTxtInvalid, map[string]resp{
		"/robots.txt": text("text/html", "<html>User-agent: *</html>"), "/": withHead("/", ""),
	}, nil, []string{"/robots.txt"}},
	{"robots.txt answers 500", RobotsTxtInvalid, map[string]resp{
		"/robots.txt": {status: 500, ctype: "text/plain", body: "oops"}, "/": withHead("/", ""),
	}, nil, []string{"/robots.txt"}},
	{"robots.txt that redirects, even to rules that parse", RobotsTxtInvalid, map[string]resp{
		"/robots.txt": redirect(301, "/robots-real.txt"), "/robots-real.txt": text("text/plain", "User-agent: *\nDisallow: /x\n"), "/": withHead("/", ""),
	}, nil, []string{"/robots.txt"}},
	{"a valid robots.txt, or none", RobotsTxtInvalid, map[string]resp{
		"/robots.txt": text("text/plain; charset=utf-8", "# rules\r\nUser-agent: *\r\nDisallow: /x # a comment\r\n\r\nSitemap: {origin}/sitemap.xml\r\n"), "/": withHead("/", ""),
	}, nil, nil},

	{"meta noindex, header index", RobotsConflict, map[string]resp{
		"/a": {header: map[string]string{"X-Robots-Tag": "index, follow"}, body: doc(clean("/a")+`<meta name="robots" content="noindex">`, "").body},
	}, []string{"/a"}, []string{"/a"}},
	{"two robots metas", RobotsConflict, map[string]resp{
		"/a": withHead("/a", `<meta name="robots" content="index"><meta name="robots" content="nofollow">`),
	}, []string{"/a"}, []string{"/a"}},
	{"meta and header agree, or say different things", RobotsConflict, map[string]resp{
		"/a": {header: map[string]string{"X-Robots-Tag": "noarchive"}, body: doc(clean("/a")+`<meta name="robots" content="noindex">`, "").body},
		"/b": {header: map[string]string{"X-Robots-Tag": "noindex", "x": ""}, body: doc(clean("/b")+`<meta name="robots" content="noindex, follow">`, "").body},
	}, []string{"/a", "/b"}, nil},

	{"a link to a redirect that ends at a 404", LinkBroken, map[string]resp{
		"/a": doc(clean("/a"), `<a href="/old">old</a>`), "/old": {status: 301, header: map[string]string{"Location": "/gone"}}, "/gone": {status: 404},
	}, []string{"/a"}, []string{"/a"}},
	{"canonical to a noindex page", CanonicalToNoindex, map[string]resp{
		"/a": doc(clean("/a")[:0]+`<title>A</title>`+canon("/b"), ""), "/b": withHead("/b", `<meta name="robots" content="noindex">`),
	}, []string{"/a"}, []string{"/a"}},
	{"canonical to a googlebot noindex page", CanonicalToNoindex, map[string]resp{
		"/a": doc(`<title>A</title>`+canon("/b"), ""), "/b": withHead("/b", `<meta name="googlebot" content="noindex">`),
	}, []string{"/a"}, []string{"/a"}},
	{"canonical to an X-Robots-Tag noindex page", CanonicalToNoindex, map[string]resp{
		"/a": doc(`<title>A</title>`+canon("/b"), ""), "/b": {header: map[string]string{"X-Robots-Tag": "noindex"}, body: withHead("/b", "").body},
	}, []string{"/a"}, []string{"/a"}},
	{"canonical to an indexable page", CanonicalToNoindex, map[string]resp{
		"/a": doc(`<title>A</title>`+canon("/b"), ""), "/b": withHead("/b", ""),
	}, []string{"/a"}, nil},

	{"canonical robots.txt disallows", CanonicalToBlocked, map[string]resp{
		"/robots.txt": text("text/plain", "User-agent: *\nDisallow: /b\n"),
		"/a":          doc(`<title>A</title>`+canon("/b"), ""), "/b": withHead("/b", ""),
	}, []string{"/a"}, []string{"/a"}},
	{"canonical robots.txt allows", CanonicalToBlocked, map[string]resp{
		"/robots.txt": text("text/plain", "User-agent: *\nDisallow: /c\n"),
		"/a":          doc(`<title>A</title>`+canon("/b"), ""), "/b": withHead("/b", ""),
	}, []string{"/a"}, nil},

	{"en_US, english, zz-ZZ", HreflangInvalidCode, map[string]resp{
		"/a": withHead("/a", alts("en_US", "/a", "english", "/b", "zz-ZZ", "/c", "x-default", "/a")),
	}, []string{"/a"}, []string{"/a"}},
	{"valid codes", HreflangInvalidCode, map[string]resp{
		"/a": withHead("/a", alts("en", "/a", "en-GB", "/a", "de-at", "/b", "zh-Hant-TW", "/c", "X-Default", "/a")),
	}, []string{"/a"}, nil},

	{"two alternates for de", HreflangDuplicateCode, map[string]resp{
		"/a": withHead("/a", alts("en", "/a", "de", "/b", "DE", "/c", "x-default", "/a")),
	}, []string{"/a"}, []string{"/a"}},
	{"one alternate per code", HreflangDuplicateCode, map[string]resp{
		"/a": withHead("/a", alts("en", "/a", "de", "/b", "de-AT", "/c", "x-default", "/a")),
	}, []string{"/a"}, nil},

	{"an alternate that is gone", HreflangToNon200, map[string]resp{
		"/en": withHead("/en", alts("en", "/en", "de", "/de", "x-default", "/en")),
	}, []string{"/en"}, []string{"/en"}},
	{"an alternate that does not answer", HreflangToNon200, map[string]resp{
		"/en": withHead("/en", alts("en", "/en", "de", "/de", "x-default", "/en")), "/de": {status: noAnswer},
	}, []string{"/en"}, []string{"/en"}},
	{"an alternate that redirects", HreflangToNon200, map[string]resp{
		"/en": withHead("/en", alts("en", "/en", "de", "/de", "x-default", "/en")), "/de": redirect(301, "/de/"),
		"/de/": withHead("/de/", alts("en", "/en", "de", "/de/", "x-default", "/en")),
	}, []string{"/en"}, []string{"/en"}},
	{"an x-default that redirects by language", HreflangToNon200, map[string]resp{
		"/en": withHead("/en", alts("en", "/en", "x-default", "/")), "/": redirect(302, "/en"),
	}, []string{"/en"}, nil},

	{"an alternate that names another canonical", HreflangToNonCanonical, map[string]resp{
		"/en": withHead("/en", alts("en", "/en", "de", "/de", "x-default", "/en")),
		"/de": doc(`<title>De</title>`+canon("/en"), ""),
	}, []string{"/en"}, []string{"/en"}},
	{"alternates that are their own canonicals", HreflangToNonCanonical, map[string]resp{
		"/en": withHead("/en", alts("en", "/en", "de", "/de", "x-default", "/en")),
		"/de": withHead("/de", alts("en", "/en", "de", "/de", "x-default", "/en")),
	}, []string{"/en"}, nil},

	{"an alternate that is noindex", HreflangToNoindex, map[string]resp{
		"/en": withHead("/en", alts("en", "/en", "de", "/de", "x-default", "/en")),
		"/de": withHead("/de", alts("en", "/en", "de", "/de", "x-default", "/en")+`<meta name="robots" content="noindex">`),
	}, []string{"/en"}, []string{"/en"}},
	{"alternates that are indexable", HreflangToNoindex, map[string]resp{
		"/en": withHead("/en", alts("en", "/en", "de", "/de", "x-default", "/en")),
		"/de": withHead("/de", alts("en", "/en", "de", "/de", "x-default", "/en")),
	}, []string{"/en"}, nil},

	{"a link to a 404 and to a 500", LinkBroken, map[string]resp{
		"/a": doc(clean("/a"), `<a href="/gone">x</a><a href="/error">y</a>`), "/error": {status: 500, body: "oops"},
	}, []string{"/a"}, []string{"/a"}},
	{"links that answer", LinkBroken, map[string]resp{
		"/a": doc(clean("/a"), `<a href="/b">x</a>`), "/b": withHead("/b", ""),
	}, []string{"/a"}, nil},

	{"a link to a redirect", LinkToRedirect, map[string]resp{
		"/a": doc(clean("/a"), `<a href="/old">x</a>`), "/old": redirect(301, "/b"), "/b": withHead("/b", ""),
	}, []string{"/a"}, []string{"/a"}},
	{"a link to the final address", LinkToRedirect, map[string]resp{
		"/a": doc(clean("/a"), `<a href="/b">x</a>`), "/b": withHead("/b", ""),
	}, []string{"/a"}, nil},

	{"a link that takes two hops", RedirectChain, map[string]resp{
		"/a": doc(clean("/a"), `<a href="/r1">x</a>`), "/r1": redirect(301, "/r2"), "/r2": redirect(301, "/b"), "/b": withHead("/b", ""),
	}, []string{"/a"}, []string{"/a"}},
	{"a sitemap URL in a redirect loop", RedirectChain, map[string]resp{
		"/sitemap.xml": sitemapOf("/l1"), "/l1": redirect(301, "/l2"), "/l2": redirect(301, "/l1"),
	}, nil, []string{"/l1"}},
	{"a canonical that takes twenty hops", RedirectChain, chainSite(20), []string{"/a"}, []string{"/a"}},
	{"one hop", RedirectChain, map[string]resp{
		"/a": doc(clean("/a"), `<a href="/r1">x</a>`), "/r1": redirect(301, "/b"), "/b": withHead("/b", ""),
	}, []string{"/a"}, nil},

	{"two pages with one text", DuplicateWithoutCanonical, map[string]resp{
		"/a": doc(clean("/a"), "<p>The same   words.</p>"), "/b": doc(clean("/b"), "<p>The same\nwords. </p>"),
	}, []string{"/a", "/b"}, []string{"/a", "/b"}},
	{"a copy that names the original", DuplicateWithoutCanonical, map[string]resp{
		"/a": doc(clean("/a"), "<p>The same words.</p>"), "/b": doc(`<title>B</title>`+canon("/a"), "<p>The same words.</p>"),
		"/c": doc(clean("/c"), "<p>Other words.</p><script>var same = 1</script>"),
	}, []string{"/a", "/b", "/c"}, nil},

	{"an indexable page the sitemap leaves out", SitemapMissing, map[string]resp{
		"/sitemap.xml": sitemapOf("/a"), "/a": doc(clean("/a"), `<a href="/b">b</a>`), "/b": doc(clean("/b"), `<a href="/a">a</a>`),
	}, nil, []string{"/b"}},
	{"an index whose file fails says nothing of what is missing", SitemapMissing, map[string]resp{
		"/sitemap.xml": text("application/xml", `<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`+
			`<sitemap><loc>{origin}/s1.xml</loc></sitemap><sitemap><loc>{origin}/s2.xml</loc></sitemap></sitemapindex>`),
		"/s1.xml": sitemapOf("/a"), "/s2.xml": {status: 503},
		"/a": doc(clean("/a"), `<a href="/b">b</a>`), "/b": doc(clean("/b"), `<a href="/a">a</a>`),
	}, nil, nil},
	{"an index inside an index is not followed: what it lists is not known", SitemapMissing, map[string]resp{
		"/sitemap.xml": text("application/xml", `<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`+
			`<sitemap><loc>{origin}/s1.xml</loc></sitemap><sitemap><loc>{origin}/nested.xml</loc></sitemap></sitemapindex>`),
		"/s1.xml": sitemapOf("/a"),
		"/nested.xml": text("application/xml", `<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`+
			`<sitemap><loc>{origin}/s2.xml</loc></sitemap></sitemapindex>`),
		"/s2.xml": sitemapOf("/b"),
		"/a":      doc(clean("/a"), `<a href="/b">b</a>`), "/b": doc(clean("/b"), `<a href="/a">a</a>`),
	}, nil, nil},
	{"the sitemap lists every indexable page", SitemapMissing, map[string]resp{
		"/sitemap.xml": sitemapOf("/a", "/b"), "/a": doc(clean("/a"), `<a href="/b">b</a><a href="/c">c</a>`),
		"/b": doc(clean("/b"), `<a href="/a">a</a>`), "/c": doc(`<title>C</title>`+canon("/a"), ""),
	}, nil, nil},

	{"a sitemap URL nothing links to", SitemapOrphan, map[string]resp{
		"/sitemap.xml": sitemapOf("/", "/lonely"), "/": doc(clean("/"), ""), "/lonely": doc(clean("/lonely"), `<a href="/">home</a>`),
	}, nil, []string{"/lonely"}},
	{"the crawl's start needs no link", SitemapOrphan, map[string]resp{
		"/sitemap.xml": sitemapOf("/", "/b"), "/": doc(clean("/"), `<a href="/b">b</a>`), "/b": doc(clean("/b"), ""),
	}, nil, nil},
	{"linked sitemap URLs", SitemapOrphan, map[string]resp{
		"/sitemap.xml": sitemapOf("/", "/b"), "/": doc(clean("/"), `<a href="/b">b</a>`), "/b": doc(clean("/b"), `<a href="/">home</a>`),
	}, nil, nil},

	{"a short title and a long one", TitleLength, map[string]resp{
		"/a": doc(`<title>Short</title>`+canon("/a"), ""),
		"/b": doc(`<title>`+strings.Repeat("Long ", 13)+`</title>`+canon("/b"), ""),
		"/c": doc(`<title>Noindex, so short</title><meta name="robots" content="noindex">`, ""),
	}, []string{"/a", "/b", "/c"}, []string{"/a", "/b"}},
	{"a head not read to its end: a title read whole is known", TitleLength, map[string]resp{
		"/a": doc(`<title>Short</title>`+canon("/a")+strings.Repeat(`<meta name="x" content="y">`, 50000), ""),
	}, []string{"/a"}, []string{"/a"}},
	// The page is cut at 5 MiB inside its title: /a's has 100 characters
	// read, too long already; /b's 20, its length not known.
	{"a title cut with the page", TitleLength, map[string]resp{
		"/a": {body: cutInTitle(100)}, "/b": {body: cutInTitle(20)},
	}, []string{"/a", "/b"}, []string{"/a"}},
	{"titles that fit", TitleLength, map[string]resp{
		"/a": withHead("/a", ""), "/b": doc(`<title>`+strings.Repeat("é", 60)+`</title>`+canon("/b"), ""),
	}, []string{"/a", "/b"}, nil},

	{"a short description", DescriptionLength, map[string]resp{
		"/a": doc(`<title>A</title><meta name="description" content="Too short.">`+canon("/a"), ""),
		"/b": doc(`<title>B</title><meta name="description" content="`+strings.Repeat("word ", 33)+`">`+canon("/b"), ""),
	}, []string{"/a", "/b"}, []string{"/a", "/b"}},
	{"descriptions that fit", DescriptionLength, map[string]resp{"/a": withHead("/a", "")}, []string{"/a"}, nil},

	{"a Product without offers, an Event without a date", JSONLDRequired, map[string]resp{
		"/a": withHead("/a", ldScript+`{"@context":"https://schema.org","@type":"Product","name":"Kettle"}</script>`),
		"/b": withHead("/b", ldScript+`{"@context":"https://schema.org","@graph":[{"@type":"Event","name":"Gig","location":{"@type":"Place","name":"Hall"}}]}</script>`),
		"/c": withHead("/c", ldScript+`{"@type":"BreadcrumbList","itemListElement":[{"@type":"ListItem","position":1,"name":"Home"},{"@type":"ListItem","position":2,"name":"Here"}]}</script>`),
		"/d": withHead("/d", ldScript+`{"@type":"FAQPage","mainEntity":[{"@type":"Question","name":"Why?","acceptedAnswer":{"@type":"Answer"}}]}</script>`),
	}, []string{"/a", "/b", "/c", "/d"}, []string{"/a", "/b", "/c", "/d"}},
	{"complete nodes, references and nested reviews", JSONLDRequired, map[string]resp{
		"/a": withHead("/a", ldScript+`{"@context":"https://schema.org","@type":"Product","@id":"#p","name":"Kettle","offers":{"@type":"Offer","price":"20","priceCurrency":"EUR"},`+
			`"review":{"@type":"Review","author":{"@type":"Person","name":"Ann"},"reviewRating":{"@type":"Rating","ratingValue":4}},"aggregateRating":{"@type":"AggregateRating","ratingValue":4,"reviewCount":1}}</script>`+
			ldScript+`{"@type":"WebPage","mainEntity":{"@type":"Product","@id":"#p"}}</script>`),
		"/b": withHead("/b", ldScript+`{"@type":"BreadcrumbList","itemListElement":[{"@type":"ListItem","position":1,"name":"Home","item":"{origin}/"},{"@type":"ListItem","position":2,"name":"Here"}]}</script>`),
		"/c": withHead("/c", ldScript+`{"@type":"JobPosting","title":"Cook","description":"Cooks.","datePosted":"2026-11-01","hiringOrganization":{"@type":"Organization","name":"Inn"},"jobLocationType":"TELECOMMUTE","applicantLocationRequirements":{"@type":"Country","name":"DE"}}</script>`),
		// One node described in two blocks (the app's and headgate's).
		"/d": withHead("/d", ldScript+`{"@context":"https://schema.org","@type":"Product","@id":"{origin}/d#product","name":"Lamp"}</script>`+
			ldScript+`{"@context":"https://schema.org","@type":"Product","@id":"{origin}/d#product","offers":{"@type":"Offer","price":"9","priceCurrency":"EUR"}}</script>`),
	}, []string{"/a", "/b", "/c", "/d"}, nil},
}

// chainSite is a page whose canonical takes twenty redirects.
func chainSite(n int) map[string]resp {
	site := map[string]resp{"/a": doc(`<title>A</title>`+canon("/r/0"), "")}
	for i := range n {
		site[fmt.Sprintf("/r/%d", i)] = redirect(301, fmt.Sprintf("/r/%d", i+1))
	}
	site[fmt.Sprintf("/r/%d", n)] = withHead(fmt.Sprintf("/r/%d", n), "")
	return site
}

// alts writes hreflang alternates: lang, path, lang, path…
func alts(pairs ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(pairs); i += 2 {
		b.WriteString(`<link rel="alternate" hreflang="` + pairs[i] + `" href="{origin}` + pairs[i+1] + `">`)
	}
	return b.String()
}

func TestChecks(t *testing.T) {
	for _, tc := range checkCases {
		t.Run(tc.check+"/"+tc.name, func(t *testing.T) {
			r, srv := auditLive(t, tc.site, Options{Concurrency: 2}, tc.start...)
			got := pathsOf(r, srv.URL, tc.check)
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s on %v, want %v", tc.check, got, tc.want)
				for _, f := range r.Findings {
					t.Logf("  %s %s: %s", f.Check, f.URL, f.Detail)
				}
			}
			for _, f := range findingsOf(r, tc.check) {
				if f.Severity != severity(tc.check) || f.Detail == "" {
					t.Errorf("finding %+v: want severity %s and a detail", f, severity(tc.check))
				}
			}
		})
	}
}

// Every check has a case that finds it and one that does not.
func TestChecksCovered(t *testing.T) {
	for _, c := range Checks() {
		if c.ID == MixedScheme || strings.HasPrefix(c.ID, "diff-") {
			continue // an https site: TestMixedScheme; -compare: TestCompare
		}
		var found, clean bool
		for _, tc := range checkCases {
			if tc.check == c.ID {
				found = found || len(tc.want) > 0
				clean = clean || len(tc.want) == 0
			}
		}
		if !found || !clean {
			t.Errorf("%s: a case that finds it: %v, a clean case: %v", c.ID, found, clean)
		}
	}
	if len(Checks()) != 24+20+7 {
		t.Errorf("%d checks, SPEC §7 has 24, §15 20 and -compare 7", len(Checks()))
	}
}

// Details name the other page of a two-page finding.
func TestDetailNamesTheOther(t *testing.T) {
	r, srv := auditLive(t, map[string]resp{
		"/en": withHead("/en", alts("en", "/en", "de", "/de", "x-default", "/en")),
		"/de": withHead("/de", alts("de", "/de", "x-default", "/lang")),
		"/a":  doc(`<title>Same</title>`+canon("/a"), ""),
		"/b":  doc(`<title>Same</title>`+canon("/b"), ""),
	}, Options{}, "/en", "/a", "/b")
	for _, tc := range []struct{ check, url, other string }{
		{HreflangNotReciprocal, "/en", "/de"},
		{TitleDuplicate, "/a", "/b"},
		{TitleDuplicate, "/b", "/a"},
	} {
		ok := false
		for _, f := range findingsOf(r, tc.check) {
			if f.URL == srv.URL+tc.url && strings.Contains(f.Detail, srv.URL+tc.other) {
				ok = true
			}
		}
		if !ok {
			t.Errorf("%s on %s naming %s: not found in %+v", tc.check, tc.url, tc.other, findingsOf(r, tc.check))
		}
	}
}

// docs/audit.md documents every check, with its severity.
func TestDocsListEveryCheck(t *testing.T) {
	doc, err := os.ReadFile("../docs/audit.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range Checks() {
		heading := "### `" + c.ID + "` (" + strings.ToUpper(c.Severity[:1]) + ")"
		if !strings.Contains(string(doc), heading) {
			t.Errorf("docs/audit.md lacks %q", heading)
		}
	}
}

// The package depends on rules and rewrite, never on proxy, sitemap or cmd
// (SPEC §9), and on no module beyond go.mod's.
func TestImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	allowed := []string{"github.com/headgate/headgate/rules", "github.com/headgate/headgate/rewrite", "github.com/headgate/headgate/internal/linkheader", "github.com/headgate/headgate/internal/codec", "github.com/headgate/headgate/internal/robotskey", "github.com/headgate/headgate/internal/langcode", "github.com/headgate/headgate/internal/sitemapxml", "github.com/headgate/headgate/internal/robotsmeta", "github.com/headgate/headgate/internal/pct", "github.com/headgate/headgate/internal/robotspath",
		"golang.org/x/net/", "golang.org/x/text/", "github.com/andybalholm/brotli", "github.com/klauspost/compress/"}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !strings.Contains(p, ".") {
				continue // standard library
			}
			if !slices.ContainsFunc(allowed, func(a string) bool { return p == a || strings.HasSuffix(a, "/") && strings.HasPrefix(p, a) }) {
				t.Errorf("%s imports %s", name, p)
			}
		}
	}
}

var update = flag.Bool("update", false, "rewrite docs/audit.md's checks from audit/checkdocs.go")

// docs/audit.md's checks are the table the HTML report shows: one source.
func TestDocsMatchTable(t *testing.T) {
	const path = "../docs/audit.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, DocsBegin), strings.Index(doc, DocsEnd)
	if i < 0 || j < i {
		t.Fatalf("docs/audit.md lacks the markers %q and %q", DocsBegin, DocsEnd)
	}
	want := ChecksMarkdown() + "\n"
	got := doc[i+len(DocsBegin)+1 : j]
	if *update {
		doc = doc[:i+len(DocsBegin)+1] + want + doc[j:]
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != want {
		t.Errorf("docs/audit.md's checks differ from audit/checkdocs.go: run go test ./audit -run TestDocsMatchTable -update and read the diff")
	}
	for _, c := range Checks() {
		d, ok := Doc(c.ID)
		if !ok || d.Finds == "" || d.Why == "" || d.Fix == "" && d.Example == "" || len(d.Sources) == 0 {
			t.Errorf("%s: documentation incomplete: %+v", c.ID, d)
		}
	}
	if len(checkDocs) != len(Checks()) {
		t.Errorf("%d docs for %d checks", len(checkDocs), len(Checks()))
	}
}
