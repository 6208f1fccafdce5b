// Package robotsmeta reads robots directives as crawlers do: the content
// of a robots (or googlebot) meta tag and the values of X-Robots-Tag
// headers. It owns the one test of whether they keep a page out of the
// index, which the sitemap (a rule's robots value) and the audit (a
// crawled page's tags and headers) both ask, so that "noindex" means the
// same in what headgate lists and in what it reports.
package robotsmeta

import "strings"

// Noindex reports whether a robots meta content (a comma-separated list
// of directives, in any case) forbids indexing: "noindex" or "none".
func Noindex(content string) bool {
	for _, d := range strings.Split(content, ",") {
		switch strings.ToLower(strings.TrimSpace(d)) {
		case "noindex", "none":
			return true
		}
	}
	return false
}

// valued are the X-Robots-Tag directives written "name: value"; any other
// "name:" at the start of a value names the crawler the value is for.
var valued = map[string]bool{
	"unavailable_after": true, "max-snippet": true, "max-image-preview": true, "max-video-preview": true,
}

// ForCrawler splits an X-Robots-Tag value into the crawler it names,
// lower-cased ("googlebot" for "Googlebot: noindex"), or "" when the value
// is for every crawler, and its directives.
func ForCrawler(value string) (crawler, directives string) {
	if name, rest, ok := strings.Cut(value, ":"); ok && !strings.Contains(name, ",") {
		if n := strings.ToLower(strings.TrimSpace(name)); !valued[n] {
			return n, rest
		}
	}
	return "", value
}

// HeaderNoindex reports whether X-Robots-Tag values forbid indexing to
// some crawler ("noindex", "none", also "googlebot: noindex": a page any
// crawler must not index is no sitemap entry).
func HeaderNoindex(values []string) bool {
	for _, v := range values {
		if _, d := ForCrawler(v); Noindex(d) {
			return true
		}
	}
	return false
}
