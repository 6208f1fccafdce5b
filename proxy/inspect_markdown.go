package proxy

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/headgate/headgate/rules"
)

// markdownInspectURL is the inspector's link to target's Markdown, when
// the page has a Markdown version (§19.1); "".
func markdownInspectURL(rec *Record, target string) string {
	if rec == nil || rec.Match == nil || !rec.Match.HasMarkdown() {
		return ""
	}
	return "/inspect?format=markdown&path=" + url.QueryEscape(target)
}

// inspectMarkdown answers /inspect?format=markdown&path=…: the Markdown the
// proxy serves for the page (a synthetic GET that prefers text/markdown),
// as text/plain, or why the page went out as HTML instead.
func (p *Proxy) inspectMarkdown(w http.ResponseWriter, r *http.Request, target string) {
	st := p.state.Load()
	md := st.cfg.Markdown
	if md == nil {
		inspectError(w, false, http.StatusNotFound, "[markdown] is not enabled in this config", examplePath(st.cfg))
		return
	}
	var rec *Record
	base, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	unhook := context.AfterFunc(r.Context(), func() { stop(context.Cause(r.Context())) })
	defer unhook()
	ctx, cancel := context.WithTimeout(Observe(base, func(r *Record) { rec = r }), st.cfg.Server.UpstreamTimeout+inspectSlack)
	defer cancel()
	host := st.host
	if host == "" {
		host = "localhost"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+target, nil)
	if err != nil {
		inspectError(w, false, http.StatusBadRequest, "path is not a request target: "+err.Error(), examplePath(st.cfg))
		return
	}
	req.RequestURI, req.Host, req.RemoteAddr = target, host, r.RemoteAddr
	req.Header.Set("User-Agent", inspectUA)
	req.Header.Set("Accept", "text/markdown")
	rw := &recorder{h: http.Header{}, limit: int(min(md.MaxBytes*2, rules.DefaultMarkdownMaxBytes*4)), cancel: stop}
	p.serveInspected(rw, req)

	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	var b strings.Builder
	isMD := strings.HasPrefix(rw.h.Get("Content-Type"), "text/markdown")
	switch {
	case isMD:
		fmt.Fprintf(&b, "# headgate inspector: the Markdown of %s (%s tokens, X-Markdown-Tokens)\n\n", target, rw.h.Get("X-Markdown-Tokens"))
	case rec != nil && rec.Markdown != nil && rec.Markdown.Fallback != "":
		fmt.Fprintf(&b, "# headgate answered %s as HTML, not Markdown: %s (%s)\n", target, rec.Markdown.Fallback, rec.Markdown.Err)
	default:
		fmt.Fprintf(&b, "# %s has no Markdown: headgate served %d %s as the upstream answered it\n", target, rw.status, rw.h.Get("Content-Type"))
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(b.String()))
	if isMD {
		_, _ = w.Write(rw.body)
	}
}
