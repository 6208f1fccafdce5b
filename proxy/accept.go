package proxy

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/headgate/headgate/rules"
)

// asksPage reports whether a request's Accept (RFC 9110 §12.5.1) names
// text/html or application/xhtml+xml with a q-value above 0: what a
// browser's navigation sends, and an <img>, a script's fetch() or a
// stylesheet's request does not (their */* alone does not count). Media
// types compare without case; parameters other than q are skipped; every
// field and every comma-separated member counts. Nothing is allocated: it
// runs on every GET.
//
// A browser's navigation names text/html first, with no parameter, so the
// common request is decided by its first member; an asset's Accept names
// no "html" at all, which strings.IndexByte finds out before any member
// is parsed.
func asksPage(vs []string) bool {
	for _, v := range vs {
		if !htmlAt(v, 'h') && !htmlAt(v, 'H') {
			continue
		}
		for v != "" {
			var member string
			member, v = nextMember(v)
			if pageMember(member) {
				return true
			}
		}
	}
	return false
}

// htmlAt reports whether v holds "html", in any case, whose h is the
// byte h.
func htmlAt(v string, h byte) bool { return wordAt(v, "html", 0, h) }

// wordAt reports whether v holds word, in any case, with the byte b at
// word[at]: b is searched with strings.IndexByte, a letter few header
// values hold, and the word compared around it (mentionsMarkdown too).
func wordAt(v, word string, at int, b byte) bool {
	for off := 0; ; {
		i := strings.IndexByte(v[off:], b)
		if i < 0 {
			return false
		}
		i += off
		if i >= at && i-at+len(word) <= len(v) && strings.EqualFold(v[i-at:i-at+len(word)], word) {
			return true
		}
		off = i + 1
	}
}

// nextMember splits off the first comma-separated member of an Accept
// value; a comma inside a quoted parameter value does not end it.
func nextMember(v string) (member, rest string) { return cutUnquoted(v, ',') }

// nextParam splits off the first ';'-separated parameter of a member; a
// semicolon inside a quoted value does not end it.
func nextParam(s string) (param, rest string) { return cutUnquoted(s, ';') }

// cutUnquoted splits s at its first sep outside a quoted string (with its
// backslash escapes).
func cutUnquoted(s string, sep byte) (before, after string) {
	quoted := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			quoted = !quoted
		case c == '\\' && quoted:
			i++
		case c == sep && !quoted:
			return s[:i], s[i+1:]
		}
	}
	return s, ""
}

// pageMember reports whether one member of an Accept value is a page's
// media type with a q-value above 0 (1 when it has none).
func pageMember(member string) bool {
	t, params, _ := strings.Cut(member, ";")
	t = strings.TrimSpace(t)
	if !strings.EqualFold(t, "text/html") && !strings.EqualFold(t, "application/xhtml+xml") {
		return false
	}
	for params != "" {
		var p string
		p, params = nextParam(params)
		k, val, _ := strings.Cut(p, "=")
		if strings.EqualFold(strings.TrimSpace(k), "q") {
			// The q parameter ends the media type's parameters (RFC 9110
			// §12.4.2): what follows is not the type's.
			return qPositive(strings.TrimSpace(val))
		}
	}
	return true
}

// qPositive reports whether a qvalue (RFC 9110 §12.4.2: "0" to "1" with
// at most three decimals) is above 0. A malformed one counts as 0, as
// parseQ reads it.
func qPositive(q string) bool {
	if q == "" || len(q) > 5 {
		return false
	}
	whole, frac, dot := strings.Cut(q, ".")
	if dot && frac == "" {
		frac = "0" // "1." and "0.": the grammar allows no digits after the dot
	}
	for i := 0; i < len(frac); i++ {
		if frac[i] < '0' || frac[i] > '9' {
			return false
		}
	}
	switch whole {
	case "1":
		return strings.Trim(frac, "0") == ""
	case "0":
		return strings.Trim(frac, "0") != ""
	}
	return false
}

// asksIdentity decides, before the upstream is asked, whether a forwarded
// request asks it for its answer without a content coding
// (server.upstream_page_coding, Record.UpstreamIdentity): a GET or HEAD
// for a page (asksPage, or the page's Markdown) whose answer, if it is
// one, headgate decodes and re-encodes anyway. Compressing it upstream
// only for headgate to decompress it would be work for nothing. A request
// whose answer headgate passes through as it comes (rewrite = false,
// nothing a rule or site.correct_upstream could change, shadow mode) keeps
// the client's codings, so that the page still reaches the client
// compressed; so does every request for something else (an asset): SPEC,
// what is not a page is not touched. A crawler names text/html in every
// Accept, also for a stylesheet or a feed, so a path whose extension is
// plainly an asset's (assetExt; noted in rs.upAsset for explain) keeps
// the client's codings too. What still asks for identity and does not
// come back a page headgate rewrites goes to the client compressed
// (encodeOnBehalf).
//
// Why the client's codings were kept goes into rs.upKeep
// (Record.UpstreamKeep), for explain and the inspector to render.
func (rs *reqState) asksIdentity(r *http.Request) bool {
	rs.upKeep = rs.keepClientCodings(r)
	return rs.upKeep == ""
}

