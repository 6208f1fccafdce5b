package rewrite

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/headgate/headgate/rules"
)

// Reader rewrites the head of the HTML document read from its source. It
// reads the source only as far as the end of the region it edits (the head,
// and a late stretch up to a literal </head>), bounded by MaxHeadBytes;
// everything after is copied through as it arrives.
type Reader struct {
	src      io.Reader
	opts     Options
	st       *state
	prepared bool
	srcErr   error    // the source's error, delivered after the bytes read before it
	srcEnd   bool     // Prepare saw the source end (io.EOF) or fail
	out      []byte   // the region, when it goes out as it came
	segs     [][]byte // the rewritten region: slices of the buffer and of what headgate wrote
	tail     []byte
	res      Result
}

// state is the per-document working memory, pooled so that a steady load
// allocates nothing for it.
type state struct {
	buf   []byte
	tags  []headTag
	edits []edit
	w     []byte // the tags headgate writes
	segs  [][]byte
	// changes is where decide records the changes; Result gets an exact
	// copy, so that a document allocates only what it reports.
	changes []Change
	pmeta   []pageMetaRef // metas whose content templates read (page.go)
	present identitySet   // decide's scratch: the identities the upstream head keeps
	spans   []opaqueSpan  // bytes no decision read, for the plan (nearmatch.go)
}

var statePool = sync.Pool{New: func() any { return &state{buf: make([]byte, 0, 32<<10)} }}

type edit struct {
	start, end int
	repl       []byte
}

// Where a head tag stands.
const (
	inHead    = iota // in the head as a parser builds it
	inStretch        // after the head's implicit end, before a late literal </head>
)

type tagKind uint8

const (
	kMeta tagKind = iota + 1
	kLink
	kTitle
	kJSONLD
)

type headTag struct {
	kind     tagKind
	where    int
	start    int // element start
	end      int // element end (after the end tag for title and script)
	tagEnd   int // end of the start tag
	identity string
	name     string // metaInfo.name: the property, when it is one part of its identity
	urlAttr  attr   // the URL-valued attribute, for corrections
	hasURL   bool
	text     []byte // title text, until decoded (aliases the buffer)
	remove   bool
	replace  []byte
	why      string
	fixed    string // the corrected URL
	relKeep  []byte // a canonical link's other rel tokens ("stylesheet"), kept when it is removed
	relAttr  attr   // a canonical's rel; an alternate's hreflang
	action   Action
}

// NewReader returns a Reader that rewrites src as opts say.
func NewReader(src io.Reader, opts Options) *Reader {
	r := new(Reader)
	r.Reset(src, opts)
	return r
}

// Reset makes r a new Reader of src, as NewReader would return: for a
// caller that keeps the Reader inside a larger per-request value, so that
// it is not allocated on its own. Whatever r held before is dropped.
func (r *Reader) Reset(src io.Reader, opts Options) {
	if opts.MaxHeadBytes <= 0 {
		opts.MaxHeadBytes = rules.DefaultMaxHeadBytes
	}
	*r = Reader{src: src, opts: opts}
}

// Result reports what the rewrite did; complete after Prepare.
func (r *Reader) Result() *Result { return &r.res }

// Buffered is how many bytes Read returns before it reads the source
// again: the head (rewritten, or as it came) and what Prepare read past
// it. Done reports whether the source ended or failed while Prepare read
// it, so that nothing past those bytes comes from it. Together they let a
// caller send the buffered bytes itself and move the rest of the source by
// other means (the proxy's splice from the upstream's connection to the
// client's).
func (r *Reader) Buffered() int {
	n := len(r.out) + len(r.tail)
	for _, s := range r.segs {
		n += len(s)
	}
	return n
}

// Done: see Buffered.
func (r *Reader) Done() bool { return r.srcEnd }

// Read reads the rewritten document.
func (r *Reader) Read(p []byte) (int, error) {
	if !r.prepared {
		r.Prepare()
	}
	if len(p) == 0 {
		return 0, nil
	}
	n := 0
	for len(r.segs) > 0 && n < len(p) {
		c := copy(p[n:], r.segs[0])
		n += c
		if r.segs[0] = r.segs[0][c:]; len(r.segs[0]) == 0 {
			r.segs = r.segs[1:]
		}
	}
	if len(r.out) > 0 && n < len(p) {
		c := copy(p[n:], r.out)
		r.out = r.out[c:]
		n += c
	}
	if len(r.tail) > 0 && n < len(p) {
		c := copy(p[n:], r.tail)
		r.tail = r.tail[c:]
		n += c
	}
	if len(r.segs) == 0 && len(r.out) == 0 && len(r.tail) == 0 && r.st != nil {
		r.release()
	}
	if n > 0 {
		return n, nil
	}
	if r.srcErr != nil {
		return 0, r.srcErr
	}
	return r.src.Read(p)
}

func (r *Reader) release() {
	st := r.st
	r.st = nil
	if cap(st.buf) > 1<<20 || cap(st.w) > 1<<20 || cap(st.changes) > 4096 || cap(st.spans) > 4096 {
		return // an unusual document: let the collector have it
	}
	st.buf, st.tags, st.edits, st.w, st.segs, st.pmeta, st.spans = st.buf[:0], st.tags[:0], st.edits[:0], st.w[:0], st.segs[:0], st.pmeta[:0], st.spans[:0]
	clear(st.present)
	st.present = st.present[:0]
	statePool.Put(st)
}

