package sitemap

import (
	"strings"
	"testing"
)

// An entry whose <loc> headgate would redirect (a table row, a rule, a
// normalization) is left out, with one warning per rule and generation.
func TestRedirectedEntriesLeftOut(t *testing.T) {
	cfg := loadConfig(t, `
[normalize]
trailing_slash = "strip"

[[rule]]
match = "/notes/:id"
sitemap = true
sitemap_source = "file:notes.jsonl"

[[redirect_table]]
file = "r.csv"

[[redirect]]
from = "/notes/:id{old-.*}"
to = "/archive/{id}"
`, map[string]string{
		"notes.jsonl": `{"params": {"id": "1"}}
{"params": {"id": "2"}}
{"params": {"id": "old-3"}}
{"params": {"id": "4"}}
{"params": {"id": "old-5"}}
`,
		"r.csv": "from,to\n/notes/2,/notes/1\n/notes/4?print=1,/print/4\n",
	})
	l, log := newLogs()
	for gen := 0; gen < 2; gen++ {
		files := generated(t, New(cfg, Options{Logger: log}))
		u := parseURLSet(t, files["/sitemap.xml"])
		var locs []string
		for _, x := range u.URLs {
			locs = append(locs, x.Loc)
		}
		got := strings.Join(locs, " ")
		// /notes/4 stays: only its ?print=1 form is redirected.
		if want := "https://notes.example/notes/1 https://notes.example/notes/4"; got != want {
			t.Errorf("generation %d: <loc>s %s, want %s", gen, got, want)
		}
	}
	var warnings int
	for _, r := range l.records(t, msgLeftOut) {
		if r["rule"] == "/notes/:id" {
			warnings++
			if n := reasons(r)[reasonRedirected]; n != 3 {
				t.Errorf("redirected count %d, want 3: %v", n, r)
			}
		}
	}
	if warnings != 2 {
		t.Errorf("%d warnings for two generations, want 2:\n%s", warnings, l)
	}
}
