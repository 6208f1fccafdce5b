package sitemap

import (
	"strings"

	"github.com/headgate/headgate/internal/robotspath"
)

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
		if p != "" && len(p) > best && robotspath.Match(p, path) {
			best, deny = len(p), true
		}
	}
	for _, p := range allow {
		if p != "" && len(p) >= best && robotspath.Match(p, path) {
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
