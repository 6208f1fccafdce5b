package test

// The real-upstream test of SPEC §23's "second CMS": headgate, in process,
// in front of a real MediaWiki (Debian's mediawiki 1.39 with SQLite, served
// by PHP's built-in server on loopback with short URLs, set up by
// test/mediawiki/setup.sh, which test/run runs), with the config
// docs/cookbook.md tells a MediaWiki operator to copy
// (test/mediawiki/wiki.toml, the cookbook's block to the byte; only its
// upstream is replaced, by HEADGATE_UPSTREAM).
//
// Environment (setup.sh writes it to test/mediawiki/.env):
//   HEADGATE_MEDIAWIKI_URL      the wiki, headgate's upstream (required, else skip)
//   HEADGATE_MEDIAWIKI_SKIP     setup.sh's reason when it failed (skip with it)
//   HEADGATE_MEDIAWIKI_SERVER   the wiki's $wgServer: the recipe's base_url
//   HEADGATE_MEDIAWIKI_USER, HEADGATE_MEDIAWIKI_PASSWORD   the login

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/headgate/headgate/app"
	"github.com/headgate/headgate/audit"
	"github.com/headgate/headgate/rewrite"
	"github.com/headgate/headgate/rules"
)

// mediawikiRecipe is the config the test runs: docs/cookbook.md's
// MediaWiki block, copied (TestMediaWikiRecipeIsTheCookbooks keeps the two
// the same text).
var mediawikiRecipe = filepath.Join("mediawiki", "wiki.toml")

// TestMediaWikiRecipeIsTheCookbooks: the config the MediaWiki test proves
// is the one the cookbook prints, so that the recipe cannot drift from
// what is tested. Needs no wiki.
func TestMediaWikiRecipeIsTheCookbooks(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "cookbook.md"))
	if err != nil {
		t.Fatal(err)
	}
	block, err := cookbookBlock(doc, "## In front of MediaWiki", "```toml")
	if err != nil {
		t.Fatal(err)
	}
	recipe, err := os.ReadFile(mediawikiRecipe)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(block, recipe) {
		t.Fatalf("docs/cookbook.md's MediaWiki config and %s differ (copy the cookbook's block to the file, or the file to the cookbook): %s",
			mediawikiRecipe, firstDiff(block, recipe))
	}
	if !bytes.Contains(doc, []byte("MediaWiki 1.39")) {
		t.Error("docs/cookbook.md does not say which MediaWiki the recipe is tested against (MediaWiki 1.39)")
	}
}

// cookbookBlock returns the text of the first fenced block opened by fence
// after the heading.
func cookbookBlock(doc []byte, heading, fence string) ([]byte, error) {
	_, rest, ok := bytes.Cut(doc, []byte("\n"+heading+"\n"))
	if !ok {
		return nil, fmt.Errorf("docs/cookbook.md has no heading %q", heading)
	}
	_, rest, ok = bytes.Cut(rest, []byte("\n"+fence+"\n"))
	if !ok {
		return nil, fmt.Errorf("docs/cookbook.md has no %s block after %q", fence, heading)
	}
	block, _, ok := bytes.Cut(rest, []byte("\n```\n"))
	if !ok {
		return nil, fmt.Errorf("docs/cookbook.md: the %s block after %q does not end", fence, heading)
	}
	return append(block, '\n'), nil
}

// mediawiki is the wiki setup.sh made.
type mediawiki struct {
	URL    string // the wiki: http://127.0.0.1:8282
	Server string // its $wgServer, the recipe's base_url
}

func mediawikiSite(t *testing.T) mediawiki {
	t.Helper()
	if why := os.Getenv("HEADGATE_MEDIAWIKI_SKIP"); why != "" {
		t.Skip(why)
	}
	mw := mediawiki{URL: os.Getenv("HEADGATE_MEDIAWIKI_URL"), Server: envOr("HEADGATE_MEDIAWIKI_SERVER", "https://wiki.example")}
	if mw.URL == "" {
		t.Skip("HEADGATE_MEDIAWIKI_URL is unset: run test/mediawiki/setup.sh as root (test/run does) and export what it writes to test/mediawiki/.env")
	}
	res, _, err := newBrowser(t, "").try("GET", mw.URL+"/wiki/Main_Page", "", nil)
	if err != nil {
		t.Skipf("MediaWiki is not reachable at %s: %v (run test/mediawiki/setup.sh)", mw.URL, err)
	}
	if res.StatusCode != 200 {
		t.Skipf("MediaWiki at %s answers %d to /wiki/Main_Page: run test/mediawiki/setup.sh", mw.URL, res.StatusCode)
	}
	return mw
}

