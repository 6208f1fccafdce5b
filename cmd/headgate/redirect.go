package main

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/headgate/headgate/rules"
)

// explainTarget reads explain's PATH: a request target ("/a?b"), or a full
// URL ("http://www.notes.example//A/") whose host and scheme then take
// part in normalization. A bare path is a request on base_url's own host
// and scheme.
func explainTarget(cfg *rules.Config, arg string) (target string, req rules.RedirectRequest) {
	req = rules.RedirectRequest{Method: "GET", Target: arg, HTTPS: strings.HasPrefix(cfg.Site.BaseURL, "https:")}
	if u, err := url.Parse(cfg.Site.BaseURL); err == nil {
		req.Host = u.Host
	}
	if strings.HasPrefix(arg, "http://") || strings.HasPrefix(arg, "https://") {
		if u, err := url.Parse(arg); err == nil && u.Host != "" {
			req.Host, req.HTTPS = u.Host, u.Scheme == "https"
			req.Target = u.EscapedPath()
			if req.Target == "" {
				req.Target = "/"
			}
			if u.RawQuery != "" || u.ForceQuery {
				req.Target += "?" + u.RawQuery
			}
		}
	}
	return req.Target, req
}

// explainRedirect prints the redirect the proxy answered: its status and
// Location as sent (ans), and where it comes from (rd, the proxy's Record).
func explainRedirect(w io.Writer, rd *rules.Redirect, ans *answer) {
	source := "?"
	if rd != nil {
		source = rd.Source
		if rd.Source != rules.SourceNormalize {
			source += " " + rd.Where()
		}
	}
	if ans.status == http.StatusGone {
		fmt.Fprintf(w, "  redirect: 410 Gone (X-Robots-Tag: %s)\n  source: %s\n", ans.header.Get("X-Robots-Tag"), source)
	} else {
		fmt.Fprintf(w, "  redirect: %d\n  source: %s\n  Location: %s\n", ans.status, source, ans.header.Get("Location"))
	}
	fmt.Fprintln(w, "  headgate answers this itself; nothing is forwarded")
}
