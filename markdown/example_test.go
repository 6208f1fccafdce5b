package markdown_test

import (
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/headgate/headgate/markdown"
)

func ExampleConverter_Convert() {
	base, _ := url.Parse("https://example.com/notes/3")
	c, err := markdown.New(markdown.Options{Base: base})
	if err != nil {
		panic(err)
	}
	page := `<html><head><title>Notes</title></head><body>
<nav><a href="/">Home</a></nav>
<main><h1>Note 3</h1><p>See <a href="../about">*about*</a> &amp; <code>a|b</code>.</p>
<ul><li>one<li>two</ul></main><footer>© 2026</footer></body></html>`
	st, err := c.Convert(os.Stdout, strings.NewReader(page), markdown.Front{
		Title: "Notes", URL: "https://example.com/notes/3", Lang: "en",
	})
	if err != nil {
		// Nothing was written: answer with the HTML.
		panic(err)
	}
	fmt.Println(st.Selector, st.Tokens)
	// Output:
	// ---
	// title: "Notes"
	// url: "https://example.com/notes/3"
	// lang: "en"
	// ---
	//
	// # Note 3
	//
	// See [\*about\*](https://example.com/about) & `a|b`.
	//
	// - one
	// - two
	// main 37
}

func ExamplePrefers() {
	for _, accept := range []string{
		"text/markdown",
		"text/markdown, text/html;q=0.9",
		"text/html, text/markdown",
		"*/*",
	} {
		fmt.Println(markdown.Prefers(accept), accept)
	}
	// Output:
	// true text/markdown
	// true text/markdown, text/html;q=0.9
	// false text/html, text/markdown
	// false */*
}
