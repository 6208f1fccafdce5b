// Package robotskey reads a robots.txt record's key as Google's parser
// reads it (github.com/google/robotstxt, robots.cc): by prefix, case
// folded, with the frequent typos it accepts. "Disallowed: /x" and
// "Disalow: /x" are Disallow rules there, "User agent: x" a User-agent
// line, "Site-map:" a Sitemap. The append mode of robots.txt and the
// audit's reader both read keys this way, so that their groups are
// Google's.
package robotskey

import "strings"

// Key returns the record's key: "user-agent", "allow", "disallow" or
// "sitemap" when Google reads it as one of those, else key lower-cased and
// trimmed. The order is Google's: a key is tested as a User-agent first.
func Key(key string) string {
	k := strings.ToLower(strings.TrimSpace(key))
	switch {
	case hasAny(k, "user-agent", "useragent", "user agent"):
		return "user-agent"
	case strings.HasPrefix(k, "allow"):
		return "allow"
	case hasAny(k, "disallow", "dissallow", "dissalow", "disalow", "diasllow", "disallaw"):
		return "disallow"
	case hasAny(k, "sitemap", "site-map"):
		return "sitemap"
	}
	return k
}

func hasAny(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
