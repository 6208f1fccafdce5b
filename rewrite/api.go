package rewrite

import (
	"strings"
	"time"

	"github.com/headgate/headgate/rules"
)

// Options configures the rewrite of one document. The zero value rewrites
// nothing and corrects nothing: output equals input.
type Options struct {
	// Match is what the rules say about the request; nil means no rules.
	Match *rules.Match
	// ContentType is the response's Content-Type header: it gives the
	// charset and whether the document is XHTML (application/xhtml+xml).
	ContentType string
	// CSP is the response's Content-Security-Policy header; a script nonce
	// in it is put on every written JSON-LD script.
	CSP string
	// MaxHeadBytes bounds the region headgate edits (the head and a late
	// stretch up to a literal </head>); 0 means rules.DefaultMaxHeadBytes.
	MaxHeadBytes int
	// CorrectUpstream applies the corrections of SPEC §4.5.
	CorrectUpstream bool
	// Shadow computes every change but outputs the original bytes.
	Shadow bool
	// Cache, when set, replays the rewrite of a head already seen for the
	// same request (see Cache); nil scans every document.
	Cache *Cache
	// Observe, when set, is called once at the end of Prepare with the
	// decoded upstream bytes the rewriter read (the edited region and what
	// came with it: at most MaxHeadBytes plus 64 KiB and one read) and the
	// result. The slice is only valid during the call. The proxy sets it
	// only for a request someone observes (proxy.Observe: the inspector,
	// the in-process audit) and leaves it nil on every other. With it set,
	// Result.UpstreamHead lists the head read.
	Observe func(upstream []byte, res *Result)
}

// Outcome says what became of a document.
type Outcome string

// Outcomes; the proxy counts them in headgate_requests_total.
const (
	Rewritten       Outcome = "rewritten"         // the head was rewritten (or, in shadow mode, would have been)
	Unchanged       Outcome = "passthrough"       // nothing to change: output equals input
	SkippedTooLarge Outcome = "skipped_too_large" // head did not end within MaxHeadBytes, or one token was larger
	SkippedCharset  Outcome = "skipped_charset"   // not an ASCII-compatible charset
	// SkippedFragment: a text/html response that is no document (SPEC
	// §16.1): nothing before its head's end is a doctype, an html, head or
	// body tag, or a title, meta, link or base element.
	SkippedFragment Outcome = "skipped_fragment"
	// UnchangedTruncated: the input ended inside the head region, in an
	// unclosed title, script, style, textarea (or xmp, iframe, noembed) or comment, or inside a tag
	// (SPEC §23): a tag written there would land inside it, or replace an
	// element whose text a parser then moves into the body.
	UnchangedTruncated Outcome = "unchanged_truncated"
)

// Action is what happened to one tag.
type Action string

// Actions, as counted in the Headgate-Changes header.
const (
	Wrote     Action = "wrote"     // a tag headgate wrote
	Replaced  Action = "replaced"  // an upstream tag removed because a rule sets its identity
	Corrected Action = "corrected" // an upstream tag whose URL was made absolute
	Dropped   Action = "dropped"   // an upstream tag removed (unsafe URL, duplicate), or a rule value refused
)

// Change is one thing the rewriter did (or, in shadow mode, would do).
type Change struct {
	Action   Action
	Identity string // "canonical", "og:image", "title", "jsonld", …
	Key      string // for a written meta tag its name or property ("og:image:width"); for an alternate its hreflang
	Reason   string // for Dropped and Corrected: "duplicate", "javascript scheme"…; a rules.Drop* reason for URLs
	Value    string // the URL or text concerned, when there is one

	tag int // while the rewrite runs: 1 + the index of the upstream tag whose text Value becomes
}

// Label names what a change is about, for people: the tag's own name when
// it is one property of its identity ("og:image:width" of "og:image"), else
// the identity.
func (c Change) Label() string {
	if c.Key != "" && c.Key != c.Identity && strings.Contains(c.Key, ":") {
		return c.Key
	}
	return c.Identity
}

// Result is what the rewrite did. It is complete once Prepare returned.
type Result struct {
	Outcome  Outcome
	Delta    int           // output length minus input length; 0 unless the output differs
	Duration time.Duration // time spent processing the head (not waiting for the upstream)
	Changes  []Change
	Head     *rules.Head // what the rules rendered for this page; nil without rules
	Page     rules.Page  // what the upstream head said of itself
	Reason   string      // why a document was skipped, for the log
	Cached   bool        // replayed from Options.Cache, not scanned
	Plan     PlanUse     // what the plan cache did; "" without one
	// UpstreamHead is the upstream's head as the rewriter read it, element
	// by element (ListHead of the bytes Observe receives); nil unless
	// Options.Observe is set, so that no other request pays for it.
	UpstreamHead *HeadList
	// Upstream is what the upstream head said of itself, in a fixed size
	// (HeadFacts): filled by every scan, replayed with a cached plan.
	Upstream HeadFacts
}

// PlanUse says how a rewrite used Options.Cache.
type PlanUse string

const (
	PlanHit  PlanUse = "hit"     // the head was a plan's, byte for byte: replayed
	PlanNear PlanUse = "near"    // it differed from a plan's only where nothing headgate decides reads: replayed
	PlanMiss PlanUse = "miss"    // no plan held: scanned, and its plan remembered when it can be
	PlanSkip PlanUse = "skipped" // the target's heads kept missing: scanned without the cache for a while
)

// Count returns how many changes had the action.
func (r *Result) Count(a Action) int {
	n := 0
	for _, c := range r.Changes {
		if c.Action == a {
			n++
		}
	}
	return n
}
