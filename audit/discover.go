package audit

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/headgate/headgate/internal/sitemapxml"
)

// Where the crawl starts besides its start URLs: robots.txt, and the
// sitemaps it and the start URLs name.

// readRobots reads robots.txt for the robots checks, records what it
// read (Report.Robots), and returns the keys of the sitemaps it names.
func (c *crawler) readRobots(ctx context.Context) []string {
	const key = "/robots.txt"
	u := c.site.url(key)
	c.robotsInfo = &RobotsInfo{URL: u}
	invalid := func(detail string) {
		c.findings = append(c.findings, Finding{Check: RobotsTxtInvalid, Severity: severity(RobotsTxtInvalid), URL: u, Detail: detail})
	}
	ctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	resp, err := c.f.fetch(ctx, key)
	// A redirect is reported, then followed as crawlers follow it (RFC
	// 9309 §2.3.1.2: at least five hops), on this site: the target's rules
	// are the ones they apply.
	redirected := false
	for hop := 0; err == nil && resp.status >= 300 && resp.status < 400 && resp.location != nil; hop++ {
		if !redirected {
			c.robotsInfo.Status = resp.status
			invalid(fmt.Sprintf("robots.txt answers %d, not 200, a redirect to %s: crawlers follow at most five hops, and read the target's rules for this origin", resp.status, norm(resp.location)))
			redirected = true
		}
		next, ok := c.site.keyOf(resp.location)
		if !ok || hop == 5 {
			break
		}
		resp.body.Close()
		resp, err = c.f.fetch(ctx, next)
	}
	if err != nil {
		c.robotsInfo.Error = errText(err)
		invalid("robots.txt does not answer (" + errText(err) + "): crawlers treat an unreachable robots.txt as disallowing the whole site (RFC 9309 §2.3.1.4)")
		return nil
	}
	defer resp.body.Close()
	ct := resp.header.Get("Content-Type")
	c.robotsInfo.Status, c.robotsInfo.ContentType = resp.status, ct
	switch {
	case redirected && resp.status >= 300 && resp.status < 400:
		return nil // to another site, or more than five hops: no rules read
	case resp.status >= 500:
		invalid(fmt.Sprintf("robots.txt answers %d: crawlers take the whole site as disallowed until it answers (RFC 9309 §2.3.1.4)", resp.status))
		return nil
	case resp.status >= 400:
		return nil // no robots.txt: everything is allowed (RFC 9309 §2.3.1.3)
	case resp.status != http.StatusOK:
		detail := fmt.Sprintf("robots.txt answers %d, not 200", resp.status)
		if resp.location != nil {
			detail += ", a redirect to " + norm(resp.location) + ": crawlers follow at most five hops, and read the target's rules for this origin"
		}
		invalid(detail)
		return nil
	case isHTML(ct):
		invalid(fmt.Sprintf("robots.txt is served as %q, an HTML page, not text/plain: crawlers find no rules in it", clip(ct, 80)))
		return nil
	}
	if mt, _, _ := strings.Cut(ct, ";"); !strings.EqualFold(strings.TrimSpace(mt), "text/plain") {
		if ct == "" {
			invalid("robots.txt has no Content-Type: serve it as text/plain")
		} else {
			invalid(fmt.Sprintf("robots.txt is served as %q, not text/plain", clip(ct, 80)))
		}
	}
	rt := parseRobots(resp.body)
	c.robotsInfo.Bytes, c.robotsInfo.Lines = rt.bytes, rt.lines
	c.robotsInfo.Rules, c.robotsInfo.GoogleRules, c.robotsInfo.Sitemaps = len(rt.rules), len(rt.google), len(rt.sitemaps)
	c.robotsInfo.SHA256 = rt.sha256
	if rt.tooLong {
		invalid(fmt.Sprintf("robots.txt is longer than %d KiB: crawlers read only the first %d KiB (RFC 9309 §2.5); the rules after it are ignored", maxRobotsBytes>>10, maxRobotsBytes>>10))
	}
	for _, b := range rt.bad {
		invalid("robots.txt " + b.String() + ": crawlers ignore the line")
	}
	if more := rt.badCount - len(rt.bad); more > 0 {
		invalid(fmt.Sprintf("robots.txt has %d more lines that do not parse", more))
	}
	if c.f.staging && rt.disallowAll() {
		c.skip(u, "site.mode is staging and robots.txt disallows everything, as headgate's staging robots.txt does: robots-blocked, robots-blocks-duplicate and canonical-to-blocked are not checked")
	} else {
		c.robots = rt
	}
	var keys []string
	for _, s := range rt.sitemaps {
		v, kind := resolveRef(c.site.parse("/"), s)
		if kind != refOK {
			continue
		}
		if k, ok := c.site.keyOf(v); ok {
			keys = append(keys, k)
		} else {
			c.skip(norm(v), "sitemap on another site, not read")
		}
	}
	return keys
}

