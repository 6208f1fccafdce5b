package proxy

import (
	"net/http"
	"strings"

	"github.com/headgate/headgate/rules"
)

// setAlternateLinks writes an hreflang table's rows on a non-HTML response
// (§12.3): one Link: <url>; rel="alternate"; hreflang="L" per row,
// replacing the upstream's own hreflang links and keeping its others.
// Rows are checked at load (absolute http(s) URLs, hreflang codes of
// letters and "-"); < and > are encoded all the same.
func setAlternateLinks(h http.Header, alts []rules.Alternate) {
	var keep []string
	for _, v := range h.Values("Link") {
		for _, link := range splitLinks(v) {
			if !linkIsHreflang(link) {
				keep = append(keep, link)
			}
		}
	}
	h.Del("Link")
	for _, l := range keep {
		h.Add("Link", l)
	}
	esc := strings.NewReplacer("<", "%3C", ">", "%3E")
	for _, a := range alts {
		h.Add("Link", "<"+esc.Replace(a.Href)+`>; rel="alternate"; hreflang="`+a.Hreflang+`"`)
	}
}

// linkIsHreflang reports whether a Link value is a language alternate:
// rel holds "alternate" and it has an hreflang parameter.
func linkIsHreflang(link string) bool {
	_, params, ok := strings.Cut(link, ">")
	if !ok {
		return false
	}
	alt, lang := false, false
	for _, p := range strings.Split(params, ";") {
		k, v, _ := strings.Cut(p, "=")
		switch k = strings.TrimSpace(k); {
		case strings.EqualFold(k, "rel"):
			for _, tok := range strings.Fields(strings.Trim(strings.TrimSpace(v), `"`)) {
				alt = alt || strings.EqualFold(tok, "alternate")
			}
		case strings.EqualFold(k, "hreflang"):
			lang = true
		}
	}
	return alt && lang
}
