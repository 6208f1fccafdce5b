// Package sitemapxml reads sitemap documents (sitemaps.org's <urlset> and
// <sitemapindex>, gzipped or not) as a stream on encoding/xml, with bounds
// on what a hostile or broken document can make its reader hold.
//
// It owns the one sitemap XML reader of headgate: the audit reads a site's
// sitemaps with it, and the sitemap package reads an upstream's sitemap
// (sitemap_source = "upstream-sitemap:…") with it. Each caller chooses its
// Limits; the zero value is the audit's.
//
// Call Scan with the body; it calls fn for each <url> or <sitemap> entry,
// in document order, once the entry's end tag is read.
//
// Security: encoding/xml holds each token whole, so a reader before it
// (runLimit) fails the read once one token — text between two tags, a tag,
// a comment, a CDATA section, a processing instruction, a directive — runs
// past Limits.Token, following where encoding/xml's tokens end (FuzzRunLimit
// holds it to the decoder). The uncompressed bytes are bounded (a gzip bomb
// is cut at Limits.Bytes), and so is the depth of elements. A <loc> over
// Limits.Loc is dropped, never cut short: a cut URL names another page.
package sitemapxml