// mwHeadgate is headgate in process in front of the wiki, with the recipe.
type mwHeadgate struct {
	cfg  *rules.Config
	srv  *httptest.Server
	base string // the recipe's base_url
	b    *browser
}

func startMediaWikiHeadgate(t *testing.T, mw mediawiki) *mwHeadgate {
	t.Helper()
	src, err := os.ReadFile(mediawikiRecipe)
	if err != nil {
		t.Fatal(err)
	}
	env := func(k string) (string, bool) {
		if k == "HEADGATE_UPSTREAM" {
			return mw.URL, true
		}
		return "", false
	}
	cfg, err := rules.Parse(mediawikiRecipe, src, env)
	if err != nil {
		t.Fatalf("the cookbook's MediaWiki config: %v", err)
	}
	if base := strings.TrimSuffix(cfg.Site.BaseURL, "/"); base != mw.Server {
		t.Fatalf("the recipe's base_url %s is not the wiki's $wgServer %s (setup.sh's MW_SERVER)", base, mw.Server)
	}
	p, stop, err := app.Proxy(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return &mwHeadgate{cfg: cfg, srv: srv, base: mw.Server, b: newBrowser(t, "")}
}

// mwPage is what a crawler reads of one answer.
type mwPage struct {
	uri       string // what was asked for
	final     string // the request URI of the last answer, after redirects on the site
	status    int
	redirects []string
	robots    string // meta robots and X-Robots-Tag, lower-cased
	canonical string // <link rel=canonical> or the Link header's
	canonN    int    // how many canonicals the head holds
	desc      string
	descN     int
	title     string
	body      []byte
}

func (p mwPage) noindex() bool { return strings.Contains(p.robots, "noindex") }

func (p mwPage) String() string {
	s := fmt.Sprintf("%s → %d", p.uri, p.status)
	if len(p.redirects) > 0 {
		s += " via " + strings.Join(p.redirects, " → ")
	}
	return s + fmt.Sprintf(" robots=%q canonical=%q (%d) description=%q", p.robots, p.canonical, p.canonN, p.desc)
}

// get asks headgate for uri (sent as it is written: raw bytes stay raw),
// following redirects on the site's origin.
func (h *mwHeadgate) get(t *testing.T, uri string) mwPage {
	t.Helper()
	pg := mwPage{uri: uri}
	for hop := 0; ; hop++ {
		req, err := http.NewRequest("GET", h.srv.URL+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.URL.Opaque = uri // the request line carries uri byte for byte
		res, err := h.b.c.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", uri, err)
		}
		body, _ := io.ReadAll(io.LimitReader(res.Body, 8<<20))
		res.Body.Close()
		pg.final, pg.status, pg.body = uri, res.StatusCode, body
		if res.StatusCode/100 == 3 && hop < 5 {
			loc, err := url.Parse(res.Header.Get("Location"))
			if err == nil && (!loc.IsAbs() || loc.Scheme+"://"+loc.Host == h.base) {
				uri = loc.RequestURI()
				pg.redirects = append(pg.redirects, fmt.Sprintf("%d %s", res.StatusCode, uri))
				continue
			}
		}
		var robots []string
		robots = append(robots, res.Header.Values("X-Robots-Tag")...)
		if strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			mwHead(body, &pg, &robots)
		}
		// A Link header's canonical counts as a second one when it names
		// another URL than the head's.
		for _, c := range linkCanonicals(res.Header) {
			switch {
			case pg.canonN == 0:
				pg.canonical, pg.canonN = c, 1
			case c != pg.canonical:
				pg.canonN++
			}
		}
		pg.robots = strings.ToLower(strings.Join(robots, ", "))
		return pg
	}
}

