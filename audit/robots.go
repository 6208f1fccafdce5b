package audit

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/headgate/headgate/internal/robotspath"
	"io"
	"strings"

	"github.com/headgate/headgate/internal/pct"
	"github.com/headgate/headgate/internal/robotskey"
)

// maxRobotsBytes is what Google reads of a robots.txt (RFC 9309 asks for
// at least 500 KiB).
const maxRobotsBytes = 500 << 10

// maxRobotsBad bounds the unparsable lines a robots.txt reports one by
// one; the rest are counted.
const maxRobotsBad = 20

// robotsTxt is the part of a robots.txt the audit uses: the rules of the
// groups for "User-agent: *" and for Googlebot, and the Sitemap lines.
type robotsTxt struct {
	rules    []robotsRule // the groups for *
	google   []robotsRule // the groups for googlebot
	isGoogle bool         // a group names googlebot: Googlebot obeys it, not *
	sitemaps []string
	bad      []robotsBad // lines that do not parse
	badCount int
	lines    int    // lines read
	bytes    int64  // bytes read (at most maxRobotsBytes)
	tooLong  bool   // the file goes on past maxRobotsBytes
	sha256   string // of the bytes read, hex
}

type robotsBad struct {
	line int
	text string
	why  string
}

func (b robotsBad) String() string {
	return fmt.Sprintf("line %d: %q %s", b.line, b.text, b.why)
}

type robotsRule struct {
	allow   bool
	pattern string // as written, for the report
	match   string // percent-encoding normalized (robotsEncode), runs of * as one, to match
	n       int    // the normalized pattern's length, stars and all: the longest match wins
}

func (r robotsRule) String() string {
	if r.allow {
		return "Allow: " + r.pattern
	}
	return "Disallow: " + r.pattern
}

// parseRobots reads a robots.txt as Google's parser does (RFC 9309):
// groups start with one or more User-agent lines; every group that names
// "*" applies to other crawlers, merged, and every group that names
// googlebot to Googlebot; unknown keys are ignored (they do not end a run
// of User-agent lines); a line that is neither blank, a comment, nor
// "key: value" does not parse (a "key value" line of a known key is
// reported, and read as Google reads it). It reads at most maxRobotsBytes, and notes whether the
// file is longer.
func parseRobots(r io.Reader) *robotsTxt {
	rt := &robotsTxt{}
	lr := &io.LimitedReader{R: r, N: maxRobotsBytes}
	sum := sha256.New()
	sc := bufio.NewScanner(io.TeeReader(lr, sum))
	sc.Buffer(make([]byte, 0, 4096), maxRobotsBytes+1)
	sc.Split(scanRobotsLines)
	inUA := false              // the previous directive line was a User-agent line
	star, goog := false, false // the current group names *, googlebot
	seenUA := false
	bad := func(n int, raw, why string) {
		rt.badCount++
		if len(rt.bad) < maxRobotsBad {
			rt.bad = append(rt.bad, robotsBad{n, clip(strings.ToValidUTF8(raw, "\ufffd"), 60), why})
		}
	}
	n := 0
	for sc.Scan() {
		n++
		raw := sc.Text()
		line := raw
		if n == 1 {
			line = strings.TrimPrefix(line, "\ufeff")
		}
		if strings.IndexByte(line, 0) >= 0 {
			bad(n, raw, "holds a NUL byte")
			continue
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
			// It is read so, for the verdicts, and reported: other
			// parsers skip it (SPEC §17).
			f := strings.Fields(line)
			if len(f) == 2 && knownRobotsKey(f[0]) {
				key, val, ok = f[0], f[1], true
				bad(n, raw, "is not \"key: value\" (Google reads it as \""+f[0]+": "+f[1]+"\"; RFC 9309 parsers skip it)")
			}
		}
		val = strings.TrimSpace(val)
		if !ok || strings.TrimSpace(key) == "" || strings.ContainsAny(strings.TrimSpace(key), "\t<>") || strings.Contains(strings.TrimSpace(key), " ") && robotskey.Key(key) != "user-agent" {
			bad(n, raw, "is not \"key: value\"")
			continue
		}
		key = robotskey.Key(key) // by prefix, with Google's typos
		switch key {
		case "user-agent":
			if !inUA {
				star, goog = false, false
			}
			inUA, seenUA = true, true
			name, _, _ := strings.Cut(val, "/")
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "*":
				star = true
			case "googlebot":
				goog, rt.isGoogle = true, true
			}
		case "allow", "disallow":
			inUA = false
			if !seenUA {
				bad(n, raw, "comes before any User-agent line")
				continue
			}
			if val == "" {
				continue
			}
			enc := robotsEncode(val)
			rule := robotsRule{allow: key == "allow", pattern: val, match: collapseStars(enc), n: len(enc)}
			if star {
				rt.rules = append(rt.rules, rule)
			}
			if goog {
				rt.google = append(rt.google, rule)
			}
		case "sitemap":
			if len(rt.sitemaps) < maxSitemapParts {
				rt.sitemaps = append(rt.sitemaps, val)
			}
		default:
			// Crawl-delay and other keys: no member of a group, and no
			// end of a run of User-agent lines (only Allow and Disallow
			// are, in Google's parser).
		}
	}
	io.Copy(sum, lr) // what the scanner left of the limit, after a line too long
	rt.lines = n
	rt.bytes = maxRobotsBytes - lr.N
	rt.sha256 = hex.EncodeToString(sum.Sum(nil))
	if lr.N == 0 {
		var one [1]byte
		if k, _ := io.ReadFull(r, one[:]); k > 0 {
			rt.tooLong = true
		}
	}
	return rt
}

