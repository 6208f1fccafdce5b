package proxy

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"

	"github.com/headgate/headgate/internal/codec"
	"github.com/headgate/headgate/internal/linkheader"
	"github.com/headgate/headgate/rewrite"
	"github.com/headgate/headgate/rules"
)

// errHeadTimeout cancels an upstream request whose head did not arrive
// within server.upstream_timeout after its response headers.
var errHeadTimeout = errors.New("upstream sent no complete head within upstream_timeout")

// rewriteRequest is ReverseProxy's Rewrite (and forward's): the outbound
// request. Forwarded and X-Forwarded-* headers from the client have
// already been removed by ReverseProxy or forward; SetXForwarded writes ours. Nothing headgate writes into a
// page is ever taken from them: every URL comes from site.base_url.
func (p *Proxy) rewriteRequest(pr *httputil.ProxyRequest) {
	rs := reqStateOf(pr.Out.Context()) // forward's In is the server's request
	st := rs.st
	pr.SetURL(st.upstream)
	if st.cfg.Server.PreserveHost {
		pr.Out.Host = pr.In.Host
	}
	if rs.mdWant {
		markdownUpstream(pr, rs)
	}
	setForwarded(pr, st)
	guardRequest(pr.Out)
	h := pr.Out.Header
	rs.setBotHeader(h)
	if mayRewrite(pr.In.Method) {
		// Offer upstream only what headgate can decode, so that it can
		// rewrite what comes back; nothing (identity) for a page it will
		// decode anyway (asksIdentity). rs.ae stays the client's: it
		// chooses the coding headgate sends.
		rs.ae = parseAcceptEncoding(hvalues(pr.In.Header, "Accept-Encoding"))
		if up := rs.ae.upstream(); up != "" && !rs.upIdentity {
			hset(h, "Accept-Encoding", up)
		} else {
			hdel(h, "Accept-Encoding")
		}
	}
	for _, k := range conditionalHeaders {
		vs := hvalues(h, k)
		if len(vs) == 0 {
			continue
		}
		out, mapped, empty := mapConditional(strings.Join(vs, ", "), st.cfg.ETagHash())
		if !mapped {
			continue
		}
		if k == "If-None-Match" {
			rs.etagMapped = true
		}
		if empty {
			hdel(h, k)
		} else {
			hset(h, k, out)
		}
	}
	if ir := hget(h, "If-Range"); strings.HasPrefix(ir, etagPrefix) {
		// Byte ranges of a rewritten representation are not ranges of the
		// upstream's: ask for the whole document.
		hdel(h, "If-Range")
		hdel(h, "Range")
	}
}

// conditionalHeaders are the request's entity-tag conditions that name
// headgate's tags (etag.go), in canonical form (TestCanonicalHeaderKeys).
var conditionalHeaders = [...]string{"If-None-Match", "If-Match"}

func mayRewrite(method string) bool { return method == http.MethodGet || method == http.MethodHead }

// htmlType reports whether a Content-Type is one headgate rewrites.
func htmlType(ct string) bool {
	t, _, _ := strings.Cut(ct, ";")
	t = strings.TrimSpace(t)
	return strings.EqualFold(t, "text/html") || strings.EqualFold(t, "application/xhtml+xml")
}

// modifyResponse is ReverseProxy's ModifyResponse: it decides what becomes
// of the upstream's response. Its error goes to proxyError (a 502 or 504);
// it only returns one when the upstream failed before the head was read.
func (p *Proxy) modifyResponse(res *http.Response) error {
	rs := reqStateOf(res.Request.Context())
	rs.upstream = res.StatusCode
	if hk := hookOf(res.Request.Context()); hk != nil {
		hk.response(res) // the inspector: the upstream's status and headers, as they came
	}
	if res.StatusCode == http.StatusSwitchingProtocols {
		// The body is the connection: ReverseProxy needs it as it is.
		rs.w.status = res.StatusCode
		return nil
	}
	if err := p.decideResponse(res, rs); err != nil {
		return err // proxyError's page carries none of the upstream's fields
	}
	p.agentHeaders(res, rs) // markdown.go
	handOver(rs.w.Header(), res.Header)
	switch res.Body {
	case io.ReadCloser(&rs.bodyv):
		rs.bodyv.direct = rs.directTo(res) // direct.go
	case io.ReadCloser(&rs.rbodyv):
		if rs.rbodyv.dec == nil {
			rs.rbodyv.direct = rs.directTo(res)
		}
	}
	return nil
}