// Prepare reads the source through the end of the region headgate edits
// and decides the output, so that Result (and its Delta) is known before
// the first byte goes out. Read calls it when needed. It returns the
// source's read error, if one came before the region ended; the bytes read
// before it are still delivered by Read, unchanged. Rewrite problems never
// fail: the document then passes through untouched.
func (r *Reader) Prepare() (err error) {
	if r.prepared {
		return nil
	}
	r.prepared = true
	r.res.Outcome = Unchanged
	r.st = statePool.Get().(*state)
	defer func() {
		// Fail open: whatever went wrong, the original bytes go through.
		if p := recover(); p != nil {
			r.out, r.tail, r.segs = nil, r.st.buf, nil
			r.res = Result{Outcome: Unchanged, Reason: "internal error"}
			err = nil
		}
	}()
	h := &headScan{r: r, st: r.st, sc: scanner{}}
	h.run()
	if r.srcErr != nil {
		// The source failed inside the head: what it sent goes out as it
		// was, then its error.
		r.out, r.tail, r.segs = nil, r.st.buf, nil
		r.res.Outcome, r.res.Delta, r.res.Changes = Unchanged, 0, nil
		r.res.Upstream.Read = false // a head cut short says nothing sure
		r.res.Reason = "upstream read error: " + r.srcErr.Error()
	}
	if r.opts.Observe != nil {
		hl := ListHead(r.st.buf, r.opts.ContentType, !h.sc.eof)
		r.res.UpstreamHead = &hl
		r.opts.Observe(r.st.buf, &r.res)
	}
	return r.srcErr
}

// headScan follows the head the way a browser's parser builds it.
type headScan struct {
	r  *Reader
	st *state
	sc scanner

	mode       int // 0 in head, 1 after an explicit </head>, 2 stretch, 3 done
	insertAt   int // where written tags go
	regionEnd  int
	template   int // depth of <template> being skipped
	open       int // index in st.tags of a title or ld+json script awaiting its end tag; -1 none
	charsetAt  int // end of the first <meta charset> in the head; -1 none
	metaCS     string
	waited     time.Duration // in the source's Read
	rawAt      int           // start of the last raw-text element's start tag
	openAt     int           // start of a token cut by the end of input; -1 none
	templateAt int           // start of the outermost open <template>
	hard       int           // no token of the region may end past this offset
	late       int           // a literal </head> or <body> after the implicit end: 1 yes, -1 no, 0 not known
	lateFrom   int           // where lateHead looks next
	foreign    int           // depth of <svg> and <math> in the stretch
	lateSeen   int           // how far lateHead looked
	eofDecided bool          // the region's end depended on where the input ended
	cut        bool          // the input ended inside something that was to close (truncated)
	noscriptAt int           // start of the head's first <noscript>; -1 none
	page       bool          // a token before the head's end says this is a document, not a fragment (§16.1)
	xhtml      bool          // application/xhtml+xml: never a fragment
	wantMeta   []string      // meta names the config's templates read
	wantLang   bool          // some template reads <html lang>
	htmlAt     [2]int        // start and end of the first <html> start tag, +1; 0: none
	spans      bool          // a plan may be made of this scan: note its opaque spans
	ownFrom    int           // where ownOutput compared the head with what headgate writes, through insertAt; -1 not
	nonce      string        // the CSP nonce the written tags carry
	// gbStart, gbEnd: the head's first <meta name="googlebot">, whose
	// directives HeadFacts.Robots reads; gbEnd 0 none.
	gbStart, gbEnd int
}

