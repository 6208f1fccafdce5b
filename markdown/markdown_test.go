package markdown

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"

	"github.com/headgate/headgate/internal/hgtest"
)

func md(t *testing.T, in string, opt *Options) string {
	t.Helper()
	var b bytes.Buffer
	if _, err := Convert(&b, strings.NewReader(in), Front{}, opt); err != nil {
		t.Fatalf("Convert(%q): %v", in, err)
	}
	return b.String()
}

func TestConvert(t *testing.T) {
	base, _ := url.Parse("https://example.com/blog/post/")
	opt := &Options{Base: base}
	tests := []struct{ name, in, want string }{
		{"paragraphs", "<p>one  two\n three</p><p>four</p>", "one two three\n\nfour\n"},
		{"headings", "<h1>Title</h1><h3>Sub <em>it</em></h3><p>x", "# Title\n\n### Sub *it*\n\nx\n"},
		{"empty heading", "<h2> </h2><p>x", "x\n"},
		{"emphasis", "<p>a <em>b</em> <strong>c</strong> <b> d </b>e<i>f</i>g", "a *b* **c** **d** e*f*g\n"},
		{"empty emphasis", "<p>a<em> </em>b", "a b\n"},
		{"emphasis across blocks", "<b><p>x<p>y</b>", "**x**\n\n**y**\n"},
		{"code block in emphasis", "<b><pre>&lt;script&gt;</pre>after</b>", "```\n<script>\n```\n\n**after**\n"},
		{"rule in emphasis", "<em><hr>d</em>", "* * *\n\n*d*\n"},
		{"table in emphasis", "<em><table><tr><td>c</table></em>", "| c |\n| --- |\n"},
		// the text after a table inside emphasis is still emphasised, as
		// after a code block or a rule (before: "y" came out plain)
		{"text after a table in emphasis", "<strong>x<table><tr><td>c</table>y</strong>", "**x**\n\n| c |\n| --- |\n\n**y**\n"},
		{"emphasis in a cell of a table in emphasis", "<em>x<table><tr><td><b>c</b></table></em>z", "*x*\n\n| **c** |\n| --- |\n\nz\n"},
		// Emphasis a block closes around it (not its own end tag) is opened
		// again at the next text, as the tree builder reconstructs its
		// active formatting elements and a browser shows it; not in table
		// cells (their marker), nor for white space between blocks.
		{"emphasis closed by its paragraph", "<p>one <strong>two</p><p>three</strong> four</p>", "one **two**\n\n**three** four\n"},
		{"emphasis closed by a table", "<!DOCTYPE html><p>a <em>b <table><tr><td>x</td></tr></table> c</em> d</p>", "a *b*\n\n| x |\n| --- |\n\n*c* d\n"},
		{"unclosed bold spills over", "<p><b>T</p><p>x</p><p>y</p>", "**T**\n\n**x**\n\n**y**\n"},
		{"white space does not reopen", "<p><b>T</p>\n<p>x</b> y</p>", "**T**\n\n**x** y\n"},
		{"a new one stands for the old", "<p><b>x</p><p><b>y</b></p><p>z</p>", "**x**\n\n**y**\n\nz\n"},
		{"nested, outermost first", "<p><i><b>x</p><p>y</b> z</i> w</p>", "***x***\n\n***y** z* w\n"},
		{"not in a table's cells", "<p><b>x</p><table><tr><td>c</td></tr></table><p>y</p>", "**x**\n\n| c |\n| --- |\n\n**y**\n"},
		{"emphasis closed in a cell stays there", "<table><tr><td><b>c<td>d</table>e", "| **c** | d |\n| --- | --- |\n\ne\n"},
		{"list items", "<ul><li><em>a<li>b</em> c</ul>", "- *a*\n- *b* c\n"},
		{"its end tag after the block ends it", "<p><b>x</p></b><p>y</p>", "**x**\n\ny\n"},
		{"another tag of the same emphasis", "<p><i>a</p><p><em>b</em> c</p>", "*a*\n\n*b* c\n"},
		{"its kind in a removed subtree does not end it", "<p><b>a</p><nav><b>menu</b></nav><p>text</p>", "**a**\n\n**text**\n"},
		{"link", `<p><a href="../other">see <b>this</b></a>`, "[see **this**](https://example.com/blog/other)\n"},
		{"link parens", `<p><a href="/a(b)c d">x</a>`, "[x](https://example.com/a%28b%29c%20d)\n"},
		{"javascript link", `<p><a href="javascript:alert(1)">keep me</a>`, "keep me\n"},
		{"JaVaScRiPt link", "<p><a href=\" JaVa\tScRiPt:alert(1)\">keep</a>", "keep\n"},
		{"vbscript link", `<p><a href="vbscript:x">v</a>`, "v\n"},
		{"mailto dropped", `<p><a href="mailto:a@b">mail</a>`, "mail\n"},
		{"empty link", `<p>a<a href="/x"></a>b`, "ab\n"},
		{"bang before link", `<p>Hi!<a href="/x">y</a>`, "Hi\\![y](https://example.com/x)\n"},
		{"block in link", `<a href="/x"><h2>T</h2><p>d</p></a>`, "[T d](https://example.com/x)\n"},
		{"image", `<p><img src="a.png" alt="An [odd] *alt*">`, "![An \\[odd\\] \\*alt\\*](https://example.com/blog/post/a.png)\n"},
		{"data image", `<p><img src="data:image/png;base64,AA" alt="pixel">`, "pixel\n"},
		{"linked image", `<a href="/"><img src="/i.png" alt="i"></a>`, "[![i](https://example.com/i.png)](https://example.com/)\n"},
		{"list", "<ul><li>a<li>b</ul>", "- a\n- b\n"},
		{"ordered start", `<ol start="7"><li>a<li>b</ol>`, "7. a\n8. b\n"},
		{"nested list", "<ul><li>a<ul><li>b<ol><li>c</ol></ul><li>d</ul>", "- a\n  - b\n    1. c\n- d\n"},
		{"list item paragraphs", "<ol><li><p>a<p>b</li></ol>", "1. a\n\n   b\n"},
		{"blockquote", "<blockquote><p>a<p>b</blockquote><p>c", "> a\n>\n> b\n\nc\n"},
		{"quote in list", "<ul><li>x<blockquote>q</blockquote></ul>", "- x\n  >\n  > q\n"},
		{"pre", "<pre>\n  a  b\n\tc\n</pre>", "```\n  a  b\n\tc\n```\n"},
		{"pre lang", `<pre><code class="language-go">x := "` + "```" + `"</code></pre>`, "````go\nx := \"```\"\n````\n"},
		{"pre in list", "<ul><li>a<pre>x\ny</pre></ul>", "- a\n\n  ```\n  x\n  y\n  ```\n"},
		{"code", "<p>use <code>a*b</code> and <code>`x`</code>", "use `a*b` and `` `x` ``\n"},
		{"code whitespace", "<p><code>a\n  b</code>", "`a   b`\n"},
		{"br", "<p>a<br>b<br></p>", "a\\\nb\n"},
		{"br first", "<p><br>a", "a\n"},
		{"hr", "<p>a<hr><p>b", "a\n\n* * *\n\nb\n"},
		{"table", "<table><tr><th>A<th>B<tr><td>1<td>2</table>", "| A | B |\n| --- | --- |\n| 1 | 2 |\n"},
		{"table pipes", "<table><tr><td>a|b<td><code>c|d</code></table>", "| a\\|b | `c\\|d` |\n| --- | --- |\n"},
		{"table ragged", "<table><tr><td>a<tr><td>b<td>c</table>", "| a |  |\n| --- | --- |\n| b | c |\n"},
		{"table blocks", "<table><tr><td><p>a<p>b<ul><li>c</ul></table>", "| a b c |\n| --- |\n"},
		{"nested table", "<table><tr><td>a<table><tr><td>b<td>c</table>d</table>", "| a b c d |\n| --- |\n"},
		{"table caption", "<table><caption>Cap</caption><tr><td>a</table>", "Cap\n\n| a |\n| --- |\n"},
		{"removed", "<nav>menu</nav><header>h</header><p>keep<aside>no</aside><footer>f</footer><script>x<y</script><style>p{}</style>", "keep\n"},
		{"hidden", `<p>a<span hidden>b</span><span aria-hidden="true">c</span>d`, "ad\n"},
		{"removed custom", "<x-ad hidden><p>no</x-ad><p>yes", "yes\n"},
		{"svg", "<p>a<svg><title>icon</title><path d=\"M0\"/></svg>b", "ab\n"},
		{"main", "<p>out<main><p>in</main><p>out", "in\n"},
		{"article", "<p>out<article><h1>T</h1><p>in</article>", "# T\n\nin\n"},
		{"role main", `<div role="main">in</div><p>out`, "in\n"},
		{"main first in list order", `<article>art</article><main>main</main>`, "main\n"},
		{"entities", "<p>&lt;b&gt; &amp;amp; &copy; &#x26;lt;", "\\<b> \\&amp; © \\&lt;\n"},
		{"escapes", "<p>*a* _b_ [c](d) `e` \\ # | ~ ![x] <!-- -->", "\\*a\\* \\_b\\_ \\[c\\](d) \\`e\\` \\\\ \\# \\| \\~ \\!\\[x\\]\n"},
		{"line start", "<p>- a<p>+ b<p>> c<p>1. d<p>2) e<p>== f<p>#g<p>1234567890. h", "\\- a\n\n\\+ b\n\n\\> c\n\n1\\. d\n\n2\\) e\n\n\\== f\n\n\\#g\n\n1234567890. h\n"},
		{"br then marker", "<p>a<br>- b", "a\\\n\\- b\n"},
		{"raw html text", "<p>&lt;script&gt;alert(1)&lt;/script&gt;", "\\<script>alert(1)\\</script>\n"},
		{"nul", "<p>a\x00b", "a\uFFFDb\n"},
		{"invalid utf8", "<p>a\xffb", "a\uFFFDb\n"},
		{"implied p", "<p>a<div>b</div>", "a\n\nb\n"},
		{"unclosed head", "<html><head><title>T</title><meta charset=utf-8><body><p>x", "x\n"},
		{"head without body tag", "<head><title>T</title><p>x", "x\n"},
		{"nav in head", "<head><title>T</title></head><nav>n</nav><p>x", "x\n"},
		{"dl", "<dl><dt>T<dd>D</dl>", "T\n\nD\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := md(t, tt.in, opt); got != tt.want {
				t.Errorf("in  %q\ngot  %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestFrontMatter(t *testing.T) {
	f := Front{
		Title:       `He said "hi": \ # - [x] {y} & *z*` + "\n\t\u2028\u0085\x01\uFEFF é",
		Description: "yes",
		URL:         "https://example.com/a?b=c#d",
		Lang:        "en",
		Date:        "2024-05-01",
		Modified:    "2024-05-02T10:00:00Z",
	}
	var b bytes.Buffer
	if _, err := Convert(&b, strings.NewReader("<p>x"), f, nil); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.HasPrefix(out, "---\ntitle: ") || !strings.Contains(out, "\n---\n\nx\n") {
		t.Fatalf("no front matter block:\n%s", out)
	}
	fm := out[4:strings.Index(out, "\n---\n")]
	var got map[string]any
	if err := yaml.Unmarshal([]byte(fm), &got); err != nil {
		t.Fatalf("yaml: %v\n%s", err, fm)
	}
	want := map[string]string{"title": f.Title, "description": f.Description, "url": f.URL,
		"lang": f.Lang, "date": f.Date, "modified": f.Modified}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: read back %#v, want %#v", k, got[k], v)
		}
	}
	b.Reset()
	Convert(&b, strings.NewReader("<p>x"), Front{Lang: "de"}, nil)
	if b.String() != "---\nlang: \"de\"\n---\n\nx\n" {
		t.Errorf("only lang: %q", b.String())
	}
}

func TestResolve(t *testing.T) {
	base, _ := url.Parse("https://example.com/d/p")
	var asked []string
	opt := &Options{Base: base, Resolve: func(b *url.URL, ref string) (string, bool) {
		asked = append(asked, b.String()+" "+ref)
		if ref == "drop" {
			return "", false
		}
		return "https://example.com/r/" + ref, true
	}}
	got := md(t, `<p><a href=" :&#9;x ">a</a> <a href="drop">b</a> <img src="i(1)" alt="c">`, opt)
	if want := "[a](https://example.com/r/:x) b ![c](https://example.com/r/i\\(1\\))\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if want := []string{"https://example.com/d/p :x", "https://example.com/d/p drop", "https://example.com/d/p i(1)"}; !slices.Equal(asked, want) {
		t.Errorf("asked %q, want %q", asked, want)
	}
	// Without Resolve: net/url, and only http(s) and relative URLs.
	got = md(t, `<p><a href="/in">a</a> <a href="data:x">b</a> <a href="mailto:x@y">c</a>`, &Options{Base: base})
	if want := "[a](https://example.com/in) b c\n"; got != want {
		t.Errorf("no Resolve: got %q, want %q", got, want)
	}
}

