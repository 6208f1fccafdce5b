package linkheader

import (
	"net/http"
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	links := Parse([]string{
		`<https://a.example/x>; rel="canonical", <https://a.example/de>; rel="alternate"; hreflang="de"`,
		`</style.css>; rel=preload; as=style, junk, <https://a.example/,comma>; rel="Alternate Canonical"; title="a, \"b\""`,
	})
	want := []Link{
		{Target: "https://a.example/x", Rels: []string{"canonical"}, Raw: `<https://a.example/x>; rel="canonical"`},
		{Target: "https://a.example/de", Rels: []string{"alternate"}, Params: map[string]string{"hreflang": "de"}, Raw: `<https://a.example/de>; rel="alternate"; hreflang="de"`},
		{Target: "/style.css", Rels: []string{"preload"}, Params: map[string]string{"as": "style"}, Raw: `</style.css>; rel=preload; as=style`},
		{Target: "https://a.example/,comma", Rels: []string{"alternate", "canonical"}, Params: map[string]string{"title": `a, "b"`}, Raw: `<https://a.example/,comma>; rel="Alternate Canonical"; title="a, \"b\""`},
	}
	if !reflect.DeepEqual(links, want) {
		t.Errorf("got  %+v\nwant %+v", links, want)
	}
}

// Malformed links are skipped to the next comma; an unterminated one ends
// the value.
func TestParseLenient(t *testing.T) {
	ls := Parse([]string{
		`<https://a.example/x>; rel="canonical", </s.css>; rel=preload; as=style`,
		`garbage, <https://a.example/y>;rel="alternate canonical";title="a, b"`,
		`<unterminated`,
	})
	var canon []string
	for _, l := range ls {
		if l.Has("canonical") {
			canon = append(canon, l.Target)
		}
	}
	if !reflect.DeepEqual(canon, []string{"https://a.example/x", "https://a.example/y"}) || len(ls) != 3 {
		t.Errorf("links %+v", ls)
	}
}

func TestReplaceAndFormat(t *testing.T) {
	h := http.Header{}
	h.Add("Link", `<https://a.example/old>; rel="canonical", </s.css>; rel=preload`)
	Replace(h, func(l Link) bool { return l.Has("canonical") }, Format("https://a.example/n?q=<x>", "canonical"))
	want := []string{`</s.css>; rel=preload`, `<https://a.example/n?q=%3Cx%3E>; rel="canonical"`}
	if got := h.Values("Link"); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := Format("https://a.example/de", "alternate", [2]string{"hreflang", `de"x`}); got != `<https://a.example/de>; rel="alternate"; hreflang="de\"x"` {
		t.Errorf("Format = %s", got)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(`<https://a.example/x>; rel="canonical", <b>; rel=alternate; hreflang=de`)
	f.Add(`<a>; title="unterminated`)
	f.Fuzz(func(t *testing.T, v string) {
		for _, l := range Parse([]string{v}) {
			if l.Raw == "" || l.Raw[0] != '<' {
				t.Fatalf("link %+v from %q", l, v)
			}
		}
	})
}
