package clientaddr

import (
	"net/http"
	"net/netip"
	"strings"
)

// Trust is the set of trusted proxies of one config. The zero value trusts
// none: every request's client is its peer, and its scheme is https only
// when it came over TLS to headgate itself.
type Trust struct {
	proxies []netip.Prefix
}

// New returns the Trust of server.trusted_proxies. The slice is kept, not
// copied: it must not change afterwards (a config is immutable once
// loaded).
func New(trustedProxies []netip.Prefix) Trust {
	return Trust{proxies: trustedProxies}
}

// Trusts reports whether a is a trusted proxy. An IPv4-mapped IPv6
// address is matched as IPv4; an address with a zone matches no prefix
// (netip.Prefix.Contains), as trusted_proxies can not name a zone.
func (t Trust) Trusts(a netip.Addr) bool {
	if len(t.proxies) == 0 {
		return false
	}
	a = a.Unmap()
	for _, p := range t.proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Peer returns the address of the peer at remoteAddr (an
// http.Request.RemoteAddr, "ip:port"); ok is false when it is not one
// (a test's or a pipe's placeholder).
func Peer(remoteAddr string) (a netip.Addr, ok bool) {
	ap, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return netip.Addr{}, false
	}
	return ap.Addr(), true
}

// FromTrusted reports whether r's peer is a trusted proxy, whose forwarding
// headers are believed.
func (t Trust) FromTrusted(r *http.Request) bool {
	if len(t.proxies) == 0 {
		return false
	}
	a, ok := Peer(r.RemoteAddr)
	return ok && t.Trusts(a)
}

// Client returns the client's address: from a trusted proxy the rightmost
// X-Forwarded-For address that is not itself a trusted proxy (forwarded
// is then true), else the peer's. It is the invalid Addr when the peer's
// address is not an IP and no trusted proxy names one. The address is
// unmapped (an IPv4-mapped IPv6 address comes back as IPv4) when it comes
// from X-Forwarded-For, and as the connection gave it otherwise.
func (t Trust) Client(r *http.Request) (a netip.Addr, forwarded bool) {
	peer, ok := Peer(r.RemoteAddr)
	if !ok || !t.Trusts(peer) {
		return peer, false
	}
	if c, ok := t.forwardedFor(r.Header["X-Forwarded-For"]); ok {
		return c, true
	}
	return peer, false
}

// HTTPS reports whether the client used https: what a trusted proxy says
// (ForwardedProto), else whether r came over TLS to headgate.
func (t Trust) HTTPS(r *http.Request) bool {
	if t.FromTrusted(r) {
		if p := ForwardedProto(r.Header); p != "" {
			return p == "https"
		}
	}
	return r.TLS != nil
}

// ForwardedProto is the scheme a proxy says the client used, lower-cased:
// X-Forwarded-Proto's first value, else the first proto= of the first
// Forwarded element; "" when neither says. It does not ask whether the
// peer is trusted: callers do (HTTPS, FromTrusted).
func ForwardedProto(h http.Header) string {
	if vs := h["X-Forwarded-Proto"]; len(vs) > 0 && vs[0] != "" {
		v, _, _ := strings.Cut(vs[0], ",")
		return lower(strings.TrimSpace(v))
	}
	vs := h["Forwarded"]
	if len(vs) == 0 {
		return ""
	}
	first, _, _ := strings.Cut(vs[0], ",")
	for rest := first; rest != ""; {
		var kv string
		kv, rest, _ = strings.Cut(rest, ";")
		k, val, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if ok && strings.EqualFold(k, "proto") {
			return lower(strings.Trim(val, `"`))
		}
	}
	return ""
}

// lower is strings.ToLower for the common case without an allocation:
// "http" and "https" come back as the constants.
func lower(s string) string {
	switch {
	case s == "http" || s == "https":
		return s
	case strings.EqualFold(s, "http"):
		return "http"
	case strings.EqualFold(s, "https"):
		return "https"
	}
	return strings.ToLower(s)
}

// forwardedFor walks the X-Forwarded-For values from the right (the last
// header's last entry first) past trusted proxies: the first address that
// is not one is the client. A value that is not an address (or
// "address:port") ends the walk: what lies left of it can not be
// believed, and the last address read is the answer. ok is false when
// not one address was read.
func (t Trust) forwardedFor(vals []string) (client netip.Addr, ok bool) {
	for i := len(vals) - 1; i >= 0; i-- {
		v := vals[i]
		for {
			var part string
			if j := strings.LastIndexByte(v, ','); j >= 0 {
				part, v = v[j+1:], v[:j]
			} else {
				part, v = v, ""
			}
			a, good := parse(strings.TrimSpace(part))
			if !good {
				return client, ok
			}
			client, ok = a.Unmap(), true
			if !t.Trusts(a) {
				return client, ok
			}
			if v == "" {
				break
			}
		}
	}
	return client, ok
}

// parse reads an X-Forwarded-For entry: an address, or an address and port
// ("192.0.2.1:80", "[2001:db8::1]:80").
func parse(s string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(s); err == nil {
		return a, true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr(), true
	}
	return netip.Addr{}, false
}
