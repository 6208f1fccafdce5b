package pattern

import (
	"strings"
	"testing"
)

// mediaWiki is MediaWiki's wfUrlencode: urlencode, then these raw again.
const mediaWiki = ";@$!*(),/:~"

func TestSafeSpell(t *testing.T) {
	mw, err := NewSafe(mediaWiki)
	if err != nil {
		t.Fatal(err)
	}
	strict, err := NewSafe("")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		s        *Safe
		in, want string
	}{
		{mw, "/wiki/C++", "/wiki/C%2B%2B"},
		{mw, "/wiki/C%2B%2B", "/wiki/C%2B%2B"},
		{mw, "/wiki/C%2b%2b", "/wiki/C%2B%2B"},
		{mw, "/wiki/AT&T", "/wiki/AT%26T"},
		{mw, "/wiki/Category%3ADrinks", "/wiki/Category:Drinks"},
		{mw, "/wiki/Tea%2FHistory", "/wiki/Tea/History"},
		{mw, "/wiki/Tea_(drink)", "/wiki/Tea_(drink)"},
		{mw, "/wiki/Tea_%28drink%29", "/wiki/Tea_(drink)"},
		{mw, "/wiki/Z\xc3\xbcrich", "/wiki/Z%C3%BCrich"},
		{mw, "/wiki/Z%c3%bcrich", "/wiki/Z%C3%BCrich"},
		{mw, "/wiki/It's", "/wiki/It%27s"},
		{mw, "/wiki/a=b", "/wiki/a%3Db"},
		{mw, "/wiki/%7E%41", "/wiki/~A"},
		{mw, "/wiki/100%", "/wiki/100%25"},
		{mw, "/wiki/100%25", "/wiki/100%25"},
		{mw, "/wiki/%zz", "/wiki/%25zz"},
		{mw, "/wiki/%2e%2e", "/wiki/%2E%2E"},
		{mw, "/wiki/a%2F..", "/wiki/a/%2E%2E"},
		{mw, "/wiki/a%2F%2E/b", "/wiki/a/%2E/b"},
		{mw, "/", "/"},
		{strict, "/a%2Fb", "/a%2Fb"},
		{strict, "/a:b/c@d", "/a%3Ab/c%40d"},
		{strict, "/a/b", "/a/b"},
	} {
		got := c.s.Spell(c.in)
		if got != c.want {
			t.Errorf("Spell(%q) = %q, want %q", c.in, got, c.want)
		}
		if again := c.s.Spell(got); again != got {
			t.Errorf("Spell(Spell(%q)) = %q, not %q", c.in, again, got)
		}
	}
	var none *Safe
	if got := none.Spell("/wiki/C++"); got != "/wiki/C++" {
		t.Errorf("a nil Safe respelled the path: %q", got)
	}
}

func TestNewSafeRefuses(t *testing.T) {
	for _, chars := range []string{"?", "#", "[", "]", "%", " ", "\xc3\xbc", "\\", "<", "\""} {
		if _, err := NewSafe(chars); err == nil {
			t.Errorf("NewSafe(%q) accepted a character a path can not hold raw", chars)
		}
	}
	if _, err := NewSafe(SafeChars + "-._~aZ9"); err != nil {
		t.Errorf("NewSafe(%q): %v", SafeChars, err)
	}
}

func TestSafeSpellAllocs(t *testing.T) {
	mw, _ := NewSafe(mediaWiki)
	if n := testing.AllocsPerRun(100, func() { mw.Spell("/wiki/C%2B%2B/Tea_(drink):x") }); n != 0 {
		t.Errorf("a path already in the app's spelling allocates %v times, want 0", n)
	}
}

func FuzzSafeSpell(f *testing.F) {
	for _, s := range []string{"/wiki/C++", "/a%2F..", "/%zz", "/%2e", "/caf\xc3\xa9"} {
		f.Add(s)
	}
	mw, _ := NewSafe(mediaWiki)
	f.Fuzz(func(t *testing.T, p string) {
		if !strings.HasPrefix(p, "/") {
			return
		}
		got := mw.Spell(p)
		if again := mw.Spell(got); again != got {
			t.Fatalf("Spell(%q) = %q, Spell of that = %q", p, got, again)
		}
		for i := 0; i < len(got); i++ {
			if c := got[i]; c <= ' ' || c >= 0x7f {
				t.Fatalf("Spell(%q) = %q holds byte %#x raw", p, got, c)
			}
		}
		for _, seg := range strings.Split(got, "/") {
			if seg == "." || seg == ".." {
				if !strings.Contains(p, "/"+seg+"/") && !strings.HasSuffix(p, "/"+seg) {
					t.Fatalf("Spell(%q) = %q made a dot segment", p, got)
				}
			}
		}
	})
}

// BenchmarkSpell: an app's spelling (Safe.Spell) beside §16.4's
// (RespellPath), on a path already spelled and on one to respell.
func BenchmarkSpell(b *testing.B) {
	mw, _ := NewSafe(mediaWiki)
	for _, c := range []struct{ name, path string }{
		{"spelled", "/wiki/Category:Drinks/Tea_(drink)"},
		{"respell", "/wiki/Category%3aDrinks/C++/Z%c3%bcrich"},
	} {
		b.Run("safe/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				mw.Spell(c.path)
			}
		})
		b.Run("rfc3986/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				RespellPath(c.path)
			}
		})
	}
}
