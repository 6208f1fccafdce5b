package proxy

import (
	"net/url"
	"strings"
	"testing"
)

// Issue 34 item 3, through the proxy: a redirect whose parameter decodes to
// another host's "//" answers on base_url's host (§11.2), in every spelling,
// and the request never reaches the upstream.
func TestRedirectEncodedSlashesNeverForwarded(t *testing.T) {
	p, up, _ := redirectProxy(t, "[[redirect]]\nfrom = \"/go/:dest{.+}\"\nto = \"/{dest}\"\n")
	for _, target := range []string{"/go/%2F%2Fevil.example", "/go/%2f%5Cevil.example", "/go/%2f%5cevil.example",
		"/go//%2F/evil.example", "/go/%2F/evil.example", "/go/\\\\evil.example", "/go/%5C%5Cevil.example", "/go/%2F%2Fevil.example?a=1"} {
		before := up.count()
		rec := do(p, "GET", "notes.example", target, "192.0.2.7:4444", "X-Forwarded-Proto: https")
		if up.count() != before {
			t.Errorf("%s: forwarded to the upstream (%d)", target, rec.Code)
			continue
		}
		if rec.Code == 400 { // refused by §2.2's checks: not forwarded either
			continue
		}
		loc := rec.Header().Get("Location")
		u, err := url.Parse(loc)
		if rec.Code != 301 || err != nil || u.Host != "notes.example" {
			t.Errorf("%s: %d %q, want 301 on notes.example", target, rec.Code, loc)
			continue
		}
		rest := loc[strings.Index(loc, "notes.example")+len("notes.example"):]
		if strings.HasPrefix(rest, "//") || strings.Contains(rest, "\\") {
			t.Errorf("%s: Location %q has a path a browser could read as a host", target, loc)
		}
		t.Logf("%s → %d %s", target, rec.Code, loc)
	}
}
