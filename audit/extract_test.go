package audit

import (
	"context"
	"io"
	"net/url"
	"slices"
	"strings"
	"testing"
)

func extractString(t *testing.T, ctype, doc string) *facts {
	t.Helper()
	s := &site{origins: []string{"https://site.example"}}
	page, _ := url.Parse("https://site.example/dir/page")
	return extract(strings.NewReader(doc), ctype, page, s, 1<<30)
}

func TestExtract(t *testing.T) {
	tests := []struct {
		name  string
		doc   string
		check func(*facts) string // "" when fine
	}{
		{"canonical in head", `<title>T</title><link rel="canonical" href="/a">`, func(f *facts) string {
			return want(slices.Equal(f.headCanon, []string{"/a"}) && len(f.bodyCanon) == 0 && f.headEnd == "", f)
		}},
		{"rel token list, any case", `<LINK REL="Alternate Canonical" HREF="/a">`, func(f *facts) string {
			return want(slices.Equal(f.headCanon, []string{"/a"}), f)
		}},
		{"a div moves the rest into the body", `<head><title>T</title><div>x</div><link rel=canonical href=/a><meta name=description content=d></head>`, func(f *facts) string {
			return want(len(f.headCanon) == 0 && slices.Equal(f.bodyCanon, []string{"/a"}) && len(f.descs) == 0 && f.headEnd == "<div>", f)
		}},
		{"after </head>, head elements go back into the head", "<head><title>T</title></head>\n<link rel=canonical href=/a>\n<meta name=description content=d><body>", func(f *facts) string {
			return want(slices.Equal(f.headCanon, []string{"/a"}) && slices.Equal(f.descs, []string{"d"}) && f.headEnd == "<body>", f)
		}},
		{"noscript in the head is text", `<title>T</title><noscript><link rel=canonical href=/n></noscript><link rel=canonical href=/a>`, func(f *facts) string {
			return want(slices.Equal(f.headCanon, []string{"/a"}), f)
		}},
		{"template content is inert", `<title>T</title><template><div></div><link rel=canonical href=/t></template><link rel=canonical href=/a><body><template><a href=/t2></a><link rel=canonical href=/t3></template>`, func(f *facts) string {
			return want(slices.Equal(f.headCanon, []string{"/a"}) && len(f.bodyCanon) == 0 && len(f.links) == 0, f)
		}},
		{"entity text ends the head", `<title>T</title>&nbsp;<link rel=canonical href=/a>`, func(f *facts) string {
			return want(slices.Equal(f.bodyCanon, []string{"/a"}) && strings.HasPrefix(f.headEnd, "text "), f)
		}},
		{"title: first, entities decoded, blanks folded", "<title> A &amp;\n B </title><title>second</title>", func(f *facts) string {
			return want(f.hasTitle && f.title == "A & B", f)
		}},
		{"an svg title is no title", `<body><svg><title>icon</title></svg><p>x`, func(f *facts) string {
			return want(!f.hasTitle, f)
		}},
		{"an svg title after the head is no title", `<head></head><body><p>x</p><svg><title>icon</title><a href="/svg">x</a></svg><title>late</title>`, func(f *facts) string {
			return want(f.hasTitle && f.title == "late", f)
		}},
		{"links resolve against <base>, once each, not the page itself", `<base href="/other/"><body><a href="x">1</a><a href="x#f">2</a><a href="/dir/page">self</a><area href="../y">`, func(f *facts) string {
			return want(slices.Equal(f.links, []string{"/other/x", "/y"}), f)
		}},
		{"meta: property or name, og and twitter", `<meta property="og:url" content="/u"><meta name="twitter:url" content="/t"><meta property="og:image:secure_url" content="i.png"><meta name="og:image" content="j.png">`, func(f *facts) string {
			return want(len(f.social) == 2 && len(f.images) == 2, f)
		}},
		{"alternates in the head only", `<link rel=alternate hreflang=en href=/en><link rel=alternate href=/feed type=application/rss+xml><body><link rel=alternate hreflang=de href=/de>`, func(f *facts) string {
			return want(len(f.alts) == 1 && f.alts[0] == alt{"en", "/en"}, f)
		}},
		{"ld+json in head and body", `<script type="application/ld+json">{"@type":"WebPage","@id":"/x"}</script><body><p>x</p><script type=" Application/LD+JSON ">[{"@type":"Article","url":["/y"]}]</script><script type="application/ld+json"></script>`, func(f *facts) string {
			return want(len(f.jsonld) == 3 && len(f.jsonld[0].refs) == 1 && len(f.jsonld[1].refs) == 1 && f.jsonld[2].err == "is empty", f)
		}},
		{"robots and description only from the head", `<meta name=robots content=noindex><meta name=description content="  a   b "><body><meta name=robots content=nofollow>`, func(f *facts) string {
			return want(slices.Equal(f.robots, []string{"noindex"}) && slices.Equal(f.descs, []string{"a b"}), f)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := extractString(t, "text/html; charset=utf-8", tc.doc)
			if msg := tc.check(f); msg != "" {
				t.Error(msg)
			}
		})
	}
}

func want(ok bool, f *facts) string {
	if ok {
		return ""
	}
	return "facts: " + strings.ReplaceAll(strings.TrimSpace(
		"title="+f.title+" headCanon="+strings.Join(f.headCanon, ",")+" bodyCanon="+strings.Join(f.bodyCanon, ",")+
			" headEnd="+f.headEnd+" descs="+strings.Join(f.descs, ",")+" links="+strings.Join(f.links, ",")), "\n", " ")
}