func (h *headScan) run() {
	r, st := h.r, h.st
	h.open, h.charsetAt, h.insertAt, h.openAt, h.ownFrom, h.noscriptAt = -1, -1, -1, -1, -1, -1
	h.xhtml = isXHTML(r.opts.ContentType)
	if m := r.opts.Match; m != nil && m.Config() != nil {
		h.wantMeta, h.wantLang = m.Config().PageMetaNames(), m.Config().WantsLang()
	}
	max := r.opts.MaxHeadBytes
	h.hard = max + min(max, 64<<10)
	// A byte order mark is not part of the document a parser sees.
	for len(st.buf) < 3 && !h.sc.eof {
		h.fill()
	}
	if len(st.buf) >= 3 && st.buf[0] == 0xEF && st.buf[1] == 0xBB && st.buf[2] == 0xBF {
		h.sc.pos = 3
	}
	start := time.Now()
	var kbuf [256]byte
	var ckey []byte // the plan's key, when this scan's plan is to be stored
	misses := 0
	if c := r.opts.Cache; c != nil && r.opts.Match != nil {
		k := c.appendKey(kbuf[:0], &r.opts)
		hit, m, store := h.tryCached(c, k)
		if hit {
			r.res.Duration = time.Since(start) - h.waited
			return
		}
		r.res.Plan = PlanSkip
		if store {
			ckey, misses = k, m
			h.spans = true
			r.res.Plan = PlanMiss
		}
	}
	// The region's bounds depend on token positions only, never on how the
	// source's reads fall: the head must end before max; the stretch after
	// it takes the tokens that start before max; no token may end past
	// hard, which also bounds the buffer.
	hard := h.hard
	for h.mode != 3 {
		tok, ok := h.sc.next()
		if !ok {
			if h.sc.eof {
				h.cut = h.truncated()
				h.eofDecided = true
				h.finish(len(st.buf))
				break
			}
			if len(st.buf) > hard { // the token at sc.pos ends past hard, if ever
				if len(st.buf) > h.lateSeen {
					h.lateSeen = len(st.buf) // the incomplete token was looked at to the end
				}
				if h.mode == 0 {
					h.skip(SkippedTooLarge, "a token in the head is larger than max_head_bytes")
					return
				}
				h.finish(h.sc.pos)
				break
			}
			h.fill()
			continue
		}
		if tok.end > hard || h.mode != 0 && tok.start >= max {
			if h.mode == 0 {
				h.skip(SkippedTooLarge, "a token in the head is larger than max_head_bytes")
				return
			}
			h.finish(tok.start) // the stretch is cut at the limit
			break
		}
		h.token(tok)
		if h.mode == 0 && tok.end > max {
			h.skip(SkippedTooLarge, "the head did not end within max_head_bytes")
			return
		}
		if h.mode == 2 && !h.lateHead() {
			// No literal </head> or <body> ahead within max: no stretch to
			// clean, and nothing after the head's end needs tokenizing.
			h.regionEnd, h.mode = h.insertAt, 3
			h.st.tags = dropStretch(h.st.tags)
			if tok.start == h.insertAt && endsHeadRaw(h.sc.raw) {
				h.cut = h.rawOpen()
			}
		}
	}
	if (h.cut || h.openAt >= 0) && (h.page || h.xhtml) { // a fragment says so below
		h.skip(UnchangedTruncated, "the input ended inside the head, in an unclosed element, comment or tag")
		r.res.Duration = time.Since(start) - h.waited
		return
	}
	if h.noscriptAt >= 0 && h.noscriptAt < h.insertAt && h.noscriptAt >= h.charsetAt {
		// With scripting off (most crawlers), a <noscript> in the head
		// that holds anything but link, meta or style ends the head: tags
		// written after it would be read in the body (SPEC §23).
		h.insertAt = h.noscriptAt
	} else {
		h.noscriptAt = -1 // the written tags stay where the head ends
	}
	if !h.page && !h.xhtml {
		h.skip(SkippedFragment, "a fragment: nothing before the head's end is a doctype, html, head, body, title, meta, link or base")
		r.res.Duration = time.Since(start) - h.waited
		return
	}
	h.decide()
	if ckey != nil {
		h.remember(r.opts.Cache, ckey, misses)
	}
	// Time spent on the head, not waiting for the upstream.
	r.res.Duration = time.Since(start) - h.waited
}

// lateHead reports whether a literal "</head" or "<body" stands after the
// head's implicit end, before max_head_bytes: only then is there a late
// stretch whose tags a parser moves into the body. It reads as far as it
// must to know, and remembers where it looked.
func (h *headScan) lateHead() bool {
	if h.late != 0 {
		return h.late > 0
	}
	limit := h.r.opts.MaxHeadBytes
	for {
		b := h.st.buf[:min(len(h.st.buf), limit+len("</head"))]
		for i := max(h.lateFrom, h.insertAt); i < len(b); {
			j := bytes.IndexByte(b[i:], '<')
			if j < 0 {
				break
			}
			i += j
			if i+6 > len(b) && !h.sc.eof && len(h.st.buf) < limit+len("</head") {
				h.lateFrom = i // decide once more bytes came
				break
			}
			if lateLiteralAt(b[i:]) {
				h.late, h.lateSeen = 1, max(h.lateSeen, i+6)
				return true
			}
			i++
			h.lateFrom = i
		}
		if h.sc.eof || len(h.st.buf) >= limit+len("</head") {
			h.late = -1
			if len(h.st.buf) < limit+len("</head") {
				h.eofDecided = true // no literal before the input ended
			} else {
				h.lateSeen = max(h.lateSeen, limit+len("</head"))
			}
			return false
		}
		h.fill()
	}
}

func hasPrefixFold(b []byte, p string) bool {
	return len(b) >= len(p) && asciiEqualFold(b[:len(p)], p)
}

// dropStretch forgets the tags recorded after the head's end.
func dropStretch(tags []headTag) []headTag {
	out := tags[:0]
	for _, t := range tags {
		if t.where != inStretch {
			out = append(out, t)
		}
	}
	return out
}

// readChunk bounds one read of the head: a head of a few KiB should not
// pull a whole page through the buffer. 32 KiB reads a 28 KiB head in one
// read where 16 KiB took two, and the bytes read past the region are copied
// out once on their way to the client (measured in docs/performance.md).
const readChunk = 32 << 10

// fill reads more of the source into the buffer.
func (h *headScan) fill() {
	st := h.st
	if len(st.buf) == cap(st.buf) {
		// Grow fast, and never much past what the region may hold.
		c := 4 * cap(st.buf)
		if c >= h.hard {
			c = h.hard + 4096
		}
		nb := make([]byte, len(st.buf), c)
		copy(nb, st.buf)
		st.buf = nb
	}
	t0 := time.Now()
	// Read no more than the scan can use next: the bytes after the region
	// are better read straight into the caller's buffer than copied twice.
	n, err := h.r.src.Read(st.buf[len(st.buf):min(cap(st.buf), len(st.buf)+readChunk)])
	h.waited += time.Since(t0)
	st.buf = st.buf[:len(st.buf)+n]
	h.sc.buf = st.buf
	if err != nil {
		h.sc.eof = true
		h.r.srcEnd = true
		if err != io.EOF {
			h.r.srcErr = err
		}
	}
}

func (h *headScan) skip(o Outcome, why string) {
	r := h.r
	r.res.Outcome, r.res.Reason = o, why
	r.out, r.tail, r.segs = nil, h.st.buf, nil
}

