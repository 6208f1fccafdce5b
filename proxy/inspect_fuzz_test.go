package proxy

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/headgate/headgate/rewrite"
	"github.com/headgate/headgate/rules"
)

// FuzzInspectHead feeds hostile bytes to the inspector's head lister, the
// alignment and the previews: no panic, every shown line one line of valid
// UTF-8 without control characters, the bounds kept.
func FuzzInspectHead(f *testing.F) {
	for _, s := range []string{notePage, hostileHead, testPage, "", "<head><title>x", "\xff\xfe<meta name=a\x00 content=\"\r\n\">",
		"<html><head><template><meta name=x></template><noscript><link rel=canonical href=/n></noscript><div>"} {
		f.Add([]byte(s), []byte(notePage))
	}
	cfg, err := rules.Parse("f.toml", []byte("[server]\nupstream = \"http://127.0.0.1:1\"\n[site]\nbase_url = \"https://notes.example\"\n"), nil)
	if err != nil {
		f.Fatal(err)
	}
	shown := func(t *testing.T, what, s string) {
		if !utf8.ValidString(s) {
			t.Fatalf("%s is not UTF-8: %q", what, s)
		}
		for _, r := range s {
			if r < 0x20 || r == 0x7f {
				t.Fatalf("%s holds control character %U: %q", what, r, s)
			}
		}
	}
	f.Fuzz(func(t *testing.T, up, served []byte) {
		a, endA, _ := shownHead(rewrite.ListHead(up, "text/html", false))
		b, endB, _ := shownHead(rewrite.ListHead(served, "text/html; charset=windows-1252", true))
		if len(a) > maxHeadRows || len(b) > maxHeadRows {
			t.Fatalf("%d and %d tags", len(a), len(b))
		}
		shown(t, "head end", endA)
		shown(t, "head end", endB)
		rows := alignHeads(a, b)
		if len(rows) > len(a)+len(b) {
			t.Fatalf("%d rows for %d + %d tags", len(rows), len(a), len(b))
		}
		for _, r := range rows {
			shown(t, "upstream line", r.Upstream)
			shown(t, "served line", r.Served)
			shown(t, "key", r.Key)
			if utf8.RuneCountInString(r.Served) > maxLine+16 {
				t.Fatalf("line of %d characters", utf8.RuneCountInString(r.Served))
			}
		}
		s, c := previews(cfg, "/x", a)
		if utf8.RuneCountInString(s.Title) > searchTitleMax || utf8.RuneCountInString(s.Description) > searchDescMax {
			t.Fatalf("previews not cut: %q %q", s.Title, s.Description)
		}
		if c.ImageOK && !strings.HasPrefix(c.Image, "http") {
			t.Fatalf("image %q offered to load", c.Image)
		}
	})
}
