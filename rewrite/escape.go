package rewrite

import (
	"bytes"
	"mime"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
)

// appendEscaped appends s HTML-escaped (& < > " ') for an attribute value
// or title text. In a document that is not UTF-8, every non-ASCII character
// becomes a numeric character reference, which means the same in every
// charset; invalid UTF-8 becomes U+FFFD.
func appendEscaped(dst []byte, s string, utf8Doc bool) []byte {
	for i := 0; i < len(s); {
		// Copy the run of bytes that need no escape in one append.
		j := i
		for j < len(s) && plain[s[j]] {
			j++
		}
		dst = append(dst, s[i:j]...)
		if i = j; i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '&':
				dst = append(dst, "&amp;"...)
			case '<':
				dst = append(dst, "&lt;"...)
			case '>':
				dst = append(dst, "&gt;"...)
			case '"':
				dst = append(dst, "&#34;"...)
			case '\'':
				dst = append(dst, "&#39;"...)
			case 0:
				dst = append(dst, "&#xFFFD;"...)
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if utf8Doc && r != utf8.RuneError {
			dst = append(dst, s[i:i+n]...)
		} else {
			dst = append(dst, "&#"...)
			dst = strconv.AppendInt(dst, int64(r), 10)
			dst = append(dst, ';')
		}
		i += n
	}
	return dst
}

// plain marks the ASCII bytes appendEscaped copies as they are.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = true
	}
	for _, c := range "&<>\"'" {
		t[c] = false
	}
	t['\t'], t['\n'], t['\r'] = true, true, true
	return t
}()

// appendJSON appends serialized JSON-LD for a script element. The rules
// package already escaped < > & U+2028 U+2029; a document that is not
// UTF-8 also gets every non-ASCII character as a \u escape, and invalid
// UTF-8 becomes U+FFFD.
func appendJSON(dst []byte, js []byte, utf8Doc bool) []byte {
	if utf8Doc && utf8.Valid(js) {
		return append(dst, js...) // the common case: nothing to escape
	}
	for i := 0; i < len(js); {
		c := js[i]
		if c < utf8.RuneSelf {
			j := i + 1
			for j < len(js) && js[j] < utf8.RuneSelf {
				j++
			}
			dst = append(dst, js[i:j]...)
			i = j
			continue
		}
		r, n := utf8.DecodeRune(js[i:])
		if utf8Doc && r != utf8.RuneError {
			dst = append(dst, js[i:i+n]...)
		} else if r > 0xFFFF {
			r1, r2 := utf16Surrogates(r)
			dst = appendU(appendU(dst, r1), r2)
		} else {
			dst = appendU(dst, r)
		}
		i += n
	}
	return dst
}

func utf16Surrogates(r rune) (rune, rune) {
	r -= 0x10000
	return 0xD800 + (r>>10)&0x3FF, 0xDC00 + r&0x3FF
}

func appendU(dst []byte, r rune) []byte {
	const hex = "0123456789abcdef"
	return append(dst, '\\', 'u', hex[r>>12&15], hex[r>>8&15], hex[r>>4&15], hex[r&15])
}

// docCharset is what headgate knows of a document's encoding.
type docCharset struct {
	utf8    bool              // known to be UTF-8: written text stays UTF-8
	enc     encoding.Encoding // to decode upstream text; nil: UTF-8 or unknown
	skip    bool              // not ASCII-compatible: the document passes untouched
	label   string
	decided bool // from the BOM or the Content-Type header, before any meta
}

// charsetFromLabel classifies an encoding label.
func charsetFromLabel(label string) docCharset {
	if len(label) == 5 && strings.EqualFold(label, "utf-8") {
		return docCharset{utf8: true, label: "utf-8"} // the common label, without a lookup
	}
	enc, name := charset.Lookup(label)
	if enc == nil {
		return docCharset{label: label}
	}
	switch name {
	case "utf-8":
		return docCharset{utf8: true, label: name}
	case "utf-16be", "utf-16le", "replacement", "iso-2022-jp":
		return docCharset{skip: true, label: name}
	}
	return docCharset{enc: enc, label: name}
}

