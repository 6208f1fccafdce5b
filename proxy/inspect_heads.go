package proxy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/headgate/headgate/rewrite"
)

// The inspector's side-by-side heads render the rewriter's own reading of
// a head (rewrite.HeadList): the upstream's is Record.Result.UpstreamHead,
// the served one is listed by the same rewrite.ListHead. Nothing here
// works out where a head ends.

// itag is one tag of a head, as listed.
type itag struct {
	key   string // identity for pairing, with an occurrence number
	line  string // the tag, serialized on one line
	name  string
	attrs map[string]string // first value of each attribute
	text  string            // a title's text, a script's content
	late  bool              // after the head's implicit end
}

// lateNote marks a tag of the stretch after the head's implicit end.
const lateNote = "   (after the head's end: a parser puts it in the body)"

// upstreamHead is the upstream head the rewriter read; for a Record made
// without one (none is, today), the bytes it read, listed the same way.
func upstreamHead(up *Record, contentType string) rewrite.HeadList {
	if h := up.Result.UpstreamHead; h != nil {
		return *h
	}
	return rewrite.ListHead(up.Upstream, contentType, up.UpstreamCut)
}

// shownHead renders a head's elements one per line, each with the key
// that pairs it with the other side's; end says what ended the head, cut
// that the list is not complete.
func shownHead(l rewrite.HeadList) (tags []itag, end string, cut bool) {
	seen := map[string]int{}
	for _, ht := range l.Tags {
		t := shownTag(ht)
		n := seen[t.key]
		seen[t.key] = n + 1
		if n > 0 {
			t.key = fmt.Sprintf("%s #%d", t.key, n+1)
		}
		tags = append(tags, t)
	}
	switch l.End.By {
	case "eof":
		end = "the end of what was read"
	case "text":
		end = "text " + clip(showText(l.End.What), 40)
	case "tag":
		end = "<" + clip(showText(l.End.What), 40) + ">"
	case "end tag":
		end = "</" + showText(l.End.What) + ">"
	default:
		end = l.End.By // "", "</head>", "<body>"
	}
	return tags, end, l.Cut
}

// shownTag is one element as a line: its start tag as source (names
// lower-cased, values quoted), its text, its end.
func shownTag(ht rewrite.HeadTag) itag {
	t := tagOf(ht)
	t.late = ht.Late
	textual := t.name == "title" || t.name == "script" || t.name == "style" || t.name == "noscript"
	if t.late && !textual {
		t.line += lateNote
	}
	switch {
	case t.name == "template":
		t.line += "…</template>"
	case ht.Close == rewrite.CloseEOF:
		t.text = ht.Text
		t.line += showText(t.text) + " (not closed)"
	case ht.Close == rewrite.CloseTag:
		t.text = ht.Text
		t.line += showText(clip(collapse(t.text), 400)) + "</" + t.name + ">"
		if t.late {
			t.line += lateNote
		}
	}
	return t
}

func isLDType(t string) bool {
	t, _, _ = strings.Cut(t, ";")
	return strings.EqualFold(strings.TrimSpace(t), "application/ld+json")
}

// tagOf is an element's key and start tag.
func tagOf(ht rewrite.HeadTag) itag {
	t := itag{name: ht.Name, attrs: map[string]string{}}
	for _, a := range ht.Attrs {
		if _, ok := t.attrs[a.Key]; !ok {
			t.attrs[a.Key] = a.Val
		}
	}
	at := func(k string) string { return strings.ToLower(strings.TrimSpace(t.attrs[k])) }
	switch ht.Name {
	case "meta":
		switch {
		case has(t.attrs, "charset"):
			t.key = "meta charset"
		case has(t.attrs, "name"):
			t.key = "meta name=" + at("name")
		case has(t.attrs, "property"):
			t.key = "meta property=" + at("property")
		case has(t.attrs, "http-equiv"):
			t.key = "meta http-equiv=" + at("http-equiv")
		case has(t.attrs, "itemprop"):
			t.key = "meta itemprop=" + at("itemprop")
		default:
			t.key = "meta"
		}
	case "link":
		rel := strings.Fields(at("rel"))
		slices.Sort(rel)
		switch {
		case slices.Contains(rel, "canonical"):
			t.key = "link canonical"
		case slices.Contains(rel, "alternate") && has(t.attrs, "hreflang"):
			t.key = "link alternate hreflang=" + at("hreflang")
		default:
			t.key = "link " + strings.Join(rel, " ") + " " + t.attrs["href"]
		}
	case "script":
		t.key = "script " + t.attrs["src"]
		if isLDType(t.attrs["type"]) {
			t.key = "jsonld"
		}
	default:
		t.key = ht.Name
	}
	var b strings.Builder
	t.key = clip(showText(t.key), maxLine)
	b.WriteString("<" + showText(ht.Name))
	for _, a := range ht.Attrs {
		b.WriteString(" " + showText(a.Key))
		b.WriteString(`="` + showText(strings.ReplaceAll(a.Val, `"`, "&quot;")) + `"`)
	}
	b.WriteString(">")
	t.line = clip(b.String(), maxLine)
	return t
}

func has(m map[string]string, k string) bool { _, ok := m[k]; return ok }
