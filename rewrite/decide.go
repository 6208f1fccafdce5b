package rewrite

import (
	"net/url"
	"slices"
	"strings"

	"github.com/headgate/headgate/rules"
)

// decision is what decide works with once the head is scanned: the
// document's charset, the page facts, what the rules render for them and
// the changes recorded so far. It lives on decide's stack and holds no
// pointer to the headScan, so that storing its values (the changes into
// the pooled state) never moves the headScan to the heap.
type decision struct {
	cs           docCharset
	match        *rules.Match
	pageURL      *url.URL // the page's public URL, parsed when first needed
	page         rules.Page
	head         *rules.Head
	changes      []Change
	firstTitle   int         // index in st.tags of the head's first title; -1 none
	titleInPlace bool        // the rendered title replaces the first one where it stands
	fill         bool        // policy fill: only what the head lacks is written
	present      identitySet // in the state's scratch (state.present)
	writeJSONLD  bool
	// keptCanonical: under override, canonical = "upstream-or-self" found
	// the upstream's canonical already the one it writes, spelled the same
	// and absolute: it stays where it is and none is written.
	keptCanonical bool
}

// decide computes the page facts, renders the rules and builds the output:
//  1. readPage: what the upstream head says of itself;
//  2. replaceSet: the upstream tags of identities headgate writes go;
//  3. keepUpstream: the tags that stay are corrected or deduplicated;
//  4. replaceStretch: nothing written stands again after an implicit end;
//  5. writeTags, writeJSONLD: the tags headgate writes, in §4.4's order;
//  6. applyEdits: the edits, and the output assembled from them.
//
// The values of changes to upstream tags are the tags' own text: noted as
// tag indexes, copied at the end into one string for them all, so
// recording a change allocates nothing per tag.
func (h *headScan) decide() {
	r, st := h.r, h.st
	region := st.buf[:h.regionEnd]
	r.tail = st.buf[h.regionEnd:]
	d := decision{cs: h.charset(), match: r.opts.Match, firstTitle: -1}
	if d.cs.skip {
		h.skip(SkippedCharset, "charset "+d.cs.label+" is not ASCII-compatible")
		return
	}
	if d.match == nil {
		h.facts(&d)
		r.out = region
		return
	}
	h.readPage(&d)
	h.facts(&d)
	d.head = d.match.Render(d.page)
	r.res.Head, r.res.Page = d.head, d.page
	d.changes = st.changes[:0]
	for _, dr := range d.head.Dropped {
		d.changes = append(d.changes, Change{Action: Dropped, Identity: dr.Field, Reason: dr.Reason, Value: dr.Value})
	}
	d.fill = d.head.Policy == rules.Fill
	// A title after the head's first <noscript> is not replaced in place:
	// a parser with scripting off may read it in the body (SPEC §23).
	d.titleInPlace = d.head.Title != nil && d.firstTitle >= 0 && (h.charsetAt < 0 || st.tags[d.firstTitle].start >= h.charsetAt) &&
		(h.noscriptAt < 0 || st.tags[d.firstTitle].start < h.noscriptAt)
	h.replaceSet(&d)
	d.present = st.present[:0]
	h.keepUpstream(&d)
	st.present = d.present
	d.writeJSONLD = !d.fill || !d.head.ReplaceJSONLD || !d.present.has(rules.IdentJSONLD)
	h.replaceStretch(&d)
	w, own := h.writeJSONLD(&d, h.writeTags(&d), region)
	st.w = w
	if own {
		// The head is headgate's own output under these rules, rewritten
		// again: it stays as it is (§17, idempotence).
		r.out = region
		clear(d.changes)
		st.changes = d.changes[:0]
		return
	}
	h.applyEdits(&d, region, w)
}

// absURL resolves an upstream URL against the page's public URL. A space
// at either end drops the value (§4.6): not repaired.
func (d *decision) absURL(s string) (string, string) {
	if d.pageURL == nil {
		base := d.match.Config().Site.BaseURL
		if d.pageURL, _ = url.Parse(base + rules.EscapePath(d.match.Path)); d.pageURL == nil {
			d.pageURL, _ = url.Parse(base + "/")
		}
	}
	return rules.AbsUpstreamURL(d.pageURL, s)
}

