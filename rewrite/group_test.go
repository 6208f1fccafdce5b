package rewrite

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headgate/headgate/rules"
)

// Under policy = "fill", a page of an hreflang group whose upstream has its
// own alternates keeps them, and then gets none of the group's og:locale
// tags either: its languages are said one way (§12.3: og:locale and
// og:locale:alternate follow the same rows as the alternates). A page
// without alternates gets the group's, og:locale tags included.
func TestFillGroupSaysOneSetOfLanguages(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hreflang.csv"), []byte("group,hreflang,url\nabout,en,https://notes.example/about\nabout,de,https://notes.de/ueber\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "headgate.toml")
	if err := os.WriteFile(file, []byte("[server]\nupstream = \"http://127.0.0.1:1\"\n[site]\nbase_url = \"https://notes.example\"\n"+
		"[[hreflang_table]]\nfile = \"hreflang.csv\"\n[[rule]]\nmatch = \"/about\"\npolicy = \"fill\"\n[rule.open_graph]\ntitle = \"About\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := rules.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	run := func(head string) string {
		t.Helper()
		doc := "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>About</title>\n" + head + "</head><body>x</body></html>"
		out, _, err := rewriteBytes([]byte(doc), Options{Match: cfg.Resolve("/about"), ContentType: "text/html"})
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	kept := run("<link rel=\"alternate\" hreflang=\"es\" href=\"https://notes.example/es/about\">\n<meta property=\"og:locale\" content=\"es_ES\">\n")
	if !strings.Contains(kept, `hreflang="es"`) || strings.Contains(kept, `hreflang="de"`) ||
		strings.Contains(kept, "og:locale:alternate") || strings.Count(kept, `property="og:locale"`) != 1 {
		t.Errorf("fill, upstream alternates: want the upstream's languages only:\n%s", kept)
	}
	// The upstream's alternates and no og:locale of its own: the group's
	// og:locale is not written either.
	noLocale := run("<link rel=\"alternate\" hreflang=\"es\" href=\"https://notes.example/es/about\">\n")
	if strings.Contains(noLocale, "og:locale") {
		t.Errorf("fill, upstream alternates without og:locale: the group's og:locale was written:\n%s", noLocale)
	}
	fresh := run("")
	for _, want := range []string{`hreflang="de" href="https://notes.de/ueber"`, `<meta property="og:locale" content="en">`, `<meta property="og:locale:alternate" content="de">`} {
		if !strings.Contains(fresh, want) {
			t.Errorf("fill, no upstream alternates: lacks %s:\n%s", want, fresh)
		}
	}
}