// truncated reports, at the end of input inside the region, whether it
// came inside something that was to close: a tag, a comment, the text of a
// raw-text element (title, script, style, textarea, noscript…; plaintext
// never closes), or a title or JSON-LD script awaiting its end tag.
func (h *headScan) truncated() bool {
	if h.openAt >= 0 || h.open >= 0 {
		return true
	}
	return h.sc.raw != nil && string(h.sc.raw) != "plaintext"
}

// endsHeadRaw reports whether a raw-text element's start tag ends the head
// when it comes there (it is no head element): textarea, and xmp, iframe
// and noembed, whose text runs to their end tag alike.
func endsHeadRaw(name []byte) bool {
	switch string(name) { // rawElement gives the lower-case name
	case "textarea", "xmp", "iframe", "noembed":
		return true
	}
	return false
}

// rawOpen reports, for a <textarea> (or xmp, iframe, noembed) whose start
// tag ended the head, whether its text runs to the end of input (SPEC §23:
// an unclosed textarea is a truncated head; a tag written before it would
// stand in front of an element that never closes; the other three read
// alike). It reads on to the element's end tag, no further than a head
// token may end; one still open there is taken as one that closes later.
func (h *headScan) rawOpen() bool {
	for {
		tok, ok := h.sc.next()
		if ok {
			if tok.open {
				return true // its text, or its end tag, cut by the end of input
			}
			if tok.kind == tEnd {
				h.lateSeen = max(h.lateSeen, tok.end)
				return false
			}
			continue // the text
		}
		if h.sc.eof {
			h.eofDecided = true
			return true
		}
		if len(h.st.buf) > h.hard {
			h.lateSeen = max(h.lateSeen, len(h.st.buf))
			return false
		}
		h.fill()
	}
}

func (h *headScan) finish(end int) {
	if h.insertAt < 0 {
		h.insertAt = end
		if h.template > 0 {
			h.insertAt = min(h.insertAt, h.templateAt) // or inside a template
		}
	}
	h.regionEnd = end
	h.mode = 3
}

// headElement reports whether a start tag may stand in a head.
func headElement(name []byte) bool {
	switch len(name) {
	case 4:
		return asciiEqualFold(name, "meta") || asciiEqualFold(name, "link") || asciiEqualFold(name, "base") || asciiEqualFold(name, "html") || asciiEqualFold(name, "head")
	case 5:
		return asciiEqualFold(name, "title") || asciiEqualFold(name, "style")
	case 6:
		return asciiEqualFold(name, "script")
	case 7:
		return asciiEqualFold(name, "bgsound")
	case 8:
		return asciiEqualFold(name, "basefont") || asciiEqualFold(name, "noscript") || asciiEqualFold(name, "noframes") || asciiEqualFold(name, "template")
	}
	return false
}

// afterHeadElement: start tags that a parser after </head> still puts in the head.
func afterHeadElement(name []byte) bool {
	return headElement(name) && !asciiEqualFold(name, "noscript") && !asciiEqualFold(name, "html") && !asciiEqualFold(name, "head")
}

func (h *headScan) token(t token) {
	b := h.st.buf
	if t.open {
		h.openAt = t.start
		if t.raw {
			h.openAt = h.rawAt
		}
	}
	if t.kind == tStart && h.sc.raw != nil {
		h.rawAt = t.start
	}
	name := b[t.nameStart:t.nameEnd]
	// Content of a title or ld+json script: the next end tag closes it.
	if h.open >= 0 {
		ht := &h.st.tags[h.open]
		switch t.kind {
		case tText:
			ht.text = b[t.start:t.end]
			return
		case tEnd:
			ht.end = t.end
			h.open = -1
			return
		}
		h.open = -1
	}
	if t.raw {
		// The content of a script, style, noscript…: never head-ending
		// text, and nothing headgate reads.
		if !t.open && t.kind == tText {
			h.noteSpan(opaqueSpan{start: int32(t.start), end: int32(t.end), kind: spanRaw})
		}
		return
	}
	if h.template > 0 {
		if t.kind == tStart && asciiEqualFold(name, "template") {
			h.template++ // self-closing or not
		} else if t.kind == tEnd && asciiEqualFold(name, "template") {
			h.template--
		}
		return
	}
	switch h.mode {
	case 0: // in head (or before it)
		switch t.kind {
		case tText:
			if i := firstNonSpace(b[t.start:t.end]); i >= 0 {
				h.insertAt = t.start + i
				h.mode = 2
				h.fragmentEnd()
			}
		case tDoctype:
			h.page = true
		case tStart:
			if !headElement(name) {
				h.insertAt = t.start
				h.mode = 2
				if asciiEqualFold(name, "body") {
					h.page = true
					h.finish(t.start)
				} else if (asciiEqualFold(name, "svg") || asciiEqualFold(name, "math")) && !t.selfClose {
					h.foreign = 1
				}
				h.fragmentEnd()
				return
			}
			if !h.page {
				h.page = pageElement(name)
			}
			if h.noscriptAt < 0 && asciiEqualFold(name, "noscript") {
				h.noscriptAt = t.start
			}
			h.startTag(t, name, inHead)
		case tEnd:
			switch {
			case asciiEqualFold(name, "head"):
				h.page = true
				h.insertAt = t.start
				h.mode = 1
			case asciiEqualFold(name, "body") || asciiEqualFold(name, "html") || asciiEqualFold(name, "br"):
				h.page = h.page || !asciiEqualFold(name, "br")
				h.insertAt = t.start
				h.mode = 2
				h.fragmentEnd()
			}
		}
	case 1: // after </head>: whitespace, comments and head elements still belong to the head
		switch t.kind {
		case tText:
			if firstNonSpace(b[t.start:t.end]) >= 0 {
				h.finish(t.start)
			}
		case tStart:
			if asciiEqualFold(name, "head") || asciiEqualFold(name, "html") {
				return // ignored by a parser after </head>
			}
			if !afterHeadElement(name) {
				h.finish(t.start)
				return
			}
			h.startTag(t, name, inHead)
		case tEnd:
			if asciiEqualFold(name, "body") || asciiEqualFold(name, "html") || asciiEqualFold(name, "br") {
				h.finish(t.start)
			}
		}
	case 2: // the stretch after an implicit end, up to a literal </head> or <body>
		foreignName := asciiEqualFold(name, "svg") || asciiEqualFold(name, "math")
		if h.foreign > 0 {
			// SVG and MathML: their <title> and <link> are not HTML's.
			if foreignName && t.kind == tStart && !t.selfClose {
				h.foreign++
			} else if foreignName && t.kind == tEnd {
				h.foreign--
			}
			return
		}
		switch t.kind {
		case tStart:
			if asciiEqualFold(name, "body") {
				h.finish(t.start)
				return
			}
			if foreignName && !t.selfClose {
				h.foreign = 1
				return
			}
			h.startTag(t, name, inStretch)
		case tEnd:
			if asciiEqualFold(name, "head") {
				h.finish(t.end)
			}
		}
	}
}