// handOver moves the response's header fields into the client's header
// map, where ReverseProxy's copyHeader would copy them as soon as
// ModifyResponse returns, but without a new value slice and a
// canonicalization per field: the transport made these slices for this
// response alone, and its keys are canonical (it parsed them; headgate
// sets its own through hset or http.Header's methods). A field already in
// the client's map is added to, as copyHeader adds. Content-Type stays
// behind, for copyHeader to copy, unless it names HTML: ReverseProxy reads
// it from the response afterwards (flushInterval: an event stream is
// flushed on every write), and for a page, which is never an event stream,
// it would only parse it (mime.ParseMediaType, two allocations) to learn so.
func handOver(dst, src http.Header) {
	keepType := !htmlType(hget(src, "Content-Type"))
	for k, vv := range src {
		if k == "Content-Type" && keepType {
			continue
		}
		if have, ok := dst[k]; ok {
			dst[k] = append(have, vv...)
		} else {
			dst[k] = vv
		}
		delete(src, k)
	}
}

// decideResponse is modifyResponse past the inspector's look and the
// protocol switch: the response's fate and headers.
func (p *Proxy) decideResponse(res *http.Response, rs *reqState) error {
	st, cfg := rs.st, rs.st.cfg
	lastContentType(res.Header)
	rs.bodyv = upstreamBody{rc: res.Body}
	body := &rs.bodyv
	res.Body, rs.body = body, body
	h := res.Header
	method := res.Request.Method
	if st.watch != nil {
		// The slice as the upstream sent it: headgate's headers replace
		// the map's entry (hset), never the values in it.
		rs.upRobots = h["X-Robots-Tag"]
	}

	// A change to what passes through here changes what a range of a
	// page is (reqState.partOfPage, proxy.go, asks the same of a 206).
	switch {
	case !mayRewrite(method):
		rs.skip = SkipMethod
	case res.StatusCode != http.StatusOK:
		rs.skip = SkipStatus
	case !htmlType(hget(h, "Content-Type")):
		rs.skip = SkipNotHTML
	default:
		coding, ok := codec.Normalize(hget(h, "Content-Encoding"))
		switch {
		case !ok:
			rs.outcome, rs.skip = SkippedEncoding, SkipEncoding
		case !rs.m.Rewrite():
			// rewrite = false (§16.1): proxied with the §4.8/§4.9 headers.
			rs.outcome, rs.skip = SkippedRule, SkipRule
		case rs.mdWant && !isAttachment(hget(h, "Content-Disposition")):
			return p.markdownBody(res, rs, coding) // markdown.go
		case rs.nothingToChange(): // accept.go
			// Nothing could change: skip the tokenizer.
			rs.outcome, rs.skip = Passthrough, SkipNothing
		case isAttachment(hget(h, "Content-Disposition")):
			// A download (an export, a saved page): a file, not a page a
			// browser shows; its bytes are the user's (§16.1).
			rs.outcome, rs.skip = Passthrough, SkipDownload
		case method == http.MethodHead:
			p.headResponse(res, rs)
			return nil
		default:
			return p.rewriteBody(res, rs, coding)
		}
	}
	if rs.outcome == "" {
		rs.outcome = Passthrough
	}
	if !st.shadow {
		p.applyHeaders(res, rs, nil, true)
	}
	if res.StatusCode == http.StatusNotModified && rs.etagMapped && !st.shadow {
		if tag := wrapETag(hget(h, "Etag"), cfg.ETagHash()); tag != "" {
			hset(h, "Etag", tag)
		}
		// The 200 it stands for varied on Accept-Encoding (headgate's
		// tags are on answers it encodes); an upstream asked for identity
		// does not say so itself (RFC 9110 §15.4.5).
		addVary(h, "Accept-Encoding")
	}
	rs.encodeOnBehalf(res) // accept.go: what headgate asked identity for and passes on
	p.finishHeaders(h, rs)
	return nil
}

