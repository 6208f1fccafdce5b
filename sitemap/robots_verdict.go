package sitemap

import "strings"

// RobotsDisallows reports whether the robots.txt this handler serves
// disallows path (as requested, percent-encoded) for a crawler whose
// user-agent product tokens are tokens, as RFC 9309 reads it: the
// [[robots.group]] groups that name one of the tokens (case-insensitively),
// else the file's "User-agent: *" group, which disallows nothing; the
// longest matching Allow or Disallow wins, Allow on a tie. It is what
// bots.enforce_robots asks (proxy), so the 403 and the file never
// disagree.
//
// known is false when the answer is in a file headgate does not hold: the
// upstream's robots.txt (robots.mode = "upstream", shadow mode, and in
// "append" mode an agent no [[robots.group]] names, since the upstream's
// lines decide for it). The caller then lets the request through.
func (s *Sitemap) RobotsDisallows(tokens []string, path string) (disallowed, known bool) {
	switch s.robots {
	case robotsStaging:
		return true, true // "User-agent: *" / "Disallow: /"
	case robotsUpstream:
		return false, false
	}
	var allow, disallow []string
	named := false
	for _, g := range s.cfg.Robots.Groups {
		if groupNames(g.UserAgents, tokens) {
			named = true
			allow, disallow = append(allow, g.Allow...), append(disallow, g.Disallow...)
		}
	}
	if !named {
		if s.robots == robotsAppend {
			return false, false
		}
		// generate: the file's own "User-agent: *" group, which
		// disallows nothing ([[robots.group]] may not name "*", HG190).
		return false, true
	}
	best, deny := -1, false
	for _, p := range disallow {
		if p != "" && len(p) > best && robotsPathMatch(p, path) {
			best, deny = len(p), true
		}
	}
	for _, p := range allow {
		if p != "" && len(p) >= best && robotsPathMatch(p, path) {
			best, deny = len(p), false
		}
	}
	return deny, true
}

func groupNames(agents, tokens []string) bool {
	for _, a := range agents {
		for _, t := range tokens {
			if strings.EqualFold(a, t) {
				return true
			}
		}
	}
	return false
}

// robotsPathMatch matches a robots.txt path pattern: "*" is any run of
// characters, a final "$" anchors the end; otherwise a prefix match. The
// pieces between stars are found leftmost, one after another, which is
// enough (the leftmost end of each leaves the most path for the rest) and
// costs one pass over the path whatever the number of stars.
func robotsPathMatch(pattern, path string) bool {
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