// The reasons asksIdentity keeps the client's codings (Record.UpstreamKeep).
const (
	KeepConfig      = "config"        // server.upstream_page_coding = "client"
	KeepMethod      = "method"        // not a GET or HEAD: forwarded as it came
	KeepShadow      = "shadow"        // shadow mode serves the upstream's bytes
	KeepNoRewrite   = "rewrite_false" // a rule says rewrite = false
	KeepPassthrough = "passthrough"   // nothing a rule, correct_upstream or [markdown] would change
	KeepNotPage     = "not_page"      // the request's Accept asks for no page
	KeepNoCoding    = "no_coding"     // headgate produces none of the client's codings
	KeepAsset       = "asset"         // the path's extension is an asset's (Record.UpstreamAsset)
)

// keepClientCodings is asksIdentity's decision: "" to ask for identity,
// else why not.
func (rs *reqState) keepClientCodings(r *http.Request) string {
	st := rs.st
	switch {
	case st.cfg.Server.UpstreamPageCoding == rules.UpstreamPageClient:
		return KeepConfig
	case !mayRewrite(r.Method):
		return KeepMethod
	case st.shadow:
		return KeepShadow
	case !rs.m.Rewrite():
		return KeepNoRewrite
	case rs.mdWant:
		return ""
	case rs.nothingToChange():
		return KeepPassthrough
	case !asksPage(hvalues(r.Header, "Accept")):
		return KeepNotPage
	}
	// A client whose codings headgate does not produce (server.compress
	// empty, or deflate only) gets the upstream's compression or none: an
	// unchanged page then goes out in the upstream's own coding.
	if ae := parseAcceptEncoding(hvalues(r.Header, "Accept-Encoding")); ae.upstream() != "" && ae.choose(st.cfg.Server.Compress) == identity {
		return KeepNoCoding
	}
	if rs.upAsset = assetExt(r.URL.Path); rs.upAsset != "" {
		return KeepAsset
	}
	return ""
}

// assetExts are the extensions of a path's last segment that plainly name
// no page: styles, scripts, data, images, fonts, documents, archives,
// media. A page's own (.html, .php, .aspx…), none, or any other leaves the
// decision to the request's Accept.
var assetExts = [...]string{
	".css", ".js", ".mjs", ".json", ".xml", ".txt", ".csv", ".svg", ".ico",
	".png", ".jpg", ".jpeg", ".gif", ".webp", ".avif", ".woff", ".woff2", ".ttf",
	".pdf", ".zip", ".gz", ".mp4", ".webm", ".mp3", ".map", ".wasm",
}

// assetExt returns the extension of path's last segment, as assetExts
// spells it (lower case), when it is an asset's; "" otherwise. Case does
// not matter. Nothing is allocated: it runs on every navigation.
func assetExt(path string) string {
	seg := path[strings.LastIndexByte(path, '/')+1:]
	i := strings.LastIndexByte(seg, '.')
	if i < 0 || len(seg)-i > len(".woff2") {
		return ""
	}
	ext := seg[i:]
	for _, a := range assetExts {
		if strings.EqualFold(ext, a) {
			return a
		}
	}
	return ""
}

// minEncodeLength is the least Content-Length an answer headgate did not
// rewrite is compressed on the client's behalf from (encodeOnBehalf). A
// coding's frame alone is 9–18 bytes and Content-Encoding and Vary add
// about 40 of header; under 256 bytes an answer fits one packet either
// way, so compressing it saves the client nothing and costs an encoder's
// reset and close.
const minEncodeLength = 256

// encodeOnBehalf sends an answer headgate asked for uncompressed
// (rs.upIdentity) but does not rewrite (an error page, a JSON answer, a
// feed: whatever a page-asking Accept got that is not a page headgate
// reads) as the client would have had it had headgate asked for its
// codings: compressed in the coding its Accept-Encoding chooses among
// server.compress, by encodeUnchanged. Once decoded, the bytes are the
// upstream's. Left as they came: an answer the upstream encoded, a range
// (206, or any Content-Range), no body (204, 304), fewer than
// minEncodeLength bytes, a type that does not compress (compressibleType),
// and one whose Cache-Control says no-transform (RFC 9110 §7.7: a content
// coding changes the content). A client that accepts no coding of
// server.compress gets the upstream's bytes and length, with Vary.
func (rs *reqState) encodeOnBehalf(res *http.Response) {
	h := res.Header
	switch res.StatusCode {
	case http.StatusPartialContent, http.StatusNoContent, http.StatusNotModified:
		return
	}
	if ce := hget(h, "Content-Encoding"); !rs.upIdentity || rs.st.shadow ||
		ce != "" && !strings.EqualFold(ce, identity) || hget(h, "Content-Range") != "" ||
		res.ContentLength >= 0 && res.ContentLength < minEncodeLength ||
		!compressibleType(hget(h, "Content-Type")) || noTransform(hvalues(h, "Cache-Control")) {
		return
	}
	if rs.ae.choose(rs.st.cfg.Server.Compress) == identity {
		addVary(h, "Accept-Encoding") // a client that accepts one would have it compressed
		return
	}
	rs.encodeUnchanged(res)
}

