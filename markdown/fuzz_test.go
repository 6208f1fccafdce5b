package markdown

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzConvert: no panic, valid UTF-8, no raw HTML, bounded output; seeded
// from the table tests and testdata pages.
func FuzzConvert(f *testing.F) {
	for _, s := range []string{
		"<p>a<b>b<p>c</b>", "<ul><li>a<ol><li>b</ol></ul>", "<table><tr><td>a|b<td><pre>x</pre></table>",
		"<pre><code class=language-go>```</code></pre>", `<a href="javascript:x">y</a><img src=/a alt="[b]">`,
		"<blockquote><ul><li><p>x<br>- y</blockquote>", "&lt;script&gt;", "<p>1. *a* _b_ `c` \\ #",
	} {
		f.Add([]byte(s))
	}
	pages, _ := filepath.Glob("testdata/*.html")
	for _, p := range pages {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	c, err := New(Options{MaxDepth: 32})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var b bytes.Buffer
		if _, err := c.Convert(&b, bytes.NewReader(in), Front{Title: "t"}); err != nil {
			t.Fatal(err)
		}
		checkSafe(t, b.Bytes())
		// checkSafe refuses any raw <, so a <script of the page's text
		// (an entity, with or without its semicolon: "&ltsCript0") is
		// written escaped, "\\<script", or in code.
	})
}
