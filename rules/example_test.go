package rules_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/headgate/headgate/rules"
)

// Load reads, validates and compiles a config; Resolve says what applies
// to a request target, and Render what it writes.
func ExampleLoad() {
	dir, _ := os.MkdirTemp("", "headgate")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "headgate.toml")
	os.WriteFile(path, []byte(`
[server]
upstream = "http://127.0.0.1:3000"
[site]
base_url = "https://notes.example"
title_template = "%s · Notes"

[[rule]]
match = "/notes/:id{[0-9]+}"
title = "Note {id}"
canonical = "self"
`), 0o644)

	cfg, err := rules.Load(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	m := cfg.Resolve("/notes/42?utm_source=feed")
	head := m.Render(rules.Page{})
	fmt.Println(m.Patterns())
	fmt.Println(*head.Title)
	fmt.Println(*head.Canonical)
	// Output:
	// [/notes/:id{[0-9]+}]
	// Note 42 · Notes
	// https://notes.example/notes/42
}

// A config with problems is refused whole, each problem with its code,
// file, line and key.
func ExampleParse_problems() {
	_, err := rules.Parse("headgate.toml", []byte(`
[server]
upstream = "ftp://example.org"
[site]
base_url = "https://notes.example"
[[rule]]
match = "/a"
titel = "A"
`), nil)
	fmt.Println(err)
	// Output:
	// HG102 headgate.toml:3: server.upstream: "ftp://example.org": not an http(s) URL or "builtin:demo"
	// HG140 headgate.toml:8: rule[0].titel: unknown key (did you mean title?)
}
