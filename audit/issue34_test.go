package audit

import (
	"net/url"
	"slices"
	"strings"
	"testing"
)

// The audit's part of SPEC §23: no canonical-missing on a noindex page,
// the page budget spent on indexable pages first, and a Location of /\host
// read as a browser reads it.

// A wiki's edit and history views are noindex and have no canonical: they
// ask to be left out, so there is no original to name. Through headgate,
// as `headgate audit` runs by default.
func TestInProcessNoindexNeedsNoCanonical(t *testing.T) {
	r, _ := auditInProcess(t, map[string]resp{
		"/":                        doc(clean("/"), `<a href="/wiki/Tea">Tea</a>`),
		"/wiki/Tea":                doc(`<title>Tea on the audit's test site</title>`, `<a href="/wiki/Tea?action=edit">edit</a> <a href="/wiki/Tea?action=history">history</a> <a href="/wiki/Tea?action=raw">raw</a>`),
		"/wiki/Tea?action=edit":    doc(`<title>Editing Tea</title><meta name="robots" content="noindex,nofollow">`, ""),
		"/wiki/Tea?action=history": {header: map[string]string{"X-Robots-Tag": "noindex"}, body: `<title>History of Tea</title>`},
		"/wiki/Tea?action=raw":     {header: map[string]string{"X-Robots-Tag": "googlebot: noindex"}, body: `<title>Raw</title>`},
	}, "", Options{}, "/")
	if got := pathsOf(r, base, CanonicalMissing); !slices.Equal(got, []string{"/wiki/Tea"}) {
		t.Errorf("canonical-missing on %v, want only the indexable /wiki/Tea", got)
	}
	for _, p := range []string{"/wiki/Tea?action=edit", "/wiki/Tea?action=history", "/wiki/Tea?action=raw"} {
		if pageOf(r, base+p) == nil {
			t.Errorf("%s not crawled: a noindex page is still reported", p)
		}
	}
}

