package audit

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// maxRobotsBytes is what Google reads of a robots.txt (RFC 9309 asks for
// at least 500 KiB).
const maxRobotsBytes = 500 << 10

// robotsTxt is the part of a robots.txt the audit uses: the rules of the
// groups for "User-agent: *", and the Sitemap lines.
type robotsTxt struct {
	rules    []robotsRule
	sitemaps []string
	bad      []string // lines that do not parse, as "line N: text"
	badCount int
}

type robotsRule struct {
	allow   bool
	pattern string
}

func (r robotsRule) String() string {
	if r.allow {
		return "Allow: " + r.pattern
	}
	return "Disallow: " + r.pattern
}

// parseRobots reads a robots.txt as Google's parser does (RFC 9309):
// groups start with one or more User-agent lines; every group that names
// "*" applies, merged; unknown keys are ignored; a line that is not
// "key: value" (nor "key value" for a known key) does not parse.
func parseRobots(r io.Reader) *robotsTxt {
	rt := &robotsTxt{}
	sc := bufio.NewScanner(io.LimitReader(r, maxRobotsBytes))
	sc.Buffer(make([]byte, 0, 4096), maxRobotsBytes)
	inUA := false // the previous directive line was a User-agent line
	star := false // the current group names *
	seenUA := false
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if n == 1 {
			line = strings.TrimPrefix(line, "\ufeff")
		}
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			// Google also takes "Disallow /x": a known key and a blank.
			f := strings.Fields(line)
			if len(f) == 2 && knownRobotsKey(f[0]) {
				key, val, ok = f[0], f[1], true
			}
		}
		key = strings.ToLower(strings.TrimSpace(key))
		val = strings.TrimSpace(val)
		if !ok || strings.ContainsAny(key, " \t<>") {
			rt.badCount++
			if len(rt.bad) < 3 {
				rt.bad = append(rt.bad, fmt.Sprintf("line %d: %q", n, clip(sc.Text(), 60)))
			}
			continue
		}
		switch key {
		case "user-agent", "useragent", "user agent":
			if !inUA {
				star = false
			}
			inUA, seenUA = true, true
			if name, _, _ := strings.Cut(val, "/"); strings.TrimSpace(name) == "*" {
				star = true
			}
		case "allow", "disallow":
			inUA = false
			if !seenUA {
				rt.badCount++
				if len(rt.bad) < 3 {
					rt.bad = append(rt.bad, fmt.Sprintf("line %d: %q comes before any User-agent line", n, clip(sc.Text(), 60)))
				}
				continue
			}
			if star && val != "" {
				rt.rules = append(rt.rules, robotsRule{allow: key == "allow", pattern: val})
			}
		case "sitemap":
			rt.sitemaps = append(rt.sitemaps, val)
		default:
			inUA = false
		}
	}
	return rt
}

func knownRobotsKey(k string) bool {
	switch strings.ToLower(k) {
	case "user-agent", "allow", "disallow", "sitemap":
		return true
	}
	return false
}

// disallowAll reports whether the rules shut every URL out (the staging
// robots.txt).
func (rt *robotsTxt) disallowAll() bool {
	blocked, _ := rt.blocks("/")
	if !blocked {
		return false
	}
	for _, r := range rt.rules {
		if r.allow {
			return false
		}
	}
	return true
}

// blocks reports whether "User-agent: *" may not fetch pathQuery, and the
// rule that decides: the matching rule with the longest pattern, Allow
// when an Allow and a Disallow are as long.
func (rt *robotsTxt) blocks(pathQuery string) (bool, robotsRule) {
	best, found := robotsRule{}, false
	for _, r := range rt.rules {
		if !robotsMatch(r.pattern, pathQuery) {
			continue
		}
		if !found || len(r.pattern) > len(best.pattern) || len(r.pattern) == len(best.pattern) && r.allow && !best.allow {
			best, found = r, true
		}
	}
	return found && !best.allow, best
}

// robotsMatch matches a robots.txt path pattern: "*" is any run of
// characters, a final "$" anchors the end; otherwise a prefix match.
func robotsMatch(pattern, path string) bool {
	pos := []int{0} // the offsets in path the pattern so far can end at
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c == '$' && i == len(pattern)-1 {
			return pos[len(pos)-1] == len(path)
		}
		if c == '*' {
			from := pos[0]
			pos = pos[:0]
			for p := from; p <= len(path); p++ {
				pos = append(pos, p)
			}
			continue
		}
		next := pos[:0]
		for _, p := range pos {
			if p < len(path) && path[p] == c {
				next = append(next, p+1)
			}
		}
		if len(next) == 0 {
			return false
		}
		pos = next
	}
	return true
}