// rewriteBody sets up the rewrite of a GET response's HTML: decode, read
// the head (Prepare) so that the length change is known, then either
// rewrite (re-encoding in the response writer) or, when nothing is to
// change, replay the upstream's own bytes.
func (p *Proxy) rewriteBody(res *http.Response, rs *reqState, coding string) error {
	st, cfg, body, h := rs.st, rs.st.cfg, rs.body, res.Header
	if coding != identity {
		// A page that comes back unchanged is replayed as the upstream's
		// own compressed bytes; an identity page needs no copy: the
		// rewriter passes its bytes through itself.
		body.startRecording(recordLimit(cfg.Server.MaxHeadBytes))
	}
	var src io.Reader = body
	var dec codec.Decoder
	if coding != identity {
		d, err := codec.NewDecoder(coding, body)
		if err != nil {
			return body.failed(err)
		}
		dec, src = d, d
	}
	rr := &rs.rrv
	rr.Reset(src, rewrite.Options{
		Match:           rs.m,
		ContentType:     hget(h, "Content-Type"),
		CSP:             hget(h, "Content-Security-Policy"),
		MaxHeadBytes:    cfg.Server.MaxHeadBytes,
		CorrectUpstream: cfg.Site.CorrectUpstream,
		Shadow:          st.shadow,
		Cache:           st.plans,
		Observe:         rs.rewriteObserver(hookOf(res.Request.Context())),
	})
	p.clocks.start(&rs.clock, phaseHead, cfg.Server.UpstreamTimeout)
	err, panicked := prepare(rr)
	p.clocks.stop(&rs.clock)
	rs.rewriterRan = err == nil && panicked == nil
	if rs.obs != nil {
		rs.result = rr.Result()
	}
	body.stopRecording()
	if body.overLimit {
		return p.passRecorded(res, rs, dec)
	}
	if err != nil {
		if dec != nil {
			dec.Release()
		}
		if dec != nil && body.err == nil {
			err = fmt.Errorf("%w: %s: %w", codec.ErrBadEncoding, coding, err)
		}
		return body.failed(err)
	}
	res0 := rr.Result()
	rewritten := res0.Outcome == rewrite.Rewritten && panicked == nil
	if panicked != nil {
		// Fail open: the page goes out as the upstream sent it.
		p.log.Error("rewriter panic: page passed through unchanged", "path", rs.m.Path, "panic", fmt.Sprint(panicked))
		rs.outcome = Passthrough
	} else {
		rs.outcome = Outcome(res0.Outcome)
		if st.shadow && res0.Outcome == rewrite.Rewritten {
			// What went out is the upstream's page: say so, in the
			// metric and the access log alike.
			rs.outcome = Shadow
		}
		p.m.countResult(res0)
	}

	if !rewritten || st.shadow {
		// Output equals input: send the upstream's own bytes, coding and
		// length, and spare the re-encoding.
		p.passUnchanged(res, rs, rr, dec, coding, rewritten, panicked != nil)
		return nil
	}

	rs.rbodyv = rewrittenBody{r: rr, dec: dec, up: body, coding: coding}
	res.Body = &rs.rbodyv
	rs.encodeAnswer(res, coding, res0.Delta)
	for _, k := range upstreamBytesHeaders {
		delete(h, k)
	}
	if tag := hget(h, "Etag"); tag != "" {
		if w := wrapETag(tag, cfg.ETagHash()); w != "" {
			hset(h, "Etag", w)
		} else {
			hdel(h, "Etag")
		}
	}
	p.applyHeaders(res, rs, res0.Head, false)
	if cfg.Server.ChangeHeader {
		hset(h, "Headgate-Changes", changeHeader(res0, rs.m))
	}
	p.finishHeaders(h, rs)
	return nil
}

