package rewrite

import (
	"strings"
	"testing"
)

// SPEC §23: a relative upstream canonical resolves as a browser resolves
// it (the WHATWG URL Standard) against the page's URL before §4.6 and
// §16.4 decide; one whose first segment holds a colon is a path on the
// page's origin, kept by upstream-or-self, not replaced by self.
func TestUpstreamRelativeCanonical(t *testing.T) {
	const cfg = `
[server]
upstream = "http://127.0.0.1:1"
[site]
base_url = "https://notes.example"
[[rule]]
match = "/*"
canonical = "upstream-or-self"
`
	m := mustMatch(t, cfg, "/foo/bar")
	for _, tc := range []struct{ href, want string }{
		{":foo.com/", "https://notes.example/foo/:foo.com/"},
		{"::23", "https://notes.example/foo/::23"},
		{":", "https://notes.example/foo/:"},
		{"[61:24:74]:98", "https://notes.example/foo/%5B61:24:74%5D:98"}, // kept, re-spelled (§16.4)
		{"../x/%2e%2E/y", "https://notes.example/y"},
		{"//evil.example/x", "https://notes.example/foo/bar"}, // another host: self
	} {
		doc := `<!doctype html><head><link rel="canonical" href="` + tc.href + `"></head><body>x</body>`
		out, res, err := rewriteBytes([]byte(doc), Options{Match: m, CorrectUpstream: true})
		if err != nil {
			t.Fatal(err)
		}
		if want := `<link rel="canonical" href="` + tc.want + `">`; !strings.Contains(string(out), want) {
			t.Errorf("href %q: want %s in the output (outcome %s):\n%s", tc.href, want, res.Outcome, out)
		}
	}
}
