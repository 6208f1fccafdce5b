package sitemapxml

import (
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// parseSitemap is the audit's call: each <loc>, and whether it names a
// sitemap of an index.
func parseSitemap(r io.Reader, emit func(loc string, index bool) bool) (string, error) {
	return Scan(r, Limits{}, func(root string, e Entry) bool { return emit(e.Loc, root == "sitemapindex") })
}

// A hostile sitemap can not make the audit hold more than a sitemap's
// worth: a gzip bomb of blanks is cut at the first MiB of text between two
// tags, deep nesting is refused, and a plain gzipped sitemap still reads.
func TestBounds(t *testing.T) {
	gz := func(parts ...string) []byte {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		for _, p := range parts {
			io.WriteString(zw, p)
		}
		zw.Close()
		return b.Bytes()
	}
	var locs []string
	emit := func(loc string, _ bool) bool { locs = append(locs, loc); return true }
	root, err := parseSitemap(bytes.NewReader(gz(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://a.example/x</loc></url></urlset>`)), emit)
	if err != nil || root != "urlset" || len(locs) != 1 {
		t.Errorf("a gzipped sitemap: %q, %v, %v", root, err, locs)
	}
	bomb := gz(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`, strings.Repeat(" ", 8<<20), `</urlset>`)
	if _, err := parseSitemap(bytes.NewReader(bomb), emit); !errors.Is(err, ErrToken) {
		t.Errorf("8 MiB of blanks in a gzip of %d bytes: %v, want the text-run bound", len(bomb), err)
	}
	// A token that holds "<" and ">" is one token still: a comment, a
	// CDATA section, a processing instruction, a directive (with a comment
	// in it), an attribute value. Each is stopped at the bound, read whole
	// or a byte at a time.
	const ns = `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`
	lts := strings.Repeat("<", 2<<20)
	mixed := strings.Repeat("<>", 1<<20)
	for name, doc := range map[string]string{
		"comment of <":           ns + `<!--` + lts + `--></urlset>`,
		"comment of <>":          ns + `<!--` + mixed + `--></urlset>`,
		"CDATA of <> in a loc":   ns + `<url><loc><![CDATA[` + mixed + `]]></loc></url></urlset>`,
		"processing instruction": ns + `<?x ` + mixed + `?></urlset>`,
		"directive, quoted >":    `<!DOCTYPE urlset '` + strings.Repeat(">", 2<<20) + `'>` + ns + `</urlset>`,
		"directive, nested <>":   `<!DOCTYPE urlset <` + mixed + `>>` + ns + `</urlset>`,
		"comment in a directive": `<!DOCTYPE urlset <!-- > --> ` + mixed + `>` + ns + `</urlset>`,
		"attribute value of >":   `<urlset a="` + strings.Repeat(">", 2<<20) + `"></urlset>`,
	} {
		for _, one := range []bool{false, true} {
			var r io.Reader = bytes.NewReader(gz(doc))
			if one {
				r = iotest.OneByteReader(r)
			}
			if _, err := parseSitemap(r, emit); !errors.Is(err, ErrToken) {
				t.Errorf("%s (a byte at a time: %v): %v, want the token bound", name, one, err)
			}
		}
	}
	// And what real sitemaps hold reads as before: comments, CDATA, a
	// declaration, a doctype, "<" and ">" where they may be.
	locs = nil
	ok := `<?xml version="1.0" encoding="UTF-8"?><!DOCTYPE urlset [ <!ENTITY e "x>y"> <!-- a > b --> ]>` +
		`<!-- generated > by <CMS> --><?xml-stylesheet href="/s.xsl"?>` + ns +
		`<url><loc><![CDATA[https://a.example/a?b=<c>]]></loc></url><url attr="a>b"><loc>https://a.example/d</loc></url></urlset>`
	for _, one := range []bool{false, true} {
		locs = nil
		var r io.Reader = strings.NewReader(ok)
		if one {
			r = iotest.OneByteReader(r)
		}
		if root, err := parseSitemap(r, emit); err != nil || root != "urlset" || len(locs) != 2 {
			t.Errorf("a sitemap with comments, CDATA and a doctype (a byte at a time: %v): %q, %v, %q", one, root, err, locs)
		}
	}
	deep := `<urlset>` + strings.Repeat("<a>", 40) + strings.Repeat("</a>", 40) + `</urlset>`
	if _, err := parseSitemap(strings.NewReader(deep), emit); err == nil || !strings.Contains(err.Error(), "nested") {
		t.Errorf("40 levels deep: %v", err)
	}
}

// FuzzRunLimit holds the token bound to encoding/xml's tokens: on any
// input the bound lets through whole, no token encoding/xml reads (to its
// first error) is longer than the bound and the one byte that ends it.
func FuzzRunLimit(f *testing.F) {
	for _, s := range []string{
		`<urlset><url><loc>https://a.example/</loc></url></urlset>`,
		`<!-- <><> --><![CDATA[<>]]><?x <> ?>`,
		`<!DOCTYPE a [ <!ENTITY e "x>y"> <!-- > --> '>' ]><a b="c>d"/>`,
		`<a>text text</a>`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		const limit = 12
		l := &runLimit{max: limit}
		for i := 0; i < len(doc); i++ {
			l.step(doc[i])
			if l.run > limit {
				return // stopped: nothing to hold it to
			}
		}
		d := xml.NewDecoder(strings.NewReader(doc))
		d.Strict = true
		prev := int64(0)
		for {
			_, err := d.RawToken()
			if err != nil {
				return
			}
			if n := d.InputOffset() - prev; n > limit+1 {
				t.Fatalf("a token of %d bytes (%q) passed a bound of %d", n, doc[prev:d.InputOffset()], limit)
			}
			prev = d.InputOffset()
		}
	})
}

// What Scan hands on and where it stops, document by document.
func TestScan(t *testing.T) {
	const ns = `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`
	for _, tc := range []struct {
		name, in string
		lim      Limits
		want     string // root, then each entry as loc|lastmod
		err      string // a part of the error, or ""
	}{
		{"urlset", ns + `<url><loc> /a </loc><lastmod> 2024-01-02 </lastmod></url><url><loc>/b</loc></url></urlset>`, Limits{}, "urlset  /a |2024-01-02 /b|", ""},
		{"index", `<sitemapindex><sitemap><loc>/s1.xml</loc></sitemap></sitemapindex>`, Limits{}, "sitemapindex /s1.xml|", ""},
		{"prefixed", `<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"><sm:url><sm:loc>/a</sm:loc></sm:url></sm:urlset>`, Limits{}, "urlset /a|", ""},
		{"a url in an index is not a page", `<sitemapindex><url><loc>/a</loc></url></sitemapindex>`, Limits{}, "sitemapindex", ""},
		{"no loc", ns + `<url><lastmod>2024</lastmod></url></urlset>`, Limits{}, "urlset", ""},
		{"a loc too long is dropped", ns + `<url><loc>/` + strings.Repeat("a", 20) + `</loc></url><url><loc>/b</loc></url></urlset>`, Limits{Loc: 10}, "urlset /b|", ""},
		{"a lastmod too long is dropped", ns + `<url><loc>/a</loc><lastmod>` + strings.Repeat("1", 100) + `</lastmod></url></urlset>`, Limits{}, "urlset /a|", ""},
		{"no element", `{"a":1}`, Limits{}, "", "no root element"},
		{"not XML", `<urlset a=b>`, Limits{}, "", "not XML"},
		{"empty", ``, Limits{}, "", "no root element"},
		{"another root", `<feed><entry/></feed>`, Limits{}, "", "root element is <feed>"},
		{"ends inside", ns + `<url><loc>/a</loc></url>`, Limits{}, "urlset /a|", "ends inside an element"},
		{"mismatched end tag", ns + `<url><loc>/a</loc></urk></urlset>`, Limits{}, "urlset", "closed by </urk>"},
		{"too deep", `<urlset><a><a><a></a></a></a></urlset>`, Limits{Depth: 3}, "urlset", "nested more than 3"},
		{"too many bytes", ns + strings.Repeat(`<url><loc>/a</loc></url>`, 100) + `</urlset>`, Limits{Bytes: 200}, "urlset /a| /a| /a| /a| /a|", "over 200 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := []string{}
			root, err := Scan(strings.NewReader(tc.in), tc.lim, func(root string, e Entry) bool {
				got = append(got, e.Loc+"|"+e.Lastmod)
				return true
			})
			if s := strings.Join(append([]string{root}, got...), " "); s != tc.want {
				t.Errorf("got %q, want %q", s, tc.want)
			}
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("error %v, want one with %q", err, tc.err)
			}
		})
	}
	n := 0
	root, err := Scan(strings.NewReader(ns+strings.Repeat(`<url><loc>/a</loc></url>`, 5)+`</urlset>`), Limits{}, func(string, Entry) bool { n++; return n < 2 })
	if root != "urlset" || err != nil || n != 2 {
		t.Errorf("stopped early: %q, %v, %d entries", root, err, n)
	}
}

// FuzzScan holds Scan to its bounds on any bytes: every entry has a <loc>
// within Limits.Loc and a <lastmod> within its bound, and a document it
// refuses for a bound says so with ErrTooLarge.
func FuzzScan(f *testing.F) {
	for _, s := range []string{
		`<urlset><url><loc>/a</loc><lastmod>2024-01-01</lastmod></url></urlset>`,
		`<sitemapindex><sitemap><loc>/s.xml</loc></sitemap></sitemapindex>`,
		`<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY e "x">]><urlset><url><loc><![CDATA[/a]]>b</loc></url></urlset>`,
		`<urlset><url><loc>/a</loc></urk></urlset>`,
	} {
		f.Add([]byte(s))
	}
	lim := Limits{Bytes: 4096, Token: 64, Depth: 4, Loc: 16}
	f.Fuzz(func(t *testing.T, doc []byte) {
		_, err := Scan(bytes.NewReader(doc), lim, func(root string, e Entry) bool {
			if root != "urlset" && root != "sitemapindex" || e.Loc == "" || len(e.Loc) > lim.Loc || len(e.Lastmod) > maxLastmod {
				t.Fatalf("entry %q %+v past its bounds", root, e)
			}
			return true
		})
		gzipped := len(doc) >= 2 && doc[0] == 0x1f && doc[1] == 0x8b
		if !gzipped && len(doc) > int(lim.Bytes) && err == nil {
			t.Fatalf("%d bytes read with no error past a bound of %d", len(doc), lim.Bytes)
		}
	})
}
