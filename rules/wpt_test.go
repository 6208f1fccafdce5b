package rules

import (
	"encoding/json"
	"net/url"
	"os"
	"strings"
	"testing"
)

// The WPT URL test data (testdata/wpt/urltestdata.json, BSD-3, see its
// LICENSE.md; web-platform-tests/wpt url/resources, as synced by
// ada-url/ada c4f3af64 on 2026-07-11) as the table for ResolveURL, SPEC
// §23: every entry whose base is an http(s) URL resolves to its href, and
// an entry the standard fails fails.
func TestResolveURLWPT(t *testing.T) {
	b, err := os.ReadFile("testdata/wpt/urltestdata.json")
	if err != nil {
		t.Fatal(err)
	}
	var entries []json.RawMessage
	if err := json.Unmarshal(b, &entries); err != nil {
		t.Fatal(err)
	}
	var parses, parsesHeld, fails, failsHeld, kept int
	dropped := map[string]int{}
	for _, raw := range entries {
		var e struct {
			Input   string  `json:"input"`
			Base    *string `json:"base"`
			Href    string  `json:"href"`
			Failure bool    `json:"failure"`
		}
		if json.Unmarshal(raw, &e) != nil || e.Base == nil {
			continue // a comment, or an entry with no base
		}
		if !strings.HasPrefix(*e.Base, "http:") && !strings.HasPrefix(*e.Base, "https:") {
			continue
		}
		got, err := ResolveURL(*e.Base, e.Input)
		if e.Failure {
			fails++
			if err == nil {
				t.Errorf("ResolveURL(%q, %q) = %q, want a failure", *e.Base, e.Input, got)
				continue
			}
			failsHeld++
			continue
		}
		parses++
		if err != nil || got != e.Href {
			t.Errorf("ResolveURL(%q, %q) = %q, %v; want %q", *e.Base, e.Input, got, err, e.Href)
			continue
		}
		parsesHeld++
		// What the rewriter does with it: §4.6 drops it, or it keeps
		// exactly the browser's URL.
		bu, err := url.Parse(*e.Base)
		if err != nil || bu.Host == "" || bu.User != nil {
			continue // base_url has no user info (check refuses it): no page of a site is at such a base
		}
		abs, why := AbsUpstreamURL(bu, e.Input)
		if why != "" {
			dropped[why]++
			if why == DropUnparsable || why == DropCrossOrigin {
				// Not a rule of §4.6 on the value's spelling: list them.
				t.Logf("dropped as %s: %q on %q (a browser reads %q)", why, e.Input, *e.Base, e.Href)
			}
			continue
		}
		// An absolute URL is kept as the upstream spelled it: what
		// matters is that a browser reads what headgate writes as the
		// URL it read on the upstream's page.
		if read, err := ResolveURL(*e.Base, abs); err != nil || read != e.Href {
			t.Errorf("AbsUpstreamURL(%q, %q) = %q, which a browser reads as %q, %v; it read the upstream's as %q", *e.Base, e.Input, abs, read, err, e.Href)
			continue
		}
		kept++
	}
	t.Logf("AbsUpstreamURL on those: %d kept as the browser's URL, dropped by §4.6: %v", kept, dropped)
	t.Logf("WPT urltestdata, http(s) base: %d/%d that parse resolve to their href; %d/%d that fail fail", parsesHeld, parses, failsHeld, fails)
	if parses < 100 {
		t.Fatalf("only %d entries with an http(s) base", parses)
	}
}

// SPEC §23: a relative upstream URL whose first segment holds a colon is a
// path, as a browser reads it, so it stays on the page's origin and is
// kept; §4.6 still drops what it drops.
func TestAbsUpstreamURL(t *testing.T) {
	base, _ := url.Parse("https://example.org/foo/bar")
	for _, tc := range []struct{ in, want, why string }{
		{":foo.com/", "https://example.org/foo/:foo.com/", ""},
		{"::23", "https://example.org/foo/::23", ""},
		{":", "https://example.org/foo/:", ""},
		{"[61:24:74]:98", "https://example.org/foo/[61:24:74]:98", ""},
		{"a/./b/../c?x=1 2#f", "https://example.org/foo/a/c?x=1%202#f", ""},
		{"../../../x", "https://example.org/x", ""},
		{"/p", "https://example.org/p", ""},
		{"//evil.example/", "", DropOtherHost},
		{`/\evil.example/`, "", DropOtherHost},
		{"javascript:alert(1)", "", DropScheme},
		{"http:foo.com", "", DropScheme},
		{" /p", "", DropSpace},
		{"https://cdn.example/x.png", "https://cdn.example/x.png", ""},
	} {
		got, why := AbsUpstreamURL(base, tc.in)
		if got != tc.want || why != tc.why {
			t.Errorf("AbsUpstreamURL(%q) = %q, %q; want %q, %q", tc.in, got, why, tc.want, tc.why)
		}
	}
}

// The price of resolving as a browser does, against net/url's RFC 3986
// resolution that AbsURL keeps for the config's own URLs (docs/dependencies.md).
func BenchmarkAbsUpstreamURL(b *testing.B) {
	base, _ := url.Parse("https://example.org/blog/2024/post")
	for _, in := range []string{"/plain/path", "../img/cover.png?w=1200", ":foo.com/"} {
		b.Run("upstream "+in, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				AbsUpstreamURL(base, in)
			}
		})
		b.Run("config "+in, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				AbsURL(base, in)
			}
		})
	}
}

// plainRelative's strings resolve alike with net/url and the WHATWG
// parser: every string of up to 5 characters over its alphabet, against
// bases with and without a trailing slash and a query.
func TestPlainRelativeAgrees(t *testing.T) {
	const alphabet = "a./?=&-"
	bases := []string{"https://example.org/", "https://example.org/a/b", "https://example.org/a/b/?q=1", "https://example.org/a//b/"}
	n := 0
	var gen func(prefix string, depth int)
	gen = func(prefix string, depth int) {
		if prefix != "" && plainRelative(prefix) {
			for _, base := range bases {
				bu, _ := url.Parse(base)
				fast, why := AbsUpstreamURL(bu, prefix)
				want, err := ResolveURL(base, prefix)
				n++
				if why != "" || err != nil || fast != want {
					t.Errorf("%q on %q: net/url %q %q, WHATWG %q %v", prefix, base, fast, why, want, err)
				}
			}
		}
		if depth == 0 {
			return
		}
		for _, c := range alphabet {
			gen(prefix+string(c), depth-1)
		}
	}
	gen("", 5)
	t.Logf("%d resolutions agree", n)
}
