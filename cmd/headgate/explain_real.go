package main

import (
	"fmt"
	"io"

	"github.com/headgate/headgate/rules"
)

// explainReal shows what the rule fields of SPEC §16 do to a match: the
// rules inherit = false leaves out, and rewrite = false.
func explainReal(w io.Writer, m *rules.Match) {
	for _, mr := range m.Ignored {
		fmt.Fprintf(w, "  not inherited (a more specific rule says inherit = false): %s%s\n", mr.Rule.Match, mr.Rule.QueryLabel())
	}
	if !m.Rewrite() {
		fmt.Fprintln(w, "  rewrite = false: responses are proxied with the rules' headers, never rewritten")
	}
}
