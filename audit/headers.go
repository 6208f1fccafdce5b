package audit

import "strings"

// metaNoindex reports whether a robots meta content forbids indexing.
func metaNoindex(content string) bool {
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

// headerNoindex reports whether X-Robots-Tag values forbid indexing to
// some crawler ("noindex", "none", also "googlebot: noindex": a page any
// crawler must not index is no sitemap entry).
func headerNoindex(values []string) bool {
	for _, v := range values {
		if name, rest, ok := strings.Cut(v, ":"); ok && !strings.Contains(name, ",") {
			if n := strings.ToLower(strings.TrimSpace(name)); !valued[n] {
				v = rest
			}
		}
		if metaNoindex(v) {
			return true
		}
	}
	return false
}