func (d *decision) wrote(id, v string) {
	d.changes = append(d.changes, Change{Action: Wrote, Identity: id, Value: v})
}

// writesSet reports whether headgate writes an identity the head sets: all
// under override; under fill, only those the page lacks.
func (d *decision) writesSet(id string) bool {
	if id == rules.IdentCanonical && d.keptCanonical {
		return false
	}
	return !d.fill || !d.present.has(id) || id == rules.IdentTitle || id == rules.IdentDescription
}

func (d *decision) writes(id string) bool { return d.head.Sets(id) && d.writesSet(id) }

// readPage reads what the upstream head says of itself: its first title
// and description, its first canonical that passes the URL rules, and the
// page values templates read.
func (h *headScan) readPage(d *decision) {
	st := h.st
	buf := st.buf
	for i := range st.tags {
		ht := &st.tags[i]
		if ht.where != inHead {
			continue
		}
		tag := buf[ht.start:ht.tagEnd]
		switch {
		case ht.identity == rules.IdentTitle && d.firstTitle < 0:
			d.firstTitle = i
			d.page.HasTitle = true
			d.page.Title = collapseSpace(d.cs.decodeText(ht.text))
		case ht.identity == rules.IdentDescription && !d.page.HasDescription:
			var ta tagAttrs
			readAttrs(tag, len("<meta"), &ta)
			d.page.HasDescription = true
			d.page.Description = strings.TrimSpace(d.cs.decodeText(ta.content.val(tag)))
		case ht.identity == rules.IdentCanonical && d.page.Canonical == "" && ht.hasURL:
			if abs, why := d.absURL(d.cs.decodeText(ht.urlAttr.val(tag))); why == "" {
				d.page.Canonical = abs
			}
		}
	}
	if len(st.pmeta) > 0 || h.htmlAt[0] > 0 {
		h.pageValues(&d.page, &d.cs, d.absURL) // page.go
	}
}

// replace removes upstream tag i, of an identity headgate writes.
func (h *headScan) replace(d *decision, i int) {
	ht := &h.st.tags[i]
	d.changes = append(d.changes, Change{Action: Replaced, Identity: ht.identity, Key: ht.name, tag: i + 1})
	switch {
	case i == d.firstTitle && d.titleInPlace:
		title := *d.head.Title
		ht.replace, ht.action = appendTitle(make([]byte, 0, len(title)+32), title, d.cs.utf8), Replaced
		ht.end = max(ht.end, ht.tagEnd)
		d.wrote(ht.identity, title)
	case len(ht.relKeep) > 0:
		// rel="canonical stylesheet": the link stays for its other meaning.
		ht.replace, ht.action = spliceAttr(h.st.buf[ht.start:ht.tagEnd], ht.relAttr, string(ht.relKeep), true), Replaced
	default:
		ht.remove, ht.replace, ht.action = true, nil, Replaced
	}
}

// replaceSet replaces, in the head under override, the upstream's tags of
// every identity the rules set (the title under both policies: Render
// writes one under fill only where there is none). Under either policy,
// upstream-or-self replaces an upstream canonical that is not already the
// one it writes, spelling included; the first one that is stays where it
// is (rewriting is idempotent), under override only when it is written
// absolute, as headgate would write it.
func (h *headScan) replaceSet(d *decision) {
	head := d.head
	for i := range h.st.tags {
		ht := &h.st.tags[i]
		if ht.where != inHead {
			continue
		}
		id := ht.identity
		if !d.fill && !d.keptCanonical && id == rules.IdentCanonical && head.ForceCanonical && h.sameCanonical(ht, *head.Canonical, &d.cs, d.absURL) &&
			d.cs.decodeText(ht.urlAttr.val(h.st.buf[ht.start:ht.tagEnd])) == *head.Canonical {
			// The upstream gets it right already (§16.4): its first such
			// tag stays, other canonicals go.
			d.keptCanonical = true
			continue
		}
		if id == rules.IdentTitle && head.Title != nil ||
			!d.fill && (id == rules.IdentJSONLD && head.ReplaceJSONLD || id != rules.IdentJSONLD && head.Sets(id)) ||
			d.fill && id == rules.IdentCanonical && head.ForceCanonical && !h.sameCanonical(ht, *head.Canonical, &d.cs, d.absURL) {
			h.replace(d, i)
		}
	}
}

