// Package robotspath matches a robots.txt rule's path pattern against a
// URL path as RFC 9309 §2.2.3 and Google's matcher do: "*" is any run of
// characters, a final "$" anchors the end, anything else is a prefix.
// The audit (what crawlers will do with a site's robots.txt) and the
// sitemap package (what the robots.txt headgate serves says, for
// bots.enforce_robots and robots violations) ask the same matcher.
package robotspath

import "strings"

// Match reports whether the path pattern matches path; both are already
// in the one spelling the caller compares in (percent-encoding
// normalized). The literal pieces between stars are found leftmost, one
// after another (strings.Index): the leftmost end of each piece leaves the
// most path for the rest, so no other placement can match where this one
// fails, and a pattern of a thousand stars costs about one pass over the
// path, not a pass per star (a hostile robots.txt's "/*a*a*a…" against a
// long URL).
func Match(pattern, path string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	if anchored {
		pattern = pattern[:len(pattern)-1]
	}
	first, rest, star := strings.Cut(pattern, "*")
	if !strings.HasPrefix(path, first) {
		return false
	}
	if !star {
		return !anchored || len(path) == len(first)
	}
	pos := len(first)
	for {
		piece, more, ok := strings.Cut(rest, "*")
		if !ok {
			// The piece after the last star.
			if anchored {
				return len(path)-pos >= len(piece) && strings.HasSuffix(path, piece)
			}
			return strings.Contains(path[pos:], piece)
		}
		if piece != "" {
			i := strings.Index(path[pos:], piece)
			if i < 0 {
				return false
			}
			pos += i + len(piece)
		}
		rest = more
	}
}
