package proxy

import (
	"net/http"
	"strings"
)

// droppedRequestHeaders never reach the upstream. The routing overrides
// first: request headers that some upstreams route by instead of the
// request line. IIS's URL Rewrite module and ISAPI_Rewrite pass the
// original URL in X-Original-URL and X-Rewrite-URL, and frameworks that
// read them (Symfony before 5, Zend Framework and Laminas before their
// fixes, apps on IIS) serve that path. headgate matched the request line,
// so a client's value could make an allowed path serve a denied one. No
// browser sends them. X-Original-URI is the same idea in nginx setups.
// Then HTTP2-Settings, only ever sent with an h2c upgrade (below). They
// are deleted from the map directly, in canonical form
// (TestCanonicalHeaderKeys), sparing Del's canonicalization per request.
var droppedRequestHeaders = [...]string{"X-Original-Url", "X-Original-Uri", "X-Rewrite-Url", "Http2-Settings"}

// guardRequest removes from the outbound request what would let the
// upstream serve another path than the one headgate matched: routing
// overrides, and an upgrade to h2c (HTTP/2 in the clear), inside which any
// path can be requested past headgate. The request then goes out as plain
// HTTP/1.1, which RFC 9113 lets a server answer; an upstream that switches
// to h2c anyway gets a 502 (ReverseProxy refuses a protocol not asked for).
// Other upgrades, WebSocket among them, pass.
func guardRequest(out *http.Request) {
	h := out.Header
	for _, k := range droppedRequestHeaders {
		delete(h, k)
	}
	if upgradesToH2C(h) {
		hdel(h, "Upgrade")
		hdel(h, "Connection")
	}
}

// upgradesToH2C reports whether any Upgrade token names h2c (or h2, which
// only TLS negotiates).
func upgradesToH2C(h http.Header) bool {
	for _, v := range hvalues(h, "Upgrade") {
		for _, tok := range strings.Split(v, ",") {
			name, _, _ := strings.Cut(strings.TrimSpace(tok), "/")
			if strings.EqualFold(name, "h2c") || strings.EqualFold(name, "h2") {
				return true
			}
		}
	}
	return false
}

// lastContentType keeps only the last of several Content-Type headers:
// browsers take the last (Fetch's "extract a MIME type"), so headgate
// decides whether a response is HTML on the value the browser will use,
// and sends that one value on.
func lastContentType(h http.Header) {
	if vs := hvalues(h, "Content-Type"); len(vs) > 1 {
		hset(h, "Content-Type", vs[len(vs)-1])
	}
}
