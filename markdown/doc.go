// Package markdown turns an HTML page into Markdown for AI agents (SPEC
// §19.1): YAML front matter from the page's head values, then the page's
// content element as CommonMark with GFM tables, navigation and other
// Remove subtrees left out.
//
// # Call order
//
// A host compiles its options once with New, then for each page decides
// with Prefers (the request's Accept header) or its path form whether the
// client wants Markdown, and calls Converter.Convert with the page's body
// (decompressed and decoded to UTF-8) and the Front it took from the head it
// serves. Convert buffers: it reads at most Options.MaxBytes, converts, and
// writes to w only when it has succeeded. Any error (ErrTooLarge, a read
// error, ErrConvert) means nothing was written and the host answers with
// the HTML, counting the failure. Stats.Tokens is the X-Markdown-Tokens
// estimate.
//
// # How
//
// One pass of golang.org/x/net/html's tokenizer with a stack of open
// elements (at most Options.MaxDepth; deeper start tags are read as inline
// text) that applies the HTML tree builder's implied end tags for p, li,
// dt/dd, table parts, headings and a. The whole document is converted and
// the output span of the first element each Content selector matches is
// remembered; the first selector with a span wins. No tree is built:
// memory is the input, the output and the open tables' cells.
//
// # Security
//
// No raw HTML reaches the output: every page character that could open
// Markdown syntax, an entity or a tag is backslash-escaped, so a CommonMark
// reader gets back the page's text (tested with markdown-it against
// x/net/html's reading of the same page). Link and image URLs are resolved
// on Options.Base by Options.Resolve, which also decides which are dropped
// (the link text or the image's alt text is kept); without it,
// javascript:, data: and vbscript: URLs and every other scheme but http
// and https are dropped. Script, style, template, svg, math, iframe, object, media, select
// and textarea contents are never text.
package markdown
