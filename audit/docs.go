package audit

import (
	"html/template"
	"strings"
)

// Source is a standard or a search engine's documentation a check follows.
type Source struct{ Title, URL string }

// CheckDoc is what docs/audit.md and the HTML report say of a check.
type CheckDoc struct {
	Finds, Why, Fix      string // Markdown with `code` spans only
	ExampleLang, Example string // a code block after Fix, or ""
	Sources              []Source
}

// Doc returns the documentation of a check (docs/audit.md's text).
func Doc(id string) (CheckDoc, bool) {
	d, ok := checkDocs[id]
	return d, ok
}

// Markers around the generated part of docs/audit.md.
const (
	DocsBegin = "<!-- checks: written from audit/checkdocs.go; go test ./audit -run TestDocsMatchTable -update -->"
	DocsEnd   = "<!-- end of checks -->"
)

// ChecksMarkdown is docs/audit.md's section between DocsBegin and DocsEnd:
// every check, in the order of Checks, with its severity, what it finds,
// why it matters, how to fix it and its sources.
func ChecksMarkdown() string {
	var b strings.Builder
	for _, c := range checks {
		d := checkDocs[c.ID]
		b.WriteString("\n### `" + c.ID + "` (" + strings.ToUpper(c.Severity[:1]) + ")\n\n")
		p := "*Finds* " + d.Finds + " *Why*: " + d.Why + " *Fix*:"
		if d.Fix != "" {
			p += " " + d.Fix
		}
		b.WriteString(wrap(p, 96))
		if d.Example != "" {
			b.WriteString("\n```" + d.ExampleLang + "\n" + d.Example + "```\n")
		}
		if len(d.Sources) > 0 {
			var s []string
			for _, src := range d.Sources {
				s = append(s, "["+src.Title+"]("+src.URL+")")
			}
			b.WriteString("\n" + wrap("*Sources*: "+strings.Join(s, "; ")+".", 96))
		}
	}
	return b.String()
}

// wrap breaks text into lines of at most width bytes, at blanks.
func wrap(text string, width int) string {
	var b strings.Builder
	n := 0
	for i, w := range strings.Fields(text) {
		if i > 0 {
			if n+1+len(w) > width {
				b.WriteByte('\n')
				n = 0
			} else {
				b.WriteByte(' ')
				n++
			}
		}
		b.WriteString(w)
		n += len(w)
	}
	b.WriteByte('\n')
	return b.String()
}

// inlineMarkdown renders `code` spans of a doc text as <code>, the rest
// escaped.
func inlineMarkdown(s string) template.HTML {
	var b strings.Builder
	parts := strings.Split(s, "`")
	for i, p := range parts {
		if i%2 == 1 && i < len(parts)-1 {
			b.WriteString("<code>" + template.HTMLEscapeString(p) + "</code>")
		} else {
			if i%2 == 1 {
				b.WriteString("`")
			}
			b.WriteString(template.HTMLEscapeString(p))
		}
	}
	return template.HTML(b.String())
}