// fragmentEnd is called where the head ends implicitly: with nothing
// before that says "document", the response is a fragment (§16.1) and the
// scan stops here.
func (h *headScan) fragmentEnd() {
	if !h.page && !h.xhtml {
		h.mode = 3
	}
}

// pageElement reports whether a start tag in the head says that the
// response is a document (§16.1): html, head, title, meta, link or base.
func pageElement(name []byte) bool {
	switch len(name) {
	case 4:
		return asciiEqualFold(name, "html") || asciiEqualFold(name, "head") || asciiEqualFold(name, "meta") || asciiEqualFold(name, "link") || asciiEqualFold(name, "base")
	case 5:
		return asciiEqualFold(name, "title")
	}
	return false
}

func firstNonSpace(b []byte) int {
	for i, c := range b {
		if !spaceTab[c] {
			return i
		}
	}
	return -1
}

// startTag records the head tags headgate may read or change.
func (h *headScan) startTag(t token, name []byte, where int) {
	b := h.st.buf
	tag := b[t.start:t.end]
	ne := t.nameEnd - t.start
	switch {
	case h.wantLang && h.htmlAt[0] == 0 && len(name) == 4 && asciiEqualFold(name, "html"):
		h.htmlAt = [2]int{t.start + 1, t.end + 1}
	case asciiEqualFold(name, "template"):
		// "<template/>" opens a template too: HTML ignores the self-closing
		// flag on elements that are not void.
		h.template, h.templateAt = 1, t.start
	case asciiEqualFold(name, "title"):
		h.st.tags = append(h.st.tags, headTag{kind: kTitle, where: where, start: t.start, end: t.end, tagEnd: t.end, identity: rules.IdentTitle})
		h.open = len(h.st.tags) - 1
	case asciiEqualFold(name, "meta"):
		ta := h.sc.attrsOf(t)
		if where == inHead && h.charsetAt < 0 {
			if cs := metaCharset(tag, ta); cs != "" {
				h.charsetAt, h.metaCS = t.end, cs
			}
		}
		if len(h.wantMeta) > 0 && where == inHead {
			h.notePageMeta(t, tag, ta)
		}
		var mi metaInfo
		if ta.has&hasProperty != 0 {
			mi = metaKey(ta.property.val(tag))
		}
		if mi.identity == "" && ta.has&hasName != 0 {
			mi = metaKey(ta.name.val(tag))
		}
		if mi.identity == "" && where == inHead && h.gbEnd == 0 && ta.has&hasName != 0 && isGooglebot(ta.name.val(tag)) {
			// Read for HeadFacts.Robots: not an opaque span.
			h.gbStart, h.gbEnd = t.start, t.end
			return
		}
		if mi.identity == "" {
			// A meta headgate does not know (a CSRF token): its content is
			// read by nothing, unless it says a charset or a template reads it.
			if ta.has&hasContent != 0 && ta.has&(hasCharset|hasHTTPEquiv) == 0 &&
				(len(h.st.pmeta) == 0 || h.st.pmeta[len(h.st.pmeta)-1].start != t.start) {
				h.noteValue(spanValue, t.start, t.end, tag, ta.content)
			}
			return
		}
		ht := headTag{kind: kMeta, where: where, start: t.start, end: t.end, tagEnd: t.end, identity: mi.identity, name: mi.name}
		if ta.has&hasContent != 0 {
			ht.urlAttr, ht.hasURL = ta.content, mi.url
		}
		h.st.tags = append(h.st.tags, ht)
	case asciiEqualFold(name, "link"):
		ta := h.sc.attrsOf(t)
		id := linkIdentity(tag, ta)
		if id == "" {
			// "icon", "preload", "stylesheet"…: nothing but its rel is
			// read (a nonce is not).
			h.noteValues(spanValue, t, tag, "rel")
			return
		}
		rel := ta.rel.val(tag)
		ht := headTag{kind: kLink, where: where, start: t.start, end: t.end, tagEnd: t.end, identity: id}
		switch id {
		case rules.IdentCanonical:
			ht.relAttr, ht.relKeep = ta.rel, otherTokens(rel, "canonical")
		case rules.IdentAlternates:
			ht.relAttr = ta.hreflang // for HeadFacts: an alternate's rel is never rewritten
		}
		if ta.has&hasHref != 0 {
			ht.urlAttr, ht.hasURL = ta.href, true
		}
		h.st.tags = append(h.st.tags, ht)
	case asciiEqualFold(name, "style"):
		h.noteValues(spanValue, t, tag, "") // nothing reads a style's attributes (its nonce)
	case asciiEqualFold(name, "script"):
		if !containsFold(tag, "json") {
			h.noteValues(spanScriptValue, t, tag, "") // not ld+json: nothing reads its attributes
			return
		}
		var ta tagAttrs
		readAttrs(tag, ne, &ta)
		if ta.has&hasType != 0 && asciiEqualFold(trimSpace(ta.typ.val(tag)), "application/ld+json") {
			h.st.tags = append(h.st.tags, headTag{kind: kJSONLD, where: where, start: t.start, end: t.end, tagEnd: t.end, identity: rules.IdentJSONLD})
			h.open = len(h.st.tags) - 1
		}
	}
}

