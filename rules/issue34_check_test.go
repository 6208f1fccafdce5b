package rules

import (
	"errors"
	"strings"
	"testing"
)

// Issue 34 item 7: check accepted canonical = "slef" (written as
// https://notes.example/slef) and two rules with one match (the second
// silently won). §23: HG111 with the closest keyword, HG113.
func TestCheckBareWordsAndSameMatch(t *testing.T) {
	cases := []struct{ name, toml, want, code string }{
		{"slef", "[[rule]]\nmatch = \"/n/:id\"\ncanonical = \"slef\"\n", `headgate.toml:7: rule[0].canonical: "slef" is neither a keyword`, "HG111"},
		{"slef suggests self", "[[rule]]\nmatch = \"/n/:id\"\ncanonical = \"slef\"\n", `(did you mean "self"?)`, "HG111"},
		{"og image word", "[[rule]]\nmatch = \"/n/:id\"\n[rule.open_graph]\nimage = \"logo\"\n", `headgate.toml:8: rule[0].open_graph.image: "logo"`, "HG111"},
		{"same match", "[[rule]]\nmatch = \"/n/:id\"\ntitle = \"A\"\n[[rule]]\nmatch = \"/n/:x\"\ntitle = \"B\"\n", `headgate.toml:9: rule[1].match`, "HG113"},
		{"same match and query", "[[rule]]\nmatch = \"/w\"\nquery = { a = \"1\", b = \":v\" }\n[[rule]]\nmatch = \"/w\"\nquery = { b = \":w\", a = \"1\" }\n", `headgate.toml:9: rule[1].match`, "HG113"},
		{"page_table canonical word", "[[page_table]]\nfile = \"seo.csv\"\n", `seo.csv:2: page_table[0]: canonical "slef" is neither a path starting with / nor an absolute URL (did you mean "self"?)`, "HG176"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := redirConfig(t, c.toml, map[string]string{"seo.csv": "path,canonical\n/a,slef\n/b,self\n/c,/x\n"})
			var ps Problems
			if !errors.As(err, &ps) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want %s, got %v", c.want, err)
			}
			for _, p := range ps {
				if strings.Contains(p.String(), c.want) && p.Code != c.code {
					t.Errorf("%s, want code %s", p, c.code)
				}
			}
		})
	}
	// Still fine: the keywords, paths, URLs, templates; one match with two
	// queries; the same pattern with another constraint.
	ok := "[[rule]]\nmatch = \"/n/:id\"\ncanonical = \"self\"\n" +
		"[[rule]]\nmatch = \"/m/:id\"\ncanonical = \"upstream-or-self\"\n" +
		"[[rule]]\nmatch = \"/p/:id\"\ncanonical = \"/q/{id}\"\n" +
		"[[rule]]\nmatch = \"/w\"\nquery = { a = \"1\" }\n" +
		"[[rule]]\nmatch = \"/w\"\nquery = { a = \"2\" }\n" +
		"[[rule]]\nmatch = \"/w\"\n" +
		"[[rule]]\nmatch = \"/n/:id{[0-9]+}\"\n" +
		"[[rule]]\nmatch = \"/n/:id\"\nlocalized = true\n"
	if _, err := Parse("test.toml", []byte("[server]\nupstream = \"http://127.0.0.1:3000\"\n[site]\nbase_url = \"https://notes.example\"\nlocales = [\"en\", \"de\"]\n"+ok), nil); err != nil {
		t.Errorf("a good config: %v", err)
	}
}