// linkCanonicals returns the targets of the rel=canonical links of the
// Link headers (RFC 8288: comma-separated "<target>; params").
func linkCanonicals(h http.Header) []string {
	var out []string
	for _, v := range h.Values("Link") {
		for _, link := range strings.Split(v, ",") {
			target, params, ok := strings.Cut(strings.TrimSpace(link), ";")
			if !ok || !strings.HasPrefix(target, "<") || !strings.HasSuffix(target, ">") {
				continue
			}
			for _, p := range strings.Split(params, ";") {
				k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
				if strings.EqualFold(k, "rel") && slices.Contains(strings.Fields(strings.ToLower(strings.Trim(v, `"`))), "canonical") {
					out = append(out, strings.Trim(target, "<>"))
				}
			}
		}
	}
	return out
}

// mwHead reads the head as a browser builds it (x/net/html's tree
// builder): the canonicals, the robots metas, the description.
func mwHead(doc []byte, pg *mwPage, robots *[]string) {
	root, err := html.Parse(bytes.NewReader(doc))
	if err != nil {
		return
	}
	var hd *html.Node
	for n := range root.Descendants() {
		if n.Type == html.ElementNode && n.DataAtom == atom.Head {
			hd = n
			break
		}
	}
	if hd == nil {
		return
	}
	attr := func(n *html.Node, k string) string {
		for _, a := range n.Attr {
			if a.Key == k {
				return a.Val
			}
		}
		return ""
	}
	for n := hd.FirstChild; n != nil; n = n.NextSibling {
		if n.Type != html.ElementNode {
			continue
		}
		switch n.DataAtom {
		case atom.Title:
			if n.FirstChild != nil && pg.title == "" {
				pg.title = n.FirstChild.Data
			}
		case atom.Link:
			if slices.Contains(strings.Fields(strings.ToLower(attr(n, "rel"))), "canonical") {
				if pg.canonN == 0 {
					pg.canonical = attr(n, "href")
				}
				pg.canonN++
			}
		case atom.Meta:
			switch strings.ToLower(attr(n, "name")) {
			case "robots", "googlebot":
				*robots = append(*robots, attr(n, "content"))
			case "description":
				if pg.descN == 0 {
					pg.desc = attr(n, "content")
				}
				pg.descN++
			}
		}
	}
}

// mwArticle is one content page as MediaWiki's API lists it.
type mwArticle struct {
	Title     string `json:"title"`        // "Café au lait"
	Canonical string `json:"canonicalurl"` // https://wiki.example/wiki/Caf%C3%A9_au_lait
	NS        int    `json:"ns"`
	Redirect  *bool  `json:"redirect,omitempty"`
}

// mwQuery asks the wiki's API directly (not through headgate).
func mwQuery(t *testing.T, mw mediawiki, q url.Values, into any) {
	t.Helper()
	q.Set("format", "json")
	q.Set("formatversion", "2")
	q.Set("action", "query")
	res, body := newBrowser(t, "").do(t, "GET", mw.URL+"/w/api.php?"+q.Encode(), "", nil)
	if res.StatusCode != 200 {
		t.Fatalf("api.php?%s: %d: %s", q.Encode(), res.StatusCode, clip(body))
	}
	if err := json.Unmarshal(body, into); err != nil {
		t.Fatalf("api.php?%s: %v: %s", q.Encode(), err, clip(body))
	}
}

// mwArticles is every page of the namespaces the recipe's sitemap lists
// (main and category), redirects included, with MediaWiki's own canonical
// URL of each.
func mwArticles(t *testing.T, mw mediawiki) []mwArticle {
	var all []mwArticle
	for _, ns := range []string{"0", "14"} {
		var r struct {
			Query struct {
				Pages []mwArticle `json:"pages"`
			} `json:"query"`
		}
		mwQuery(t, mw, url.Values{"generator": {"allpages"}, "gapnamespace": {ns}, "gaplimit": {"500"},
			"prop": {"info"}, "inprop": {"url"}}, &r)
		all = append(all, r.Query.Pages...)
	}
	if len(all) < 9 {
		t.Fatalf("the wiki's API lists %d pages in the main and category namespaces, want the 9 setup.sh seeds", len(all))
	}
	return all
}