// linkIdentity is the identity of a <link> headgate reads: a canonical, or
// an hreflang alternate; "" for any other.
func linkIdentity(tag []byte, ta *tagAttrs) string {
	if ta.has&hasRel == 0 {
		return ""
	}
	rel := ta.rel.val(tag)
	switch {
	case len(rel) < len("canonical"):
		return "" // "icon", "preload", "stylesheet"…
	case hasToken(rel, "canonical"):
		return rules.IdentCanonical
	case ta.has&hasHreflang != 0 && hasToken(rel, "alternate"):
		return rules.IdentAlternates
	case ta.has&hasType != 0 && hasToken(rel, "alternate") && asciiEqualFold(trimSpace(ta.typ.val(tag)), "text/markdown"):
		return rules.IdentMarkdown
	}
	return ""
}

// appendJSONLDTag appends one ld+json script element as headgate writes it.
func appendJSONLDTag(w, js []byte, nonce string, utf8Doc bool) []byte {
	w = append(w, `<script type="application/ld+json"`...)
	if nonce != "" {
		w = append(w, ` nonce="`...)
		w = appendEscaped(w, nonce, true)
		w = append(w, '"')
	}
	w = append(w, '>')
	w = appendJSON(w, js, utf8Doc)
	return append(w, "</script>\n"...)
}

// ownOutput reports whether the head already is what this rewrite would
// make of it: the bytes headgate would insert stand right before the
// insertion point, every upstream tag it would remove lies among them, and
// every tag it would change in place already reads as it would write it.
func (h *headScan) ownOutput(region, w []byte, ok bool) bool {
	from := h.insertAt - len(w)
	if ok && len(w) > 0 && from >= 0 {
		h.ownFrom = from // a plan's spans stay out of the bytes compared
	}
	if !ok || len(w) == 0 || from < 0 || !bytes.Equal(region[from:h.insertAt], w) {
		return false
	}
	for i := range h.st.tags {
		ht := &h.st.tags[i]
		if ht.remove && (ht.start < from || max(ht.end, ht.tagEnd) > h.insertAt) {
			return false
		}
	}
	return true
}

// unchangedInPlace reports whether every in-place change to an upstream tag (a title
// rewritten where it stands, a URL corrected) leaves its bytes as they are.
func unchangedInPlace(tags []headTag, region []byte) bool {
	for i := range tags {
		ht := &tags[i]
		if ht.remove || ht.replace == nil {
			continue
		}
		end := ht.tagEnd
		if ht.identity == rules.IdentTitle {
			end = max(ht.end, ht.tagEnd)
		}
		if end > len(region) || !bytes.Equal(region[ht.start:end], ht.replace) {
			return false
		}
	}
	return true
}

// maxJSONLDCompare bounds the upstream blocks compared as JSON values with
// one headgate would write; larger ones are compared byte for byte only.
const maxJSONLDCompare = 64 << 10

// jsonLDPresent reports whether an upstream ld+json block that stays in the
// head already holds js: the same bytes as headgate would write them (its
// own output, rewritten again), or the same JSON value.
func (h *headScan) jsonLDPresent(js []byte, utf8Doc bool) bool {
	var want []byte
	var wantVal any
	decoded := false
	for i := range h.st.tags {
		ht := &h.st.tags[i]
		if ht.kind != kJSONLD || ht.where != inHead || ht.remove || ht.action == Replaced {
			continue
		}
		text := trimSpace(ht.text)
		if len(text) == 0 {
			continue
		}
		if want == nil {
			want = appendJSON(nil, js, utf8Doc)
		}
		if bytes.Equal(text, want) {
			return true
		}
		if len(text) > maxJSONLDCompare {
			continue
		}
		if !decoded {
			decoded = true
			if jsonValue(js, &wantVal) != nil {
				return false
			}
		}
		var got any
		if jsonValue(text, &got) == nil && reflect.DeepEqual(got, wantVal) {
			return true
		}
	}
	return false
}

// jsonValue decodes one JSON value, numbers as written.
func jsonValue(b []byte, v *any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("more than one value")
	}
	return nil
}