// encodeAnswer sets the length and coding of a body headgate writes
// itself (rs.rbodyv, upstream bytes of the given coding, decoded, with
// delta bytes more): the coding the client's Accept-Encoding chooses among
// server.compress, with an exact Content-Length where nothing is
// re-encoded (SPEC §8) and Vary: Accept-Encoding. A HEAD's answer gets
// the same headers and no encoder: there is no body to encode.
func (rs *reqState) encodeAnswer(res *http.Response, coding string, delta int) {
	h := res.Header
	out := rs.ae.choose(rs.st.cfg.Server.Compress)
	head := res.Request.Method == http.MethodHead || rs.mdHead
	if out == identity && coding == identity && res.ContentLength >= 0 {
		n := res.ContentLength + int64(delta)
		res.ContentLength = n
		if vs := h["Content-Length"]; len(vs) == 1 {
			// The transport's value slice, made for this response alone:
			// overwritten in place, not replaced.
			vs[0] = strconv.FormatInt(n, 10)
		} else {
			hset(h, "Content-Length", strconv.FormatInt(n, 10))
		}
	} else {
		hdel(h, "Content-Length")
		// ReverseProxy flushes after every write when the length is
		// unknown (-1); at 0 it leaves flushing to the response writer's
		// timer (flush.go).
		res.ContentLength = 0
		if !head {
			rs.w.lat = &latency{flush: rs.w.flush}
		}
	}
	if out == identity {
		hdel(h, "Content-Encoding")
	} else {
		hset(h, "Content-Encoding", out)
		if !head {
			rs.w.startEncoding(out)
		}
	}
	addVary(h, "Accept-Encoding")
}

// encodeUnchanged sends an answer headgate asked for uncompressed
// (rs.upIdentity) and passes on as it came, a page it read and did not
// change (passUnchanged) or anything else it does not rewrite
// (encodeOnBehalf), as the client would have had it had headgate asked
// for the client's codings: compressed when the client accepts a coding
// of server.compress, a HEAD's headers as its GET's. The upstream's bytes
// headers then describe other bytes, and the ETag becomes headgate's (the
// coding is headgate's, not the upstream's), mapped back on revalidation.
func (rs *reqState) encodeUnchanged(res *http.Response) {
	h := res.Header
	rs.encodeAnswer(res, identity, 0)
	if hget(h, "Content-Encoding") == "" {
		return
	}
	for _, k := range upstreamBytesHeaders {
		delete(h, k)
	}
	// headgate's own tag, as on a rewritten page: If-None-Match maps it
	// back (rewriteRequest) and the upstream's 304 is given it again, so
	// that GET, HEAD and 304 carry one tag (RFC 9111 §4.3.4).
	if tag := hget(h, "Etag"); tag != "" && !strings.HasPrefix(tag, etagPrefix) {
		if w := wrapETag(tag, rs.st.cfg.ETagHash()); w != "" {
			hset(h, "Etag", w)
		} else {
			delete(h, "Etag")
		}
	}
}

// passUnchanged sends a page the rewriter read but did not change (or, in
// shadow mode, would have): the upstream's own bytes, coding and length,
// with the headers its outcome calls for.
func (p *Proxy) passUnchanged(res *http.Response, rs *reqState, rr *rewrite.Reader, dec codec.Decoder, coding string, rewritten, panicked bool) {
	st, cfg, body, h := rs.st, rs.st.cfg, rs.body, res.Header
	res0 := rr.Result()
	if dec != nil {
		body.replay()
		res.Body = body
		dec.Release()
	} else {
		rs.rbodyv = rewrittenBody{r: rr, up: body, coding: coding}
		res.Body = &rs.rbodyv
	}
	switch {
	case st.shadow && rewritten:
		p.logShadow(rs, res0)
		if cfg.Server.ChangeHeader {
			hset(h, "Headgate-Changes", changeHeader(res0, rs.m))
		}
	case !st.shadow && res0.Outcome == rewrite.Unchanged && !panicked:
		// The upstream's bytes, but under this config: tie the ETag to
		// it, so a config that would change the page is never
		// answered with a 304 for the old one.
		if tag := wrapETag(hget(h, "Etag"), cfg.ETagHash()); tag != "" {
			hset(h, "Etag", tag)
		}
		p.applyHeaders(res, rs, res0.Head, false)
	case !st.shadow:
		// Skipped (too large, charset, truncated) or failed: §4.8 headers.
		p.applyHeaders(res, rs, nil, true)
	}
	if res0.Outcome == rewrite.SkippedTooLarge || res0.Outcome == rewrite.SkippedCharset || res0.Outcome == rewrite.UnchangedTruncated {
		p.log.Info("head not rewritten", "path", rs.m.Path, "outcome", res0.Outcome, "reason", res0.Reason)
	}
	if dec == nil && rs.upIdentity {
		rs.encodeUnchanged(res)
	}
	p.finishHeaders(h, rs)
}

