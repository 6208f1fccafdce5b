package rewrite

import (
	"io"
	"strings"
	"testing"
)

// With Options.Observe set, Result.UpstreamHead lists the head the
// rewriter read, ended where the rewriter ends it; without, it is nil.
func TestResultUpstreamHead(t *testing.T) {
	const doc = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>T &amp; U</title>
<img src="/pixel.gif">
<meta property="og:title" content="Old">
</head><body><meta name="in-body" content="z"></body></html>`
	r := NewReader(strings.NewReader(doc), Options{Observe: func([]byte, *Result) {}})
	if _, err := io.ReadAll(r); err != nil {
		t.Fatal(err)
	}
	h := r.Result().UpstreamHead
	if h == nil {
		t.Fatal("no UpstreamHead with Observe set")
	}
	var got []string
	for _, tag := range h.Tags {
		s := tag.Name
		if tag.Text != "" {
			s += ":" + tag.Text
		}
		if tag.Late {
			s += " (late)"
		}
		got = append(got, s)
	}
	want := []string{"meta", "title:T & U", "meta (late)"}
	if strings.Join(got, "|") != strings.Join(want, "|") || h.End != (HeadEnd{By: "tag", What: "img"}) || h.Cut {
		t.Errorf("tags %q end %+v cut %v; want %q, end <img>", got, h.End, h.Cut, want)
	}

	r = NewReader(strings.NewReader(doc), Options{})
	io.ReadAll(r)
	if r.Result().UpstreamHead != nil {
		t.Error("UpstreamHead listed for a request nobody observes")
	}
}

func TestListHead(t *testing.T) {
	for _, c := range []struct {
		name, doc string
		bodyCut   bool
		end       HeadEnd
		tags      int
		cut       bool
	}{
		{"head end", `<head><title>a</title></head><body>`, false, HeadEnd{By: "</head>"}, 1, false},
		{"body", `<head><meta name=a><body>`, false, HeadEnd{By: "<body>"}, 1, false},
		{"text", `<head><meta name=a>hello<meta name=b>`, false, HeadEnd{By: "text", What: "hello"}, 1, false},
		{"end tag", `<head><title>a</title></body><meta name=b></head>`, false, HeadEnd{By: "end tag", What: "body"}, 2, false},
		{"svg", `<head><svg><title>i</title></svg><meta name=b></head>`, false, HeadEnd{By: "tag", What: "svg"}, 1, false},
		{"eof", `<head><title>a`, false, HeadEnd{By: "eof"}, 1, false},
		{"cut short", `<head><meta name=a>`, true, HeadEnd{By: "eof"}, 1, true},
		{"too many", "<head>" + strings.Repeat("<meta name=a>", MaxHeadTags+1), false, HeadEnd{}, MaxHeadTags, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := ListHead([]byte(c.doc), "text/html", c.bodyCut)
			if l.End != c.end || len(l.Tags) != c.tags || l.Cut != c.cut {
				t.Errorf("end %+v, %d tags, cut %v; want %+v, %d, %v", l.End, len(l.Tags), l.Cut, c.end, c.tags, c.cut)
			}
		})
	}
}
