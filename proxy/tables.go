package proxy

import (
	"net/http"

	"github.com/headgate/headgate/internal/linkheader"

	"github.com/headgate/headgate/rules"
)

// setAlternateLinks writes an hreflang table's rows on a non-HTML response
// (§12.3): one Link: <url>; rel="alternate"; hreflang="L" per row,
// replacing the upstream's own hreflang links and keeping its others.
// Rows are checked at load (absolute http(s) URLs, hreflang codes of
// letters and "-"); < and > are encoded all the same.
func setAlternateLinks(h http.Header, alts []rules.Alternate) {
	add := make([]string, len(alts))
	for i, a := range alts {
		add[i] = linkheader.Format(a.Href, "alternate", [2]string{"hreflang", a.Hreflang})
	}
	linkheader.Replace(h, func(l linkheader.Link) bool {
		_, lang := l.Params["hreflang"]
		return l.Has("alternate") && lang
	}, add...)
}