// headerCharset reads the charset parameter of a Content-Type value.
func headerCharset(contentType string) string {
	if contentType == "" {
		return ""
	}
	// The common spellings, without a full media-type parse.
	switch contentType {
	case "text/html; charset=utf-8", "text/html; charset=UTF-8", "text/html;charset=utf-8", "text/html;charset=UTF-8":
		return "utf-8"
	case "text/html":
		return ""
	}
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		// A sloppy header still names its charset often enough.
		i := strings.Index(strings.ToLower(contentType), "charset=")
		if i < 0 {
			return ""
		}
		v := strings.Trim(contentType[i+len("charset="):], `"' ;`)
		if j := strings.IndexAny(v, "; "); j >= 0 {
			v = v[:j]
		}
		return v
	}
	return params["charset"]
}

// metaCharset reads the charset of <meta charset> or of
// <meta http-equiv=content-type content="…; charset=…">.
func metaCharset(tag []byte, ta *tagAttrs) string {
	if ta.has&hasCharset != 0 {
		v := bytes.TrimSpace(ta.charset.val(tag))
		if asciiEqualFold(v, "utf-8") {
			return "utf-8" // the common label, without an allocation
		}
		return string(v)
	}
	if ta.has&hasHTTPEquiv != 0 && ta.has&hasContent != 0 && asciiEqualFold(bytes.TrimSpace(ta.httpEquiv.val(tag)), "content-type") {
		v := ta.content.val(tag)
		switch string(v) { // the common spellings, without an allocation
		case "text/html; charset=utf-8", "text/html; charset=UTF-8", "text/html;charset=utf-8", "text/html;charset=UTF-8":
			return "utf-8"
		}
		return headerCharset(html.UnescapeString(string(v)))
	}
	return ""
}

// decodeText turns upstream bytes (an attribute value or title text) into
// a UTF-8 string: charset-decoded, character references resolved.
func (cs *docCharset) decodeText(b []byte) string {
	s := string(b)
	if cs.enc != nil {
		if d, err := cs.enc.NewDecoder().String(s); err == nil {
			s = d
		}
	} else if !cs.utf8 && !utf8.ValidString(s) {
		// Unknown charset and not UTF-8: read it as the web's default.
		if enc, _ := charset.Lookup("windows-1252"); enc != nil {
			if d, err := enc.NewDecoder().String(s); err == nil {
				s = d
			}
		}
	}
	if strings.IndexByte(s, '&') >= 0 {
		s = html.UnescapeString(s)
	}
	return s
}

// collapseSpace strips and collapses ASCII whitespace, as document.title does.
func collapseSpace(s string) string {
	collapsed := true
	for i := 0; i < len(s) && collapsed; i++ {
		if spaceTab[s[i]] {
			collapsed = s[i] == ' ' && i > 0 && i+1 < len(s) && !spaceTab[s[i+1]]
		}
	}
	if collapsed {
		return s // the common case: nothing to strip
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		for i < len(s) && spaceTab[s[i]] {
			i++
		}
		j := i
		for j < len(s) && !spaceTab[s[j]] {
			j++
		}
		if j > i {
			if len(b) > 0 {
				b = append(b, ' ')
			}
			b = append(b, s[i:j]...)
		}
		i = j
	}
	return string(b)
}

// cspNonce returns the nonce a Content-Security-Policy allows scripts with:
// from script-src, else default-src, of the first policy that has one.
func cspNonce(csp string) string {
	if csp == "" {
		return ""
	}
	for _, policy := range strings.Split(csp, ",") {
		var def, script string
		for _, dir := range strings.Split(policy, ";") {
			fields := strings.Fields(dir)
			if len(fields) == 0 {
				continue
			}
			name := strings.ToLower(fields[0])
			if name != "script-src" && name != "default-src" {
				continue
			}
			for _, src := range fields[1:] {
				if len(src) > len("'nonce-'") && strings.HasPrefix(strings.ToLower(src), "'nonce-") && strings.HasSuffix(src, "'") {
					n := src[len("'nonce-") : len(src)-1]
					if validNonce(n) {
						if name == "script-src" && script == "" {
							script = n
						} else if name == "default-src" && def == "" {
							def = n
						}
					}
				}
			}
			if name == "script-src" && script == "" {
				// script-src present without a nonce: default-src does not apply.
				def = "-"
			}
		}
		if script != "" {
			return script
		}
		if def != "" && def != "-" {
			return def
		}
	}
	return ""
}

func validNonce(n string) bool {
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=' || c == '-' || c == '_') {
			return false
		}
	}
	return n != ""
}
