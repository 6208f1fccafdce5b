package proxy

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A client's Accept-Encoding is untrusted: whatever it says, parsing does
// not panic, what goes upstream names only codings headgate decodes (each
// once, with a q-value in range), and the coding chosen is one of the
// preferences or identity.
func FuzzAcceptEncoding(f *testing.F) {
	for _, s := range []string{"", "gzip", "gzip, deflate, br, zstd", "br;q=0.5, gzip;q=0.8", "*;q=0, gzip", " , ;q=1, br ; q=0.001", "gzip;q=1e9", "x-gzip;q=0.0001"} {
		f.Add(s, "zstd")
	}
	prefs := []string{"zstd", "br", "gzip"}
	f.Fuzz(func(t *testing.T, header, second string) {
		ae := parseAcceptEncoding([]string{header, second})
		up := ae.upstream()
		if strings.ContainsAny(up, "\r\n\x00") {
			t.Fatalf("upstream header %q", up)
		}
		var seen []string
		if up != "" {
			for part := range strings.SplitSeq(up, ", ") {
				name, q, hasQ := strings.Cut(part, ";q=")
				if !slices.Contains(decodable[:], name) || slices.Contains(seen, name) {
					t.Fatalf("upstream %q: coding %q", up, name)
				}
				seen = append(seen, name)
				if hasQ {
					v, err := strconv.ParseFloat(q, 64)
					if err != nil || v <= 0 || v >= 1 {
						t.Fatalf("upstream %q: q %q", up, q)
					}
				}
			}
		}
		if got := ae.choose(prefs); got != identity && !slices.Contains(prefs, got) {
			t.Fatalf("choose %q", got)
		}
	})
}
