package rewrite

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"golang.org/x/net/html/atom"
)

// SPEC §23: a body that ends inside the head region, in something that was
// to close, goes out unchanged and says so; a prefix that ends cleanly is
// still rewritten. Found by html5lib-tests (tests3.dat, tests16.dat,
// tests2.dat).
func TestTruncatedHead(t *testing.T) {
	m := mustMatch(t, propConfig, propTarget)
	for _, tc := range []struct {
		name, in string
		want     Outcome
	}{
		{"title left open", "<title>foo<span>bar</em><i>baz", UnchangedTruncated},
		{"empty script at the end", "<!doctype html><script>", UnchangedTruncated},
		{"script end tag cut", "<!doctype html><script></SCRIPT ", UnchangedTruncated},
		{"escaped script end tag cut", "<!doctype html><script><!--<script --></script ", UnchangedTruncated},
		{"comment left open", "<!DOCTYPE html><!-- X", UnchangedTruncated},
		{"style left open", "<!doctype html><style>p{}", UnchangedTruncated},
		{"textarea left open in the stretch", "<!doctype html><head><p>y<textarea></head>z", UnchangedTruncated},
		{"a textarea that ends the head, left open", "<!doctype html><html><head><textarea>x", UnchangedTruncated},
		{"a textarea that ends the head, empty and open", "<!doctype html><head><textarea>", UnchangedTruncated},
		{"a textarea that ends the head, its end tag cut", "<!doctype html><head><textarea>x</textarea ", UnchangedTruncated},
		{"a textarea that ends the head, its end tag a prefix", "<!doctype html><head><textarea>x</textare", UnchangedTruncated},
		{"a textarea that ends the head, closed", "<!doctype html><head><textarea>x</textarea>y", Rewritten},
		{"a textarea that ends the head, closed at the end", "<!doctype html><head><textarea></TEXTAREA>", Rewritten},
		{"a textarea that ends the head, a quoted > in its end tag", `<!doctype html><head><textarea>x</textarea a=">"`, UnchangedTruncated},
		{"a textarea in the body left open", "<!doctype html><head></head><body><textarea>x", Rewritten},
		// The other raw-text elements that end the head (found and left
		// in session 16): xmp, iframe and noembed read to the end of input
		// as textarea does; noframes stays in the head, its text to the end.
		{"an xmp that ends the head, left open", "<!doctype html><head><xmp>x</head>", UnchangedTruncated},
		{"an iframe that ends the head, left open", "<!doctype html><head><iframe>x", UnchangedTruncated},
		{"a noembed that ends the head, left open", "<!doctype html><head><NOEMBED>x</noembe", UnchangedTruncated},
		{"a noframes in the head, left open", "<!doctype html><head><noframes>x</head>", UnchangedTruncated},
		{"an xmp that ends the head, closed", "<!doctype html><head><xmp>x</xmp>y", Rewritten},
		{"an iframe that ends the head, closed", "<!doctype html><head><iframe></iframe>", Rewritten},
		{"inside a tag", `<!doctype html><meta name="x`, UnchangedTruncated},
		{"after </head>, a script left open", "<!doctype html><head></head><script>x", UnchangedTruncated},
		{"a head that ends cleanly at the end", "<!doctype html><title>x</title>", Rewritten},
		{"a fragment that ends in a comment", "<p>x<!-- y", SkippedFragment},
		{"open text after the head", "<!doctype html><title>x</title><body><script>", Rewritten},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			for _, src := range []func() io.Reader{
				func() io.Reader { return bytes.NewReader(in) },
				func() io.Reader { return iotest.OneByteReader(bytes.NewReader(in)) },
			} {
				r := NewReader(src(), Options{Match: m, CorrectUpstream: true})
				out, err := io.ReadAll(r)
				if err != nil {
					t.Fatal(err)
				}
				res := r.Result()
				checkResult(t, in, out, res)
				if res.Outcome != tc.want {
					t.Errorf("outcome %s (%s), want %s; output %q", res.Outcome, res.Reason, tc.want, out)
				}
			}
		})
	}
}

