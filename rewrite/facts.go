package rewrite

import (
	"bytes"
	"hash/maphash"
	"strings"

	"github.com/headgate/headgate/internal/robotsmeta"
	"github.com/headgate/headgate/rules"
)

// HeadFacts is what the upstream head said of itself, before any rule, in
// a fixed size: hashes, counts and short texts, no pointer, so that making
// one allocates nothing and a plan of the cache replays it with the rest
// of its Result. The change watcher (package watch) compares them from one
// response to the next; Result.UpstreamHead is the full listing, made only
// for an observed request.
//
// The facts come from the head as a parser builds it (the tags of a late
// stretch, which a parser puts in the body, are not read), first tag of an
// identity first, as readPage reads them for templates.
type HeadFacts struct {
	// Read is true when the head was read to its end and the facts hold;
	// false for a skipped document (too large, a charset that is not
	// ASCII-compatible, a fragment, a read error).
	Read bool
	// Robots merges the head's robots and googlebot metas.
	Robots robotsmeta.Set
	// Alternates counts the head's hreflang alternates (at most 65535).
	Alternates uint16
	// Hreflang is an order-insensitive hash of the alternates' (hreflang,
	// href) pairs, the language in lower case; 0 when there is none.
	Hreflang uint64
	// Title is the first title's text, white space collapsed; Description
	// the first description's content, trimmed.
	Title, Description Fact
	// Canonical is the first canonical that passes the URL rules, made
	// absolute on the page's URL (relative and absolute spellings of one
	// URL are one canonical); without rules, its href as written.
	Canonical Fact
	// JSONLDTypes are the distinct "@type" values of the head's JSON-LD
	// blocks (anywhere in them: @graph members and nested objects too),
	// sorted and joined with ", "; its hash does not depend on their order.
	// Each block is looked into for at most maxTypeScan bytes.
	JSONLDTypes Fact
}

// FactTextMax bounds the text a Fact keeps: a longer value is kept as its
// hash and length only.
const FactTextMax = 80

// Fact is one upstream value in a fixed size: its hash, its length, and
// its text when it is short.
type Fact struct {
	// Hash is the value's hash, never 0 for a value; 0 when the value is
	// absent or empty. Hashes are comparable within one process only.
	Hash uint64
	Len  int32 // the value's length in bytes
	n    uint8
	text [FactTextMax]byte
}

// Text returns the value when it is at most FactTextMax bytes long (and
// whole, true), else "" and false.
func (f *Fact) Text() (string, bool) {
	if int(f.n) != int(f.Len) {
		return "", false
	}
	return string(f.text[:f.n]), true
}

// Set reports whether the value was there and not empty.
func (f *Fact) Set() bool { return f.Hash != 0 }

// factSeed keys the facts' hashes; set once, never changed.
var factSeed = maphash.MakeSeed()

func nonZero(h uint64) uint64 {
	if h == 0 {
		return 1
	}
	return h
}

func (f *Fact) setString(s string) {
	*f = Fact{}
	if s == "" {
		return
	}
	f.Hash = nonZero(maphash.String(factSeed, s))
	f.Len = int32(min(len(s), 1<<30))
	if len(s) <= FactTextMax {
		f.n = uint8(copy(f.text[:], s))
	}
}

// Bounds of the look into JSON-LD: a type name is short; a head's blocks
// are read for their types up to maxTypeScan bytes each, and at most
// maxTypes distinct types are told apart.
const (
	maxTypeScan = 16 << 10
	maxTypeLen  = 64
	maxTypes    = 16
)

// facts fills r.res.Upstream from the scanned tags. With rules, readPage
// has decoded the title, description and canonical already (d.page):
// nothing is decoded twice and the facts allocate nothing; without, the
// values are decoded here.
func (h *headScan) facts(d *decision) {
	st, buf := h.st, h.st.buf
	f := &h.r.res.Upstream
	*f = HeadFacts{Read: true}
	var types typeSet
	scanned := 0
	var alt maphash.Hash
	alt.SetSeed(factSeed)
	var hl [16]byte
	var title, desc, canon string
	seenTitle, seenDesc, seenCanon := false, false, false
	for i := range st.tags {
		ht := &st.tags[i]
		if ht.where != inHead {
			continue
		}
		tag := buf[ht.start:ht.tagEnd]
		switch ht.identity {
		case rules.IdentRobots:
			if ht.kind == kMeta {
				f.Robots |= robotsmeta.Parse(ht.urlAttr.val(tag)) // a meta's content, URL or not
			}
		case rules.IdentAlternates:
			lang := trimSpace(ht.relAttr.val(tag))
			if len(lang) <= len(hl) {
				for j, c := range lang {
					if 'A' <= c && c <= 'Z' {
						c += 'a' - 'A'
					}
					hl[j] = c
				}
				lang = hl[:len(lang)]
			}
			alt.Reset()
			alt.Write(lang)
			alt.WriteByte(0)
			if ht.hasURL {
				alt.Write(trimSpace(ht.urlAttr.val(tag)))
			}
			f.Hreflang += mix(alt.Sum64()) // a sum: the order does not count
			if f.Alternates < 1<<16-1 {
				f.Alternates++
			}
		case rules.IdentJSONLD:
			if scanned < 2*maxTypeScan {
				b := ht.text[:min(len(ht.text), maxTypeScan)]
				scanned += len(b)
				types.scan(b)
			}
		}
		if d.match != nil {
			continue
		}
		switch {
		case ht.identity == rules.IdentTitle && !seenTitle:
			seenTitle, title = true, collapseSpace(d.cs.decodeText(ht.text))
		case ht.identity == rules.IdentDescription && !seenDesc:
			seenDesc, desc = true, strings.TrimSpace(d.cs.decodeText(ht.urlAttr.val(tag)))
		case ht.identity == rules.IdentCanonical && !seenCanon && ht.hasURL:
			seenCanon, canon = true, strings.TrimSpace(d.cs.decodeText(ht.urlAttr.val(tag)))
		}
	}
	if h.gbEnd > 0 {
		tag := buf[h.gbStart:h.gbEnd]
		var ta tagAttrs
		readAttrs(tag, len("<meta"), &ta)
		f.Robots |= robotsmeta.Parse(ta.content.val(tag))
	}
	if f.Alternates > 0 {
		f.Hreflang = nonZero(f.Hreflang)
	}
	if d.match != nil {
		title, desc, canon = d.page.Title, d.page.Description, d.page.Canonical
	}
	f.Title.setString(title)
	f.Description.setString(desc)
	f.Canonical.setString(canon)
	types.fact(&f.JSONLDTypes)
}

