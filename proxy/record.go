package proxy

import (
	"fmt"
	"net/http"

	"github.com/headgate/headgate/bots"
	"github.com/headgate/headgate/rewrite"
	"github.com/headgate/headgate/rules"
)

// Record is what the proxy decided and did with one request: the one
// decision record it reports, to every observer alike (the in-process
// audit, the inspector, `headgate explain`). Observers render it; none
// decides anything again. Everything in it is the observer's to keep.
type Record struct {
	// Outcome is the label of headgate_requests_total.
	Outcome Outcome
	// Kind is the proxy's decision on the request, before any upstream
	// answered: refused, answered by headgate, or forwarded with or
	// without matching rules.
	Kind Kind
	// Skip says why a forwarded response did not go through the rewriter;
	// SkipNone when it did (Result says what it did) or when nothing was
	// forwarded. SkipReason says it in a sentence.
	Skip Skip
	// UpstreamStatus and UpstreamHeader are the upstream's answer as it
	// came, before headgate changed it; 0 and nil when no upstream
	// answered (headgate answered itself, or asking failed).
	UpstreamStatus int
	UpstreamHeader http.Header
	// UpstreamIdentity says headgate asked the upstream for the answer
	// without a content coding (no Accept-Encoding), decided before it
	// asked: a GET or HEAD for a page it will decode and re-encode anyway
	// (server.upstream_page_coding = "identity"); an answer that is no page
	// it rewrites then goes to the client compressed as the client allows.
	// False when it asked for
	// the client's codings that it decodes, or forwarded the request's
	// Accept-Encoding as it came (not a GET or HEAD).
	UpstreamIdentity bool
	// UpstreamAsset is the extension of the request's path (".css",
	// ".json", lower case) that kept the client's codings although the
	// request's Accept asks for a page, as a crawler's does for every
	// fetch: a path with that extension is plainly no page. "" when the
	// extension decided nothing.
	UpstreamAsset string
	// UpstreamKeep says why the client's codings were asked for instead
	// of identity: one of the Keep* reasons (KeepConfig, KeepShadow,
	// KeepPassthrough, KeepNotPage, KeepAsset…); "" when identity was
	// asked for, or nothing was forwarded.
	UpstreamKeep string
	// UpstreamWhole says the upstream answered the request's Range with a
	// part of a page headgate rewrites (a 206 of HTML, or of several
	// parts), and headgate asked it again for the whole page, which the
	// client got rewritten (a 200: RFC 9110 lets a server ignore Range).
	// A part of the upstream's page would carry its head as it came: a
	// link preview's crawler that asks for the first bytes only would
	// read the unrewritten tags.
	UpstreamWhole bool
	// Upstream is a copy of the decoded upstream bytes the rewriter read
	// (the head and what came with it), at most max_head_bytes + 80 KiB:
	// every byte the rewriter reads, but for a last read over 16 KiB.
	// UpstreamCut says it was cut there. nil when the rewriter read none.
	Upstream    []byte
	UpstreamCut bool
	// Result is the rewrite's result: the upstream head the rewriter read
	// (Result.UpstreamHead), what the rules rendered (Result.Head) and
	// what it changed (Result.Changes); nil when the rewriter did not run.
	Result *rewrite.Result
	// Match is the rules the request resolved to; nil when it was refused
	// before (a 400).
	Match *rules.Match
	// Redirect is the redirect (or 410) headgate answered, or in shadow
	// mode would have; nil when none. Its Source says which of §11's
	// normalization, rules and tables answered.
	Redirect *rules.Redirect
	// Experiment and Group name the split test (SPEC §21) whose match
	// covers the page and the page's group, "control" or "variant", as
	// Match.Experiment says; "" when no experiment covers it. Observers
	// label by them (insight's bot requests by group).
	Experiment, Group string
	// Markdown is the record of §19.1: whether the path has a Markdown
	// version (and why not), whether the request asked for it, and when
	// it did the converter's figures or why the page went out as HTML;
	// nil without [markdown], or when the request was refused before it
	// was resolved.
	Markdown *MarkdownRecord
	// Bot is who is asking (SPEC §18), with [bots] on; the zero Identity
	// when it is off or the request was refused before (a 400, a deny).
	// BotRule is the access rule that decided ("bots.access[2]",
	// "bots.spoofed", "bots.enforce_robots"; "" when none did) and
	// BotDenied whether it denies (the Outcome is then BotDenied, but in
	// shadow mode, where the request is forwarded).
	Bot       bots.Identity
	BotRule   string
	BotDenied bool
	// BotRobotsDisallowed says the robots.txt headgate serves disallows
	// the request's path for the identified crawler, whether or not
	// bots.enforce_robots acted on it (SPEC §20.1's robots violations);
	// false where the file is the upstream's (robots mode upstream, and
	// append mode for agents no [[robots.group]] names).
	BotRobotsDisallowed bool
}

// Outcome is what became of a request: the outcome label of
// headgate_requests_total and of the access log.
type Outcome string

