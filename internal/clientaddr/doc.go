// Package clientaddr says who sent a request and how it came, as headgate
// believes it (SPEC §11.1, §18.1, §24): the peer's own address and
// scheme, or — when the peer is one of server.trusted_proxies — what that
// proxy says in X-Forwarded-For and X-Forwarded-Proto (else Forwarded:
// proto=).
//
// One Trust is built per config from server.trusted_proxies and asked per
// request: the redirect code (normalize.https), the X-Forwarded-* headers
// sent upstream, the access log and crawler identity (§18) all ask it, so
// that the trusted-proxy rules live in one place.
//
// Security: a peer that is not a trusted proxy is never believed; its
// forwarding headers are ignored (and the proxy replaces them upstream).
// Behind trusted proxies the client is the rightmost X-Forwarded-For
// address that is not itself a trusted proxy: everything left of it was
// written by the client or by proxies nobody vouches for. A value that is
// not an address ends the walk, so that a garbage entry can not hide a
// spoofed one behind it.
//
// The common path (a peer with no forwarding headers, or one X-Forwarded-For
// from a trusted proxy) allocates nothing.
package clientaddr
