package main

import (
	"fmt"
	"io"
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

// explainRedirect prints the redirect headgate answers for req, if any,
// and reports whether there is one (then nothing is forwarded).
func explainRedirect(w io.Writer, cfg *rules.Config, req rules.RedirectRequest) bool {
	rd, err := cfg.Redirect(req)
	if err != nil {
		fmt.Fprintf(w, "  redirect rules not followed: %v; the request is served as if none matched\n", err)
	}
	if rd == nil {
		return false
	}
	source := rd.Source
	if rd.Source != rules.SourceNormalize {
		source += " " + rd.Where()
	}
	if rd.Status == 410 {
		fmt.Fprintf(w, "  redirect: 410 Gone (X-Robots-Tag: noindex)\n  source: %s\n", source)
	} else {
		fmt.Fprintf(w, "  redirect: %d\n  source: %s\n  Location: %s\n", rd.Status, source, rd.Location)
	}
	fmt.Fprintln(w, "  headgate answers this itself; nothing is forwarded")
	return true
}
