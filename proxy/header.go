package proxy

import "net/http"

// Header access by a key already in canonical form ("Content-Type",
// "Etag": textproto.CanonicalMIMEHeaderKey(k) == k). http.Header's methods
// canonicalize their key on every call, a scan and a validity check of
// each byte, and the request path makes some twenty such calls with
// constant keys (docs/performance.md, "Where the repeat path's remaining
// cost is"). These index the map directly, which for a canonical key is
// what the methods do after canonicalizing; for any other spelling they
// would silently miss, so TestCanonicalHeaderKeys parses this package and
// fails on a literal key that is not canonical.

func hget(h http.Header, k string) string {
	if v := h[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func hvalues(h http.Header, k string) []string { return h[k] }

func hset(h http.Header, k, v string) { h[k] = []string{v} }

func hadd(h http.Header, k, v string) { h[k] = append(h[k], v) }

func hdel(h http.Header, k string) { delete(h, k) }
