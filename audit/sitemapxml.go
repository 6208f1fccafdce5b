package audit

import (
	"io"
	"strings"

	"github.com/headgate/headgate/internal/sitemapxml"
)

// sitemapLimits are the audit's bounds on one sitemap file: the zero
// Limits, 64 MiB uncompressed, 1 MiB a token and 32 levels, as
// docs/audit.md says, and 4,096 bytes a <loc>.
var sitemapLimits = sitemapxml.Limits{}

// parseSitemap streams a sitemap file, calling emit for each <loc> of a
// <urlset> (index false) or a <sitemapindex> (index true), and returns the
// root element's name. A gzipped file is read through gzip. emit returns
// false to stop early.
func parseSitemap(r io.Reader, emit func(loc string, index bool) bool) (root string, err error) {
	return sitemapxml.Scan(r, sitemapLimits, func(root string, e sitemapxml.Entry) bool {
		loc := strings.TrimSpace(e.Loc)
		return loc == "" || emit(loc, root == "sitemapindex")
	})
}
