package sitemap

import (
	"bytes"
	"strings"

	"github.com/headgate/headgate/internal/robotskey"
	"github.com/headgate/headgate/rules"
)

// robots.txt with the crawler policy of SPEC §13.1 and §16.6.
//
// generate:
//
//	User-agent: *
//	Content-Signal: search=yes, ai-input=yes, ai-train=no   (with robots.content_signal)
//	Disallow:
//
//	User-agent: GPTBot                                       (one block per [[robots.group]])
//	User-agent: ExampleBot
//	Allow: …
//	Disallow: /
//
//	Sitemap: https://notes.example/sitemap.xml              (when a rule has sitemap = true)
//
// append: the upstream's file, in which
//   - a User-agent line naming an agent of a [[robots.group]] is dropped
//     (and the rules of a group left with no agent), since crawlers merge
//     every group that names them and the verdict would no longer be the
//     config's;
//   - with a content signal, the upstream's Content-Signal lines are
//     dropped and headgate's goes into the first group that names "*" (a
//     "User-agent: *" group with an empty Disallow is added when there is
//     none: an agent in no group may crawl everything either way);
//   - with upstream_sitemaps = "replace" (the default) and a sitemap of
//     headgate's, the upstream's Sitemap lines are dropped;
//
// then the groups, then headgate's Sitemap line (with "keep", only when no
// Sitemap line already names it). The upstream's file is read as Google's
// parser reads it (robotsText, productToken): no byte order mark, CR, LF
// or CRLF line ends, a run of User-agent lines ended only by Allow or
// Disallow, and at most what fits in 500 KiB with headgate's part.

// generatedRobots is the generate mode's file.
func (s *Sitemap) generatedRobots() []byte {
	var b bytes.Buffer
	b.WriteString("User-agent: *\n")
	if sig := s.cfg.Robots.ContentSignal.Line(); sig != "" {
		b.WriteString("Content-Signal: " + sig + "\n")
	}
	b.WriteString("Disallow:\n")
	writeGroups(&b, s.cfg.Robots.Groups)
	if s.enabled {
		b.WriteString("\nSitemap: " + s.cfg.Site.BaseURL + "/sitemap.xml\n")
	}
	return b.Bytes()
}

// writeGroups writes each group after a blank line. A group with no rule
// gets an empty Disallow: without a rule line, its User-agent lines would
// join the next group's.
func writeGroups(b *bytes.Buffer, groups []rules.RobotsGroup) {
	for _, g := range groups {
		if len(g.UserAgents) == 0 {
			continue
		}
		b.WriteByte('\n')
		for _, a := range g.UserAgents {
			b.WriteString("User-agent: " + a + "\n")
		}
		for _, p := range g.Allow {
			b.WriteString("Allow: " + p + "\n")
		}
		for _, p := range g.Disallow {
			b.WriteString("Disallow: " + p + "\n")
		}
		if len(g.Allow)+len(g.Disallow) == 0 {
			b.WriteString("Disallow:\n")
		}
	}
}

// robotsLine splits a robots.txt line into its lower-case key and its
// value without comment; ok is false for a blank line, a comment, or a
// line that is not a record. A line without ":" is read as Google's parser
// reads it: a record when it is exactly two words ("Disallow /x"); junk
// reports any other such line (RFC 9309 and Google ignore it; lenient
// parsers read words of it as records, so append mode drops it).
func robotsLine(line string) (key, value string, ok, junk bool) {
	line = strings.TrimSuffix(line, "\r")
	if i := strings.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	k, v, found := strings.Cut(line, ":")
	if !found {
		f := strings.Fields(line)
		if len(f) != 2 {
			return "", "", false, len(f) > 0
		}
		k, v = f[0], f[1]
	}
	// Keys by prefix and with the typos Google's parser takes
	// ("Disalow:"), so that append mode's groups are Google's.
	return robotskey.Key(k), strings.TrimSpace(v), true, false
}

// exactKey reports whether a record line spells its key as key itself
// (any case) before a ":", as every parser reads it. A line without the
// colon ("Disallow /x") is a record to Google's parser alone: RFC 9309's
// grammar needs the colon, so to a parser that follows it the line is
// not there.
func exactKey(line, key string) bool {
	k, _, found := strings.Cut(line, ":")
	return found && strings.EqualFold(strings.TrimSpace(k), key)
}

