package proxy

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/textproto"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The header names used on a header map directly (without http.Header's
// canonicalization: header.go, the deletes by list, h["Location"]) are in
// canonical form: any other spelling would never match a key and silently
// read, replace or delete nothing. The lists are checked by value; the
// helpers' literal keys, and literal keys spelled like a field name in an
// index or a delete, by parsing every non-test file of the package, so
// that a new use of a key like "ETag" (canonical: "Etag") fails here.
func TestCanonicalHeaderKeys(t *testing.T) {
	var keys []string
	keys = append(keys, droppedRequestHeaders[:]...)
	keys = append(keys, upstreamBytesHeaders[:]...)
	keys = append(keys, conditionalHeaders[:]...)
	for _, k := range keys {
		if c := textproto.CanonicalMIMEHeaderKey(k); c != k {
			t.Errorf("%q is used as it is, but its canonical form is %q", k, c)
		}
	}

	helpers := map[string]bool{"hget": true, "hvalues": true, "hset": true, "hadd": true, "hdel": true}
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	calls, direct := 0, 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if ix, ok := n.(*ast.IndexExpr); ok {
				// A map indexed by a literal that is spelled like a header
				// field (h["Location"]): the same rule.
				if lit, ok := ix.Index.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if k, err := strconv.Unquote(lit.Value); err == nil && headerShaped(k) {
						direct++
						if c := textproto.CanonicalMIMEHeaderKey(k); c != k {
							t.Errorf("%s: [%q]: the canonical form is %q", fset.Position(lit.Pos()), k, c)
						}
					}
				}
				return true
			}
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			id, ok := call.Fun.(*ast.Ident)
			if ok && id.Name == "delete" && len(call.Args) == 2 {
				if lit, ok := call.Args[1].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if k, err := strconv.Unquote(lit.Value); err == nil && headerShaped(k) {
						direct++
						if c := textproto.CanonicalMIMEHeaderKey(k); c != k {
							t.Errorf("%s: delete(%q): the canonical form is %q", fset.Position(lit.Pos()), k, c)
						}
					}
				}
				return true
			}
			if !ok || !helpers[id.Name] || len(call.Args) < 2 {
				return true
			}
			calls++
			switch a := call.Args[1].(type) {
			case *ast.BasicLit:
				k, err := strconv.Unquote(a.Value)
				if err != nil {
					t.Errorf("%s: %s key %s: %v", fset.Position(a.Pos()), id.Name, a.Value, err)
				} else if c := textproto.CanonicalMIMEHeaderKey(k); c != k {
					t.Errorf("%s: %s(%q): the canonical form is %q", fset.Position(a.Pos()), id.Name, k, c)
				}
			case *ast.Ident:
				// A loop over one of the lists checked above.
			default:
				t.Errorf("%s: %s takes a literal key or a range variable over a checked list", fset.Position(call.Pos()), id.Name)
			}
			return true
		})
	}
	if calls < 20 || direct < 5 {
		t.Errorf("found %d calls of the header helpers and %d direct accesses: is the parse looking at the package?", calls, direct)
	}
}

// headerShaped reports whether a string literal looks like a header
// field name: a capital first, then letters, digits and hyphens.
func headerShaped(k string) bool {
	if k == "" || k[0] < 'A' || k[0] > 'Z' {
		return false
	}
	for i := 1; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// addVary adds its token once: not when a Vary value already lists it (in
// any case, among others, with spaces) or says "*".
func TestAddVary(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want []string
	}{
		{nil, []string{"Accept-Encoding"}},
		{[]string{"Cookie"}, []string{"Cookie", "Accept-Encoding"}},
		{[]string{"Cookie, accept-encoding"}, []string{"Cookie, accept-encoding"}},
		{[]string{"Cookie", " Accept-Encoding ,Origin"}, []string{"Cookie", " Accept-Encoding ,Origin"}},
		{[]string{"*"}, []string{"*"}},
		{[]string{"Accept-Encoding-X, X-Accept-Encoding"}, []string{"Accept-Encoding-X, X-Accept-Encoding", "Accept-Encoding"}},
		{[]string{",,"}, []string{",,", "Accept-Encoding"}},
		{[]string{""}, []string{"", "Accept-Encoding"}},
	} {
		h := http.Header{}
		if tc.in != nil {
			h["Vary"] = append([]string(nil), tc.in...)
		}
		addVary(h, "Accept-Encoding")
		if got := h["Vary"]; !slices.Equal(got, tc.want) {
			t.Errorf("Vary %q: got %q, want %q", tc.in, got, tc.want)
		}
	}
}

// The Vary slice addVary shares between responses is never written
// through: a field added after it lands in a copy, so no later response
// reads another's Vary.
func TestAddVarySharedSlice(t *testing.T) {
	a, b := http.Header{}, http.Header{}
	addVary(a, "Accept-Encoding")
	addVary(b, "Accept-Encoding")
	a.Add("Vary", "Cookie")
	hadd(b, "Vary", "Origin")
	if got := b["Vary"]; !slices.Equal(got, []string{"Accept-Encoding", "Origin"}) {
		t.Errorf("second response's Vary: %q", got)
	}
	if got := a["Vary"]; !slices.Equal(got, []string{"Accept-Encoding", "Cookie"}) {
		t.Errorf("first response's Vary: %q", got)
	}
	if !slices.Equal(varyAcceptEncoding, []string{"Accept-Encoding"}) || cap(varyAcceptEncoding) != 1 {
		t.Errorf("the shared slice changed: %q (cap %d)", varyAcceptEncoding, cap(varyAcceptEncoding))
	}
}
