package sitemap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"

	"github.com/headgate/headgate/internal/sitemapxml"
)

// Sitemap sources an app already has (SPEC §16.5): the upstream's own
// sitemap or sitemap index, and "loc" lines in JSON Lines sources.

const upstreamSitemapPrefix = "upstream-sitemap:"

// Bounds of an upstream sitemap: what the protocol allows, so that a
// hostile or broken upstream costs bounded memory and time.
const (
	maxUpstreamBytes = maxFileBytes + 1<<20 // a document, uncompressed
	maxXMLToken      = 64 << 10             // one token (a <loc>'s text, a tag, a comment)
	maxChildren      = maxFiles             // sitemaps one index may name
	maxLocText       = 4 * maxLoc           // a <loc> or <lastmod> text kept to look at
)

// EmptyError is returned by WriteFiles and WriteTo, after the files are
// written, when a rule's source yielded lines but no entry: an empty
// sitemap is never silent (§16.5).
type EmptyError struct {
	Rules []string // the rules' patterns
}

func (e *EmptyError) Error() string {
	return fmt.Sprintf("the source of %s yielded lines but no entry (see the log)", strings.Join(quoteEach(e.Rules), ", "))
}

func quoteEach(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// checkEmpty logs an error for a rule whose source yielded lines but no
// entry, and remembers the rule.
func (g *generation) checkEmpty() {
	if g.rule.SitemapSource == "" || !g.rule.Pattern.HasParams() || g.lines == 0 || g.nlisted > 0 {
		return
	}
	g.s.log.Error("sitemap: the source yielded lines but no entry: the rule lists nothing",
		"rule", g.rule.Match, "source", g.rule.SitemapSource, "lines", g.lines, "first_problem", g.rep.first)
	g.empty = append(g.empty, g.rule.Match)
}

// record lists one record of a source: by its params or, for a "loc"
// record, by what the rule's pattern binds from the loc's path.
func (g *generation) record(rec *record) {
	if rec.Loc == "" {
		g.entry(rec.Params, rec.Lastmod, rec.Pos)
		return
	}
	path, why := g.locPath(rec.Loc)
	if why != "" {
		g.rep.add(why, rec.Pos, func() string { return fmt.Sprintf("loc %.200q: %s", rec.Loc, locText(why)) })
		return
	}
	params, ok := g.rule.Pattern.Bind(path)
	if !ok {
		if rec.Pos.kind != posSitemap {
			g.rep.add(reasonLocNoMatch, rec.Pos, func() string {
				return fmt.Sprintf("loc %.200q: the pattern %s does not match its path", rec.Loc, g.rule.Match)
			})
		}
		return // in a sitemap, another rule's page
	}
	g.entry(params, rec.Lastmod, rec.Pos)
}

// ownLoc reports whether a loc record names the pattern of a rule without
// parameters.
func (g *generation) ownLoc(rec *record) bool {
	path, why := g.locPath(rec.Loc)
	if why != "" {
		return false
	}
	_, ok := g.rule.Pattern.Bind(path)
	return ok
}

func locText(why string) string {
	switch why {
	case reasonOtherHost:
		return "on neither the upstream's nor base_url's origin: ignored"
	case reasonTooLarge:
		return "too long"
	}
	return "not a path or an http(s) URL without a query"
}

// locPath returns the escaped path of a loc: a path ("/…"), or an absolute
// http(s) URL on the upstream's or base_url's origin. A loc with a query
// or fragment names no address a pattern can match.
func (g *generation) locPath(loc string) (string, string) {
	loc = strings.TrimSpace(loc)
	if len(loc) > maxLocText {
		return "", reasonTooLarge
	}
	if strings.HasPrefix(loc, "/") && !strings.HasPrefix(loc, "//") {
		if strings.ContainsAny(loc, "?#\\") {
			return "", reasonBadLoc
		}
		return loc, ""
	}
	u, err := url.Parse(loc)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.User != nil || u.Opaque != "" {
		return "", reasonBadLoc
	}
	if !g.s.ownOrigin(u) {
		return "", reasonOtherHost
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return "", reasonBadLoc
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	return p, ""
}

// ownOrigin reports whether u is on the upstream's origin or base_url's
// (§16.5: an app behind preserve_host names its public host). Origins
// include the scheme (§17); a default port is the same as none.
func (s *Sitemap) ownOrigin(u *url.URL) bool {
	o := origin(u)
	if o == s.cfg.Site.BaseURL {
		return true
	}
	if up, err := url.Parse(s.cfg.Server.Upstream); err == nil && up.Host != "" {
		return o == origin(up)
	}
	return false
}

func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Host)
	switch scheme {
	case "https":
		host = strings.TrimSuffix(host, ":443")
	case "http":
		host = strings.TrimSuffix(host, ":80")
	}
	return scheme + "://" + host
}

