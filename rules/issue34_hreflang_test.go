package rules

import (
	"errors"
	"strings"
	"testing"
)

// Issue 34 item 5: hreflang table URLs pass §4.6 like every other URL
// (§23): a bad port, a raw non-ASCII host, dot segments, or one URL for two
// languages of a group is HG175 at the row's file:line.
func TestHreflangTableURLs(t *testing.T) {
	const head = "group,hreflang,url\ng,en,https://notes.example/a\n"
	cases := []struct{ name, row, want string }{
		{"port 0", "g,de,https://notes.de:0/a", "not a TCP port"},
		{"port 99999", "g,de,https://notes.de:99999/a", "not a TCP port"},
		{"empty port", "g,de,https://notes.de:/a", "not a TCP port"},
		{"raw non-ASCII host", "g,de,https://bücher.example/a", "xn--bcher-kva.example"},
		{"dot segments", "g,de,https://notes.de/a/../../x", "dot segment"},
		{"a dot segment", "g,de,https://notes.de/./x", "dot segment"},
		{"one URL, two languages", "g,de,https://notes.example/a", `"de" and "en"`},
		{"a URL over 4 KiB", "g,de,https://notes.de/" + strings.Repeat("a", 5000), "at most 4096"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := redirConfig(t, "[[hreflang_table]]\nfile = \"h.csv\"\n",
				map[string]string{"h.csv": head + c.row + "\ng,fr,https://notes.fr/a\n"})
			var ps Problems
			if !errors.As(err, &ps) {
				t.Fatalf("loaded, want HG175 at h.csv:3 (%v)", err)
			}
			for _, p := range ps {
				if p.Code == "HG175" && strings.Contains(p.String(), "h.csv:3:") && strings.Contains(p.Message, c.want) {
					return
				}
			}
			t.Errorf("want HG175 h.csv:3 …%s, got\n%v", c.want, err)
		})
	}
	// What stays allowed: x-default sharing a language's URL, an A-label,
	// an explicit valid port, an IPv6 literal with a port.
	ok := head + "g,x-default,https://notes.example/a\ng,de,https://xn--bcher-kva.example:8443/a\ng,fr,http://[2001:db8::1]:8080/a\n"
	if _, err := redirConfig(t, "[[hreflang_table]]\nfile = \"h.csv\"\n", map[string]string{"h.csv": ok}); err != nil {
		t.Errorf("a good table: %v", err)
	}
}