// Outcomes. The first six are the rewriter's own (rewrite.Outcome).
const (
	Rewritten       = Outcome(rewrite.Rewritten)       // "rewritten": the head was rewritten
	Passthrough     = Outcome(rewrite.Unchanged)       // "passthrough": served as the upstream sent it, nothing to change or not a page headgate rewrites
	SkippedTooLarge = Outcome(rewrite.SkippedTooLarge) // "skipped_too_large": the head did not end within max_head_bytes
	SkippedCharset  = Outcome(rewrite.SkippedCharset)  // "skipped_charset": not an ASCII-compatible charset
	SkippedFragment = Outcome(rewrite.SkippedFragment) // "skipped_fragment": a text/html response that is no document (§16.1)
	// "unchanged_truncated": the body ended inside the head, in an unclosed element, comment or tag (§23)
	UnchangedTruncated = Outcome(rewrite.UnchangedTruncated)

	SkippedEncoding Outcome = "skipped_encoding" // a content coding headgate does not decode
	SkippedRule     Outcome = "skipped_rule"     // a rule says rewrite = false (§16.1)
	Shadow          Outcome = "shadow"           // shadow mode: served unchanged, the rules would have changed it
	Redirected      Outcome = "redirected"       // headgate answered a redirect (or a 410) of §11 itself
	Denied          Outcome = "denied"           // a deny rule: 404 from headgate
	Sitemap         Outcome = "sitemap"          // answered by the sitemap handler
	Robots          Outcome = "robots"           // /robots.txt answered by the sitemap handler
	LLMSTxt         Outcome = "llms_txt"         // /llms.txt answered by the sitemap handler
	BadRequest      Outcome = "bad_request"      // a path rules.CheckPath refuses: 400 from headgate
	BotDenied       Outcome = "bot_denied"       // [bots] access, spoofed or enforce_robots: 403 from headgate (§18.3)
	UpstreamError   Outcome = "upstream_error"   // refused, timed out, corrupt or cut short
	Canceled        Outcome = "canceled"         // the client went away before the upstream answered
	Panic           Outcome = "panic"            // headgate panicked serving the request
)

// AnsweredItself reports whether headgate answered the request itself,
// forwarding nothing: a 400, a deny, a redirect or the sitemap handler.
func (o Outcome) AnsweredItself() bool {
	switch o {
	case BadRequest, Denied, BotDenied, Redirected, Sitemap, Robots, LLMSTxt:
		return true
	}
	return false
}

// Kind is the proxy's decision on a request.
type Kind string

// Kinds, as the inspector's decision.kind shows them.
const (
	KindBadRequest Kind = "bad_request" // refused: 400, nothing forwarded
	KindDeny       Kind = "deny"        // a deny rule: 404, nothing forwarded
	KindBotDenied  Kind = "bot_denied"  // [bots] denies the crawler: 403, nothing forwarded
	KindRedirect   Kind = "redirect"    // headgate answered a redirect or 410 (§11)
	KindHeadgate   Kind = "headgate"    // the sitemap handler answered (sitemap, robots.txt, llms.txt)
	KindRules      Kind = "rules"       // forwarded; rules match
	KindNoRules    Kind = "no_rules"    // forwarded; no rule matches
)

// Skip is why a forwarded response was not handed to the rewriter.
type Skip uint8

// Skips, in the order the proxy asks (decideResponse).
const (
	SkipNone     Skip = iota // the rewriter ran, or nothing was forwarded
	SkipMethod               // not a GET or HEAD
	SkipStatus               // the upstream did not answer 200
	SkipNotHTML              // not text/html or application/xhtml+xml
	SkipEncoding             // a content coding headgate does not decode
	SkipRule                 // a rule says rewrite = false (§16.1)
	SkipNothing              // no rule matches and site.correct_upstream is off: nothing could change
	SkipDownload             // Content-Disposition: attachment (§16.1)
	SkipHEAD                 // a HEAD: no body; the headers its GET would most likely get
)

// SkipReason says in a sentence why the response was not rewritten; ""
// for SkipNone.
func (r *Record) SkipReason() string {
	ct := r.UpstreamHeader.Get("Content-Type")
	switch r.Skip {
	case SkipMethod:
		return "only GET and HEAD responses are rewritten"
	case SkipStatus:
		return fmt.Sprintf("the upstream answered %d: only 200 responses are rewritten", r.UpstreamStatus)
	case SkipNotHTML:
		return "not HTML (Content-Type " + quoteOrNone(ct) + "): only headers apply (SPEC §4.8)"
	case SkipEncoding:
		return "a content coding headgate does not decode"
	case SkipRule:
		return "a matching rule says rewrite = false (SPEC §16.1): only headers apply"
	case SkipNothing:
		return "no rule matches and correct_upstream is off: nothing could change"
	case SkipDownload:
		return "a download (Content-Disposition: attachment): its bytes are the user's (SPEC §16.1)"
	case SkipHEAD:
		return "a HEAD: no body to rewrite; the headers are those its GET would most likely get"
	}
	return ""
}

func quoteOrNone(s string) string {
	if s == "" {
		return "none"
	}
	return fmt.Sprintf("%q", s)
}