// mix spreads a hash's bits before it is summed with others (a
// finalizer of splitmix64), so that sums of related pairs do not cancel.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// typeSet gathers distinct JSON-LD types; its slices alias the head's
// buffer and are valid during facts only.
type typeSet struct {
	n int
	v [maxTypes][]byte
}

func (s *typeSet) add(t []byte) {
	if len(t) == 0 || len(t) > maxTypeLen {
		return
	}
	for _, x := range s.v[:s.n] {
		if bytes.Equal(x, t) {
			return
		}
	}
	if s.n < maxTypes {
		s.v[s.n] = t
		s.n++
	}
}

var typeKey = []byte(`"@type"`)

// scan adds the "@type" values found in b: a JSON string, or an array of
// strings. It is a look for a key, not a JSON parse: a "@type" inside a
// string value counts too, which no real block has; what it cannot read
// it skips.
func (s *typeSet) scan(b []byte) {
	for {
		i := bytes.Index(b, typeKey)
		if i < 0 {
			return
		}
		b = jsonSpace(b[i+len(typeKey):])
		if len(b) == 0 || b[0] != ':' {
			continue
		}
		b = jsonSpace(b[1:])
		switch {
		case len(b) > 0 && b[0] == '"':
			var v []byte
			v, b = jsonStr(b)
			s.add(v)
		case len(b) > 0 && b[0] == '[':
			b = jsonSpace(b[1:])
			for len(b) > 0 && b[0] == '"' {
				var v []byte
				v, b = jsonStr(b)
				s.add(v)
				b = jsonSpace(b)
				if len(b) == 0 || b[0] != ',' {
					break
				}
				b = jsonSpace(b[1:])
			}
		}
	}
}

// jsonStr reads the string b starts with (at its quote): its raw bytes
// between the quotes (escapes as written) and the rest; nil when it does
// not end in b.
func jsonStr(b []byte) (v, rest []byte) {
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return b[1:i], b[i+1:]
		}
	}
	return nil, nil
}

func jsonSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	return b
}

// fact writes the set into f: sorted, joined with ", ", its hash the sum
// of its members'.
func (s *typeSet) fact(f *Fact) {
	*f = Fact{}
	if s.n == 0 {
		return
	}
	v := s.v[:s.n]
	for i := 1; i < len(v); i++ { // insertion sort: at most maxTypes
		for j := i; j > 0 && bytes.Compare(v[j], v[j-1]) < 0; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
	var sum uint64
	n := 0
	for i, t := range v {
		sum += mix(maphash.Bytes(factSeed, t))
		if i > 0 {
			n += 2
		}
		n += len(t)
	}
	f.Hash, f.Len = nonZero(sum), int32(n)
	if n <= FactTextMax {
		w := f.text[:0]
		for i, t := range v {
			if i > 0 {
				w = append(w, ", "...)
			}
			w = append(w, t...)
		}
		f.n = uint8(len(w))
	}
}

// isGooglebot reports whether a meta name is "googlebot", in any case.
func isGooglebot(name []byte) bool {
	name = trimSpace(name)
	return len(name) == len("googlebot") && asciiEqualFold(name, "googlebot")
}

// TextBytes is Text without the copy: the Fact's own bytes, to read and
// not to keep or change; nil when Text would report false. For a reader
// that copies part of the text on a path that must not allocate (the
// change watcher keeps the start of a title).
func (f *Fact) TextBytes() []byte {
	if int(f.n) != int(f.Len) || f.n == 0 {
		return nil
	}
	return f.text[:f.n]
}
