package rewrite

import (
	"bytes"
	"strings"
	"testing"
	"testing/iotest"
)

// fragmentLayout is a site-wide layout that writes into every page, as the
// WordPress report's did.
const fragmentLayout = `
[server]
upstream = "http://127.0.0.1:1"
[site]
base_url = "https://notes.example"
[[rule]]
match = "/*"
description = "Notes"
canonical = "self"
robots = { index = true, follow = true }
[rule.open_graph]
site_name = "Notes"
[rule.twitter]
card = "summary"
`

// Fragments of every shape an app answers XHR, htmx and admin calls with
// (SPEC §16.1) pass through byte for byte, however the reads fall.
func TestFragmentsPassThrough(t *testing.T) {
	m := mustMatch(t, fragmentLayout, "/wp-admin/admin-ajax.php?action=rest-nonce")
	cases := map[string]string{
		"nonce":            "a1b2c3d4e5",
		"nonce-newline":    "a1b2c3d4e5\n",
		"empty":            "",
		"blank":            " \n\t",
		"json":             `{"success":true,"data":{"html":"<title>x</title><meta name=\"a\">"}}`,
		"json-array":       `[{"id":1,"name":"Müll"}]`,
		"li-list":          "<li>go</li>\n<li>seo</li>\n",
		"li-attrs":         `<li class="tag"><a href="/tag/go/">go</a></li>`,
		"tag-search":       "go\nseo\nwordpress",
		"div-partial":      `<div class="notice"><p>Saved.</p></div>`,
		"htmx-partial":     "\n   <!-- partial: comments -->\n<div id=\"comments\" hx-swap-oob=\"true\"><title>not the page's</title></div>",
		"script-then-div":  "<script>window.x = 1</script><div>x</div>",
		"style-then-table": "<style>td{color:red}</style><table><tr><td>1</td></tr></table>",
		"comment-only":     "<!-- nothing -->",
		"svg":              `<svg viewBox="0 0 1 1"><title>icon</title><link href="x"/></svg>`,
		"tr":               "<tr><td>1</td></tr>",
		"form":             `<form method="post"><input name="a"></form>`,
		"bom-text":         "\ufeffok",
		"noscript-text":    "<noscript>x</noscript>ok",
	}
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			for _, oneByte := range []bool{false, true} {
				opts := Options{Match: m, ContentType: "text/html; charset=UTF-8", CorrectUpstream: true}
				var r *Reader
				if oneByte {
					r = NewReader(iotest.OneByteReader(strings.NewReader(doc)), opts)
				} else {
					r = NewReader(strings.NewReader(doc), opts)
				}
				out := readAllT(t, r)
				if !bytes.Equal(out, []byte(doc)) {
					t.Fatalf("fragment changed:\n got %q\nwant %q", out, doc)
				}
				res := r.Result()
				if res.Outcome != SkippedFragment {
					t.Errorf("outcome %q, want %q", res.Outcome, SkippedFragment)
				}
				if res.Delta != 0 || len(res.Changes) != 0 {
					t.Errorf("delta %d, %d changes on a fragment", res.Delta, len(res.Changes))
				}
			}
		})
	}
}

// What says "document" before the head's end makes the response a page,
// which is rewritten as before.
func TestNotFragments(t *testing.T) {
	m := mustMatch(t, fragmentLayout, "/notes/1")
	cases := map[string]string{
		"doctype":         "<!DOCTYPE html>Hello",
		"doctype-late":    "<!-- c --><!doctype html><div>x</div>",
		"html":            "<html>Hello",
		"head":            "<head></head>Hello",
		"body":            "<body>Hello",
		"title":           "<title>T</title>Hello",
		"meta":            `<meta charset="utf-8">Hello`,
		"link":            `<link rel="stylesheet" href="/a.css"><div>x</div>`,
		"base":            `<base href="/">x`,
		"end-head":        "</head><p>x",
		"script-then-tit": "<script>1</script><title>T</title><div>",
		"upper":           "<HTML><HEAD><TITLE>T</TITLE></HEAD><BODY>x",
	}
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			out, res, err := rewriteBytes([]byte(doc), Options{Match: m, ContentType: "text/html", CorrectUpstream: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != Rewritten {
				t.Fatalf("outcome %q (%s), want rewritten; output %q", res.Outcome, res.Reason, out)
			}
		})
	}
	// XHTML is never a fragment.
	out, res, _ := rewriteBytes([]byte("<p>x</p>"), Options{Match: m, ContentType: "application/xhtml+xml"})
	if res.Outcome == SkippedFragment {
		t.Errorf("xhtml treated as a fragment: %q", out)
	}
}

// Every page of both corpora is still a document: rewritten (or skipped
// for its size or charset as before), never a fragment.
func TestCorporaAreNotFragments(t *testing.T) {
	m := mustMatch(t, fragmentLayout, "/notes/1")
	for _, p := range allPages(t) {
		_, res, err := rewriteBytes(p.data, Options{Match: m, ContentType: "text/html", CorrectUpstream: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcome == SkippedFragment {
			t.Errorf("%s: treated as a fragment", p.name)
		}
		if res.Outcome != Rewritten && res.Outcome != SkippedTooLarge && res.Outcome != SkippedCharset {
			t.Errorf("%s: outcome %q (%s), want rewritten", p.name, res.Outcome, res.Reason)
		}
	}
}

func readAllT(t *testing.T, r *Reader) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := b.ReadFrom(r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