// keepUpstream goes over the upstream tags that stay: URLs corrected or
// dropped (§4.5), then duplicates of single-valued identities; what
// survives is present.
func (h *headScan) keepUpstream(d *decision) {
	st := h.st
	correct := h.r.opts.CorrectUpstream
	for i := range st.tags {
		ht := &st.tags[i]
		if ht.where != inHead || ht.action == Replaced {
			continue
		}
		if correct && ht.hasURL {
			val := d.cs.decodeText(ht.urlAttr.val(st.buf[ht.start:ht.tagEnd]))
			switch abs, why := d.absURL(val); {
			case why != "":
				ht.remove, ht.action, ht.why = true, Dropped, why
				d.changes = append(d.changes, Change{Action: Dropped, Identity: ht.identity, Key: ht.name, Reason: why, tag: i + 1})
				continue
			case abs != val:
				ht.replace = spliceAttr(st.buf[ht.start:ht.tagEnd], ht.urlAttr, abs, d.cs.utf8)
				ht.action, ht.why, ht.fixed = Corrected, "relative", abs
			}
		}
		if correct && singleValued[ht.identity] && d.present.has(ht.identity) {
			ht.remove, ht.replace, ht.action, ht.why = true, nil, Dropped, "duplicate"
			d.changes = append(d.changes, Change{Action: Dropped, Identity: ht.identity, Key: ht.name, Reason: "duplicate", tag: i + 1})
			continue
		}
		if !d.present.has(ht.identity) {
			d.present = append(d.present, ht.identity)
		}
	}
}

// replaceStretch removes from the stretch after an implicit end (a parser
// puts it in the body) what headgate writes, so that it does not stand
// there again.
func (h *headScan) replaceStretch(d *decision) {
	for i := range h.st.tags {
		ht := &h.st.tags[i]
		if ht.where != inStretch {
			continue
		}
		if ht.identity == rules.IdentJSONLD && d.head.ReplaceJSONLD && d.writeJSONLD || ht.identity != rules.IdentJSONLD && d.writes(ht.identity) {
			h.replace(d, i)
		}
	}
}

// writeTags writes the tags headgate writes, but JSON-LD, in the order of
// §4.4, into the state's scratch.
func (h *headScan) writeTags(d *decision) []byte {
	head := d.head
	tw := tagWriter{w: h.st.w[:0], utf8: d.cs.utf8, xhtml: h.xhtml}
	if head.Title != nil && !d.titleInPlace {
		tw.title(*head.Title)
		d.wrote(rules.IdentTitle, *head.Title)
	}
	if head.Description != nil && d.writes(rules.IdentDescription) {
		tw.meta("name", "description", *head.Description)
		d.wrote(rules.IdentDescription, *head.Description)
	}
	if head.Robots != nil && d.writes(rules.IdentRobots) {
		tw.meta("name", "robots", *head.Robots)
		d.wrote(rules.IdentRobots, *head.Robots)
	}
	if head.Canonical != nil && d.writes(rules.IdentCanonical) {
		tw.link("canonical", "", *head.Canonical)
		d.wrote(rules.IdentCanonical, *head.Canonical)
	}
	if d.writes(rules.IdentAlternates) {
		for _, a := range head.Alternates {
			tw.link("alternate", a.Hreflang, a.Href)
			d.changes = append(d.changes, Change{Action: Wrote, Identity: rules.IdentAlternates, Key: a.Hreflang, Value: a.Href})
		}
	}
	if head.Markdown != "" && d.writes(rules.IdentMarkdown) {
		tw.linkType("alternate", "text/markdown", head.Markdown)
		d.wrote(rules.IdentMarkdown, head.Markdown)
	}
	// Under fill, a page of an hreflang group whose upstream alternates
	// stay keeps its own languages: the group's og:locale tags would say
	// another set (§12.3: they follow the same rows as the alternates).
	groupKept := d.fill && head.HreflangTable && d.present.has(rules.IdentAlternates)
	for _, m := range head.Meta {
		if groupKept && (m.Identity == "og:locale:alternate" || m.Identity == "og:locale" && head.OGLocaleFromGroup) {
			continue
		}
		if d.writesSet(m.Identity) {
			tw.meta(m.Attr, m.Key, m.Content)
			d.changes = append(d.changes, Change{Action: Wrote, Identity: m.Identity, Key: m.Key, Value: m.Content})
		}
	}
	return tw.w
}

