package botconfig

import (
	"bytes"
	"os"
	"testing"
)

// The range file parser reads untrusted bytes (a file, or a URL's answer
// with refresh_urls): a fuzz target with a property.

func FuzzParseRanges(f *testing.F) {
	for _, n := range []string{"googlebot", "bingbot", "gptbot"} {
		b, _ := os.ReadFile("../testdata/ranges/" + n + ".json")
		f.Add(b)
	}
	f.Add([]byte(`{"prefixes":[{"ipv6Prefix":"::/0"},{"ipv4Prefix":"0.0.0.0/0"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rs, err := ParseRanges(bytes.NewReader(b))
		if err != nil {
			return
		}
		// Property: every prefix read is contained, by its first and last
		// address.
		if rs.Len() == 0 {
			t.Fatal("a parsed file with no span")
		}
		for _, s := range rs.spans {
			if s.last.less(s.first) {
				t.Fatalf("span %v ends before it starts", s)
			}
		}
	})
}