// readSitemaps reads /sitemap.xml and the sitemaps robots.txt names,
// following a sitemap index one level down.
func (c *crawler) readSitemaps(ctx context.Context, extra []string) {
	type file struct {
		key   string
		level int
	}
	files := []file{{"/sitemap.xml", 0}}
	seen := map[string]bool{"/sitemap.xml": true}
	for _, k := range extra {
		if !seen[k] {
			seen[k] = true
			files = append(files, file{k, 0})
		}
	}
	full := false
	for i := 0; i < len(files); i++ {
		fl := files[i]
		c.readSitemap(ctx, fl.key, func(loc string, index bool) bool {
			v, kind := resolveRef(c.site.parse(fl.key), loc)
			if kind != refOK {
				c.skip(clip(loc, 120), "sitemap <loc> is not an http(s) URL")
				return true
			}
			k, ok := c.site.keyOf(v)
			if !ok {
				c.skip(norm(v), "sitemap URL on another site, not checked")
				return true
			}
			if index {
				switch {
				case fl.level > 0:
					c.skip(c.site.url(fl.key), "a sitemap index inside a sitemap index: not followed")
					c.sitemapLost = true // what it lists is not known
					return false
				case len(files) >= maxSitemapParts:
					c.skip(c.site.url(fl.key), fmt.Sprintf("sitemap index names more than %d files: the rest are not read", maxSitemapParts))
					c.sitemapLost = true
					return false
				case !seen[k]:
					seen[k] = true
					files = append(files, file{k, fl.level + 1})
				}
				return true
			}
			if len(c.sitemapOrder) >= maxSitemapURLs {
				full, c.sitemapLost = true, true
				return false
			}
			id := c.intern(k)
			if !c.sitemap[id] {
				c.sitemap[id] = true
				c.sitemapOrder = append(c.sitemapOrder, id)
			}
			return true
		})
	}
	if full {
		c.skip("", fmt.Sprintf("the sitemaps list more than %d URLs: the rest are not checked", maxSitemapURLs))
	}
}

func (c *crawler) readSitemap(ctx context.Context, key string, emit func(string, bool) bool) {
	u := c.site.url(key)
	ctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	resp, err := c.f.fetch(ctx, key)
	if err != nil {
		c.skip(u, "sitemap: no answer ("+errText(err)+")")
		c.sitemapLost = true
		return
	}
	defer resp.body.Close()
	if resp.status != http.StatusOK {
		c.skip(u, fmt.Sprintf("sitemap answers %d: its URLs are not checked", resp.status))
		// A file robots.txt or an index names is missed; a site may well
		// have no /sitemap.xml.
		c.sitemapLost = c.sitemapLost || key != "/sitemap.xml"
		return
	}
	root, err := parseSitemap(&limited{r: resp.body, n: maxSitemapBytes}, emit)
	switch {
	case err != nil:
		c.skip(u, "sitemap does not parse ("+errText(err)+"): the URLs before the error are checked")
		c.sitemapLost = true
	case root == "urlset":
		// A list of URLs was read: sitemap-missing may say what it lacks.
		// An index alone says nothing of the URLs, whose files may fail.
		c.sitemapRead = true
	}
}

// sitemapLimits are the audit's bounds on one sitemap file: the zero
// Limits, 64 MiB uncompressed, 1 MiB a token and 32 levels, as
// docs/audit.md says, and 4,096 bytes a <loc>.
var sitemapLimits = sitemapxml.Limits{}

// parseSitemap streams a sitemap file, calling emit for each <loc> of a
// <urlset> (index false) or a <sitemapindex> (index true), and returns the
// root element's name. A gzipped file is read through gzip. emit returns
// false to stop early.
func parseSitemap(r io.Reader, emit func(loc string, index bool) bool) (root string, err error) {
	return sitemapxml.Scan(r, sitemapLimits, func(root string, e sitemapxml.Entry) bool {
		loc := strings.TrimSpace(e.Loc)
		return loc == "" || emit(loc, root == "sitemapindex")
	})
}