func TestExtractCharset(t *testing.T) {
	latin1 := "<html><head><meta charset=\"windows-1252\"><title>Caf\xe9 M\xfcller</title></head></html>"
	if f := extractString(t, "text/html", latin1); f.title != "Café Müller" {
		t.Errorf("meta charset: title %q", f.title)
	}
	if f := extractString(t, "text/html; charset=iso-8859-1", "<title>Caf\xe9</title>"); f.title != "Café" {
		t.Errorf("header charset: title %q", f.title)
	}
	if f := extractString(t, "text/html", "<title>Café</title>"); f.title != "Café" {
		t.Errorf("undeclared UTF-8: title %q", f.title)
	}
}

func TestExtractBounds(t *testing.T) {
	const meta = "<meta name=x content=y>\n"
	longHead := "<head><title>T</title>" + strings.Repeat(meta, maxPrefix/len(meta)+10) + "<link rel=canonical href=/a></head><body><a href=/x>x</a>"
	f := extractString(t, "text/html", longHead)
	if len(f.notes) != 1 || !strings.Contains(f.notes[0], "head is longer") || len(f.headCanon)+len(f.bodyCanon) != 0 || !slices.Equal(f.links, []string{"/x"}) {
		t.Errorf("long head: notes %q, canonicals %q %q, links %q", f.notes, f.headCanon, f.bodyCanon, f.links)
	}
	if !f.headCut {
		t.Error("long head: not marked cut")
	}
	// A page whose body stops inside the head (a stall the timeout ends):
	// cut, with a note that says so; one that just ends there is whole.
	page, _ := url.Parse("https://site.example/dir/page")
	stalled := io.MultiReader(strings.NewReader("<html><head><title>T</title><meta name=x content=y>"), errReader{context.DeadlineExceeded})
	f = extract(stalled, "text/html", page, &site{origins: []string{"https://site.example"}}, 1<<30)
	if !f.headCut || len(f.notes) != 1 || !strings.Contains(f.notes[0], "did not finish within -timeout") {
		t.Errorf("stalled head: cut %v, notes %q", f.headCut, f.notes)
	}
	if f = extractString(t, "text/html", "<html><head><title>T</title>"); f.headCut {
		t.Error("a document that ends in its head is marked cut")
	}
	longToken := "<title>T</title><body><p>" + strings.Repeat("x", maxToken+10) + "<a href=/x>x</a>"
	f = extractString(t, "text/html", longToken)
	if len(f.notes) != 1 || !strings.Contains(f.notes[0], "token is longer") {
		t.Errorf("long token: notes %q", f.notes)
	}
}

func TestParseLD(t *testing.T) {
	tests := []struct {
		in, err string
		refs    int
	}{
		{`{"@type":"Article","@id":"a","url":"b"}`, "", 2},
		{`{"@graph":[{"@type":"WebPage","@id":"a"},{"@type":"Organization","url":"/"}]}`, "", 1},
		{`{"@type":"https://schema.org/NewsArticle","url":"a"}`, "", 1},
		{`{"@type":"Person","mainEntityOfPage":"a"}`, "", 1},
		{`{"@type":"Thing"} {"@type":"Thing"}`, "is not JSON: more data after the value", 0},
		{`{"@type":"Thing",}`, "is not JSON: invalid character '}' looking for beginning of object key string", 0},
		{`[]`, "is an empty array", 0},
		{`[{"@type":"Thing"}, 3]`, "item 2 has no @type or @graph", 0},
		{`"x"`, "is neither an object nor an array", 0},
		{`{"name":"x"}`, "has no @type or @graph", 0},
	}
	for _, tc := range tests {
		b := parseLD(tc.in)
		if b.err != tc.err || len(b.refs) != tc.refs {
			t.Errorf("parseLD(%s) = %q, %d refs; want %q, %d", tc.in, b.err, len(b.refs), tc.err, tc.refs)
		}
	}
}

func FuzzExtract(f *testing.F) {
	f.Add(`<title>T</title><div>x</div><link rel=canonical href=/a><body><a href=/b>`)
	f.Add("<svg><title><template><a href=x></template></title></svg>")
	f.Add(`<script type="application/ld+json">{"@graph":[{"@type":"WebPage","@id":"x"}]}</script>`)
	f.Fuzz(func(t *testing.T, doc string) {
		s := &site{origins: []string{"https://site.example"}}
		page, _ := url.Parse("https://site.example/p")
		f := extract(strings.NewReader(doc), "text/html", page, s, 1<<20)
		for _, l := range f.links {
			if !strings.HasPrefix(l, "/") {
				t.Fatalf("link key %q", l)
			}
		}
	})
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// The body's text is hashed as a browser lays it out: the edge of a block
// element breaks the flow, an inline one does not, and white space is one
// blank; in the parsed prefix and in the rest of a long page alike.
func TestBodyTextHash(t *testing.T) {
	hash := func(body string) uint64 {
		return extractString(t, "text/html", "<!doctype html><html><head><title>T</title></head><body>"+body+"</body></html>").text.h
	}
	long := strings.Repeat("<span>filler</span> ", 20000) // past the parsed prefix
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"<p>Body of /</p><a>en</a>", "<p>Body of /en</p>", false},
		{"<p>Body of /</p><a>en</a>", "<p>Body of /</p>\n<a>en</a>", true},
		{"<div>one</div><div>two</div>", "<div>one two</div>", true},
		{"un<b>believ</b>able", "unbelievable", true},
		{"<li>a</li><li>b</li>", "<li>ab</li>", false},
		{long + "<p>x</p><p>y</p>", long + "<p>xy</p>", false},
		{long + "<p>x</p> <p>y</p>", long + "<p>x</p><p>y</p>", true},
	} {
		if got := hash(c.a) == hash(c.b); got != c.same {
			t.Errorf("%.60q and %.60q: same hash %v, want %v", c.a, c.b, got, c.same)
		}
	}
}
