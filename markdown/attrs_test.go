package markdown

import (
	"bytes"
	"fmt"
	"testing"

	"golang.org/x/net/html"
)

// tagAttrs checks, for every start tag of page, that rawAttrs reads the
// attributes TagAttr reads (or declines), and returns how many tags it read.
func tagAttrs(t testing.TB, page []byte) (tags, read int) {
	z := html.NewTokenizer(bytes.NewReader(page))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return tags, read
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		tags++
		raw := append([]byte(nil), z.Raw()...)
		got, ok := rawAttrs(nil, raw)
		var want []attr
		for more := true; more; {
			k, v, m := z.TagAttr()
			more = m
			if k != nil {
				want = append(want, attr{k, v})
			}
		}
		if !ok {
			continue
		}
		read++
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
			t.Fatalf("%q: rawAttrs %q, TagAttr %q", raw, got, want)
		}
	}
}

var attrCases = []string{
	`<a href=x class='y' id="z">`, `<a href = "x" >`, `<a =b c>`, `<a href>`, `<a href/>`, `<a / href=x / >`,
	`<a href=x/>`, `<a href="x"class=y>`, `<a href=>`, `<a href= >`, `<a x=1 x=2 X=3>`, `<a x="a>b">`,
	`<a x='it"s'>`, `<a b/c=d>`, `<a ==x>`, `<img src=/a alt="[b]" />`, `<a x="&amp;">`, `<p\x00 a=b>`,
	"<a\tb\n=\fc>", `<a x="unterminated>`, `<a b c d>`, `<a b=c=d>`, `<a  >`, `<a/>`, `<a">`, `<a b='>'>`,
}

func TestRawAttrs(t *testing.T) {
	for _, c := range attrCases {
		tagAttrs(t, []byte(c+"x"))
	}
	pages, _ := corpus(t)
	tags, read := 0, 0
	for _, p := range pages {
		n, r := tagAttrs(t, p)
		tags, read = tags+n, read+r
	}
	t.Logf("%d start tags, %d read without TagAttr", tags, read)
}

// FuzzRawAttrs: rawAttrs reads what TagAttr reads, or declines.
func FuzzRawAttrs(f *testing.F) {
	for _, c := range attrCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, in []byte) { tagAttrs(t, in) })
}
