package markdown

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// render reads Markdown documents with markdown-it (CommonMark plus its GFM
// table rule) through testdata/commonmark/render.mjs and returns the text a
// reader of each sees and its count of raw-HTML tokens. It skips when node
// or the npm packages (test/run installs them with npm ci) are missing.
func render(t *testing.T, docs []string) []struct {
	Text  string
	HTML  int
	Links []string
} {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found: install node and npm, then run test/run (npm ci in markdown/testdata/commonmark)")
	}
	if _, err := os.Stat("testdata/commonmark/node_modules/markdown-it"); err != nil {
		t.Skip("markdown-it not installed: run test/run, or npm ci in markdown/testdata/commonmark")
	}
	in, _ := json.Marshal(docs)
	cmd := exec.Command(node, "render.mjs")
	cmd.Dir = "testdata/commonmark"
	cmd.Stdin = bytes.NewReader(in)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node render.mjs: %v", err)
	}
	var res []struct {
		Text  string
		HTML  int
		Links []string
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// oracle reads a page with the WHATWG tree builder and returns the text of
// its content element (the first Content selector that matches) without the
// removed or non-text subtrees, and the text of the removed subtrees
// anywhere in the page that are navigation (nav, header, footer, aside).
func oracle(t *testing.T, page []byte, opt Options) (content, removed string) {
	t.Helper()
	c, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	matches := func(sels []selector, n *html.Node) bool {
		var attrs []attr
		for _, a := range n.Attr {
			attrs = append(attrs, attr{[]byte(a.Key), []byte(a.Val)})
		}
		for i := range sels {
			if sels[i].match([]byte(n.Data), attrs) {
				return true
			}
		}
		return false
	}
	var find func(n *html.Node, s []selector) *html.Node
	find = func(n *html.Node, s []selector) *html.Node {
		if n.Type == html.ElementNode && (isSkipped(n.DataAtom) || matches(c.remove, n)) {
			return nil
		}
		if n.Type == html.ElementNode && matches(s, n) {
			return n
		}
		for k := n.FirstChild; k != nil; k = k.NextSibling {
			if f := find(k, s); f != nil {
				return f
			}
		}
		return nil
	}
	var root *html.Node
	for i := range c.content {
		if root = find(doc, c.content[i:i+1]); root != nil {
			break
		}
	}
	if root == nil {
		t.Fatal("no content element")
	}
	var cb, rb strings.Builder
	var walk func(n *html.Node, out *strings.Builder, rm bool)
	walk = func(n *html.Node, out *strings.Builder, rm bool) {
		if n.Type == html.ElementNode {
			if isSkipped(n.DataAtom) && n.DataAtom != atom.Noscript {
				return
			}
			if !rm && matches(c.remove, n) {
				if n.DataAtom == atom.Nav || n.DataAtom == atom.Header || n.DataAtom == atom.Footer || n.DataAtom == atom.Aside {
					walk(n, &rb, true)
				}
				return
			}
			if n.DataAtom == atom.Img && !rm {
				return
			}
		}
		if n.Type == html.TextNode {
			out.WriteString(n.Data)
		}
		// Only block boundaries separate words; inline elements do not.
		brk := n.Type == html.ElementNode && (closesP(n.DataAtom) || isBlock(n.DataAtom) ||
			n.DataAtom == atom.Td || n.DataAtom == atom.Th || n.DataAtom == atom.Tr ||
			n.DataAtom == atom.Br || n.DataAtom == atom.Caption || n.DataAtom == atom.Img)
		if brk {
			out.WriteByte(' ')
		}
		for k := n.FirstChild; k != nil; k = k.NextSibling {
			walk(k, out, rm)
		}
		if brk {
			out.WriteByte(' ')
		}
	}
	walk(root, &cb, false)
	walk(doc, &strings.Builder{}, false) // collects every removed subtree in rb
	return cb.String(), rb.String()
}

func words(s string) map[string]int {
	m := map[string]int{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		m[w]++
	}
	return m
}

// recall is the share of want's words (with multiplicity) that got has.
func recall(want, got map[string]int) (float64, []string) {
	total, hit := 0, 0
	var miss []string
	for w, n := range want {
		total += n
		hit += min(n, got[w])
		if got[w] < n && len(miss) < 20 {
			miss = append(miss, w)
		}
	}
	if total == 0 {
		return 1, nil
	}
	return float64(hit) / float64(total), miss
}

// recallPages are the project's own pages (always) and the corpus pages
// (when ../shared is present). None of the corpus pages has a <main> or
// <article>; three have role=main or #content, the others are read whole
// (body), which checks the converter on more markup.
func recallPages(t *testing.T) map[string][]byte {
	pages := map[string][]byte{}
	own, _ := filepath.Glob("testdata/*.html")
	shared, _ := filepath.Glob("../../shared/corpus/*.html")
	if len(shared) == 0 {
		t.Log("../shared/corpus absent: only testdata pages are checked")
	}
	for _, f := range append(own, shared...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		pages[f] = b
	}
	return pages
}

// TestReadBack reads the Markdown of every recall page with a real
// CommonMark parser and compares its text with the content element's text
// as the HTML5 tree builder reads it.
func TestReadBack(t *testing.T) {
	pages := recallPages(t)
	var names, docs []string
	for name, page := range pages {
		var b bytes.Buffer
		if _, err := Convert(&b, bytes.NewReader(page), Front{}, nil); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		names = append(names, name)
		docs = append(docs, b.String())
	}
	res := render(t, docs)
	for i, name := range names {
		content, removed := oracle(t, pages[name], Options{})
		want, got := words(content), words(res[i].Text)
		r, miss := recall(want, got)
		t.Logf("%s: word recall %.4f (%d words)", name, r, len(want))
		if r < 0.99 {
			t.Errorf("%s: word recall %.4f < 0.99; missing e.g. %q", name, r, miss)
		}
		if res[i].HTML != 0 {
			t.Errorf("%s: %d raw HTML tokens in the Markdown", name, res[i].HTML)
		}
		var leaked []string
		for w := range words(removed) {
			if want[w] == 0 && got[w] > 0 && len(w) > 3 {
				leaked = append(leaked, w)
			}
		}
		if len(leaked) > 0 {
			t.Errorf("%s: words of removed subtrees in the Markdown: %q", name, leaked)
		}
	}
}

// TestEscapeReadBack: page text that looks like Markdown or HTML reads back
// from markdown-it exactly, block by block.
func TestEscapeReadBack(t *testing.T) {
	texts := []string{
		"*a* **b** _c_ __d__ `e` ``f``", "[link](url) ![img](src) [ref]: /x \"t\"", "<b>bold</b> <!-- c --> <?php ?> <![CDATA[x]]>",
		"&amp; &copy; &#65; &#x41; &nbsp", "# not a heading", "## also not ##", "- item", "+ item", "* item", "1. one", "2) two",
		"1234. year", "> quote", "---", "***", "___", "===", "    indented", "```", "~~~ fence", "~~strike~~",
		"a | b | c", "| x |", "\\ back \\\\ slash \\*", "<http://example.com> <a@b.c>", "www.example.com http://x.y",
		"a*b*c a_b_c", "trailing backslash \\", "!important ![", "1.5 and 3) and (4)", "C# and F# #1", "a  <  b  >  c",
		"emoji 😀 and NBSP\u00a0here", "}{ )( ][", "= = =", "- - -", "<script>alert(1)</script>",
	}
	var docs, want []string
	for _, s := range texts {
		var b bytes.Buffer
		page := "<p>" + html.EscapeString(s) + "</p>"
		if _, err := Convert(&b, strings.NewReader(page), Front{}, nil); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, b.String())
		want = append(want, s)
	}
	// Inside a table cell, the same texts.
	var tb strings.Builder
	tb.WriteString("<table><tr><th>h</th></tr>")
	for _, s := range texts {
		tb.WriteString("<tr><td>" + html.EscapeString(s) + "</td></tr>")
	}
	tb.WriteString("</table>")
	var b bytes.Buffer
	if _, err := Convert(&b, strings.NewReader(tb.String()), Front{}, nil); err != nil {
		t.Fatal(err)
	}
	docs = append(docs, b.String())
	res := render(t, docs)
	// HTML collapses ASCII whitespace only (not U+00A0).
	norm := func(s string) string {
		return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r < 0x80 && isSpace(byte(r)) }), " ")
	}
	for i := range texts {
		if got := norm(res[i].Text); got != norm(want[i]) || res[i].HTML != 0 {
			t.Errorf("%q\n  markdown %q\n  reads as %q (%d HTML tokens)", texts[i], docs[i], got, res[i].HTML)
		}
	}
	cells := norm(res[len(texts)].Text)
	wantCells := norm("h " + strings.Join(want, " "))
	if cells != wantCells || res[len(texts)].HTML != 0 {
		t.Errorf("table cells read as\n%q\nwant\n%q", cells, wantCells)
	}
}

// TestHostileReadBack reads the Markdown of every hostile page with
// markdown-it: no raw HTML token, and no link or image whose destination
// is a script or data URL.
func TestHostileReadBack(t *testing.T) {
	var names, docs []string
	for _, tt := range hostileInputs() {
		var b bytes.Buffer
		if _, err := Convert(&b, strings.NewReader(tt.in), Front{}, &Options{MaxBytes: 64 << 20}); err != nil {
			t.Fatal(err)
		}
		names = append(names, tt.name)
		docs = append(docs, b.String())
	}
	res := render(t, docs)
	for i, name := range names {
		if res[i].HTML != 0 {
			t.Errorf("%s: %d raw HTML tokens in %.300q", name, res[i].HTML, docs[i])
		}
		for _, l := range res[i].Links {
			if u := strings.ToLower(strings.TrimSpace(l)); strings.HasPrefix(u, "javascript:") || strings.HasPrefix(u, "vbscript:") || strings.HasPrefix(u, "data:") {
				t.Errorf("%s: a link to %q", name, l)
			}
		}
	}
}
