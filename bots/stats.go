package bots

import (
	"errors"
	"net"
	"sync/atomic"
)

// Stats counts what the verifier did; the caller exports them (the proxy
// as Prometheus counters) by reading Verifier.Stats. Every field only
// grows.
type Stats struct {
	RangeReloadFailures  atomic.Uint64 // a range file refused at reload (the old one kept)
	RangeRefreshFailures atomic.Uint64 // a range URL fetch or parse that failed (the last good copy kept)
	DNSConfirmed         atomic.Uint64 // lookups that forward-confirmed a PTR name
	DNSNotConfirmed      atomic.Uint64 // lookups answered without a confirmed name (no PTR, wrong domain, PTR that does not resolve back)
	DNSFailed            atomic.Uint64 // lookups the resolver failed (timeout, SERVFAIL, refused)
	DNSLate              atomic.Uint64 // requests that stopped waiting at dns_wait
	DNSBusy              atomic.Uint64 // requests that found max lookups in flight
	SignatureVerified    atomic.Uint64 // valid Web Bot Auth signatures
	SignatureFailed      atomic.Uint64 // signatures present that did not verify (outcome `no`)
	SignatureReplayed    atomic.Uint64 // of those, a nonce seen before
	DirectoryFetchFailed atomic.Uint64 // key directory fetches that failed
}

func asDNSError(err error, target **net.DNSError) bool { return errors.As(err, target) }

// Each calls f with every counter's name and value, for an exporter:
// "range_reload_failures", "dns_confirmed", "signature_failed", ….
func (s *Stats) Each(f func(name string, value uint64)) {
	f("range_reload_failures", s.RangeReloadFailures.Load())
	f("range_refresh_failures", s.RangeRefreshFailures.Load())
	f("dns_confirmed", s.DNSConfirmed.Load())
	f("dns_not_confirmed", s.DNSNotConfirmed.Load())
	f("dns_failed", s.DNSFailed.Load())
	f("dns_late", s.DNSLate.Load())
	f("dns_busy", s.DNSBusy.Load())
	f("signature_verified", s.SignatureVerified.Load())
	f("signature_failed", s.SignatureFailed.Load())
	f("signature_replayed", s.SignatureReplayed.Load())
	f("directory_fetch_failed", s.DirectoryFetchFailed.Load())
}
