package proxy

import (
	"net"
	"net/http"

	"github.com/headgate/headgate/rules"
)

// clientAddr is the client's address as the access log names it: the
// peer's host for now. Trusted proxies (server.trusted_proxies) will make
// it the address the proxy believes; this is the one place to change.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// rulePatterns is the rule set of a request for the access log: the
// patterns of the matching rules, in merge order; none when the request
// was refused before matching.
func rulePatterns(m *rules.Match) []string {
	if m == nil {
		return []string{}
	}
	return m.Patterns()
}