func TestSelectors(t *testing.T) {
	page := `<body><div id="mw-content-text"><div class="mw-content-ltr mw-parser-output"><p>wiki
	<span class="mw-editsection">[edit]</span></div></div><div class="entry-content" data-x="1"><p>wp</div>`
	tests := []struct {
		content, remove []string
		want            string
	}{
		{[]string{".mw-parser-output"}, []string{".mw-editsection"}, "wiki\n"},
		{[]string{"#mw-content-text"}, []string{}, "wiki \\[edit\\]\n"},
		{[]string{"div.entry-content"}, nil, "wp\n"},
		{[]string{"[data-x=1]"}, nil, "wp\n"},
		{[]string{`[data-x="1"]`}, nil, "wp\n"},
		{[]string{"main", ".missing", "body"}, []string{".mw-parser-output"}, "wp\n"},
	}
	for _, tt := range tests {
		got := md(t, page, &Options{Content: tt.content, Remove: tt.remove})
		if got != tt.want {
			t.Errorf("content %q remove %q: got %q, want %q", tt.content, tt.remove, got, tt.want)
		}
	}
	for _, bad := range []string{"", "div p", "a > b", "a,b", "[x", "#", ".", "[=x]", ":hover"} {
		if _, err := New(Options{Content: []string{bad}}); !errors.Is(err, ErrSelector) {
			t.Errorf("selector %q: err %v, want ErrSelector", bad, err)
		}
	}
}

