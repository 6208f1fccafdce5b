package rewrite

import (
	"io"
	"strings"
	"testing"
)

// resetConfig is the config of the Reader tests that read a page whole,
// in part or by its buffered bytes: a description and a canonical to write.
const resetConfig = `
[server]
upstream = "http://127.0.0.1:9"
[site]
base_url = "https://example.com"
[[rule]]
match = "/*"
description = "From the rules."
canonical = "/c"
`

// A Reader made anew by Reset, after another document (read in part, read
// whole, or read with a cache that replayed a plan), writes what a new
// Reader writes and reports the same result: nothing of the first carries
// over.
func TestReaderReset(t *testing.T) {
	m := mustMatch(t, resetConfig, "/page")
	docs := []string{
		`<!doctype html><html><head><title>One</title><meta name="description" content="old"></head><body>one</body></html>`,
		`<html><head><link rel="canonical" href="/x"></head><body>two</body></html>`,
		`<p>no head at all</p>`,
		``,
	}
	fresh := func(doc string, opts Options) (string, Result) {
		r := NewReader(strings.NewReader(doc), opts)
		out, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(out), *r.Result()
	}
	for _, cache := range []*Cache{nil, NewCache(64)} {
		opts := Options{Match: m, Cache: cache}
		var r Reader
		for i, first := range docs {
			for _, partial := range []bool{false, true} {
				r.Reset(strings.NewReader(first), opts)
				if partial {
					if _, err := r.Read(make([]byte, 7)); err != nil && err != io.EOF {
						t.Fatal(err)
					}
				} else if _, err := io.ReadAll(&r); err != nil {
					t.Fatal(err)
				}
				for _, second := range docs {
					want, wantRes := fresh(second, opts)
					r.Reset(strings.NewReader(second), opts)
					got, err := io.ReadAll(&r)
					if err != nil {
						t.Fatal(err)
					}
					if string(got) != want {
						t.Errorf("doc %d then %q (partial %v, cache %v):\ngot  %q\nwant %q", i, second, partial, cache != nil, got, want)
					}
					res := r.Result()
					if res.Outcome != wantRes.Outcome || res.Delta != wantRes.Delta || len(res.Changes) != len(wantRes.Changes) {
						t.Errorf("doc %d then %q: result %v %d %d changes, want %v %d %d", i, second,
							res.Outcome, res.Delta, len(res.Changes), wantRes.Outcome, wantRes.Delta, len(wantRes.Changes))
					}
				}
			}
		}
	}
}
