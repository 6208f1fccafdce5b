package proxy

import (
	"net"
	"net/http"

	"github.com/headgate/headgate/rules"
)

// clientAddr is the peer's host. The access log names state.client: this,
// or for a peer in server.trusted_proxies the client its X-Forwarded-For
// names (redirect.go).
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
