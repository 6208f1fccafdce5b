package watch

import (
	"strconv"
	"unicode/utf8"

	"github.com/headgate/headgate/internal/robotsmeta"
	"github.com/headgate/headgate/rewrite"
	"github.com/headgate/headgate/rules/watchconf"
)

// Signal is one thing the watcher compares from response to response.
type Signal uint8

// The signals, in SignalNames' order.
const (
	Status Signal = iota
	Robots
	Canonical
	Title
	Description
	Hreflang
	JSONLDTypes
	numSignals
)

// SignalNames are the signals' names, in config, events and the metric
// (watchconf's list: the array types agree only while the two have the
// same length, so a signal added to one alone does not compile).
var SignalNames [numSignals]string = watchconf.SignalNames

func (s Signal) String() string {
	if s < numSignals {
		return SignalNames[s]
	}
	return "signal(" + strconv.Itoa(int(s)) + ")"
}

// ParseSignal returns the signal of a name.
func ParseSignal(name string) (Signal, bool) {
	for i, n := range SignalNames {
		if n == name {
			return Signal(i), true
		}
	}
	return 0, false
}

// Severities.
const (
	Critical = "critical"
	Info     = "info"
)

// values are one response's signals, each as a number: the status, the
// robots set, hashes (0: absent). Comparing two is comparing arrays.
type values [numSignals]uint64

// Response is what Observe is told of one upstream response.
type Response struct {
	// Status is the upstream's status code.
	Status int
	// RobotsHeader holds the response's X-Robots-Tag values
	// (Header.Values: not copied, not kept).
	RobotsHeader []string
	// Head is the rewriter's summary of the upstream head
	// (rewrite.Result.Upstream); nil, or not Read, when no head was read
	// (a redirect, a response that is no HTML document, a skipped one).
	Head *rewrite.HeadFacts
}

// headRead reports whether r carries a head whose signals count: a 2xx
// response whose head was read. An error page's title is not the page's.
func (r *Response) headRead() bool {
	return r.Head != nil && r.Head.Read && r.Status >= 200 && r.Status < 300
}

// valuesOf reads r's signals, for the page at base, path and query; the
// head's only when headRead.
func valuesOf(r *Response, base, path, query string) values {
	var v values
	v[Status] = uint64(r.Status)
	if !r.headRead() {
		return v
	}
	f := r.Head
	rs := f.Robots
	for _, h := range r.RobotsHeader {
		crawler, d := robotsmeta.ForCrawler(h)
		if crawler == "" || crawler == "googlebot" {
			rs |= robotsmeta.Parse(d)
		}
	}
	v[Robots] = uint64(rs)
	v[Canonical] = canonicalValue(&f.Canonical, base, path, query)
	v[Title] = f.Title.Hash
	v[Description] = f.Description.Hash
	v[Hreflang] = f.Hreflang
	v[JSONLDTypes] = f.JSONLDTypes.Hash
	return v
}

// severity classes a change of s from before to after (SPEC §20.2).
func severity(s Signal, before, after uint64) string {
	switch s {
	case Status:
		if is2xx(before) && !is2xx(after) {
			return Critical
		}
	case Robots:
		if robotsmeta.Set(after)&robotsmeta.NoIndex != 0 && robotsmeta.Set(before)&robotsmeta.NoIndex == 0 {
			return Critical
		}
	case Canonical:
		if before != 0 { // it moved or disappeared
			return Critical
		}
	case Title, Description:
		if before != 0 && after == 0 {
			return Critical
		}
	}
	return Info
}

func is2xx(s uint64) bool { return s >= 200 && s < 300 }

// text is how an event shows a signal's value: status and robots as they
// are; a canonical naming the page as the page's URL (at); a hashed value
// as its text when the response carried it short (cur, the facts of the
// response that confirmed it), else as "#" and its hash's first 8 hex
// digits; "" for none.
func text(s Signal, v uint64, cur *rewrite.HeadFacts, at pageURL) string {
	switch s {
	case Status:
		return strconv.FormatUint(v, 10)
	case Robots:
		return robotsmeta.Set(v).String()
	}
	if v == 0 {
		return ""
	}
	if s == Canonical && v == selfAbsolute {
		return at.base + at.key
	}
	if s == Canonical && v == selfRelative {
		return at.key
	}
	if cur != nil {
		var f *rewrite.Fact
		switch s {
		case Canonical:
			f = &cur.Canonical
		case Title:
			f = &cur.Title
		case Description:
			f = &cur.Description
		case JSONLDTypes:
			f = &cur.JSONLDTypes
		}
		if f != nil && f.Hash == v {
			if t, ok := f.Text(); ok {
				return t
			}
		}
		if s == Hreflang && cur.Hreflang == v {
			return hashText(v) + alternates(cur.Alternates)
		}
	}
	return hashText(v)
}

func hashText(v uint64) string {
	const hex = "0123456789abcdef"
	var b [9]byte
	b[0] = '#'
	for i := 0; i < 8; i++ {
		b[8-i] = hex[v>>(4*(8+i))&0xf] // the top 32 bits
	}
	return string(b[:])
}

// prefix is the start of a title or description an entry kept, for an
// event's before: b[:n], and whether the text went on past it.
type prefix struct {
	b   [titleKept]byte
	n   uint8
	cut bool
}

// keep stores the start of f's text in dst: dst[0] is its length, with
// the high bit set when the text went on; 0 when there is none to keep
// (no text, or one longer than rewrite.FactTextMax, of which the Fact
// keeps the hash alone). The cut falls on a rune boundary. No allocation.
func keep(dst []byte, f *rewrite.Fact) {
	clear(dst)
	t := f.TextBytes()
	room := len(dst) - 1
	cut := len(t) > room
	if cut {
		n := room
		for n > 0 && !utf8.RuneStart(t[n]) {
			n--
		}
		t = t[:n]
	}
	if len(t) == 0 {
		return
	}
	copy(dst[1:], t)
	dst[0] = byte(len(t))
	if cut {
		dst[0] |= 0x80
	}
}

// keepTexts keeps the start of head's title and description (a baseline).
func (e *entry) keepTexts(head *rewrite.HeadFacts) {
	keep(e.title[:], &head.Title)
	keep(e.desc[:], &head.Description)
}

// prefixOf reads what keep stored.
func prefixOf(src []byte) prefix {
	var p prefix
	p.n, p.cut = src[0]&0x7f, src[0]&0x80 != 0
	copy(p.b[:p.n], src[1:])
	return p
}

// beforeText is how an event shows a signal's value before the change:
// as text does, but a title or description as the start the entry kept
// ("Winter boots for…", whole when it was short), when it kept one, and
// a canonical, JSON-LD types or hreflang as names remembered it.
func beforeText(s Signal, v uint64, ch *changes, nm *names, at pageURL) string {
	was := &ch.title
	if s == Description {
		was = &ch.desc
	}
	if (s == Title || s == Description) && v != 0 && was.n > 0 {
		t := string(was.b[:was.n])
		if was.cut {
			t += "…"
		}
		return t
	}
	if t, ok := nm.lookup(s, v); ok {
		return t
	}
	return text(s, v, nil, at)
}
