package main

import (
	"fmt"
	"io"

	"github.com/headgate/headgate/proxy"
	"github.com/headgate/headgate/rules"
)

// explainReal shows what the rule fields of SPEC §16 do to a match: the
// rules inherit = false leaves out, and rewrite = false; then what the
// upstream is asked for (explainUpstreamCoding).
func explainReal(w io.Writer, cfg *rules.Config, mode rules.Mode, rec *proxy.Record, m *rules.Match) {
	for _, mr := range m.Ignored {
		fmt.Fprintf(w, "  not inherited (a more specific rule says inherit = false): %s%s\n", mr.Rule.Match, mr.Rule.QueryLabel())
	}
	if !m.Rewrite() {
		fmt.Fprintln(w, "  rewrite = false: responses are proxied with the rules' headers, never rewritten")
	}
	explainUpstreamCoding(w, cfg, mode, rec)
}

// explainUpstreamCoding says what the Record says headgate asked the
// upstream for, on a browser's request for the page: the page
// uncompressed, or the client's codings (server.upstream_page_coding), by
// config, for an asset's path, or for a page headgate passes through.
// The record is of the production mode explain asks in (explainAsProduction);
// the config's own mode is mode: in shadow mode the proxy serves the
// upstream's bytes and keeps the client's codings (asksIdentity).
func explainUpstreamCoding(w io.Writer, cfg *rules.Config, mode rules.Mode, rec *proxy.Record) {
	switch {
	case rec.Outcome == proxy.Denied:
		// nothing is forwarded: explain says so next
	case mode == rules.ModeShadow:
		fmt.Fprintln(w, "  upstream asked for: the client's codings headgate decodes: shadow mode serves the upstream's bytes as they come")
	case rec.UpstreamIdentity:
		fmt.Fprintln(w, "  upstream asked for: identity (no Accept-Encoding): headgate decodes the page anyway and compresses once; an answer it does not rewrite goes to the client compressed as the client allows (server.upstream_page_coding)")
	case rec.UpstreamAsset != "":
		fmt.Fprintf(w, "  upstream asked for: the client's codings headgate decodes (an asset path: %s): its answer passes through as it comes\n", rec.UpstreamAsset)
	case cfg.Server.UpstreamPageCoding == rules.UpstreamPageClient:
		fmt.Fprintln(w, `  upstream asked for: the client's codings headgate decodes (server.upstream_page_coding = "client")`)
	default:
		fmt.Fprintln(w, "  upstream asked for: the client's codings headgate decodes: headgate passes this page through as it comes, so it stays compressed")
	}
}