// spellings returns the ways a browser, a crawler or a hand-typed link
// may write the title key (spaces as underscores) in a URL path segment:
// MediaWiki's own, every byte but the unreserved ones escaped (a subpage's
// / too), lower-case hex, Go's path escaping (sub-delimiters like + and &
// raw), %20 for the underscore, raw UTF-8, and a lower-case first letter.
func spellings(key string) []string {
	var all, lower, mwStyle, raw strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case unreserved(c):
			all.WriteByte(c)
			lower.WriteByte(c)
		default:
			fmt.Fprintf(&all, "%%%02X", c)
			fmt.Fprintf(&lower, "%%%02x", c)
		}
		switch {
		case unreserved(c) || strings.IndexByte(";@$!*(),/:", c) >= 0:
			mwStyle.WriteByte(c) // wfUrlencode's set
		default:
			fmt.Fprintf(&mwStyle, "%%%02X", c)
		}
		if c >= 0x80 || unreserved(c) || strings.IndexByte("+&:/", c) >= 0 {
			raw.WriteByte(c)
		} else {
			fmt.Fprintf(&raw, "%%%02X", c)
		}
	}
	out := []string{mwStyle.String(), all.String(), strings.ReplaceAll(all.String(), "%2F", "/"), strings.ReplaceAll(lower.String(), "%2f", "/"),
		(&url.URL{Path: key}).EscapedPath(), raw.String()}
	if r, size := utf8.DecodeRuneInString(key); unicode.IsUpper(r) {
		// $wgCapitalLinks: the first letter is upper-case whatever the URL says
		out = append(out, url.PathEscape(string(unicode.ToLower(r))+key[size:]))
	}
	if strings.Contains(key, "_") {
		out = append(out, strings.ReplaceAll(mwStyle.String(), "_", "%20"))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// querySpellings: the title as a query value (+ must be %2B there: a raw
// + is a space).
func querySpellings(key string) []string {
	q := url.QueryEscape(key)
	out := []string{q, strings.ToLower(q), strings.ReplaceAll(q, "_", "+"), strings.ReplaceAll(q, "_", "%20")}
	lowerHex := func(s string) string {
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			if s[i] == '%' && i+2 < len(s) {
				b.WriteString(strings.ToLower(s[i : i+3]))
				i += 2
				continue
			}
			b.WriteByte(s[i])
		}
		return b.String()
	}
	out[1] = lowerHex(q)
	slices.Sort(out)
	return slices.Compact(out)
}

// mwKnownDefect says why a spelling does not hold yet, or "", by the URI
// its canonical is read from (where the wiki's own redirects led). The causes are
// headgate's, in package rules or sitemap, not the recipe's to fix (the
// report of this test's branch). A spelling it names that holds is an
// error: the defect is fixed, and its case here must go.
//
//   - /wiki/Main%20Page?utm_source=news: MediaWiki answers a title with
//     spaces 301 to its underscores only when the query is empty; with
//     another parameter it answers 200, and self names /wiki/Main%20Page.
//     No rule can turn a space into an underscore (no template filter
//     replaces, and a sitemap rule's canonical must be self: HG112).
//
// (Titles with + & : / — /wiki/C%2B%2B, /wiki/C++, /wiki/AT%26T,
// /wiki/Category%3ADrinks, /wiki/Tea%2FHistory — were one here until
// site.path_safe: the recipe spells every address as MediaWiki's links do,
// so each names the sitemap's <loc>.)
func mwKnownDefect(final string) string {
	path, query, _ := strings.Cut(final, "?")
	if !strings.HasPrefix(path, "/wiki/") {
		return ""
	}
	for i := 0; i+2 < len(path); i++ {
		if path[i] != '%' {
			continue
		}
		c, err := hexByte(path[i+1 : i+3])
		switch {
		case err != nil:
		case c == ' ' && query != "":
			return "MediaWiki answers a title with spaces and another query parameter 200, not 301 to underscores; self keeps %20"
		}
	}
	return ""
}

