package rewrite

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// xnetListHead is ListHead's oracle: the same listing on x/net/html's
// tokenizer (what the inspector used before the rewriter listed heads
// itself), so that the rewriter's scanner, names and character references
// are checked against an independent reading.
func xnetListHead(b []byte, contentType string, bodyCut bool) HeadList {
	if enc, name, _ := charset.DetermineEncoding(b[:min(len(b), 1024)], contentType); name != "utf-8" && enc != nil {
		if d, err := enc.NewDecoder().Bytes(b); err == nil {
			b = d
		}
	}
	l := xnetLister{z: html.NewTokenizer(bytes.NewReader(b)), listState: listState{b: b, open: -1}}
	l.z.SetMaxBuf(len(b) + 1)
	l.run(bodyCut)
	return l.out
}

// xnetLister is the oracle's state: x/net's tokenizer and the listing.
type xnetLister struct {
	z *html.Tokenizer
	listState
}

func xnetNewHeadTag(tok html.Token, late bool) HeadTag {
	t := HeadTag{Name: tok.Data, Late: late, Attrs: make([]Attr, len(tok.Attr))}
	for i, a := range tok.Attr {
		t.Attrs[i] = Attr{a.Key, a.Val}
	}
	return t
}

// run is the listing's state machine: one step per token, until the head
// has ended.
func (l *xnetLister) run(bodyCut bool) {
	z := l.z
	for {
		tt := z.Next()
		l.pos += len(z.Raw())
		switch tt {
		case html.ErrorToken:
			if l.open >= 0 {
				t := &l.out.Tags[l.open]
				t.Text, t.Close = string(l.text), CloseEOF
			}
			if l.out.End.By == "" {
				l.out.End.By = "eof"
				if bodyCut {
					l.out.Cut = true
				}
			}
			return
		case html.TextToken:
			if !l.textToken() {
				return
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			if !l.startTag(tt) {
				return
			}
		case html.EndTagToken:
			if !l.endTag() {
				return
			}
		}
	}
}

func (l *xnetLister) textToken() bool {
	if l.open >= 0 {
		if len(l.text) < 64<<10 {
			l.text = append(l.text, l.z.Text()...)
		}
		return true
	}
	if l.template > 0 || l.late || l.foreign > 0 {
		return true
	}
	// Blank is HTML's whitespace only: a no-break space (&nbsp;) is text,
	// and ends the head, in a browser and in the rewriter alike.
	if t := bytes.Trim(l.z.Text(), " \t\n\f\r"); len(t) > 0 {
		return !l.afterHead && l.implicitEnd("text", string(t))
	}
	return true
}

func (l *xnetLister) startTag(tt html.TokenType) bool {
	tok := l.z.Token()
	name := tok.Data
	if l.template > 0 {
		if name == "template" {
			l.template++
		}
		return true
	}
	if l.foreign > 0 {
		if (name == "svg" || name == "math") && tt == html.StartTagToken {
			l.foreign++
		}
		return true
	}
	switch name {
	case "html", "head", "bgsound", "basefont":
		return true
	case "meta", "link", "base":
		if !l.add(xnetNewHeadTag(tok, l.late)) {
			l.full()
			return false
		}
	case "title", "script", "style", "noscript", "noframes":
		if l.afterHead && name == "noscript" {
			return false // not a head element after </head>
		}
		t := xnetNewHeadTag(tok, l.late)
		if tt == html.SelfClosingTagToken && name != "title" {
			if !l.add(t) {
				l.full()
				return false
			}
			return true
		}
		if !l.add(t) {
			l.full()
			return false
		}
		l.open, l.text = len(l.out.Tags)-1, l.text[:0]
	case "template":
		l.template = 1
		if !l.late {
			l.add(xnetNewHeadTag(tok, false))
		}
	case "body":
		if !l.late && !l.afterHead {
			l.out.End = HeadEnd{By: "<body>"}
		}
		return false
	default:
		svg := (name == "svg" || name == "math") && tt == html.StartTagToken
		switch {
		case l.late:
			if svg {
				l.foreign = 1 // their <title> and <link> are not HTML's
			}
		case l.afterHead:
			return false
		case !l.implicitEnd("tag", name):
			return false
		default:
			if svg {
				l.foreign = 1
			}
		}
	}
	return true
}

func (l *xnetLister) endTag() bool {
	tok := l.z.Token()
	switch {
	case l.template > 0:
		if tok.Data == "template" {
			l.template--
		}
	case l.foreign > 0:
		if tok.Data == "svg" || tok.Data == "math" {
			l.foreign--
		}
	case l.open >= 0 && tok.Data == l.out.Tags[l.open].Name:
		t := &l.out.Tags[l.open]
		t.Text, t.Close = string(l.text), CloseTag
		l.open = -1
	case tok.Data == "head":
		if l.late {
			return false
		}
		if !l.afterHead {
			l.out.End, l.afterHead = HeadEnd{By: "</head>"}, true
		}
	case l.late:
	case tok.Data == "body" || tok.Data == "html" || tok.Data == "br":
		if l.afterHead || !l.implicitEnd("end tag", tok.Data) {
			return false
		}
	}
	return true
}

// ListHead reads every head of the corpus as x/net/html's tokenizer does.
func TestListHeadAsXNet(t *testing.T) {
	files, _ := filepath.Glob("../../shared/corpus/*.html")
	wide, _ := filepath.Glob("../../shared/corpus-wide/*.html")
	files = append(files, wide...)
	files = append(files, "") // the seeds below, where ../shared is absent
	n := 0
	for _, f := range files {
		docs := listHeadSeeds
		if f != "" {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			docs = []string{string(b)}
		}
		for _, d := range docs {
			n++
			if got, want := normal(ListHead([]byte(d), "text/html", false)), normal(xnetListHead([]byte(d), "text/html", false)); !reflect.DeepEqual(got, want) {
				t.Errorf("%s %.60q:\n got %+v\nwant %+v", f, d, got, want)
			}
		}
	}
	t.Logf("%d documents", n)
}

var listHeadSeeds = []string{
	"<head><meta name=a content='x&copy=1 &amp; &copy &copyx &semi; &#65 &#x42;'><title>a&amp;b</title></head>",
	"<html><head><template><meta name=x></template><noscript><link rel=canonical href=/n></noscript><div>",
	"<HEAD><META NAME=A Name=b\x00 content=\"\r\n\x00\"><TITLE>T\r\n</TITLE><script/>x</script><A\x00>",
	"<head><title>T</title>&nbsp;<meta property=og:title content=Old></head><body>",
	"<head><svg><title>i</title></svg><meta name=b></head><!-- <meta name=c",
}

// normal makes no attributes and an empty list of them equal.
func normal(l HeadList) HeadList {
	for i := range l.Tags {
		if len(l.Tags[i].Attrs) == 0 {
			l.Tags[i].Attrs = nil
		}
	}
	return l
}

// FuzzListHead: on any bytes, ListHead and x/net/html read the same head.
func FuzzListHead(f *testing.F) {
	for _, s := range listHeadSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := normal(ListHead(b, "text/html", false)), normal(xnetListHead(b, "text/html", false)); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n got %+v\nwant %+v", b, got, want)
		}
	})
}