// containsFold reports whether b holds the lower-case ASCII word w, in any case.
func containsFold(b []byte, w string) bool {
	lo, up := w[0], w[0]&^0x20 // w starts with a letter
	end := len(b) - len(w) + 1
	// Jump from one first letter of w, in either case, to the next; each
	// search starts past the last one, so the whole is linear.
	nextLo, nextUp := -1, -1
	for i := 0; i < end; {
		if nextLo < i {
			if nextLo = bytes.IndexByte(b[i:end], lo); nextLo < 0 {
				nextLo = end
			} else {
				nextLo += i
			}
		}
		if nextUp < i {
			if nextUp = bytes.IndexByte(b[i:end], up); nextUp < 0 {
				nextUp = end
			} else {
				nextUp += i
			}
		}
		j := min(nextLo, nextUp)
		if j >= end {
			return false
		}
		if asciiEqualFold(b[j:j+len(w)], w) {
			return true
		}
		i = j + 1
	}
	return false
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// metaInfo is what headgate knows of a meta name or property.
type metaInfo struct {
	identity string
	url      bool   // its content is a URL that §4.5 corrects
	name     string // the property, when it is one part of its identity ("og:image:width")
}

// knownMeta lists the meta keys headgate reads, lower-case. Others (og:video,
// twitter:label1…) are left alone: no rule writes them.
var knownMeta = map[string]metaInfo{
	"description": {identity: rules.IdentDescription}, "robots": {identity: rules.IdentRobots},
	"og:title": {identity: "og:title"}, "og:description": {identity: "og:description"}, "og:type": {identity: "og:type"},
	"og:url": {identity: "og:url", url: true}, "og:site_name": {identity: "og:site_name"}, "og:locale": {identity: "og:locale"},
	"og:locale:alternate": {identity: "og:locale:alternate"},
	"og:image":            {identity: "og:image", url: true}, "og:image:url": {identity: "og:image", url: true, name: "og:image:url"},
	"og:image:secure_url": {identity: "og:image", url: true, name: "og:image:secure_url"},
	"og:image:type":       {identity: "og:image", name: "og:image:type"}, "og:image:width": {identity: "og:image", name: "og:image:width"},
	"og:image:height": {identity: "og:image", name: "og:image:height"}, "og:image:alt": {identity: "og:image", name: "og:image:alt"},
	"twitter:image:alt":      {identity: "twitter:image", name: "twitter:image:alt"},
	"article:published_time": {identity: "article:published_time"}, "article:modified_time": {identity: "article:modified_time"},
	"article:expiration_time": {identity: "article:expiration_time"}, "article:author": {identity: "article:author"},
	"article:section": {identity: "article:section"}, "article:tag": {identity: "article:tag"},
	"twitter:card": {identity: "twitter:card"}, "twitter:site": {identity: "twitter:site"}, "twitter:creator": {identity: "twitter:creator"},
	"twitter:title": {identity: "twitter:title"}, "twitter:description": {identity: "twitter:description"}, "twitter:url": {identity: "twitter:url"},
	"twitter:image": {identity: "twitter:image", url: true}, "twitter:image:src": {identity: "twitter:image", url: true, name: "twitter:image:src"},
}

// metaKey looks a meta name or property up, case-insensitively, without
// allocating. og:image:* and twitter:image* share their image's identity.
func metaKey(k []byte) metaInfo {
	k = trimSpace(k)
	var low [40]byte
	if len(k) == 0 || len(k) > len(low) {
		return metaInfo{}
	}
	for i, c := range k {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		low[i] = c
	}
	if mi, ok := knownMeta[string(low[:len(k)])]; ok {
		return mi
	}
	switch {
	case len(k) > 9 && string(low[:9]) == "og:image:":
		return metaInfo{identity: "og:image"}
	case len(k) > 14 && string(low[:14]) == "twitter:image:":
		return metaInfo{identity: "twitter:image"}
	}
	return metaInfo{}
}

// identitySet is a small set of identities; a head holds a few dozen.
type identitySet []string

func (s identitySet) has(id string) bool {
	for _, x := range s {
		if x == id {
			return true
		}
	}
	return false
}

// singleValued identities keep only their first tag (§4.5).
var singleValued = map[string]bool{
	rules.IdentCanonical: true, rules.IdentDescription: true, rules.IdentRobots: true,
	"og:url": true, "og:title": true, "og:type": true, "twitter:card": true,
}

// assemble appends the output of region with edits (sorted by start) to
// segs: the region's own bytes between the edits, and the edits'
// replacements. n is the output's length.
func assemble(segs [][]byte, region []byte, edits []edit) ([][]byte, int) {
	pos, n := 0, 0
	add := func(b []byte) {
		if len(b) > 0 {
			segs = append(segs, b)
			n += len(b)
		}
	}
	for _, e := range edits {
		if e.start < pos {
			// Edits do not overlap; should one ever, written tags still go out.
			if e.start == e.end {
				add(e.repl)
			}
			continue
		}
		add(region[pos:e.start])
		add(e.repl)
		pos = e.end
	}
	add(region[pos:])
	return segs, n
}

// fillTagTexts gives the changes to upstream tags their tags' text, copied
// once into one string for all of them.
func fillTagTexts(changes []Change, region []byte, tags []headTag) {
	need := 0
	for i := range changes {
		if c := &changes[i]; c.tag > 0 {
			ht := &tags[c.tag-1]
			need += min(max(ht.end, ht.tagEnd), len(region)) - ht.start
		}
	}
	if need == 0 {
		return
	}
	buf := make([]byte, 0, need)
	for i := range changes {
		if c := &changes[i]; c.tag > 0 {
			ht := &tags[c.tag-1]
			buf = append(buf, region[ht.start:min(max(ht.end, ht.tagEnd), len(region))]...)
		}
	}
	all := string(buf)
	at := 0
	for i := range changes {
		if c := &changes[i]; c.tag > 0 {
			ht := &tags[c.tag-1]
			n := min(max(ht.end, ht.tagEnd), len(region)) - ht.start
			c.Value, c.tag = all[at:at+n], 0
			at += n
		}
	}
}

// wholeLine widens the removal of a tag that stands alone on its line to
// the line's indentation and line break, so no blank line is left behind.
func wholeLine(b []byte, start, end int) (int, int) {
	s := start
	for s > 0 && (b[s-1] == ' ' || b[s-1] == '\t') {
		s--
	}
	if s > 0 && b[s-1] != '\n' {
		return start, end
	}
	switch {
	case end < len(b) && b[end] == '\n':
		return s, end + 1
	case end+1 < len(b) && b[end] == '\r' && b[end+1] == '\n':
		return s, end + 2
	}
	return start, end
}

// charset decides the document's charset: a BOM, then the Content-Type
// header, then the head's <meta charset>.
func (h *headScan) charset() docCharset {
	b := h.st.buf
	switch {
	case len(b) >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF:
		return docCharset{utf8: true, label: "utf-8"}
	case len(b) >= 2 && (b[0] == 0xFE && b[1] == 0xFF || b[0] == 0xFF && b[1] == 0xFE):
		return docCharset{skip: true, label: "utf-16"}
	}
	if l := headerCharset(h.r.opts.ContentType); l != "" {
		if cs := charsetFromLabel(l); cs.utf8 || cs.enc != nil || cs.skip {
			return cs
		}
	}
	if h.metaCS != "" {
		cs := charsetFromLabel(h.metaCS)
		if cs.skip {
			// A meta that names UTF-16 means UTF-8 (HTML §13.2.3.3).
			return docCharset{utf8: true, label: "utf-8"}
		}
		return cs
	}
	return docCharset{label: "unknown"}
}

func isXHTML(ct string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(ct)), "application/xhtml+xml")
}

