package pct

import (
	"strings"
	"testing"
)

// respellSegment is how rules.RespellPath now spells one segment: Normal
// escapes over All bytes, and a segment that decoding turned into "." or
// ".." keeps its dots encoded.
func respellSegment(seg string) string {
	out := Encode(seg, All, Normal)
	if (out == "." || out == "..") && strings.Contains(seg, "%") {
		return strings.Repeat("%2E", len(out))
	}
	return out
}

// legacyCases are the ways the old encoders were called, each beside the
// Encode call that replaces it.
var legacyCases = []struct {
	name     string
	old, new func(string) string
}{
	{"EscapePath", legacyEscapePath, func(s string) string { return Encode(s, Path, Keep) }},
	{"escapeQuery", legacyEscapeQuery, func(s string) string { return Encode(s, Query, Keep) }},
	{"escapeRequestQuery", legacyEscapeRequestQuery, func(s string) string { return Encode(s, RequestQuery, Keep) }},
	{"escapePathSegment", legacyEscapePathSegment, func(s string) string { return Encode(s, Segment, Plain) }},
	{"normURL tail", legacyURLTail, func(s string) string { return Encode(s, URL, Upper) }},
	{"escapeNonASCII", legacyEscapeNonASCII, func(s string) string { return Encode(s, ASCII, Plain) }},
	{"robotsEncode", legacyRobotsEncode, func(s string) string { return Encode(s, Robots, Normal) }},
	{"canonHex", legacyCanonHex, CanonHex},
	{"normPath", legacyNormPath, CanonHex},
	{"respellSegment", func(s string) string {
		var b strings.Builder
		legacyRespellSegment(&b, s)
		return b.String()
	}, respellSegment},
}

var seeds = []string{
	"", "/", "/a/b", "/%e6%9d%b1", "/%E6%9D%B1", "/%41%7e%2e", "%2E", "%2e%2E", ".", "..",
	"/caf\xc3\xa9", "/%zz/%", "%", "%4", "%%ab", "%A%ab", "a b\"<>\\^`{|}", "/x?y#z",
	"\x00\x1f\x7f\xff", "/wiki/Tea_(drink)", "q=1&r=%2f", "/%c3%a9?x=%7E",
}

func TestLegacy(t *testing.T) {
	for _, c := range legacyCases {
		for _, s := range seeds {
			if got, want := c.new(s), c.old(s); got != want {
				t.Errorf("%s(%q) = %q, was %q", c.name, s, got, want)
			}
		}
	}
	for _, s := range seeds {
		if got, want := Index(s, All, Normal) >= 0, legacyNeedsRespell(s); got != want {
			t.Errorf("needsRespell(%q) = %v, was %v", s, got, want)
		}
		if got, want := Index(s, URL, Upper) < 0, legacyPlainURLTail(s); got != want {
			t.Errorf("plainURLTail(%q) = %v, was %v", s, got, want)
		}
	}
}

// FuzzLegacy holds Encode, Index and CanonHex to the output of the
// encoders they replaced, byte for byte.
func FuzzLegacy(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range legacyCases {
			if got, want := c.new(s), c.old(s); got != want {
				t.Errorf("%s(%q) = %q, was %q", c.name, s, got, want)
			}
		}
		if got, want := Index(s, All, Normal) >= 0, legacyNeedsRespell(s); got != want {
			t.Errorf("needsRespell(%q) = %v, was %v", s, got, want)
		}
		if got, want := Index(s, URL, Upper) < 0, legacyPlainURLTail(s); got != want {
			t.Errorf("plainURLTail(%q) = %v, was %v", s, got, want)
		}
	})
}

func TestEncodeNoAlloc(t *testing.T) {
	for _, s := range []string{"/a/b-c_d~e", "/%E6%9D%B1"} {
		if n := testing.AllocsPerRun(100, func() { Encode(s, Path, Keep) }); n != 0 {
			t.Errorf("Encode(%q) allocates %v times", s, n)
		}
	}
}

var benchInputs = []struct{ name, s string }{
	{"clean", "/products/green-tea/sencha-premium-100g"},
	{"escapes", "/%e6%9d%b1%e4%ba%ac/caf%C3%A9?q=1"},
	{"raw", "/café/東京 tea\"x\""},
}

func BenchmarkEncode(b *testing.B) {
	for _, in := range benchInputs {
		b.Run("new/"+in.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Encode(in.s, Path, Keep)
				Encode(in.s, Robots, Normal)
				Encode(in.s, URL, Upper)
			}
		})
		b.Run("old/"+in.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				legacyEscapePath(in.s)
				legacyRobotsEncode(in.s)
				legacyURLTail(in.s)
			}
		})
	}
}
