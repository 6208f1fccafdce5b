package rewrite_test

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/headgate/headgate/rewrite"
	"github.com/headgate/headgate/rules"
)

// A Reader rewrites one HTML document as it streams: Prepare reads through
// the end of the head (so the length change is known before any header
// goes out), then Read returns the rewritten head and the upstream's bytes
// after it, untouched.
func ExampleNewReader() {
	cfg, err := rules.Parse("headgate.toml", []byte(`
[server]
upstream = "http://127.0.0.1:3000"
[site]
base_url = "https://notes.example"
[[rule]]
match = "/notes/:id"
description = "Note {id}, kept short."
canonical = "self"
`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	page := `<html><head><title>Note</title><link rel=canonical href="http://old.example/n?id=3"></head><body>…</body></html>`
	r := rewrite.NewReader(strings.NewReader(page), rewrite.Options{
		Match:           cfg.Resolve("/notes/3"),
		ContentType:     "text/html; charset=utf-8",
		CorrectUpstream: true,
	})
	if err := r.Prepare(); err != nil {
		fmt.Println(err)
		return
	}
	res := r.Result()
	fmt.Println(res.Outcome, "delta", res.Delta)
	io.Copy(os.Stdout, r)
	// Output:
	// rewritten delta 63
	// <html><head><title>Note</title><meta name="description" content="Note 3, kept short.">
	// <link rel="canonical" href="https://notes.example/notes/3">
	// </head><body>…</body></html>
}