func TestMediaWiki(t *testing.T) {
	mw := mediawikiSite(t)
	h := startMediaWikiHeadgate(t, mw)
	pages := mwArticles(t, mw)

	// The articles: the main and category namespaces without redirects.
	var articles []mwArticle
	var redirects []string
	for _, p := range pages {
		if p.Redirect != nil && *p.Redirect {
			redirects = append(redirects, p.Title)
			continue
		}
		articles = append(articles, p)
	}
	if len(redirects) == 0 {
		t.Fatal("the wiki has no redirect page (setup.sh seeds Chai → Tea)")
	}

	// Each article's one canonical is its <loc> in headgate's sitemap: the
	// sitemap lists every article once (by MediaWiki's canonical URL,
	// percent-decoded) and nothing else — no redirects, talk or special
	// pages.
	want := map[string]string{} // title → canonical
	t.Run("sitemap", func(t *testing.T) {
		// The recipe names its sitemap by generateSitemap.php's --identifier
		// (wiki); the database is called something else, so a recipe that
		// relied on the default ($wgDBname) would find no sitemap here.
		var si struct {
			Query struct {
				General struct {
					WikiID string `json:"wikiid"`
				} `json:"general"`
			} `json:"query"`
		}
		mwQuery(t, mw, url.Values{"meta": {"siteinfo"}, "siprop": {"general"}}, &si)
		if id := si.Query.General.WikiID; id == "" || id == "wiki" {
			t.Fatalf("the wiki's database is %q: setup.sh must name it something other than the sitemap's identifier \"wiki\"", id)
		}
		byPath := map[string]string{} // decoded path → loc
		for _, loc := range h.sitemap(t, "/sitemap.xml") {
			u, err := url.Parse(loc)
			if err != nil || u.Scheme+"://"+u.Host != h.base {
				t.Errorf("sitemap <loc> %q is not on base_url %s", loc, h.base)
				continue
			}
			if prev, dup := byPath[u.Path]; dup {
				t.Errorf("sitemap lists one page twice: %s and %s", prev, loc)
			}
			byPath[u.Path] = loc
		}
		for _, a := range articles {
			u, err := url.Parse(a.Canonical)
			if err != nil {
				t.Fatal(err)
			}
			loc, ok := byPath[u.Path]
			if !ok {
				t.Errorf("sitemap lacks the article %q (%s)", a.Title, a.Canonical)
				continue
			}
			want[a.Title] = loc
			delete(byPath, u.Path)
		}
		for p, loc := range byPath {
			t.Errorf("sitemap lists %s (%s), which is no article or category of the wiki", loc, p)
		}
		t.Logf("sitemap: %d articles, %d redirects left out", len(want), len(redirects))
	})
	if len(want) != len(articles) {
		t.Fatalf("the sitemap subtest found %d of the %d articles: no canonical to check the spellings against (it must run with them)", len(want), len(articles))
	}

	var held, broken, known []string
	// judge: a 200 whose head names the one canonical, or is noindex
	// without a canonical (never both). canon "" means noindex is wanted.
	judge := func(t *testing.T, pg mwPage, canon string) {
		t.Helper()
		var why string
		switch {
		case pg.status != 200:
			why = "want 200"
		case pg.canonN > 1:
			why = fmt.Sprintf("%d canonicals", pg.canonN)
		case pg.noindex() && pg.canonical != "":
			why = "noindex and a canonical (mixed signals)"
		case !pg.noindex() && canon == "":
			why = "want noindex"
		case !pg.noindex() && spell(pg.canonical) != canon:
			why = "indexable, want canonical " + canon
		}
		var reason string
		if canon != "" { // the defect is one of canonicals, not of the views
			reason = mwKnownDefect(pg.final)
		}
		isKnown := reason != ""
		switch {
		case why == "" && isKnown:
			held = append(held, pg.String())
			t.Errorf("%v holds now: the defect mwKnownDefect names is fixed: remove it", pg)
		case why == "":
			held = append(held, pg.String())
		case isKnown:
			known = append(known, pg.String())
			t.Logf("known defect: %v: %s (%s)", pg, why, reason)
		default:
			broken = append(broken, pg.String())
			t.Errorf("%v: %s", pg, why)
		}
	}

	// Every URL spelling of an article: /wiki/T, /w/index.php?title=T,
	// /w/index.php/T, with every percent-encoding.
	t.Run("spellings", func(t *testing.T) {
		for _, a := range articles {
			key := strings.ReplaceAll(a.Title, " ", "_")
			var uris []string
			for _, s := range spellings(key) {
				uris = append(uris, "/wiki/"+s, "/w/index.php/"+s)
			}
			uris = append(uris, "/wiki/"+spellings(key)[0]+"?utm_source=news")
			for _, s := range querySpellings(key) {
				uris = append(uris, "/w/index.php?title="+s)
			}
			for _, u := range uris {
				judge(t, h.get(t, u), want[a.Title])
			}
		}
		// A redirect page (Chai → Tea) names its target.
		for _, r := range redirects {
			key := strings.ReplaceAll(r, " ", "_")
			for _, u := range []string{"/wiki/" + key, "/w/index.php?title=" + url.QueryEscape(key), "/w/index.php/" + key} {
				judge(t, h.get(t, u), want["Tea"])
			}
		}
	})

	// Edit, history, info, old revisions, diffs, the printable version, a
	// redirect page itself, special pages: noindex, no canonical.
	t.Run("views", func(t *testing.T) {
		var rev struct {
			Query struct {
				Pages []struct {
					PageID    int `json:"pageid"`
					Revisions []struct {
						RevID int `json:"revid"`
					} `json:"revisions"`
				} `json:"pages"`
			} `json:"query"`
		}
		mwQuery(t, mw, url.Values{"titles": {"Tea"}, "prop": {"revisions"}, "rvprop": {"ids"}}, &rev)
		if len(rev.Query.Pages) != 1 || len(rev.Query.Pages[0].Revisions) != 1 {
			t.Fatalf("no revision of Tea: %+v", rev)
		}
		id := fmt.Sprint(rev.Query.Pages[0].Revisions[0].RevID)
		page := fmt.Sprint(rev.Query.Pages[0].PageID)
		for _, u := range []string{
			"/wiki/Tea?action=edit", "/wiki/Tea?action=history", "/wiki/Tea?action=info",
			"/wiki/Tea?oldid=" + id, "/wiki/Tea?diff=prev&oldid=" + id, "/wiki/Tea?printable=yes",
			"/wiki/Chai?redirect=no", "/wiki/Z%C3%BCrich?action=edit", "/wiki/C%2B%2B?action=history",
			"/w/index.php?title=Tea&action=edit", "/w/index.php?title=Tea&action=history",
			"/w/index.php?title=Tea&oldid=" + id, "/w/index.php?oldid=" + id, "/w/index.php?curid=" + page,
			"/w/index.php?title=Chai&redirect=no", "/w/index.php/Tea?action=edit",
			"/wiki/Special:Search?search=M%C3%BCll", "/wiki/Special:RecentChanges", "/wiki/Special:AllPages",
			"/w/index.php?title=Special:CreateAccount&returnto=Tea", "/w/index.php?title=Special:Search&search=M%C3%BCll&fulltext=1",
		} {
			judge(t, h.get(t, u), "")
		}
	})

	// The wiki still works through headgate: the scripts' bytes, the API,
	// and an edit with a token (on a talk page, outside the sitemap).
	t.Run("works", func(t *testing.T) {
		direct := newBrowser(t, "")
		for _, u := range []string{
			"/w/load.php?lang=en&modules=startup&only=scripts&skin=vector",
			"/w/load.php?lang=en&modules=site.styles&only=styles&skin=vector",
			"/w/api.php?action=query&meta=siteinfo&siprop=namespaces&format=json",
		} {
			_, want := direct.do(t, "GET", mw.URL+u, "", nil)
			pg := h.get(t, u)
			if pg.status != 200 || !bytes.Equal(pg.body, want) {
				t.Errorf("%s through headgate: %d, %d bytes, not the wiki's %d bytes: %s", u, pg.status, len(pg.body), len(want), firstDiff(pg.body, want))
			}
		}
		b := newBrowser(t, "")
		var tok struct {
			Query struct {
				Tokens struct {
					CSRF string `json:"csrftoken"`
				} `json:"tokens"`
			} `json:"query"`
		}
		res, body := b.do(t, "GET", h.srv.URL+"/w/api.php?action=query&meta=tokens&format=json&formatversion=2", "", nil)
		if err := json.Unmarshal(body, &tok); err != nil || res.StatusCode != 200 || tok.Query.Tokens.CSRF == "" {
			t.Fatalf("no edit token through headgate: %d %v %s", res.StatusCode, err, clip(body))
		}
		text := "Edited through headgate at " + time.Now().UTC().Format(time.RFC3339Nano)
		res, body = b.do(t, "POST", h.srv.URL+"/w/api.php", "", url.Values{
			"action": {"edit"}, "title": {"Talk:Zürich"}, "text": {text}, "summary": {"headgate test"},
			"token": {tok.Query.Tokens.CSRF}, "format": {"json"}, "formatversion": {"2"},
		})
		if res.StatusCode != 200 || !bytes.Contains(body, []byte(`"result":"Success"`)) {
			t.Fatalf("the edit through headgate: %d %s", res.StatusCode, clip(body))
		}
		pg := h.get(t, "/wiki/Talk:Z%C3%BCrich")
		if pg.status != 200 || !bytes.Contains(pg.body, []byte(text)) {
			t.Errorf("the edited page through headgate: %d, the text is not there", pg.status)
		}
	})

	// The descriptions headgate writes pass its own audit, or none is
	// written: the audit, in process, crawls headgate in front of the wiki.
	t.Run("audit", func(t *testing.T) {
		o := audit.Options{Config: h.cfg, MaxPages: 80, Concurrency: 2, Timeout: 30 * time.Second}
		stop, err := app.AuditInProcess(&o)
		if err != nil {
			t.Fatal(err)
		}
		defer stop()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		// Every article first (the sitemap's <loc>s), then what they link to.
		var start []string
		for _, loc := range want {
			start = append(start, loc)
		}
		slices.Sort(start)
		rep, err := audit.Run(ctx, o, start)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		written := 0 // descriptions headgate wrote
		for _, p := range rep.Pages {
			seen[p.URL] = true
			for _, c := range p.Changes {
				if c.Identity == "description" && c.Action == rewrite.Wrote {
					written++
					t.Logf("headgate wrote a description on %s: %q", p.URL, c.Value)
				}
			}
		}
		for _, loc := range start {
			if !seen[loc] {
				t.Errorf("the audit did not read the article %s", loc)
			}
		}
		checks := map[string]int{}
		for _, f := range rep.Findings {
			checks[f.Check]++
			if checks[f.Check] <= 3 && os.Getenv("HEADGATE_MEDIAWIKI_DUMP") != "" {
				t.Logf("finding %s %s: %s", f.Check, f.URL, f.Detail)
			}
			if strings.HasPrefix(f.Check, "description-") && f.Check != audit.DescriptionMissing {
				t.Errorf("audit: %s %s: %s", f.Check, f.URL, f.Detail)
			}
		}
		t.Logf("audit: headgate wrote %d descriptions", written)
		t.Logf("audit: %d pages, findings by check: %v", len(rep.Pages), checks)
	})

	t.Logf("%d spellings and views hold, %d are known defects, %d fail", len(held), len(known), len(broken))
	if os.Getenv("HEADGATE_MEDIAWIKI_DUMP") != "" {
		for _, s := range held {
			t.Log("holds: " + s)
		}
	}
}

// sitemap reads headgate's sitemap (an index is followed one level), its
// <loc>s fetched through headgate by their path.
func (h *mwHeadgate) sitemap(t *testing.T, uri string) []string {
	t.Helper()
	pg := h.get(t, uri)
	if pg.status != 200 {
		t.Fatalf("%s: %d: %s", uri, pg.status, clip(pg.body))
	}
	var doc struct {
		URLs     []string `xml:"url>loc"`
		Sitemaps []string `xml:"sitemap>loc"`
	}
	if err := xml.Unmarshal(pg.body, &doc); err != nil {
		t.Fatalf("%s: %v: %s", uri, err, clip(pg.body))
	}
	locs := doc.URLs
	for _, s := range doc.Sitemaps {
		u, err := url.Parse(s)
		if err != nil || u.Scheme+"://"+u.Host != h.base {
			t.Fatalf("%s names a child sitemap %q off base_url", uri, s)
		}
		locs = append(locs, h.sitemap(t, u.RequestURI())...)
	}
	return locs
}