// upstreamBytesHeaders describe the upstream's bytes, which a rewritten
// body no longer is: its ranges and digests. They are deleted from the map
// directly, in canonical form (textproto.CanonicalMIMEHeaderKey(k) == k,
// TestCanonicalHeaderKeys), which spares Del's canonicalization on every
// rewritten response.
var upstreamBytesHeaders = [...]string{"Accept-Ranges", "Content-Md5", "Digest", "Content-Digest", "Repr-Digest"}

// prepare runs Prepare; a panic in the rewriter is returned, not raised,
// so that the page can fail open.
func prepare(rr *rewrite.Reader) (err error, panicked any) {
	defer func() {
		if v := recover(); v != nil {
			panicked = v
		}
	}()
	return rr.Prepare(), nil
}

// headResponse gives a HEAD the headers its GET would most likely get.
func (p *Proxy) headResponse(res *http.Response, rs *reqState) {
	st, cfg, h := rs.st, rs.st.cfg, res.Header
	rs.outcome, rs.skip = Passthrough, SkipHEAD
	if !st.shadow {
		if tag := wrapETag(hget(h, "Etag"), cfg.ETagHash()); tag != "" {
			hset(h, "Etag", tag)
		}
		hdel(h, "Accept-Ranges")
		hdel(h, "Content-Length")
		res.ContentLength = 0
		if out := rs.ae.choose(cfg.Server.Compress); out == identity {
			hdel(h, "Content-Encoding")
		} else {
			hset(h, "Content-Encoding", out)
		}
		addVary(h, "Accept-Encoding")
		p.applyHeaders(res, rs, nil, false)
	}
	p.finishHeaders(h, rs)
}

// applyHeaders writes the rule headers of §4.9 and, with asHeaders, the
// canonical and robots of §4.8 as Link and X-Robots-Tag, on a successful
// (2xx) or 304 response of a path rules match. head is the rendered head
// when the rewriter made one.
func (p *Proxy) applyHeaders(res *http.Response, rs *reqState, head *rules.Head, asHeaders bool) {
	if !(res.StatusCode >= 200 && res.StatusCode < 300 || res.StatusCode == http.StatusNotModified) {
		return
	}
	rendered := head == nil
	h := res.Header
	writeCanonical := true
	if rendered {
		if !needsHead(rs.m, asHeaders) {
			return
		}
		var page rules.Page
		if asHeaders && rs.m.KeepsUpstreamCanonical() {
			// upstream-or-self on a response headgate does not read (§16.4):
			// the upstream's canonical is its Link header. Without one, an
			// HTML page (or a 304, which does not say) keeps the canonical
			// its own head holds, unseen: a self Link could contradict it.
			var present bool
			if page.Canonical, present = upstreamLinkCanonical(h, rs.m); !present {
				writeCanonical = !htmlType(hget(h, "Content-Type")) && hget(h, "Content-Type") != ""
			}
		}
		head = rs.m.Render(page)
		p.m.countDropped(head.Dropped)
	}
	robotsSet := false
	if asHeaders {
		if head.Canonical != nil && writeCanonical {
			setCanonicalLink(h, *head.Canonical)
		}
		if head.Robots != nil {
			hset(h, "X-Robots-Tag", *head.Robots)
			robotsSet = true
		}
		if head.HreflangTable {
			setAlternateLinks(h, head.Alternates)
		}
	}
	for _, hv := range head.Headers {
		if robotsSet && hv.Name == "x-robots-tag" {
			h.Add(hv.Name, hv.Value)
		} else {
			h.Set(hv.Name, hv.Value)
		}
	}
	for _, d := range head.Dropped {
		rs.st.warnOnce(p.log, d)
		if !rendered && d.Reason == "header_value" {
			// The rewriter's changes count its URL drops; header values
			// are the proxy's own.
			p.m.urlsDropped.WithLabelValues(d.Reason).Inc()
		}
	}
}