func appendTitle(w []byte, title string, utf8Doc bool) []byte {
	w = append(w, "<title>"...)
	w = appendEscaped(w, title, utf8Doc)
	return append(w, "</title>"...)
}

// tagWriter writes the tags headgate adds. The same value often stands in
// several of them (the description in three, the canonical in three): the
// last few values are escaped once and their escaped bytes copied.
type tagWriter struct {
	w           []byte
	utf8, xhtml bool
	memo        [4]escaped
	next        int
}

type escaped struct {
	s       string
	at, end int // its escaped form, w[at:end]
}

// value appends s, escaped for an attribute value or text.
func (t *tagWriter) value(s string) {
	for _, m := range &t.memo {
		if m.end > m.at && m.s == s {
			t.w = append(t.w, t.w[m.at:m.end]...)
			return
		}
	}
	at := len(t.w)
	t.w = appendEscaped(t.w, s, t.utf8)
	t.memo[t.next] = escaped{s, at, len(t.w)}
	t.next = (t.next + 1) % len(t.memo)
}

func (t *tagWriter) title(title string) {
	t.w = append(appendTitle(t.w, title, t.utf8), '\n')
}

// meta writes <meta attr="key" content="content">; attr and key are
// headgate's own names ("property", "og:image:width"), never escaped.
func (t *tagWriter) meta(attr, key, content string) {
	t.w = append(t.w, "<meta "...)
	t.w = append(t.w, attr...)
	t.w = append(t.w, `="`...)
	t.w = append(t.w, key...)
	t.w = append(t.w, `" content="`...)
	t.value(content)
	t.w = closeVoid(t.w, t.xhtml)
}

func (t *tagWriter) link(rel, hreflang, href string) {
	t.w = append(t.w, `<link rel="`...)
	t.w = append(t.w, rel...)
	if hreflang != "" {
		t.w = append(t.w, `" hreflang="`...)
		t.value(hreflang)
	}
	t.w = append(t.w, `" href="`...)
	t.value(href)
	t.w = closeVoid(t.w, t.xhtml)
}

// linkType writes a link with a type ("text/markdown", §19.1).
func (t *tagWriter) linkType(rel, typ, href string) {
	t.w = append(t.w, `<link rel="`...)
	t.w = append(t.w, rel...)
	t.w = append(t.w, `" type="`...)
	t.w = append(t.w, typ...)
	t.w = append(t.w, `" href="`...)
	t.value(href)
	t.w = closeVoid(t.w, t.xhtml)
}

func closeVoid(w []byte, xhtml bool) []byte {
	if xhtml {
		return append(w, "\" />\n"...)
	}
	return append(w, "\">\n"...)
}

// spliceAttr rewrites one attribute value of a tag, keeping every other byte.
func spliceAttr(tag []byte, a attr, val string, utf8Doc bool) []byte {
	out := make([]byte, 0, len(tag)+len(val)+8)
	out = append(out, tag[:a.spanStart]...)
	out = append(out, '"')
	out = appendEscaped(out, val, utf8Doc)
	out = append(out, '"')
	return append(out, tag[a.spanEnd:]...)
}
