package robotsmeta

import "testing"

func TestHeaderNoindex(t *testing.T) {
	for _, tc := range []struct {
		values []string
		want   bool
	}{
		{[]string{"noindex"}, true},
		{[]string{"noarchive", "NoIndex, nofollow"}, true},
		{[]string{"none"}, true},
		{[]string{"googlebot: noindex"}, true},
		{[]string{"unavailable_after: 25 Jun 2030 15:00:00 PST"}, false},
		{[]string{"max-snippet: 20, noarchive"}, false},
		{[]string{"nofollow"}, false},
		{nil, false},
	} {
		if got := HeaderNoindex(tc.values); got != tc.want {
			t.Errorf("HeaderNoindex(%q) = %v", tc.values, got)
		}
	}
}

func TestNoindex(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"noindex", true},
		{"index, NoIndex", true},
		{" none ", true},
		{"nofollow, noarchive", false},
		{"noindexed", false},
		{"", false},
	} {
		if got := Noindex(tc.in); got != tc.want {
			t.Errorf("Noindex(%q) = %v", tc.in, got)
		}
	}
}

func TestForCrawler(t *testing.T) {
	for _, tc := range []struct{ in, crawler, directives string }{
		{"noindex", "", "noindex"},
		{"GoogleBot: noindex", "googlebot", " noindex"},
		{"max-snippet: 20", "", "max-snippet: 20"},
		{"noarchive, unavailable_after: 2030", "", "noarchive, unavailable_after: 2030"},
	} {
		if c, d := ForCrawler(tc.in); c != tc.crawler || d != tc.directives {
			t.Errorf("ForCrawler(%q) = %q, %q", tc.in, c, d)
		}
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Set
	}{
		{"", 0},
		{"index, follow", 0},
		{"NoIndex", NoIndex},
		{" none ", NoIndex | NoFollow},
		{"noindex,nofollow", NoIndex | NoFollow},
		{"max-snippet: 20, NOARCHIVE", MaxSnippet | NoArchive},
		{"unavailable_after: 25 Jun 2030 15:00:00 PST", UnavailableAfter},
		{"noindexed, ,,", 0},
		{"a-directive-longer-than-twenty-bytes", 0},
	} {
		if got := Parse(tc.in); got != tc.want {
			t.Errorf("Parse(%q) = %v, want %v", tc.in, got, tc.want)
		}
		if got := Parse([]byte(tc.in)); got != tc.want {
			t.Errorf("Parse([]byte(%q)) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if s := (NoIndex | NoFollow | MaxSnippet).String(); s != "noindex, nofollow, max-snippet" {
		t.Errorf("String = %q", s)
	}
	if n := testing.AllocsPerRun(100, func() { Parse([]byte("NoIndex, max-snippet: 3")) }); n != 0 {
		t.Errorf("Parse allocates %v", n)
	}
}