// upstreamLinkCanonical is the target of the upstream's Link canonical,
// made absolute against the page's public address; "" when it fails the
// URL rules (§4.6), so that self replaces it. present reports whether the
// upstream sent a canonical Link at all.
func upstreamLinkCanonical(h http.Header, m *rules.Match) (abs string, present bool) {
	vs := hvalues(h, "Link")
	if len(vs) == 0 {
		return "", false
	}
	for _, l := range linkheader.Parse(vs) {
		if !l.Has("canonical") {
			continue
		}
		base, err := url.Parse(m.SelfURL(false))
		if err != nil {
			return "", true
		}
		abs, why := rules.AbsUpstreamURL(base, l.Target)
		if why != "" {
			return "", true
		}
		return abs, true
	}
	return "", false
}

// needsHead reports whether a matched rule sets anything that goes into
// headers, so that rendering is skipped for the rest.
func needsHead(m *rules.Match, asHeaders bool) bool {
	if asHeaders && m.Data() {
		return true // a page_table row or an hreflang group (§12)
	}
	for _, mr := range m.Matched {
		r := mr.Rule
		if len(r.Headers) > 0 || asHeaders && (r.Canonical != nil || r.Robots != nil || r.Localized || m.Config().HreflangTables()) {
			return true
		}
	}
	return false
}

// finishHeaders applies what holds for every proxied response.
func (p *Proxy) finishHeaders(h http.Header, rs *reqState) {
	if rs.st.staging {
		hset(h, "X-Robots-Tag", stagingRobots)
	}
}

// setCanonicalLink replaces any canonical in the Link header with url,
// keeping the other links.
func setCanonicalLink(h http.Header, url string) {
	linkheader.Replace(h, func(l linkheader.Link) bool { return l.Has("canonical") }, linkheader.Format(url, "canonical"))
}

func addVary(h http.Header, token string) {
	for _, v := range hvalues(h, "Vary") {
		for v != "" {
			var t string
			t, v, _ = strings.Cut(v, ",")
			if t = strings.TrimSpace(t); t == "*" || strings.EqualFold(t, token) {
				return
			}
		}
	}
	if vs, ok := h["Vary"]; ok {
		h["Vary"] = append(vs, token)
	} else if token == "Accept-Encoding" {
		// The common case, spared an allocation: the slice is shared and
		// full (len == cap), so an append to it elsewhere copies it.
		h["Vary"] = varyAcceptEncoding[:1:1]
	} else {
		h["Vary"] = []string{token}
	}
}

var varyAcceptEncoding = []string{"Accept-Encoding"}

// changeHeader is the Headgate-Changes value:
// wrote=9 replaced=2 corrected=1 dropped=1; rules="/*" "/notes/:id".
func changeHeader(res *rewrite.Result, m *rules.Match) string {
	var b strings.Builder
	fmt.Fprintf(&b, "wrote=%d replaced=%d corrected=%d dropped=%d; rules=",
		res.Count(rewrite.Wrote), res.Count(rewrite.Replaced), res.Count(rewrite.Corrected), res.Count(rewrite.Dropped))
	for i, pat := range m.Patterns() {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Quote(pat))
	}
	return sanitizeHeader(b.String())
}

// sanitizeHeader keeps a value headgate builds from config text a valid
// header: control characters are replaced.
func sanitizeHeader(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
}

func (p *Proxy) logShadow(rs *reqState, res *rewrite.Result) {
	changes := make([]string, len(res.Changes))
	for i, c := range res.Changes {
		s := string(c.Action) + " " + c.Label()
		if c.Value != "" {
			s += " " + strconv.Quote(c.Value)
		}
		if c.Reason != "" {
			s += " (" + c.Reason + ")"
		}
		changes[i] = s
	}
	p.log.Info("shadow: would change the head", "path", rs.m.Path, "changes", changes)
}

// warnOnce logs a refused rule value once per config, rule, field and reason.
func (st *state) warnOnce(log *slog.Logger, d rules.Drop) {
	key := d.Rule + "\x00" + d.Field + "\x00" + d.Reason
	if _, seen := st.warned.LoadOrStore(key, true); seen {
		return
	}
	log.Warn("rule value not written", "rule", d.Rule, "field", d.Field, "reason", d.Reason, "value", d.Value)
}

// isAttachment reports whether a Content-Disposition says "attachment"
// (RFC 6266: the type, case-insensitive, before any parameter).
func isAttachment(cd string) bool {
	t, _, _ := strings.Cut(cd, ";")
	return strings.EqualFold(strings.TrimSpace(t), "attachment")
}