// resolveRef reads "\" as "/" before the query in http(s), as the WHATWG
// URL parser does.
func TestResolveRefBackslash(t *testing.T) {
	b, _ := url.Parse("https://site.example/dir/page")
	for _, tc := range []struct{ in, want string }{
		{`/\evil.example`, "https://evil.example/"},
		{`/\evil.example/x?q=\`, `https://evil.example/x?q=\`},
		{`\\evil.example\x`, "https://evil.example/x"},
		{`/\\evil.example`, "https://evil.example/"},
		{`\/evil.example/`, "https://evil.example/"},
		{`https:\\evil.example\a`, "https://evil.example/a"},
		{`HTTP:/\evil.example`, "http://evil.example/"},
		{`\a\b`, "https://site.example/a/b"},
		{`a\b`, "https://site.example/dir/a/b"},
		{`/a?x=\\y#\z`, `https://site.example/a?x=\\y`},
		{`///evil.example/x`, "https://evil.example/x"},
		{`/ok`, "https://site.example/ok"},
	} {
		u, kind := resolveRef(b, tc.in)
		if kind != refOK || norm(u) != tc.want {
			t.Errorf("resolveRef(%q) = %v %v, want %s", tc.in, u, kind, tc.want)
		}
	}
	if _, kind := resolveRef(b, `mailto:a\b@x`); kind != refScheme {
		t.Errorf("mailto: %v", kind)
	}
}

// A Location of /\host goes to another host: an external redirect, not a
// path on the site to crawl. Live and through headgate.
func TestRedirectBackslashIsAnotherHost(t *testing.T) {
	site := map[string]resp{
		"/":    doc(clean("/"), `<a href="/go">go</a> <a href="/go2">go2</a> <a href="/go3">go3</a>`),
		"/go":  redirect(302, `/\evil.example/landing`),
		"/go2": redirect(301, `\\evil.example\landing`),
		"/go3": redirect(301, `/\\evil.example`),
	}
	// What net/url alone would make of them: paths on the site.
	for _, p := range []string{"/evil.example/landing", "/%5Cevil.example/landing", `/\evil.example/landing`, "/%5C%5Cevil.example%5Clanding", "/%5C%5Cevil.example", "//evil.example/landing"} {
		site[p] = withHead(p, "")
	}
	check := func(t *testing.T, r *Report, origin string, up func() []string) {
		t.Helper()
		for p, want := range map[string]string{
			"/go":  "http://evil.example/landing",
			"/go2": "http://evil.example/landing",
			"/go3": "http://evil.example/",
		} {
			pg := pageOf(r, origin+p)
			if pg == nil || strings.TrimSuffix(pg.Location, "/") != strings.TrimSuffix(want, "/") || !slices.Equal(pg.Redirects, []string{want}) {
				t.Errorf("%s = %+v, want a redirect to %s", p, pg, want)
			}
		}
		if n := len(skipped(r, "redirect to another site")); n != 2 {
			t.Errorf("%d skips of a redirect to another site, want 2 (landing, /): %+v", n, r.Skipped)
		}
		if len(r.Pages) != 4 {
			for _, pg := range r.Pages {
				t.Logf("crawled %s", pg.URL)
			}
			t.Errorf("%d pages crawled, want 4: a backslash Location was followed as a path", len(r.Pages))
		}
		if up != nil {
			for _, u := range up() {
				if strings.Contains(u, "evil") {
					t.Errorf("the upstream was asked for %s", u)
				}
			}
		}
	}
	t.Run("live", func(t *testing.T) {
		r, srv := auditLive(t, site, Options{}, "/")
		check(t, r, srv.URL, nil)
	})
	t.Run("in process", func(t *testing.T) {
		r, up := auditInProcess(t, site, "", Options{}, "/")
		check(t, r, base, up.requests)
	})
}

// The page budget goes to indexable pages first: with MaxPages too small
// for the whole site, every article is crawled before the noindex views
// that every article links to, and before what is linked only from a
// noindex page. Through headgate, one worker (a fixed order).
func TestInProcessBudgetPrefersIndexable(t *testing.T) {
	site := map[string]resp{}
	home := ""
	for _, a := range []string{"/a1", "/a2", "/a3", "/a4", "/a5"} {
		home += `<a href="` + a + `">x</a> <a href="` + a + `?action=edit">e</a> <a href="` + a + `?action=history">h</a> `
		site[a] = doc(clean(a), `<a href="`+a+`?action=edit">edit</a>`)
		site[a+"?action=edit"] = doc(`<title>Editing</title><meta name="robots" content="noindex">`, `<a href="/edit-help">help</a>`)
		site[a+"?action=history"] = resp{header: map[string]string{"X-Robots-Tag": "noindex"}, body: `<title>History</title>`}
	}
	site["/"] = doc(clean("/"), home)
	site["/edit-help"] = withHead("/edit-help", "")
	r, _ := auditInProcess(t, site, "", Options{MaxPages: 9, Concurrency: 1}, "/")
	var got []string
	for _, pg := range r.Pages {
		got = append(got, strings.TrimPrefix(pg.URL, base))
	}
	// Two edit views and one history view teach the crawl the ?action
	// shape; after them, no more.
	want := []string{"/", "/a1", "/a1?action=edit", "/a1?action=history", "/a2", "/a3", "/a4", "/a5", "/edit-help"}
	if !slices.Equal(got, want) {
		t.Errorf("crawled %v,\nwant    %v", got, want)
	}
	if len(skipped(r, "max pages (9) reached: 8 more URLs not crawled")) != 1 {
		t.Errorf("skipped %+v", r.Skipped)
	}
}

// A link found first on a noindex page waits until the indexable pages'
// links are crawled; found again on an indexable page, it moves up.
func TestBudgetLinksOfNoindexPagesWait(t *testing.T) {
	r, srv := auditLive(t, map[string]resp{
		"/":   doc(clean("/"), `<a href="/x">x</a> <a href="/b">b</a>`),
		"/x":  doc(`<title>X</title><meta name="robots" content="noindex, follow">`, `<a href="/c1">1</a> <a href="/c2">2</a> <a href="/c3">3</a>`),
		"/b":  doc(clean("/b"), `<a href="/d1">1</a> <a href="/d2">2</a> <a href="/c3">3</a>`),
		"/c1": withHead("/c1", ""), "/c2": withHead("/c2", ""), "/c3": withHead("/c3", ""),
		"/d1": withHead("/d1", ""), "/d2": withHead("/d2", ""),
	}, Options{MaxPages: 6, Concurrency: 1}, "/")
	var got []string
	for _, pg := range r.Pages {
		got = append(got, strings.TrimPrefix(pg.URL, srv.URL))
	}
	if want := []string{"/", "/b", "/c3", "/d1", "/d2", "/x"}; !slices.Equal(got, want) {
		t.Errorf("crawled %v, want %v", got, want)
	}
	if pg := pageOf(r, srv.URL+"/x"); pg == nil || pg.Status != 200 {
		t.Errorf("the noindex page is not reported: %+v", pg)
	}
}

func TestShapeOf(t *testing.T) {
	for in, want := range map[string]string{
		"/wiki/Tea":                             "/wiki/?",
		"/wiki/Tea?action=edit":                 "/wiki/?action",
		"/w/index.php?title=Tea&action=history": "/w/?action&title",
		"/":                                     "/?",
		"/a/b/?x=1&x=2":                         "/a/b/?x&x",
	} {
		if got := shapeOf(in); got != want {
			t.Errorf("shapeOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// A redirect to file: or ftp: is recorded with its reason.
func TestRedirectToOtherSchemeHasReason(t *testing.T) {
	r, srv := auditLive(t, map[string]resp{
		"/":    doc(clean("/"), `<a href="/f">f</a> <a href="/ftp">ftp</a>`),
		"/f":   redirect(302, "file:///etc/passwd"),
		"/ftp": redirect(301, "ftp://files.example/a"),
	}, Options{}, "/")
	for p, loc := range map[string]string{"/f": "file:///etc/passwd", "/ftp": "ftp://files.example/a"} {
		got := skipped(r, `redirect to "`+loc+`", not an http(s) URL: not followed`)
		if len(got) != 1 || got[0].URL != srv.URL+p {
			t.Errorf("%s: skipped %+v", p, r.Skipped)
		}
	}
}
