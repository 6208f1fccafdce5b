package rewrite

import (
	"strings"

	"github.com/headgate/headgate/rules"
)

// The page values templates read (SPEC §16.3): the content of the metas
// whose names the config's templates name, and <html lang>. They are
// noted as offsets while the head is scanned and decoded once, in decide.

// pageMetaRef is a <meta> in the head whose name or property a template
// reads.
type pageMetaRef struct {
	want    int // index in headScan.wantMeta
	start   int // the tag's start in the buffer
	content attr
}

// maxPageValue bounds one page value handed to templates: a meta content
// is short; a hostile one is cut, not carried into every field.
const maxPageValue = 8 << 10

// notePageMeta records a meta tag whose name or property is one the
// templates read; the first of each name counts.
func (h *headScan) notePageMeta(t token, tag []byte, ta *tagAttrs) {
	if ta.has&hasContent == 0 {
		return
	}
	for _, which := range [2]uint16{hasName, hasProperty} {
		if ta.has&which == 0 {
			continue
		}
		a := ta.name
		if which == hasProperty {
			a = ta.property
		}
		n := trimSpace(a.val(tag))
		for i, w := range h.wantMeta {
			if len(n) == len(w) && asciiEqualFold(n, w) && !h.hasPageMeta(i) {
				h.st.pmeta = append(h.st.pmeta, pageMetaRef{want: i, start: t.start, content: ta.content})
			}
		}
	}
}

func (h *headScan) hasPageMeta(want int) bool {
	for _, p := range h.st.pmeta {
		if p.want == want {
			return true
		}
	}
	return false
}

// pageValues decodes the noted page values into page.
func (h *headScan) pageValues(page *rules.Page, cs *docCharset, abs func(string) (string, string)) {
	buf := h.st.buf
	if len(h.st.pmeta) > 0 {
		page.Meta = make([]rules.PageMeta, 0, len(h.st.pmeta))
		for _, p := range h.st.pmeta {
			tag := buf[p.start:]
			name, v := h.wantMeta[p.want], pageText(cs.decodeText(p.content.val(tag)))
			if rules.URLMeta(name) && v != "" {
				// Relative to the page, as the upstream meant it: img/a.png
				// on /dir/p is /dir/img/a.png. A value that does not resolve
				// stays as it is; the field that writes it drops it.
				if u, why := abs(v); why == "" {
					v = u
				}
			}
			page.Meta = append(page.Meta, rules.PageMeta{Name: name, Content: v})
		}
	}
	if h.htmlAt[0] > 0 {
		tag := buf[h.htmlAt[0]-1 : h.htmlAt[1]-1]
		var ta tagAttrs
		readAttrs(tag, len("<html"), &ta)
		if ta.has&hasLang != 0 {
			page.Lang = pageText(cs.decodeText(ta.lang.val(tag)))
		}
	}
}

// pageText is an upstream value as templates see it: white space
// collapsed, at most maxPageValue bytes, valid UTF-8.
func pageText(s string) string {
	s = collapseSpace(s)
	if len(s) > maxPageValue {
		s = s[:maxPageValue]
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// sameCanonical reports whether an upstream canonical link already names
// want, byte for byte once made absolute.
func (h *headScan) sameCanonical(ht *headTag, want string, cs *docCharset, abs func(string) (string, string)) bool {
	if !ht.hasURL || len(ht.relKeep) > 0 {
		return false
	}
	got, why := abs(cs.decodeText(ht.urlAttr.val(h.st.buf[ht.start:ht.tagEnd])))
	return why == "" && got == want
}
