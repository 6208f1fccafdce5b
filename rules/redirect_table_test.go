package rules

import (
	"testing"

	"github.com/headgate/headgate/internal/pct"
)

// TestPlainBytes checks the request fast path: a path or query of plain
// bytes is what the escaping functions would return unchanged.
func TestPlainBytes(t *testing.T) {
	for c := range 256 {
		s := "/a" + string([]byte{byte(c)}) + "b"
		if pct.Path.Has(byte(c)) && pct.CanonHex(EscapePath(s)) != s {
			t.Errorf("%#x is plain in a path, but escapes to %q", c, pct.CanonHex(EscapePath(s)))
		}
		if pct.Query.Has(byte(c)) && escapeQuery(s) != s {
			t.Errorf("%#x is plain in a query, but escapes to %q", c, escapeQuery(s))
		}
		if c == '%' && (pct.Path.Has(byte(c)) || pct.Query.Has(byte(c))) {
			t.Error("% is plain: an escape's hex would not be upper-cased")
		}
	}
	// RedirectInto with a plain request and one that needs escaping.
	cfg, err := redirConfig(t, "[[redirect_table]]\nfile = \"r.csv\"\n", map[string]string{"r.csv": "from,to\n/a%22b,/q\n/%C3%A9,/e\n/plain,/p\n"})
	if err != nil {
		t.Fatal(err)
	}
	for target, want := range map[string]string{
		`/a"b`:        "https://notes.example/q",
		"/a%22b":      "https://notes.example/q",
		"/\xc3\xa9":   "https://notes.example/e",
		"/%c3%a9":     "https://notes.example/e",
		"/plain":      "https://notes.example/p",
		"/plain?x=\"": "https://notes.example/p?x=%22",
	} {
		var rd Redirect
		ok, _ := cfg.RedirectInto(RedirectRequest{Method: "GET", Host: "notes.example", HTTPS: true, Target: target}, &rd)
		if !ok || rd.Location != want {
			t.Errorf("%q: %v %q, want %q", target, ok, rd.Location, want)
		}
	}
}