func TestTooLarge(t *testing.T) {
	var w bytes.Buffer
	st, err := Convert(&w, strings.NewReader(strings.Repeat("<p>x", 100)), Front{Title: "t"}, &Options{MaxBytes: 100})
	if !errors.Is(err, ErrTooLarge) || w.Len() != 0 {
		t.Fatalf("err %v, wrote %d bytes; want ErrTooLarge and nothing written (%+v)", err, w.Len(), st)
	}
	if _, err := Convert(&w, strings.NewReader(strings.Repeat("x", 100)), Front{}, &Options{MaxBytes: 100}); err != nil {
		t.Fatalf("exactly MaxBytes: %v", err)
	}
}

func TestReaders(t *testing.T) {
	page := `<main><h1>T</h1><p>a <a href="/x">b</a></p><pre>c</pre></main>`
	want := md(t, page, nil)
	for name, r := range map[string]io.Reader{
		"one byte": iotest.OneByteReader(strings.NewReader(page)),
		"half":     iotest.HalfReader(strings.NewReader(page)),
		"data err": iotest.DataErrReader(strings.NewReader(page)),
	} {
		var b bytes.Buffer
		if _, err := Convert(&b, r, Front{}, nil); err != nil || b.String() != want {
			t.Errorf("%s: %q, %v; want %q", name, b.String(), err, want)
		}
	}
	var b bytes.Buffer
	if _, err := Convert(&b, iotest.TimeoutReader(strings.NewReader(page)), Front{}, nil); err == nil || b.Len() != 0 {
		t.Errorf("reader error: %v, wrote %q; want an error and nothing written", err, b.String())
	}
}

