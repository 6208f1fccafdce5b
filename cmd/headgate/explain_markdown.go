package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/headgate/headgate/proxy"
)

// explainMarkdown prints the Markdown part (SPEC §19.1) of two decision
// records: rec, the request as explained, and, when the path has a
// Markdown version rec did not ask for, the same path asked for again
// with Accept: text/markdown. It renders what the proxy recorded and
// decides nothing.
func explainMarkdown(w io.Writer, rec *proxy.Record, ans *answer, ask func(http.Header) (*proxy.Record, *answer)) {
	md := rec.Markdown
	var asked *proxy.Record
	var askedAns *answer
	if md != nil && md.Link != "" && !md.Wanted {
		asked, askedAns = ask(markdownHeader)
	}
	fmt.Fprintln(w, "\nMarkdown for agents:")
	switch {
	case md == nil:
		fmt.Fprintln(w, "  [markdown] is off: no Markdown version")
		return
	case md.Link == "" && !md.Wanted:
		fmt.Fprintf(w, "  no Markdown version (%s)\n", md.None)
		return
	}
	if md.Link != "" {
		fmt.Fprintf(w, "  has a Markdown version; its HTML answers link it: Link: %s\n", md.Link)
	}
	if md.PathForm {
		fmt.Fprintln(w, "  this is the suffix path form: the page is asked for its HTML and answered as Markdown")
	}
	if vary := ans.header.Values("Vary"); !md.Wanted && len(vary) > 0 {
		fmt.Fprintf(w, "  and say Vary: %s\n", strings.Join(vary, ", "))
	}
	if asked != nil && asked.Markdown != nil {
		fmt.Fprintln(w, "  with Accept: text/markdown:")
		md, rec, ans = asked.Markdown, asked, askedAns
	}
	explainMarkdownAnswer(w, rec, md, ans)
}

// explainMarkdownAnswer prints what became of a request for the Markdown.
func explainMarkdownAnswer(w io.Writer, rec *proxy.Record, md *proxy.MarkdownRecord, ans *answer) {
	switch {
	case rec.Outcome == proxy.Markdown:
		fmt.Fprintf(w, "  answered as Markdown (%d, %s, coding %s; on explain's empty test page)", ans.status, ans.header.Get("Content-Type"), md.Coding)
		if md.Stats.Selector != "" {
			fmt.Fprintf(w, ", content selector %q", md.Stats.Selector)
		}
		fmt.Fprintln(w)
		for _, l := range addedHeaders(ans.header, "Link", "X-Robots-Tag", "X-Markdown-Tokens", "Content-Signal", "Content-Usage") {
			fmt.Fprintf(w, "    %s\n", l)
		}
		fmt.Fprintf(w, "    Vary: %s\n", strings.Join(ans.header.Values("Vary"), ", "))
	case md.Fallback != "":
		fmt.Fprintf(w, "  answered as HTML instead: %s (%s)\n", md.Fallback, md.Err)
	case md.Wanted:
		fmt.Fprintf(w, "  answered as the upstream sent it (%s): not a page headgate converts\n", rec.Outcome)
	default:
		fmt.Fprintf(w, "  not asked for Markdown: answered as HTML (%s)\n", rec.Outcome)
	}
}

// markdownHeader is the request header explain asks for the Markdown with.
var markdownHeader = http.Header{"Accept": {"text/markdown"}}