// compressibleType reports whether a Content-Type names text a content
// coding shrinks: text/* (but an event stream, which would hold a pooled
// encoder for as long as it stays open), JSON, JavaScript, ECMAScript, XML,
// and any +xml or +json type (SVG, a web manifest, RSS, Atom). Parameters
// are skipped, case does not matter, nothing is allocated.
func compressibleType(ct string) bool {
	t, _, _ := strings.Cut(ct, ";")
	typ, sub, ok := strings.Cut(strings.TrimSpace(t), "/")
	switch {
	case !ok || sub == "":
		return false
	case strings.EqualFold(typ, "text"):
		return !strings.EqualFold(sub, "event-stream")
	case len(sub) > 4 && strings.EqualFold(sub[len(sub)-4:], "+xml"),
		len(sub) > 5 && strings.EqualFold(sub[len(sub)-5:], "+json"):
		return true
	case strings.EqualFold(typ, "application"):
		for _, s := range [...]string{"json", "javascript", "ecmascript", "xml", "x-javascript"} {
			if strings.EqualFold(sub, s) {
				return true
			}
		}
	}
	return false
}

// noTransform reports whether Cache-Control values hold the no-transform
// directive.
func noTransform(vs []string) bool {
	for _, v := range vs {
		for v != "" {
			var d string
			d, v, _ = strings.Cut(v, ",")
			if strings.EqualFold(strings.TrimSpace(d), "no-transform") {
				return true
			}
		}
	}
	return false
}

// nothingToChange reports that no rule matches the request, no Markdown
// link is to be written and site.correct_upstream is off: a page's head
// could not change, and decideResponse skips the tokenizer.
func (rs *reqState) nothingToChange() bool {
	return !rs.m.Any() && !rs.st.cfg.Site.CorrectUpstream && !rs.m.HasMarkdown()
}

// UpstreamCodingText says, from the record, what headgate asked the
// upstream for and why: the line explain prints and the inspector's note.
// "" when nothing was forwarded.
func UpstreamCodingText(rec *Record) string {
	const client = "the client's codings headgate decodes"
	if rec.UpstreamIdentity {
		return "identity (no Accept-Encoding): headgate decodes the page anyway and compresses once; an answer it does not rewrite goes to the client compressed as the client allows (server.upstream_page_coding)"
	}
	switch rec.UpstreamKeep {
	case KeepConfig:
		return client + ` (server.upstream_page_coding = "client")`
	case KeepMethod:
		return "the request's Accept-Encoding as it came (not a GET or HEAD)"
	case KeepShadow:
		return client + ": shadow mode serves the upstream's bytes as they come"
	case KeepNoRewrite:
		return client + ": rewrite = false, so the answer passes through as it comes"
	case KeepPassthrough:
		return client + ": headgate passes this page through as it comes, so it stays compressed"
	case KeepNotPage:
		return client + ": the request's Accept asks for no page"
	case KeepNoCoding:
		return client + ": headgate produces none of the client's codings (server.compress), so the upstream's is the only compression the client can get"
	case KeepAsset:
		return fmt.Sprintf("%s (an asset path: %s): its answer passes through as it comes", client, rec.UpstreamAsset)
	}
	return ""
}

// browserAcceptEncoding is what a browser's navigation offers.
var browserAcceptEncoding = []string{"gzip, deflate, br, zstd"}

// BrowserUpstreamCodingText is UpstreamCodingText for the record of a
// request explain or the inspector made: a browser's navigation but for
// its Accept-Encoding, which they leave out so as to read the answer as it
// comes. A browser offers gzip, deflate, br and zstd; where headgate
// produces none of them (server.compress empty) the browser's request
// keeps its codings (KeepNoCoding, as asksIdentity decides it) where
// theirs asked for identity.
func BrowserUpstreamCodingText(cfg *rules.Config, rec *Record) string {
	if rec.UpstreamIdentity {
		if ae := parseAcceptEncoding(browserAcceptEncoding); ae.choose(cfg.Server.Compress) == identity {
			r := *rec
			r.UpstreamIdentity, r.UpstreamKeep = false, KeepNoCoding
			return UpstreamCodingText(&r)
		}
	}
	return UpstreamCodingText(rec)
}
