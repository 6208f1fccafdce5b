package rewrite

import (
	"strings"
	"testing"
)

const wpLayout = `
[server]
upstream = "http://127.0.0.1:1"
[site]
base_url = "https://notes.example"
[[rule]]
match = "/*"
policy = "fill"
canonical = "upstream-or-self"
description = '{page.title|before_last:" – "}'
[rule.open_graph]
title = '{page.title|before_last:" – "}'
image = "{page.og.image}"
locale = "{page.lang}"
[rule.open_graph.article]
published_time = "{page.meta.article:published_time|date}"
authors = ["{page.meta.author}"]
[[rule.json_ld]]
"@type" = "BlogPosting"
datePublished = "{page.meta.article:published_time|date}"
dateModified = "{page.meta.article:modified_time|date}"
`

// The page values templates read come from the upstream head, decoded
// from its charset; the upstream's canonical is kept re-spelled even under
// fill (§16.3, §16.4).
func TestPageValuesFromHead(t *testing.T) {
	m := mustMatch(t, wpLayout, "/2024/05/caf%c3%a9/")
	doc := "<!DOCTYPE html>\n<html lang=\"de-DE\">\n<head>\n<meta charset=\"windows-1252\">\n" +
		"<title>Caf\xe9 culture &#8211; Tiergarten Notes</title>\n" +
		"<meta name=\"Author\" content=\"J\xfcrgen\">\n" +
		"<meta property=\"og:image\" content=\"https://notes.example/c.jpg\">\n" +
		"<meta property=\"article:published_time\" content=\"2024-05-01T23:30:00-02:00\">\n" +
		"<link rel=\"canonical\" href=\"https://notes.example/2024/05/caf%c3%a9/\">\n" +
		"</head><body>x</body></html>"
	out, res, err := rewriteBytes([]byte(doc), Options{Match: m, ContentType: "text/html", CorrectUpstream: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != Rewritten {
		t.Fatalf("outcome %s", res.Outcome)
	}
	for _, want := range []string{
		`<meta name="description" content="Caf&#233; culture">`,
		`<link rel="canonical" href="https://notes.example/2024/05/caf%C3%A9/">`,
		`<meta property="og:title" content="Caf&#233; culture">`,
		`<meta property="og:locale" content="de-DE">`,
		`{"@type":"BlogPosting","datePublished":"2024-05-02"}`,
		`<meta property="article:author" content="J&#252;rgen">`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "caf%c3%a9") {
		t.Errorf("the upstream's spelling of the canonical stayed:\n%s", out)
	}
	if strings.Count(string(out), `rel="canonical"`) != 1 {
		t.Errorf("not one canonical:\n%s", out)
	}
	// og:image: the upstream has one and the policy is fill: kept, not doubled.
	if strings.Count(string(out), `og:image"`) != 1 {
		t.Errorf("og:image doubled:\n%s", out)
	}
}

// Rewriting headgate's own output gives the same bytes again (§17), also
// where upstream-or-self keeps or re-spells the canonical under fill.
// (JSON-LD is left out here: not writing a block twice is §17's other
// half, which this change does not touch.)
func TestUpstreamOrSelfIdempotent(t *testing.T) {
	layout, _, _ := strings.Cut(wpLayout, "[[rule.json_ld]]")
	for _, path := range []string{"/2024/05/caf%c3%a9/", "/2024/05/caf%C3%A9/", "/category/news/"} {
		m := mustMatch(t, layout, path)
		for _, canon := range []string{"https://notes.example/2024/05/caf%c3%a9/", "https://notes.example/2024/05/caf%C3%A9/", "https://other.example/x", ""} {
			doc := "<!DOCTYPE html><html lang=\"de\"><head><meta charset=\"utf-8\"><title>Café – Notes</title>\n"
			if canon != "" {
				doc += "<link rel=\"canonical\" href=\"" + canon + "\">\n"
			}
			doc += "</head><body>x</body></html>"
			opts := Options{Match: m, ContentType: "text/html", CorrectUpstream: true}
			once, _, err := rewriteBytes([]byte(doc), opts)
			if err != nil {
				t.Fatal(err)
			}
			twice, res, err := rewriteBytes(once, opts)
			if err != nil {
				t.Fatal(err)
			}
			if string(twice) != string(once) {
				t.Errorf("%s, upstream %q: not idempotent:\nonce:  %s\ntwice: %s\n%v", path, canon, once, twice, res.Changes)
			}
			if n := strings.Count(string(once), `rel="canonical"`); n != 1 {
				t.Errorf("%s, upstream %q: %d canonicals:\n%s", path, canon, n, once)
			}
		}
	}
}

// Under override, an upstream canonical that upstream-or-self would write
// as it stands (absolute, spelled the same) stays where it is and nothing
// changes; one spelled otherwise, or relative, is replaced; of two right
// ones, the second goes (§16.4, §4.5).
func TestUpstreamOrSelfOverrideKeepsARightCanonical(t *testing.T) {
	const layout = "[server]\nupstream = \"http://127.0.0.1:1\"\n[site]\nbase_url = \"https://notes.example\"\n" +
		"[[rule]]\nmatch = \"/*\"\ncanonical = \"upstream-or-self\"\n"
	m := mustMatch(t, layout, "/a")
	head := func(links string) string {
		return "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>A</title>\n" + links + "<meta name=\"x\" content=\"y\">\n</head><body>x</body></html>"
	}
	right := "<link rel=\"canonical\" href=\"https://notes.example/a\">\n"
	for _, c := range []struct {
		name, in string
		out      string // "" the input itself
		outcome  Outcome
	}{
		{"right", head(right), "", Unchanged},
		{"right, twice", head(right + right), head(right), Rewritten},
		{"relative", head("<link rel=\"canonical\" href=\"/a\">\n"), "", Rewritten},
		{"another page of the site", head("<link rel=\"canonical\" href=\"https://notes.example/b\">\n"), "", Unchanged},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, res, err := rewriteBytes([]byte(c.in), Options{Match: m, ContentType: "text/html"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != c.outcome {
				t.Errorf("outcome %s, want %s (%v)", res.Outcome, c.outcome, res.Changes)
			}
			if n := strings.Count(string(out), `rel="canonical"`); n != 1 {
				t.Errorf("%d canonicals:\n%s", n, out)
			}
			switch c.name {
			case "right", "right, twice", "another page of the site":
				want := c.out
				if want == "" {
					want = c.in
				}
				if string(out) != want {
					t.Errorf("got\n%s\nwant\n%s", out, want)
				}
			case "relative":
				// Not as headgate writes it: replaced by the absolute one at the head's end.
				if !strings.Contains(string(out), `<link rel="canonical" href="https://notes.example/a">`) || strings.Contains(string(out), `href="/a"`) {
					t.Errorf("the relative canonical is not replaced:\n%s", out)
				}
			}
		})
	}
}

// A URL-valued page value ({page.og.image}, {page.meta.twitter:image}) is
// relative to the page, as the upstream meant it and a card reader reads
// it; and read absolute, it is the same URL wherever it is written, so
// rewriting the output again adds no second JSON-LD block (§16.3, §17).
func TestPageURLValuesRelativeToThePage(t *testing.T) {
	const layout = "[server]\nupstream = \"http://127.0.0.1:1\"\n[site]\nbase_url = \"https://notes.example\"\n" +
		"[[rule]]\nmatch = \"/*\"\n" +
		"[rule.open_graph]\nimage = \"{page.og.image}\"\n" +
		"[rule.twitter]\ncard = \"summary_large_image\"\nimage = \"{page.meta.twitter:image}\"\n" +
		"[[rule.json_ld]]\n\"@type\" = \"Article\"\nimage = \"{page.og.image}\"\n"
	m := mustMatch(t, layout, "/dir/sub/p")
	doc := "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>P</title>\n" +
		"<meta property=\"og:image\" content=\"img/a.png\">\n" +
		"<meta name=\"twitter:image\" content=\"../t.png\">\n" +
		"</head><body>x</body></html>"
	opts := Options{Match: m, ContentType: "text/html", CorrectUpstream: true}
	once, _, err := rewriteBytes([]byte(doc), opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<meta property="og:image" content="https://notes.example/dir/sub/img/a.png">`,
		`<meta name="twitter:image" content="https://notes.example/dir/t.png">`,
		`"image":"https://notes.example/dir/sub/img/a.png"`,
	} {
		if !strings.Contains(string(once), want) {
			t.Errorf("output lacks %s:\n%s", want, once)
		}
	}
	twice, res, err := rewriteBytes(once, opts)
	if err != nil {
		t.Fatal(err)
	}
	if string(twice) != string(once) {
		t.Errorf("not idempotent:\nonce:  %s\ntwice: %s\n%v", once, twice, res.Changes)
	}
	if n := strings.Count(string(once), "application/ld+json"); n != 1 {
		t.Errorf("%d JSON-LD blocks:\n%s", n, once)
	}
}