func TestStats(t *testing.T) {
	var b bytes.Buffer
	st, err := Convert(&b, strings.NewReader("<p>héllo"), Front{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.In != 9 || st.Out != int64(b.Len()) || st.Tokens != 2 || st.Selector != "body" {
		t.Errorf("stats %+v for %q", st, b.String())
	}
}

// checkSafe is what every output must be: valid UTF-8 and no raw HTML tag.
func checkSafe(t testing.TB, out []byte) {
	t.Helper()
	if !utf8.Valid(out) {
		t.Fatalf("invalid UTF-8 in %q", out)
	}
	if bytes.HasPrefix(out, []byte("---\n")) { // front matter: YAML, checked apart
		out = out[bytes.Index(out, []byte("\n---\n"))+5:]
	}
	if i := rawLT(out); i >= 0 {
		t.Fatalf("raw < at %d: %q", i, out[max(0, i-40):min(len(out), i+40)])
	}
}

// rawLT returns the index of the first < of out that is neither escaped
// nor inside a code block or span (where a < is literal text), or -1.
// Code blocks are fences as CommonMark reads them: a line opening with n
// >= 3 backticks (behind container markers) to a line of at least n; code
// spans a backtick run to the next run of its length on the line. One
// pass: a fuzzer's output of many lines of code must not cost the square
// of its length (it once stalled FuzzConvert for a minute on one input).
func rawLT(out []byte) int {
	fence, lineStart := 0, 0 // fence: the open fence's length, 0 outside
	for lineStart < len(out) {
		end := bytes.IndexByte(out[lineStart:], '\n')
		if end < 0 {
			end = len(out)
		} else {
			end += lineStart
		}
		line := bytes.TrimLeft(out[lineStart:end], " >-0123456789.")
		n := runAt(line, 0)
		switch {
		case fence > 0:
			if n >= fence && len(bytes.TrimRight(line[n:], " ")) == 0 {
				fence = 0
			}
		case n >= 3 && bytes.IndexByte(line[n:], '`') < 0:
			fence = n // an info string has no backtick; else a code span
		default:
			if i := rawLTInLine(out, lineStart, end); i >= 0 {
				return i
			}
		}
		lineStart = end + 1
	}
	return -1
}

// rawLTInLine is rawLT of the line out[start:end], outside code blocks.
func rawLTInLine(out []byte, start, end int) int {
	for j := start; j < end; j++ {
		switch {
		case out[j] == '`' && !escaped(out, j):
			// A code span: this run of backticks to the next run of
			// the same length on the line; none, and the run is text.
			n := runAt(out[:end], j)
			for k := j + n; k < end; k++ {
				if out[k] == '`' {
					m := runAt(out[:end], k)
					if m == n {
						j = k + m - 1
						break
					}
					k += m - 1
				}
			}
			if out[j] == '`' {
				j += runAt(out[:end], j) - 1
			}
		case out[j] == '<' && !escaped(out, j):
			return j
		}
	}
	return -1
}

// runAt is the length of the run of backticks at b[i].
func runAt(b []byte, i int) int {
	n := 0
	for i+n < len(b) && b[i+n] == '`' {
		n++
	}
	return n
}

// hostileInputs are pages built to cost time or memory, or to smuggle
// markup or script URLs into the Markdown.
func hostileInputs() []struct{ name, in string } {
	return []struct{ name, in string }{
		{"deep divs", strings.Repeat("<div>", 100000) + "deep" + strings.Repeat("</div>", 100000)},
		{"deep unclosed", strings.Repeat("<div><span><b>", 100000) + "x"},
		{"deep lists", strings.Repeat("<ul><li>", 50000) + "x"},
		{"deep quotes", strings.Repeat("<blockquote>", 50000) + "x"},
		{"deep tables", strings.Repeat("<table><tr><td>", 30000) + "x"},
		{"deep links", strings.Repeat(`<a href="/">`, 50000) + "x"},
		{"deep em", strings.Repeat("<em>", 100000) + "x<p>y"},
		{"deep nav", strings.Repeat("<div>", 300) + strings.Repeat("<nav>", 1000) + "navword" + "<script>alert(1)</script>"},
		{"script past depth", strings.Repeat("<div>", 300) + "<script><script>alert(1)</script><p>ok"},
		{"huge attribute", `<p title="` + strings.Repeat("a", 1<<20) + `">x<a href="/` + strings.Repeat("b", 1<<20) + `">y</a>`},
		{"javascript everywhere", strings.Repeat(`<a href="javascript:alert(1)"><img src="javascript:x" alt="a"></a><img src="vbscript:y"><a href=" data:text/html,<script>">z</a>`, 1000)},
		{"markdown text", strings.Repeat("<p># h\n- l\n1. n\n> q\n```\n<div>*a*_b_[c](d)![e](f)<http://x> &amp;amp; | t | \\ ~~s~~ <script>", 100)},
		{"unterminated", "<p><a href='/x'>y<pre>z<code>w<table><tr><td>q"},
		{"many cells", "<table>" + strings.Repeat("<tr>"+strings.Repeat("<td>c", 100), 1000) + "</table>"},
		{"wide header", "<table><tr>" + strings.Repeat("<th>", 10000) + "</table>"},
		{"nul and bad utf8", "<p>\x00\xff\xfe<b>\xc0\x80</b><a href=\"/\x00\xff\">\x00</a><img alt=\"\xff\" src=\"/\xfe\">"},
		{"script urls in every form", strings.Repeat(`<a href="JaVaScRiPt:x">a</a><a href="&#106;avascript:x">b</a><a href="java&#x09;script:x">c</a><a href=" javascript:x">d</a><a href="jav&#x0A;ascript:x">e</a><img src="data:image/svg+xml,<svg onload=x>" alt="f"><a href="vbscript:x">g</a>`, 200)},
		{"markdown link text", `<p>[x](javascript:alert(1)) ![y](javascript:z) <a href="/ok">[z](javascript:q)</a> <javascript:alert(1)></p>`},
		{"markdown code in emphasis", "<b><pre>&lt;script&gt;alert(1)&lt;/script&gt;</pre>b</b><em>a<li><pre>&lt;b&gt;</pre><i><hr><table><caption>c</caption><tr><td>&lt;i&gt;</table>"},
		{"many attributes", "<p><a " + manyAttrs(100000) + "href=/x>y</a><img " + manyAttrs(100000) + "src=/i alt=z><div " + manyAttrs(100000) + ">w"},
		{"deep mixed", strings.Repeat("<ul><li><blockquote><p><em><a href=\"/x\">", 20000) + "x"},
	}
}

// manyAttrs is n attributes of distinct names, "a0=v a1=v …".
func manyAttrs(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "a%d=v ", i)
	}
	return b.String()
}

func TestHostile(t *testing.T) {
	for _, tt := range hostileInputs() {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			var err error
			// Thread CPU, not wall time: the bound is on the converter's
			// work, which a loaded machine (5.7 s at load 14) stretches.
			d := hgtest.ThreadCPU(func() {
				_, err = Convert(&b, strings.NewReader(tt.in), Front{}, &Options{MaxBytes: 64 << 20})
			})
			if err != nil {
				t.Fatal(err)
			}
			if d > 5*time.Second {
				t.Errorf("took %v of CPU", d)
			}
			checkSafe(t, b.Bytes())
			// Page text that looks like Markdown keeps its words, escaped
			// (TestHostileReadBack reads it back as text, not links).
			text := strings.HasPrefix(tt.name, "markdown")
			if !text && (bytes.Contains(b.Bytes(), []byte("javascript:")) || bytes.Contains(b.Bytes(), []byte("alert"))) || bytes.Contains(b.Bytes(), []byte("navword")) {
				t.Errorf("unsafe output: %.300q", b.String())
			}
		})
	}
}
