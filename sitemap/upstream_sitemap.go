package sitemap

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
)

// Sitemap sources an app already has (SPEC §16.5): the upstream's own
// sitemap or sitemap index, and "loc" lines in JSON Lines sources.

const upstreamSitemapPrefix = "upstream-sitemap:"

// Bounds of an upstream sitemap: what the protocol allows, so that a
// hostile or broken upstream costs bounded memory and time.
const (
	maxUpstreamBytes = maxFileBytes + 1<<20 // a document, uncompressed
	maxXMLToken      = 64 << 10             // one token (a <loc>'s text, a tag)
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

// errTooLarge ends a document over maxUpstreamBytes, or a token over
// maxXMLToken.
var errTooLarge = errors.New("larger than a sitemap may be")

// boundedReader refuses to deliver more than limit bytes in all, or more
// than maxXMLToken past the end of the decoder's last token: encoding/xml
// buffers a token whole, so this is what bounds its memory.
type boundedReader struct {
	r         io.Reader
	delivered int64
	limit     int64
	tokStart  int64 // bytes delivered when the decoder returned its last token
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.delivered >= b.limit {
		return 0, fmt.Errorf("%w: over %d bytes", errTooLarge, b.limit)
	}
	if b.delivered-b.tokStart > maxXMLToken {
		return 0, fmt.Errorf("%w: an XML token over %d bytes", errTooLarge, maxXMLToken)
	}
	p = p[:min(len(p), 16<<10, int(b.limit-b.delivered))]
	n, err := b.r.Read(p)
	b.delivered += int64(n)
	return n, err
}

// scanSitemapXML reads a sitemap document (gzip-compressed or not) as a
// stream and calls fn for each <url> or <sitemap> with its <loc> and
// <lastmod> texts; root is the root element's local name ("urlset" or
// "sitemapindex"). Namespaces are not checked: apps write the sitemap
// namespace, or none. It fails on a document that is not XML, whose root
// is neither, or that exceeds the bounds; fn has then seen what came
// before, each of it a complete element.
func scanSitemapXML(r io.Reader, fn func(root, loc, lastmod string)) (string, error) {
	br := bufio.NewReaderSize(r, 4096)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return "", fmt.Errorf("gzip: %w", err)
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, 4096)
	}
	lim := &boundedReader{r: br, limit: maxUpstreamBytes}
	dec := xml.NewDecoder(lim)
	dec.Strict = true
	root := ""
	depth := 0
	var item string  // "url" or "sitemap" being read, at depth 2
	var field string // "loc" or "lastmod" being read, at depth 3
	var loc, lastmod []byte
	var locLong bool
	for {
		tok, err := dec.RawToken()
		lim.tokStart = lim.delivered
		if err == io.EOF {
			if root == "" {
				return "", errors.New("not a sitemap: no root element")
			}
			if depth > 0 {
				return root, errors.New("the document ends inside an element")
			}
			return root, nil
		}
		if err != nil {
			if root == "" && !errors.Is(err, errTooLarge) {
				return "", fmt.Errorf("not XML: %w", err)
			}
			return root, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			name := t.Name.Local
			switch {
			case depth == 1:
				if name != "urlset" && name != "sitemapindex" {
					return "", fmt.Errorf("not a sitemap: the root element is <%s>, not <urlset> or <sitemapindex>", name)
				}
				root = name
			case depth == 2 && (root == "urlset" && name == "url" || root == "sitemapindex" && name == "sitemap"):
				item, loc, lastmod, locLong = name, loc[:0], lastmod[:0], false
			case depth == 3 && item != "" && (name == "loc" || name == "lastmod"):
				field = name
			}
		case xml.EndElement:
			switch {
			case depth == 3:
				field = ""
			case depth == 2 && item != "":
				if len(loc) > 0 && !locLong {
					fn(root, string(loc), strings.TrimSpace(string(lastmod)))
				}
				item = ""
			}
			depth--
			if depth < 0 {
				return root, errors.New("an end tag without its start")
			}
		case xml.CharData:
			switch field {
			case "loc":
				if len(loc)+len(t) > maxLocText {
					locLong = true
				} else {
					loc = append(loc, t...)
				}
			case "lastmod":
				if len(lastmod)+len(t) <= 64 {
					lastmod = append(lastmod, t...)
				}
			}
		}
	}
}
