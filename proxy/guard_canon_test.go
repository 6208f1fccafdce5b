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
// canonicalization: header.go, and the deletes by list) are in canonical
// form: any other spelling would never match a key and silently read,
// replace or delete nothing. The lists are checked by value; the helpers'
// literal keys by parsing every non-test file of the package, so that a
// new call with a key like "ETag" (canonical: "Etag") fails here.
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
	calls := 0
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
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			id, ok := call.Fun.(*ast.Ident)
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
	if calls < 20 {
		t.Errorf("found %d calls of the header helpers: is the parse looking at the package?", calls)
	}
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