// SPEC §23: a parser with scripting off (most crawlers and link-preview
// bots) ends the head at a <noscript> that holds body content; the written
// tags go before it, so that such a parser reads them in the head too.
func TestNoscriptInHead(t *testing.T) {
	m := mustMatch(t, propConfig, propTarget)
	for _, in := range []string{
		`<!doctype html><html><head><meta charset="utf-8"><noscript><p>Enable JavaScript</p></noscript><title>Old</title></head><body>x</body></html>`,
		`<head><noscript>XXX<!--foo--></noscript></head>`,
		`<!doctype html><head><noscript><img src="/pixel.gif"></noscript><link rel="canonical" href="/old"></head><body></body>`,
	} {
		out, res, err := rewriteBytes([]byte(in), Options{Match: m, CorrectUpstream: true})
		if err != nil || res.Outcome != Rewritten {
			t.Fatalf("%q: outcome %s, err %v", in, res.Outcome, err)
		}
		for _, scripting := range []bool{true, false} {
			// The upstream title and canonical after the <noscript> are
			// replaced: a parser with scripting off read them in the body.
			if p := domProblems([]byte(in), out, scripting, atom.Title, atom.Link); len(p) > 0 {
				t.Errorf("%q, scripting %v:\n\t%s\n\tout: %q", in, scripting, summarize(p), out)
			}
		}
	}
}

// A cached plan of a whole document is never replayed on one that ends
// inside its head, even where the two differ only inside a script (a span
// a near match skips).
func TestTruncatedHeadCached(t *testing.T) {
	m := mustMatch(t, propConfig, propTarget)
	c := NewCache(0)
	full := "<!doctype html><head><script>var a = 1;</script><title>x</title></head><body>b</body>"
	for _, in := range []string{full, full, "<!doctype html><head><script>var a = 1;", "<!doctype html><head><script>var a = 12;</script><title>x</title></head><body>b</body>", "<!doctype html><head><script>var a = 12;</script><title>x"} {
		out, res, err := rewriteBytes([]byte(in), Options{Match: m, CorrectUpstream: true, Cache: c})
		if err != nil {
			t.Fatal(err)
		}
		checkResult(t, []byte(in), out, res)
		truncated := !strings.HasSuffix(in, "</body>")
		if truncated != (res.Outcome == UnchangedTruncated) {
			t.Errorf("%q: outcome %s (plan %s)", in, res.Outcome, res.Plan)
		}
	}
}

// SPEC §23, a <textarea> that ends the head: whether it closes is read no
// further than a head token may end (max_head_bytes + 64 KiB), and a plan
// made where it closed is not replayed on a body that ends inside it.
func TestTruncatedTextarea(t *testing.T) {
	m := mustMatch(t, propConfig, propTarget)
	c := NewCache(0)
	head := "<!doctype html><head><title>x</title><textarea>abc"
	body := "<p>" + strings.Repeat("body ", 1000) + "</p>"
	cases := []struct {
		in   string
		want Outcome
	}{
		{head + "</textarea>" + body, Rewritten},
		{head + "</textarea>" + body, Rewritten}, // from the plan (checked below)
		{head, UnchangedTruncated},
		{head + "</textarea", UnchangedTruncated},
		// Open past the bound: not known to be cut, rewritten as before.
		{head + strings.Repeat("x", 80<<10), Rewritten},
	}
	for i, tc := range cases {
		in := []byte(tc.in)
		out, res, err := rewriteBytes(in, Options{Match: m, CorrectUpstream: true, Cache: c, MaxHeadBytes: 1024})
		if i == 1 && res.Plan != PlanHit {
			t.Errorf("the repeat: plan %s, want %s", res.Plan, PlanHit)
		}
		if err != nil {
			t.Fatal(err)
		}
		checkResult(t, in, out, res)
		if res.Outcome != tc.want {
			t.Errorf("%.60q… (%d bytes): outcome %s (plan %s), want %s", tc.in, len(tc.in), res.Outcome, res.Plan, tc.want)
		}
	}
}
