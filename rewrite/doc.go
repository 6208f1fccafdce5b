// Package rewrite is headgate's streaming head rewriter: tokens in, bytes
// out, the head fixed and everything after it untouched. It knows nothing
// of HTTP.
//
// Call order:
//
//	r := rewrite.NewReader(body, rewrite.Options{Match: cfg.Resolve(target), ContentType: ct, CSP: csp, CorrectUpstream: true})
//	if err := r.Prepare(); err != nil { … } // reads through the end of the head; Result().Delta is now known
//	io.Copy(w, r)                           // the rewritten head, then the rest as it arrives
//
// Prepare reads the source only as far as the region headgate may edit:
// the head, found as a browser's parser finds it (the literal </head>, or
// an implicit end: <body>, a start tag that can not live in a head, non-blank
// text, the end of input), plus the late stretch up to a literal </head>
// or <body> that a legacy page writes after an early implicit end. The
// region is tokenized by scan.go, a scanner that follows the WHATWG
// tokenizer states far enough for tags, attributes and raw-text elements,
// allocates nothing, resumes across reads, and agrees with
// golang.org/x/net/html token for token (tests and FuzzScanner check it).
// Everything after the region is copied, never tokenized; the rewritten
// region goes out as slices of the read buffer between the edits.
//
// What is written and removed follows SPEC §4: the identities the merged
// rules set replace the upstream's tags (override) or fill the missing ones
// (fill); §4.5 corrections make relative URLs absolute and drop unsafe ones
// and duplicates; written tags go where the head ends, in the order title,
// description, robots, canonical, alternates, og:*, article:*, twitter:*,
// JSON-LD. Result records every change (wrote, replaced, corrected,
// dropped) for metrics, the change header, shadow mode and the audit;
// Result.Upstream (HeadFacts) is what the upstream head said of itself, in
// a fixed size, for the change watcher (package watch): noted during the
// same scan and replayed with a cached plan.
//
// Bounds and failure: the region may not exceed Options.MaxHeadBytes (the
// head must end before it; no token may end past MaxHeadBytes plus
// min(MaxHeadBytes, 64 KiB)), so memory per document is bounded whatever the
// page. A head that does not end in time, a charset that is not
// ASCII-compatible, a source error inside the head, an input that ends
// inside the head in an unclosed title, script, style, textarea (xmp, iframe,
// noembed), comment
// or tag (UnchangedTruncated: a tag written there would land inside it),
// or a panic: the original bytes go out unchanged and Result says why. Output depends only
// on the input bytes and options, never on how the source's reads fall.
//
// Security: every value written is escaped for where it goes (attributes
// and title text HTML-escaped; numeric character references for non-ASCII
// in documents that are not UTF-8; JSON-LD with < > & U+2028 U+2029
// escaped); tags inside <noscript>, <template>, <svg> and <math> are never
// touched; nothing is written before <meta charset>. Written tags go
// before the head's first <noscript>: with scripting off, as most crawlers
// parse, one that holds body content ends the head.
package rewrite
