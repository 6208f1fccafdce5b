package rules

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// thousandRules is a config of 1,000 rules of the usual shapes: a
// parameterised pattern, templates, Open Graph with an image, robots and
// a header.
func thousandRules() []byte {
	var b strings.Builder
	b.WriteString("[server]\nupstream = \"http://127.0.0.1:8081\"\n\n[site]\nbase_url = \"https://www.example.com\"\n")
	for i := range 1000 {
		fmt.Fprintf(&b, `
[[rule]]
match = "/section%d/:slug{[a-z0-9-]+}"
title = "Section %d: {slug}"
description = "Everything about {slug} in section %d."
canonical = "self"
robots = { index = true, follow = true }
headers = { x-section = "%d" }

[rule.open_graph]
type = "article"
image = [{ url = "/img/%d.png", width = 1200, height = 630, alt = "Section %d" }]
`, i, i, i, i, i, i)
	}
	return []byte(b.String())
}

// BenchmarkParse is the load time of a config: config.example.toml, and
// one of 1,000 rules.
func BenchmarkParse(b *testing.B) {
	example, err := os.ReadFile("../config.example.toml")
	if err != nil {
		b.Skipf("config.example.toml: %v", err)
	}
	for _, c := range []struct {
		name string
		src  []byte
	}{{"example", example}, {"rules1000", thousandRules()}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.src)))
			for b.Loop() {
				if _, err := Parse("../config.example.toml", c.src, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
