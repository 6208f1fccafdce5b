package rules

import (
	"bytes"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/headgate/headgate/markdown"
)

// BenchmarkMarkdownSiteConvert converts every corpus page with the site's
// converter (its link resolver, WHATWG and §4.6, included), on the page's
// own URL, as the proxy does: markdown's BenchmarkConvert has no base and
// no resolver, so it does not see what resolving links costs.
func BenchmarkMarkdownSiteConvert(b *testing.B) {
	files, _ := filepath.Glob("../../shared/corpus/*.html")
	if len(files) == 0 {
		b.Skip("../shared/corpus absent")
	}
	var pages [][]byte
	var size int64
	for _, f := range files {
		p, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		pages = append(pages, p)
		size += int64(len(p))
	}
	cfg := mustParse(b, "[markdown]\nenabled = true\n")
	page, _ := url.Parse("https://notes.example/notes/page")
	conv := cfg.Markdown.Converter.WithBase(page)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for _, p := range pages {
			if _, err := conv.Convert(io.Discard, bytes.NewReader(p), markdown.Front{Title: "t"}); err != nil {
				b.Fatal(err)
			}
		}
	}
}
