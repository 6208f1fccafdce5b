package rules

import (
	"net/url"
	"strings"
	"testing"
)

// Issue 34 item 3: a parameter that decodes to "//host" (or "\\host", "/\host")
// at the start of a target that is "/{dest}" is answered as a path on
// base_url's host, never served and never another host (§11.2).
func TestRedirectEncodedSlashesAtTargetStart(t *testing.T) {
	for _, norm := range []string{"", "[normalize]\nmerge_slashes = true\nlowercase = true\ntrailing_slash = \"strip\"\n"} {
		cfg := mustRedirConfig(t, norm+`
[[redirect]]
from = "/go/:dest{.+}"
to = "/{dest}"
`, nil)
		encodedSlashes(t, cfg)
	}
}

func encodedSlashes(t *testing.T, cfg *Config) {
	t.Helper()
	for _, e := range []string{"%2F%2Fevil.example", "%2f%5Cevil.example", "%2F/evil.example", "/%2F/evil.example",
		"%5C%5Cevil.example", "%5C/evil.example", "%2F%5C%2Fevil.example/x?y=1"} {
		target := "/go/" + e
		if CheckPath(target) != nil {
			t.Logf("%s: refused by the 400 checks", target)
			continue
		}
		rd, err := cfg.Redirect(RedirectRequest{Method: "GET", Host: "notes.example", HTTPS: true, Target: target})
		if rd == nil {
			t.Errorf("%s: served (err %v), want a redirect on notes.example", target, err)
			continue
		}
		u, perr := url.Parse(rd.Location)
		if perr != nil || u.Scheme != "https" || u.Host != "notes.example" {
			t.Errorf("%s → %s: not on https://notes.example", target, rd.Location)
		}
		t.Logf("%s → %d %s", target, rd.Status, rd.Location)
		rest := strings.TrimPrefix(rd.Location, "https://notes.example")
		if strings.HasPrefix(rest, "//") || strings.HasPrefix(rest, "/\\") || strings.ContainsAny(rest, "\\") {
			t.Errorf("%s → %s: path a browser could read as another host", target, rd.Location)
		}
	}
}
