package pct

import (
	"os"
	"strconv"
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

// cases are the ways the old encoders were called, each as the call that
// replaces it, in the order of the columns of testdata/legacy.json.
var cases = []legacyCase{
	{"EscapePath", Path, Keep, nil},
	{"escapeQuery", Query, Keep, nil},
	{"escapeRequestQuery", RequestQuery, Keep, nil},
	{"escapePathSegment", Segment, Plain, nil},
	{"normURL tail", URL, Upper, nil},
	{"escapeNonASCII", ASCII, Plain, nil},
	{"robotsEncode", Robots, Normal, nil},
	{"canonHex", 0, 0, CanonHex},
	{"normPath", 0, 0, CanonHex},
	{"respellSegment", 0, 0, respellSegment},
}

type legacyCase struct {
	name string
	set  Set
	mode Mode
	new  func(string) string // for the functions that are no Encode
}

func (c *legacyCase) call(s string) string {
	if c.new != nil {
		return c.new(s)
	}
	return Encode(s, c.set, c.mode)
}

// TestLegacy holds Encode, Index and CanonHex to what the eight encoders
// and two hex helpers they replaced (rules/urls.go, redirect_resolve.go,
// spelling.go, dataload.go, data.go, audit/robots.go at a415c6f) wrote for
// 2,395 inputs: every string of three of the bytes escapes turn on, the
// fuzz corpus that compared the two side by side, and random strings.
// testdata/legacy.txt holds, a line per input, tab-separated, the input
// and each old function's output (Go-quoted) in the order of cases, then
// needsRespell's and plainURLTail's answers (now Index(s, All, Normal) >= 0
// and Index(s, URL, Upper) < 0). It was written by the old functions,
// which are gone: it is not regenerated.
func TestLegacy(t *testing.T) {
	src, err := os.ReadFile("testdata/legacy.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(src), "\n"), "\n")
	if len(lines) < 2000 {
		t.Errorf("%d inputs: testdata/legacy.txt is cut short", len(lines))
	}
	for _, line := range lines {
		row := strings.Split(line, "\t")
		if len(row) != len(cases)+3 {
			t.Fatalf("bad line %q", line)
		}
		for i := range len(cases) + 1 {
			if row[i], err = strconv.Unquote(row[i]); err != nil {
				t.Fatalf("bad line %q: %v", line, err)
			}
		}
		s := row[0]
		for i := range cases {
			c := &cases[i]
			if got := c.call(s); got != row[1+i] {
				t.Errorf("%s(%q) = %q, was %q", c.name, s, got, row[1+i])
			}
		}
		if got := strconv.FormatBool(Index(s, All, Normal) >= 0); got != row[1+len(cases)] {
			t.Errorf("needsRespell(%q) = %s, was %s", s, got, row[1+len(cases)])
		}
		if got := strconv.FormatBool(Index(s, URL, Upper) < 0); got != row[2+len(cases)] {
			t.Errorf("plainURLTail(%q) = %s, was %s", s, got, row[2+len(cases)])
		}
	}
}

// FuzzEncode checks what every caller relies on: the output holds no byte
// outside the set but as "%XX" (no "%" that does not start a valid
// escape, when the set has no "%"), Index agrees with Encode, and an
// encoding that keeps escapes is idempotent when its set has no "%".
func FuzzEncode(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range cases[:7] {
			out := Encode(s, c.set, c.mode)
			if (Index(s, c.set, c.mode) < 0) != (out == s) {
				t.Errorf("%s(%q): Index %d, Encode %q", c.name, s, Index(s, c.set, c.mode), out)
			}
			for i := 0; i < len(out); i++ {
				switch {
				case out[i] == '%' && !c.set.Has('%'):
					if i+2 >= len(out) || !IsHex(out[i+1]) || !IsHex(out[i+2]) {
						t.Fatalf("%s(%q) = %q: a stray %%", c.name, s, out)
					}
					i += 2
				case !c.set.Has(out[i]):
					t.Fatalf("%s(%q) = %q: raw %q", c.name, s, out, out[i])
				}
			}
			// A stray "%" a set keeps raw (Robots, as robots.txt matching
			// has it) can make an escape of the next pass: "%7%30" is
			// "%70", then "p". Only a set without "%" is idempotent.
			if c.mode != Plain && !c.set.Has('%') {
				if again := Encode(out, c.set, c.mode); again != out {
					t.Errorf("%s(%q) = %q, and again %q", c.name, s, out, again)
				}
			}
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
		b.Run(in.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Encode(in.s, Path, Keep)
				Encode(in.s, Robots, Normal)
				Encode(in.s, URL, Upper)
			}
		})
	}
}

var seeds = []string{
	"", "/", "/a/b", "/%e6%9d%b1", "/%E6%9D%B1", "/%41%7e%2e", "%2E", "%2e%2E", ".", "..",
	"/caf\xc3\xa9", "/%zz/%", "%", "%4", "%%ab", "%A%ab", "a b\"<>\\^`{|}", "/x?y#z",
	"\x00\x1f\x7f\xff", "/wiki/Tea_(drink)", "q=1&r=%2f", "/%c3%a9?x=%7E",
}
