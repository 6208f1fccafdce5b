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
		rec := *rec
		rec.UpstreamIdentity, rec.UpstreamKeep = false, proxy.KeepShadow
		fmt.Fprintf(w, "  upstream asked for: %s\n", proxy.UpstreamCodingText(&rec))
	default:
		if t := proxy.BrowserUpstreamCodingText(cfg, rec); t != "" {
			fmt.Fprintf(w, "  upstream asked for: %s\n", t)
		}
	}
}