// posSitemap is a <loc> of an upstream sitemap: n is its position in the
// document it stands in.
const posSitemap posKind = 100

// upstreamSitemap reads the upstream's sitemap at path: a <urlset>, or a
// <sitemapindex> whose child sitemaps are read in turn (one level). Each
// page <loc> becomes a loc record for fn. A top-level document that can
// not be read or is not a sitemap fails the source; a child that fails is
// counted in the rule's warning and the rest goes on.
func (g *generation) upstreamSitemap(ctx context.Context, path string, fn func(*record)) error {
	if g.s.fetch == nil {
		return errors.New("no upstream to read from (Options.Fetch is nil)")
	}
	rec := &record{}
	n := 0
	page := func(loc, lastmod string) {
		n++
		g.lines++
		rec.Pos, rec.Loc, rec.Lastmod, rec.Params = position{posSitemap, n}, loc, lastmod, nil
		fn(rec)
	}
	children := 0
	child := func(loc, _ string) {
		g.lines++
		children++
		pos := position{posSitemap, children}
		if children > maxChildren {
			g.rep.add(reasonTooLarge, pos, func() string {
				return fmt.Sprintf("the index names more than %d sitemaps: the rest is not read", maxChildren)
			})
			return
		}
		cpath, why := g.childPath(loc)
		if why != "" {
			g.rep.add(why, pos, func() string { return fmt.Sprintf("child sitemap %.200q: %s", loc, locText(why)) })
			return
		}
		root, err := g.readUpstreamSitemap(ctx, cpath, page, nil)
		switch {
		case err != nil && ctx.Err() != nil:
			return // the source's time is up: reported by the caller
		case err != nil:
			g.rep.add(reasonBadSitemap, pos, func() string { return fmt.Sprintf("child sitemap %s: %v", cpath, err) })
		case root == "sitemapindex":
			g.rep.add(reasonNestedIndex, pos, func() string {
				return fmt.Sprintf("child sitemap %s is an index itself: an index is followed one level", cpath)
			})
		}
	}
	_, err := g.readUpstreamSitemap(ctx, path, page, child)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil && ctx.Err() == context.DeadlineExceeded && g.ctx.Err() == nil {
		err = fmt.Errorf("not read within %v: %w", g.s.timeout, err)
	}
	return err
}

// childPath is the upstream path (with its query) of a child sitemap's loc.
func (g *generation) childPath(loc string) (string, string) {
	loc = strings.TrimSpace(loc)
	u, err := url.Parse(loc)
	if err != nil || len(loc) > maxLocText {
		return "", reasonBadLoc
	}
	if u.Scheme == "" && u.Host == "" && strings.HasPrefix(loc, "/") && !strings.HasPrefix(loc, "//") {
		// a path: on the upstream
	} else if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.User != nil {
		return "", reasonBadLoc
	} else if !g.s.ownOrigin(u) {
		return "", reasonOtherHost
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return p, ""
}

// readUpstreamSitemap fetches one sitemap document and scans it: page
// locs go to page, and, when child is not nil, an index's locs to child
// (a nested index's are ignored). It returns the root element's name.
func (g *generation) readUpstreamSitemap(ctx context.Context, path string, page, child func(loc, lastmod string)) (string, error) {
	rc, err := g.s.fetch(ctx, path)
	if err != nil {
		return "", err
	}
	if rc == nil {
		return "", errors.New("fetch returned no body")
	}
	body := newCtxReader(ctx, rc)
	defer body.Close()
	return scanSitemapXML(body, func(root, loc, lastmod string) {
		switch {
		case root == "urlset":
			page(loc, lastmod)
		case child != nil:
			child(loc, lastmod)
		}
	})
}

// upstreamLimits are the bounds of one upstream sitemap document.
var upstreamLimits = sitemapxml.Limits{Bytes: maxUpstreamBytes, Token: maxXMLToken, Loc: maxLocText}

// scanSitemapXML reads a sitemap document (gzip-compressed or not) as a
// stream and calls fn for each <url> or <sitemap> with its <loc> and
// <lastmod> texts; root is the root element's local name ("urlset" or
// "sitemapindex"). It fails on a document that is not XML, whose root is
// neither, or that exceeds the bounds; fn has then seen what came before,
// each of it a complete element.
func scanSitemapXML(r io.Reader, fn func(root, loc, lastmod string)) (string, error) {
	return sitemapxml.Scan(r, upstreamLimits, func(root string, e sitemapxml.Entry) bool {
		fn(root, e.Loc, e.Lastmod)
		return true
	})
}
