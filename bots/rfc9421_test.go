package bots

import (
	"crypto/ed25519"
	"encoding/base64"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
)

// TestRFC9421Ed25519Vector checks the signature base against RFC 9421
// Appendix B.2.6 (Ed25519 over several components, the test key of
// B.1.4): the base is built byte for byte as the RFC's and the RFC's
// signature verifies over it.
func TestRFC9421Ed25519Vector(t *testing.T) {
	r := httptest.NewRequest("POST", "http://example.com/foo?param=Value&Pet=dog", strings.NewReader(`{"hello": "world"}`))
	r.Host = "example.com"
	r.Header.Set("Date", "Tue, 20 Apr 2021 02:07:55 GMT")
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Content-Length", "18")
	d, err := parseDictionary(`sig-b26=("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"`)
	if err != nil {
		t.Fatal(err)
	}
	base, err := signatureBase(r, &signedRequest{params: d[0]})
	if err != nil {
		t.Fatal(err)
	}
	want := `"date": Tue, 20 Apr 2021 02:07:55 GMT
"@method": POST
"@path": /foo
"@authority": example.com
"content-type": application/json
"content-length": 18
"@signature-params": ("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"`
	if string(base) != want {
		t.Fatalf("base:\n%s\nwant:\n%s", base, want)
	}
	x, _ := base64.RawURLEncoding.DecodeString("JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs")
	sig, _ := base64.StdEncoding.DecodeString("wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==")
	if !ed25519.Verify(ed25519.PublicKey(x), base, sig) {
		t.Error("the RFC's signature does not verify over the base")
	}
}

// TestImportsStandardLibraryOnly keeps the package self-contained: the
// proxy, the config loader and the inspector import it, never the other
// way round. Its own botconfig (the config, directory and range files,
// without net/http, for rules) is part of it.
func TestImportsStandardLibraryOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, imp := range strings.Fields(string(out)) {
		if strings.HasPrefix(imp, "github.com/headgate/headgate/bots/") {
			continue
		}
		if first, _, _ := strings.Cut(imp, "/"); strings.Contains(first, ".") {
			t.Errorf("bots imports %s; it may import only the standard library", imp)
		}
	}
}