// productToken is the agent a User-agent value names: its leading
// letters, digits, "-" and "_" ("CCBot/2.0" and "CCBot Disallow: /" both
// name CCBot), lower-case. letters is the same read as RFC 9309's
// grammar and Google's parser read it, which stop at a digit: "GPTBot2"
// names GPTBot there.
func productToken(v string) (token, letters string) {
	i, j := 0, -1
	for i < len(v) {
		c := v[i]
		if '0' <= c && c <= '9' {
			if j < 0 {
				j = i
			}
		} else if !(c == '-' || c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			break
		}
		i++
	}
	if j < 0 {
		j = i
	}
	return strings.ToLower(v[:i]), strings.ToLower(v[:j])
}

// maxRobotsOut is what Google's parser reads of a robots.txt (500 KiB);
// append mode keeps its file within it, so that the groups and the
// Sitemap line it adds at the end are read.
const maxRobotsOut = 500 << 10

// robotsText prepares an upstream robots.txt for reading line by line:
// without a byte order mark, every line ending in "\n" (RFC 9309 ends
// lines with CR, LF or CRLF), and cut after its last whole line within
// budget bytes.
func robotsText(up []byte, budget int) string {
	up = bytes.TrimPrefix(up, []byte("\xEF\xBB\xBF"))
	t := string(up)
	if strings.IndexByte(t, '\r') >= 0 {
		t = strings.ReplaceAll(strings.ReplaceAll(t, "\r\n", "\n"), "\r", "\n")
	}
	if t != "" && !strings.HasSuffix(t, "\n") {
		t += "\n"
	}
	if len(t) > budget {
		t = t[:max(budget, 0)]
		if i := strings.LastIndexByte(t, '\n'); i >= 0 {
			t = t[:i+1]
		} else {
			t = ""
		}
	}
	return t
}

// globalAgent reports whether a User-agent value names the global group
// as Google's parser reads it: "*" alone or followed by a space ("* # all"
// after a comment is cut); "*bot" is a product token of no letters, which
// names no crawler.
func globalAgent(value string) bool {
	return strings.HasPrefix(value, "*") && (len(value) == 1 || value[1] == ' ' || value[1] == '\t')
}

// appendedRobots is the append mode's file, built from the upstream's.
func (s *Sitemap) appendedRobots(up []byte) []byte {
	cfg := &s.cfg.Robots
	a := &robotsAppender{
		sitemapURL: s.cfg.Site.BaseURL + "/sitemap.xml",
		sig:        cfg.ContentSignal.Line(),
		ours:       map[string]bool{},
		replace:    s.enabled && !cfg.KeepUpstreamSitemaps(),
		wrote:      -1,
	}
	for _, g := range cfg.Groups {
		for _, ua := range g.UserAgents {
			a.ours[strings.ToLower(ua)] = true
		}
	}

	// What headgate adds, so that the upstream's part can leave room for
	// it within maxRobotsOut.
	var tail bytes.Buffer
	writeGroups(&tail, cfg.Groups)
	if s.enabled {
		tail.WriteString("\nSitemap: " + a.sitemapURL + "\n")
	}
	text := robotsText(up, maxRobotsOut-tail.Len()-len(a.sig)-64)

	b := &a.b
	b.Grow(len(text) + tail.Len() + 128)
	for len(text) > 0 {
		i := strings.IndexByte(text, '\n')
		a.line(text[:i+1])
		text = text[i+1:]
	}
	a.end()
	if a.sig != "" && !a.signalled {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("User-agent: *\nContent-Signal: " + a.sig + "\nDisallow:\n")
	}
	groups := tail.Bytes()
	if s.enabled {
		groups = groups[:len(groups)-len("\nSitemap: "+a.sitemapURL+"\n")]
	}
	if b.Len() == 0 {
		// writeGroups starts each group with a blank line.
		groups = bytes.TrimPrefix(groups, []byte("\n"))
	}
	b.Write(groups)
	if s.enabled && !a.hasOurs {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("Sitemap: " + a.sitemapURL + "\n")
	}
	return b.Bytes()
}

