package botconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
)

// MaxRangesFile bounds one range file. Google's googlebot.json is about
// 20 KB and OpenAI's chatgpt-user.json about 15 KB; 4 MiB leaves room for
// every list there is and still bounds a hostile file.
const MaxRangesFile = 4 << 20

// maxPrefixes bounds the prefixes of one file.
const maxPrefixes = 100_000

// rangesFile is the published layout (FormatPrefixes). Unknown keys
// (Google's "syncToken", anything new) are ignored, as the operators add
// fields over time.
type rangesFile struct {
	CreationTime string `json:"creationTime"`
	Prefixes     []struct {
		IPv4 string `json:"ipv4Prefix"`
		IPv6 string `json:"ipv6Prefix"`
	} `json:"prefixes"`
}

// RangesError says why a range file was refused.
type RangesError struct {
	Crawler string // the directory entry
	Source  string // file path or URL
	Err     error
}

func (e *RangesError) Error() string {
	return fmt.Sprintf("bots: range file %s (%s): %v", e.Source, e.Crawler, e.Err)
}

func (e *RangesError) Unwrap() error { return e.Err }

// ParseRanges reads one published range file (at most MaxRangesFile bytes)
// into a Ranges. A file with no prefix is refused: an empty list published
// by mistake must not make every address unverified silently.
func ParseRanges(r io.Reader) (*Ranges, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxRangesFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxRangesFile {
		return nil, fmt.Errorf("larger than %d bytes", MaxRangesFile)
	}
	var f rangesFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("not the published JSON layout: %w", err)
	}
	if len(f.Prefixes) == 0 {
		return nil, errors.New(`no "prefixes"`)
	}
	if len(f.Prefixes) > maxPrefixes {
		return nil, fmt.Errorf("more than %d prefixes", maxPrefixes)
	}
	ps := make([]netip.Prefix, 0, len(f.Prefixes))
	for i, p := range f.Prefixes {
		var s string
		switch {
		case p.IPv4 != "" && p.IPv6 == "":
			s = p.IPv4
		case p.IPv6 != "" && p.IPv4 == "":
			s = p.IPv6
		default:
			return nil, fmt.Errorf("prefixes[%d]: want exactly one of ipv4Prefix, ipv6Prefix", i)
		}
		pfx, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("prefixes[%d]: %w", i, err)
		}
		if (p.IPv4 != "") != pfx.Addr().Is4() {
			return nil, fmt.Errorf("prefixes[%d]: %q is in the wrong family", i, s)
		}
		ps = append(ps, pfx.Masked())
	}
	rs := NewRanges(ps)
	rs.Created = f.CreationTime
	return rs, nil
}

// u128 is an address as a number; IPv4 addresses are IPv4-mapped IPv6.
type u128 struct{ hi, lo uint64 }

func (a u128) less(b u128) bool { return a.hi < b.hi || a.hi == b.hi && a.lo < b.lo }

func addrU128(a netip.Addr) u128 {
	b := a.As16() // IPv4 becomes ::ffff:a.b.c.d; zones are dropped
	var u u128
	for i := 0; i < 8; i++ {
		u.hi = u.hi<<8 | uint64(b[i])
		u.lo = u.lo<<8 | uint64(b[8+i])
	}
	return u
}

// last returns the highest address of the prefix of bits bits starting at a.
func (a u128) last(bits int) u128 {
	switch {
	case bits <= 0:
		return u128{^uint64(0), ^uint64(0)}
	case bits < 64:
		return u128{a.hi | ^uint64(0)>>bits, ^uint64(0)}
	case bits < 128:
		return u128{a.hi, a.lo | ^uint64(0)>>(bits-64)}
	}
	return a
}

type span struct{ first, last u128 }

// Ranges is an immutable set of address prefixes: sorted, merged spans
// searched by bisection, so Contains costs O(log n) and no allocation
// whatever the number of prefixes.
type Ranges struct {
	spans   []span
	Created string // the file's creationTime, as published
	N       int    // prefixes read
}

// NewRanges builds a set from prefixes.
func NewRanges(ps []netip.Prefix) *Ranges {
	spans := make([]span, 0, len(ps))
	for _, p := range ps {
		if !p.IsValid() {
			continue
		}
		bitsLen := p.Bits()
		if p.Addr().Is4() {
			bitsLen += 96
		}
		first := addrU128(p.Masked().Addr())
		spans = append(spans, span{first, first.last(bitsLen)})
	}
	slices.SortFunc(spans, func(a, b span) int {
		switch {
		case a.first.less(b.first):
			return -1
		case b.first.less(a.first):
			return 1
		}
		return 0
	})
	merged := spans[:0]
	for _, s := range spans {
		if n := len(merged); n > 0 && !merged[n-1].last.less(s.first) {
			if merged[n-1].last.less(s.last) {
				merged[n-1].last = s.last
			}
			continue
		}
		merged = append(merged, s)
	}
	return &Ranges{spans: slices.Clip(merged), N: len(ps)}
}

// Contains reports whether a is in the set. A nil set contains nothing.
func (r *Ranges) Contains(a netip.Addr) bool {
	if r == nil || !a.IsValid() || len(r.spans) == 0 {
		return false
	}
	a = a.Unmap() // ::ffff:66.249.66.1 is 66.249.66.1
	x := addrU128(a)
	// The last span whose first address is ≤ x.
	lo, hi := 0, len(r.spans)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if x.less(r.spans[m].first) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo > 0 && !r.spans[lo-1].last.less(x)
}

// Len is the number of merged spans.
func (r *Ranges) Len() int {
	if r == nil {
		return 0
	}
	return len(r.spans)
}
