package sitemap

import (
	"bytes"
	"strings"

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
// Sitemap line already names it).

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
	key = strings.ToLower(strings.TrimSpace(k))
	switch key {
	case "useragent", "user agent":
		key = "user-agent"
	}
	return key, strings.TrimSpace(v), true, false
}

// productToken is the agent a User-agent value names, as Google's parser
// reads it: its leading letters, digits, "-" and "_" ("CCBot/2.0" and
// "CCBot Disallow: /" both name CCBot), lower-case.
func productToken(v string) string {
	i := 0
	for i < len(v) {
		c := v[i]
		if !(c == '-' || c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			break
		}
		i++
	}
	return strings.ToLower(v[:i])
}

// appendedRobots is the append mode's file, built from the upstream's.
func (s *Sitemap) appendedRobots(up []byte) []byte {
	cfg := &s.cfg.Robots
	sitemapURL := s.cfg.Site.BaseURL + "/sitemap.xml"
	sig := cfg.ContentSignal.Line()
	ours := map[string]bool{}
	for _, g := range cfg.Groups {
		for _, a := range g.UserAgents {
			ours[strings.ToLower(a)] = true
		}
	}
	replace := s.enabled && !cfg.KeepUpstreamSitemaps()

	var b bytes.Buffer
	b.Grow(len(up) + 512)
	inUA := false         // the last record line was a User-agent line
	kept, dropped := 0, 0 // User-agent lines of the current run
	star := false         // the current run names "*"
	signalled := false    // headgate's Content-Signal is written
	skip := false         // the current group lost all its agents: drop its rules
	hasOurs := false      // an upstream Sitemap line that stays names ours
	text := string(up)
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	for len(text) > 0 {
		i := strings.IndexByte(text, '\n')
		line := text[:i+1]
		text = text[i+1:]
		key, value, ok, junk := robotsLine(strings.TrimSuffix(line, "\n"))
		if junk {
			continue
		}
		if !ok {
			// A blank line after another (lines dropped above) is one too
			// many.
			if strings.TrimSpace(line) != "" || !bytes.HasSuffix(b.Bytes(), []byte("\n\n")) && b.Len() > 0 {
				b.WriteString(line)
			}
			continue
		}
		if key == "user-agent" {
			if !inUA {
				inUA, kept, dropped, star = true, 0, 0, false
			}
			if ours[productToken(value)] {
				dropped++
				continue
			}
			kept++
			star = star || strings.HasPrefix(value, "*")
			b.WriteString(line)
			continue
		}
		if inUA {
			// The run of User-agent lines ends: the group's rules follow.
			inUA = false
			skip = kept == 0 && dropped > 0
			if star && sig != "" && !signalled && !skip {
				b.WriteString("Content-Signal: " + sig + "\n")
				signalled = true
			}
		}
		switch key {
		case "sitemap":
			// Not a group member (RFC 9309 §2.2.4): kept or replaced
			// whatever group it stands in.
			if replace {
				continue
			}
			hasOurs = hasOurs || value == sitemapURL
			b.WriteString(line)
			continue
		case "content-signal":
			if sig != "" {
				continue
			}
		}
		if skip {
			continue
		}
		b.WriteString(line)
	}
	if inUA {
		// The file ends with User-agent lines and no rule: close the group,
		// or the groups below would join it.
		if star && sig != "" && !signalled {
			b.WriteString("Content-Signal: " + sig + "\n")
			signalled = true
		}
		if kept > 0 {
			b.WriteString("Disallow:\n")
		}
	}
	for bytes.HasSuffix(b.Bytes(), []byte("\n\n")) {
		b.Truncate(b.Len() - 1)
	}
	if sig != "" && !signalled {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("User-agent: *\nContent-Signal: " + sig + "\nDisallow:\n")
	}
	if b.Len() == 0 {
		// writeGroups starts each group with a blank line.
		var g bytes.Buffer
		writeGroups(&g, cfg.Groups)
		b.Write(bytes.TrimPrefix(g.Bytes(), []byte("\n")))
	} else {
		writeGroups(&b, cfg.Groups)
	}
	if s.enabled && !hasOurs {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("Sitemap: " + sitemapURL + "\n")
	}
	return b.Bytes()
}