// scanRobotsLines splits at LF, CR LF or a lone CR (RFC 9309 §2.2 allows
// all three).
func scanRobotsLines(data []byte, atEOF bool) (int, []byte, error) {
	for i, c := range data {
		switch c {
		case '\n':
			return i + 1, data[:i], nil
		case '\r':
			if i+1 < len(data) {
				if data[i+1] == '\n' {
					return i + 2, data[:i], nil
				}
				return i + 1, data[:i], nil
			}
			if atEOF {
				return i + 1, data[:i], nil
			}
			return 0, nil, nil // a LF may follow
		}
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

func knownRobotsKey(k string) bool {
	switch robotskey.Key(k) {
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
	return decide(rt.rules, pathQuery)
}

// blocksFor reports whether "User-agent: *" or Googlebot (its own groups
// when robots.txt has any, else *'s) may not fetch pathQuery, naming the
// crawler and the rule.
func (rt *robotsTxt) blocksFor(pathQuery string) (bool, string, robotsRule) {
	if b, r := decide(rt.rules, pathQuery); b {
		return true, "*", r
	}
	if rt.isGoogle {
		if b, r := decide(rt.google, pathQuery); b {
			return true, "Googlebot", r
		}
	}
	return false, "", robotsRule{}
}

func decide(rules []robotsRule, pathQuery string) (bool, robotsRule) {
	best, found := robotsRule{}, false
	pathQuery = robotsEncode(pathQuery)
	for _, r := range rules {
		if !robotspath.Match(r.match, pathQuery) {
			continue
		}
		if !found || r.n > best.n || r.n == best.n && r.allow && !best.allow {
			best, found = r, true
		}
	}
	return found && !best.allow, best
}

// collapseStars writes a run of "*" as one: it matches the same paths, and
// a pattern of 400,000 stars would otherwise cost as much per path. The
// pattern's length, which decides the longest match, is its own.
func collapseStars(p string) string {
	if !strings.Contains(p, "**") {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '*' && i > 0 && p[i-1] == '*' {
			continue
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// robotsEncode spells a path (or a robots.txt pattern) one way before they
// are compared, as RFC 9309 §2.2.2 has it: octets outside US-ASCII (and
// controls and spaces) percent-encoded, an escape of an unreserved
// character decoded ("%7E" is "~"), every other escape kept with upper-case
// hex. So "Disallow: /café" blocks "/caf%C3%A9" and "/caf%c3%a9" alike, as
// Google's matcher does. "*" and "$" are ASCII and stay.
func robotsEncode(s string) string { return pct.Encode(s, pct.Robots, pct.Normal) }