// writeJSONLD appends the JSON-LD blocks to w. own reports that the region
// is headgate's own output under these rules already; otherwise a block
// whose JSON the page holds already is not written a second time (§17).
func (h *headScan) writeJSONLD(d *decision, w, region []byte) (out []byte, own bool) {
	head, utf8Doc := d.head, d.cs.utf8
	nonce := cspNonce(h.r.opts.CSP)
	if d.writeJSONLD && len(head.JSONLD) > 0 {
		h.nonce = nonce // a plan of this head holds for this nonce only
	}
	jsonFrom := len(w)
	held := 0 // blocks the page holds already
	if d.writeJSONLD {
		for _, js := range head.JSONLD {
			w = appendJSONLDTag(w, js, nonce, utf8Doc)
			if h.jsonLDPresent(js, utf8Doc) {
				held++
			}
		}
	}
	if h.ownOutput(region, w, unchangedInPlace(h.st.tags, region)) {
		return w, true
	}
	if held > 0 {
		w = w[:jsonFrom]
		for _, js := range head.JSONLD {
			if !h.jsonLDPresent(js, utf8Doc) {
				w = appendJSONLDTag(w, js, nonce, utf8Doc)
				d.wrote(rules.IdentJSONLD, "")
			}
		}
	} else if d.writeJSONLD {
		for range head.JSONLD {
			d.wrote(rules.IdentJSONLD, "")
		}
	}
	return w, false
}

// applyEdits turns the tags' fates and the written tags w into edits of
// region, records the result and assembles the output: the region's own
// bytes between the edits, not a copy.
func (h *headScan) applyEdits(d *decision, region, w []byte) {
	r, st := h.r, h.st
	edits := st.edits[:0]
	for i := range st.tags {
		ht := &st.tags[i]
		switch {
		case ht.remove:
			start, end := wholeLine(region, ht.start, max(ht.end, ht.tagEnd))
			edits = append(edits, edit{start, end, nil})
		case ht.replace != nil:
			if ht.action == Corrected {
				d.changes = append(d.changes, Change{Action: Corrected, Identity: ht.identity, Key: ht.name, Reason: ht.why, Value: ht.fixed})
			}
			end := ht.tagEnd
			if ht.identity == rules.IdentTitle {
				end = max(ht.end, ht.tagEnd)
			}
			edits = append(edits, edit{ht.start, end, ht.replace})
		}
	}
	if len(w) > 0 {
		edits = append(edits, edit{h.insertAt, h.insertAt, w})
	}
	st.edits = edits
	fillTagTexts(d.changes, region, st.tags)
	r.res.Changes = slices.Clone(d.changes)
	clear(d.changes) // the scratch keeps no strings of this document
	st.changes = d.changes[:0]
	if len(edits) == 0 {
		r.out = region
		return
	}
	r.res.Outcome = Rewritten
	if r.opts.Shadow {
		r.out = region
		return
	}
	slices.SortStableFunc(edits, func(a, b edit) int { return a.start - b.start })
	segs, n := assemble(st.segs[:0], region, edits)
	st.segs = segs
	r.segs = segs
	r.res.Delta = n - len(region)
}