// robotsAppender copies the upstream's robots.txt a line at a time, less
// headgate's agents and, in replace mode, its Sitemap lines.
type robotsAppender struct {
	b          bytes.Buffer
	sitemapURL string          // headgate's sitemap
	sig        string          // headgate's Content-Signal, or ""
	ours       map[string]bool // the agents of headgate's groups, lower-cased
	replace    bool            // the upstream's Sitemap lines go

	inUA      bool // in a run of User-agent lines: no Allow or Disallow since the last
	kept      int  // User-agent lines of the current run kept
	dropped   int  // and dropped
	star      bool // the current run names "*"
	signalled bool // headgate's Content-Signal is written
	skip      bool // the current group lost all its agents: drop its rules
	hasOurs   bool // an upstream Sitemap line that stays names ours
	// The current group's rules: spelled as every parser reads them, or
	// only with a key Google reads by prefix or typo ("Disalow:"), which a
	// strict parser skips, so that the run of User-agent lines goes on
	// there and would take in the groups headgate appends.
	exact, loose bool     // of the last group whose rules went out
	group, wrote int      // the current run's number; the last written group's
	held         []string // other records inside the run, written when it ends
}

// endRun closes a run of User-agent lines: the lines held in it go out
// after them unless the group lost every agent.
func (a *robotsAppender) endRun() {
	a.inUA = false
	a.skip = a.kept == 0 && a.dropped > 0
	if !a.skip {
		for _, l := range a.held {
			a.b.WriteString(l)
		}
	}
	a.held = a.held[:0]
	if a.star && a.sig != "" && !a.signalled && !a.skip {
		a.b.WriteString("Content-Signal: " + a.sig + "\n")
		a.signalled = true
	}
}

// line copies one line of the upstream's file, with its "\n".
func (a *robotsAppender) line(line string) {
	b := &a.b
	key, value, ok, junk := robotsLine(strings.TrimSuffix(line, "\n"))
	if junk {
		return
	}
	if !ok {
		// A blank line after another (lines dropped above) is one too
		// many.
		if strings.TrimSpace(line) != "" || !bytes.HasSuffix(b.Bytes(), []byte("\n\n")) && b.Len() > 0 {
			b.WriteString(line)
		}
		return
	}
	switch key {
	case "user-agent":
		if !a.inUA {
			a.inUA, a.kept, a.dropped, a.star = true, 0, 0, false
			a.group++
		}
		// Dropped when any parser would read it as one of ours: with
		// its digits or, as RFC 9309's grammar, without them.
		if tok, letters := productToken(value); a.ours[tok] || a.ours[letters] {
			a.dropped++
			return
		}
		a.kept++
		a.star = a.star || globalAgent(value)
		b.WriteString(line)
		return
	case "sitemap":
		// Not a group member (RFC 9309 §2.2.4): kept or replaced
		// whatever group it stands in, and no end of a run.
		if a.replace {
			return
		}
		// Written where it stands, even inside a run of User-agent
		// lines or a group that loses its agents: no parser reads it
		// as part of a group.
		a.hasOurs = a.hasOurs || value == a.sitemapURL
		b.WriteString(line)
		return
	case "content-signal":
		// Ours replaces the * group's; another group's signal is that
		// group's agents' own (Googlebot reads its group, not *'s).
		if a.sig != "" && a.star {
			return
		}
	}
	if key != "allow" && key != "disallow" {
		// Any other record (Crawl-delay, Content-Signal, a key no
		// parser knows) neither ends a run of User-agent lines nor
		// starts a group: parsers that follow RFC 9309 skip it.
		if a.inUA {
			a.held = append(a.held, line)
		} else if !a.skip {
			b.WriteString(line)
		}
		return
	}
	if a.inUA {
		// The run of User-agent lines ends: the group's rules follow.
		a.endRun()
	}
	if a.skip {
		return
	}
	if a.wrote != a.group {
		a.wrote, a.exact, a.loose = a.group, false, false
	}
	if exactKey(line, key) {
		a.exact = true
	} else {
		a.loose = true
	}
	b.WriteString(line)
}

// end closes the upstream's last group, so that none of headgate's joins
// it, and drops trailing blank lines.
func (a *robotsAppender) end() {
	closed := false
	if a.inUA {
		// The file ends with User-agent lines and no rule: close the group,
		// or the groups below would join it.
		a.endRun()
		if a.kept > 0 {
			a.b.WriteString("Disallow:\n")
			closed = true
		}
	}
	if !closed && a.loose && !a.exact {
		// The last group that went out has only Google's typos for rules:
		// close it for the parsers that skip them (an empty Disallow
		// allows all, and Google, which reads the typo, gets nothing new).
		a.b.WriteString("Disallow:\n")
	}
	for bytes.HasSuffix(a.b.Bytes(), []byte("\n\n")) {
		a.b.Truncate(a.b.Len() - 1)
	}
}
