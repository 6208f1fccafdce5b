package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/net/html/charset"

	"github.com/headgate/headgate/internal/codec"
	"github.com/headgate/headgate/markdown"
	"github.com/headgate/headgate/rewrite"
	"github.com/headgate/headgate/rules"
)

// Markdown for agents (SPEC §19.1) and AI-use preferences (§19.2).
//
// ServeHTTP decides, before the request goes upstream, whether the client
// wants a page's Markdown (markdownRequest): an Accept that ranks
// text/markdown above text/html, or the suffix path form, on a path under
// markdown.match. The path form is resolved, denied and redirected as its
// page, and the upstream is asked for the page's HTML. decideResponse then
// converts a page (GET or HEAD, 200, HTML, rewrite on) in markdownBody:
// the upstream body decoded, rewritten by the rules as for the HTML answer,
// read up to markdown.max_bytes, its served head read for the front matter,
// and converted. Any failure answers the rewritten HTML instead (fail
// open, counted in headgate_markdown_fallbacks_total and logged).
//
// Every HTML answer of a page with a Markdown version says Vary: Accept
// and links the Markdown with a Link header (agentHeaders); its head gets
// the alternate <link> from the rules (rules.Head.Markdown), the same head
// for every client.

// Markdown is the outcome of a request answered with the page's Markdown.
const Markdown Outcome = "markdown"

// MarkdownRecord is Record.Markdown: whether the path has a Markdown
// version, whether the request asked for it, the conversion's figures, or
// why the page was answered as HTML.
type MarkdownRecord struct {
	// Link is the alternate Link header value naming the Markdown
	// version, as the page's HTML answers carry it; "" when the path has
	// none (None says why).
	Link string
	// None is why the path has no Markdown version: "not under
	// markdown.match" or "rewrite = false"; "" when it has one.
	None string
	// Wanted: the request asked for the Markdown (an Accept ranking
	// text/markdown above text/html, or the path form).
	Wanted bool
	// PathForm: the request named the suffix path form (/notes/3.md).
	PathForm bool
	// HeadOnly: a HEAD, answered with the headers of the GET (the page
	// read and converted, SPEC §19.1's X-Markdown-Tokens included) and no
	// body.
	HeadOnly bool
	// Coding is the content coding the answer went out in ("identity"
	// when none); "" when nothing was answered from the page.
	Coding string
	// Stats are the converter's, when it converted.
	Stats markdown.Stats
	// Fallback is why the page went out as HTML ("too_large", "charset",
	// "convert", "read", "busy"); "" when the Markdown went out.
	Fallback string
	// Err is the error behind Fallback, for people.
	Err string
}

// markdownVersion is Record.Markdown of a request that converted nothing:
// whether its path has a Markdown version; nil without [markdown]. Only
// an observed request pays for it.
func markdownVersion(rs *reqState) *MarkdownRecord {
	if rs.m == nil || rs.st.cfg.Markdown == nil {
		return nil
	}
	r := &MarkdownRecord{Wanted: rs.mdWant, PathForm: rs.mdPage != "", Link: rs.m.MarkdownLink()}
	switch {
	case r.Link != "":
	case !rs.m.Rewrite():
		r.None = "rewrite = false"
	default:
		r.None = "not under markdown.match"
	}
	return r
}

// markdownMetrics counts the Markdown answers headgate fell back from.
type markdownMetrics struct {
	fallbacks *prometheus.CounterVec // reason
}

func newMarkdownMetrics(reg prometheus.Registerer, m *metrics) (*markdownMetrics, error) {
	mm := &markdownMetrics{fallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "headgate_markdown_fallbacks_total",
		Help: "Requests for a page's Markdown answered with its HTML instead (fail open), by reason: too_large, charset, convert, read, busy (every conversion slot stayed taken).",
	}, []string{"reason"})}
	if err := reg.Register(mm.fallbacks); err != nil {
		return nil, err
	}
	m.requests.WithLabelValues(string(Markdown))
	return mm, nil
}

// markdownRequest is ServeHTTP's step for [markdown]: it notes whether the
// client wants the page's Markdown and, for the suffix path form, resolves
// the page it names in place of the request (target becomes the page's).
// It reports true when it answered (the page is denied).
func (p *Proxy) markdownRequest(rs *reqState, r *http.Request, path string, target *string) bool {
	st := rs.st
	md := st.cfg.Markdown
	page, ok := md.PagePath(path)
	if ok && !md.Covers(page) {
		// Redirects apply to the path form too (§19.1): /old.md → /new.md
		// when /new has a Markdown version, whether or not /old has;
		// p.redirect answers it, with the path form of its Location.
		if t := withQuery(page, *target); p.redirectsToMarkdown(rs, r, t) {
			rs.mdPage, *target = page, t
			return false
		}
		ok = false
	}
	if ok {
		rs.mdPage, *target = page, withQuery(page, *target)
		rs.m.Release()
		rs.m = st.cfg.PooledMatch()
		st.cfg.ResolveInto(rs.m, *target)
		if rs.m.Deny {
			rs.outcome, rs.kind = Denied, KindDeny
			errorPage(rs.w, http.StatusNotFound, "There is nothing at this address.")
			return true
		}
		rs.mdWant = true
		return false
	}
	if accept := hvalues(r.Header, "Accept"); len(accept) > 0 && mentionsMarkdown(accept) && md.Covers(path) {
		a := accept[0]
		if len(accept) > 1 {
			a = strings.Join(accept, ", ")
		}
		rs.mdWant = markdown.Prefers(a)
	}
	return false
}

// withQuery is path with target's query, if it has one.
func withQuery(path, target string) string {
	if _, query, ok := strings.Cut(target, "?"); ok {
		return path + "?" + query
	}
	return path
}

// redirectsToMarkdown reports whether a redirect answers target (a page
// path and query) with a Location on the site whose page has a Markdown
// version.
func (p *Proxy) redirectsToMarkdown(rs *reqState, r *http.Request, target string) bool {
	st := rs.st
	if !st.redirects {
		return false
	}
	https := st.cfg.Normalize.HTTPS && st.trust.HTTPS(r)
	var rd rules.Redirect
	ok, err := st.cfg.RedirectInto(rules.RedirectRequest{Method: r.Method, Host: r.Host, HTTPS: https, Target: target}, &rd)
	if !ok || err != nil || rd.Location == "" {
		return false
	}
	u, err := url.Parse(rd.Location)
	if err != nil || u.Opaque != "" || u.Host != "" && !strings.EqualFold(u.Scheme+"://"+u.Host, st.cfg.Site.BaseURL) {
		return false
	}
	loc := u.EscapedPath()
	if loc == "" {
		loc = "/"
	}
	return st.cfg.Markdown.Covers(loc)
}

// mentionsMarkdown reports whether an Accept names "markdown" in any case:
// the header of nearly every request does not, and is not parsed. It
// looks for the word's k, a letter few Accept values hold, with
// strings.IndexByte rather than byte by byte.
func mentionsMarkdown(vs []string) bool {
	for _, v := range vs {
		if markdownAtK(v, 'k') || markdownAtK(v, 'K') {
			return true
		}
	}
	return false
}

// markdownAtK reports whether v holds "markdown", in any case, whose k is
// the byte k.
func markdownAtK(v string, k byte) bool { return wordAt(v, "markdown", 3, k) }

// markdownUpstream shapes the upstream request of a Markdown answer: the
// page's path for the path form, and the HTML the page is made from (an
// Accept for HTML, a GET for a HEAD so that the headers can say what the
// body would, no condition or range on the HTML's validators).
func markdownUpstream(pr *httputil.ProxyRequest, rs *reqState) {
	out := pr.Out
	rs.mdHead = pr.In.Method == http.MethodHead
	if rs.mdPage != "" {
		if dec, err := url.PathUnescape(rs.mdPage); err == nil {
			out.URL.Path, out.URL.RawPath = dec, rs.mdPage
		}
	}
	out.Method = http.MethodGet
	hset(out.Header, "Accept", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8")
	for _, k := range [...]string{"If-None-Match", "If-Match", "If-Modified-Since", "If-Unmodified-Since", "If-Range", "Range"} {
		hdel(out.Header, k)
	}
}

// markdownLocation maps a redirect of the path form's page to the path
// form of its target (/old.md → /new.md): a Location on the site's
// origin, or a path, gets the suffix form of its path; another origin's
// is left as it is.
func markdownLocation(md *rules.Markdown, origin, loc string) string {
	u, err := url.Parse(loc)
	if err != nil || u.Opaque != "" {
		return loc
	}
	if u.Host != "" && !strings.EqualFold(u.Scheme+"://"+u.Host, origin) {
		return loc
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	form := md.FormPath(p)
	if dec, err := url.PathUnescape(form); err == nil {
		u.Path, u.RawPath = dec, form
	}
	return u.String()
}

// markdownBody answers a page with its Markdown, or, failing, with its
// rewritten HTML. The whole page is read here (at most max_bytes of it,
// decoded): a converter needs all of it. A HEAD is read and converted as
// the GET is, so that its headers are the GET's, X-Markdown-Tokens and
// an identity Content-Length included (SPEC §19.1, RFC 9110 §9.3.2).
func (p *Proxy) markdownBody(res *http.Response, rs *reqState, coding string) (rerr error) {
	st, cfg, body, h := rs.st, rs.st.cfg, rs.body, res.Header
	md := cfg.Markdown
	rs.mdRec = &MarkdownRecord{Wanted: true, PathForm: rs.mdPage != "", HeadOnly: rs.mdHead, Link: rs.m.MarkdownLink()}
	var busy error
	{ // before upstream_timeout's clock: the wait is headgate's
		b, done, err := p.takeSlot(res, cfg.Server.UpstreamTimeout)
		if err != nil {
			return body.failed(err)
		}
		if busy = b; done != nil {
			defer func() { done(rerr) }()
		}
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
	ct := hget(h, "Content-Type")
	rr := &rs.rrv
	rr.Reset(src, rewrite.Options{
		Match:           rs.m,
		ContentType:     ct,
		CSP:             hget(h, "Content-Security-Policy"),
		MaxHeadBytes:    cfg.Server.MaxHeadBytes,
		CorrectUpstream: cfg.Site.CorrectUpstream,
		Cache:           st.plans,
		Observe:         rs.rewriteObserver(hookOf(res.Request.Context())),
	})
	// upstream_timeout times the page's head, as on the HTML path; the
	// rest comes at the upstream's pace, as HTML streams.
	p.clocks.start(&rs.clock, phaseHead, cfg.Server.UpstreamTimeout)
	err, panicked := prepare(rr)
	p.clocks.stop(&rs.clock)
	rs.mdHeadRead = err == nil && panicked == nil
	var page []byte
	switch {
	case err != nil || panicked != nil || busy != nil:
	default:
		hint := int64(-1)
		if coding == identity {
			hint = res.ContentLength
		}
		page, err = readUpTo(rr, md.MaxBytes, hint)
	}
	if rs.obs != nil {
		rs.result = rr.Result()
	}
	if err != nil && !errors.Is(err, errPageTooLarge) || panicked != nil {
		if panicked != nil {
			err = fmt.Errorf("rewriter panic: %v", panicked)
		}
		if dec != nil {
			dec.Release()
			if body.err == nil {
				err = fmt.Errorf("%w: %s: %w", codec.ErrBadEncoding, coding, err)
			}
		}
		return body.failed(err)
	}
	res0 := rr.Result()
	p.m.countResult(res0)
	switch {
	case busy != nil && res0.Outcome != rewrite.SkippedFragment:
		return p.markdownFallback(res, rs, page, rr, dec, res0, "busy", busy)
	case res0.Outcome == rewrite.SkippedFragment:
		// Not a page: the upstream's answer as it is (its bytes, read
		// back through the rewriter, which changed none).
		rs.mdRec = nil
		rs.outcome, rs.skip = Outcome(res0.Outcome), SkipNone
		return p.markdownAsHTML(res, rs, page, rr, dec, res0)
	case errors.Is(err, errPageTooLarge):
		return p.markdownFallback(res, rs, page, rr, dec, res0, "too_large", err)
	case rs.mdHead && coding == identity && res.ContentLength > md.MaxBytes:
		// What the GET would find, known from the length alone.
		return p.markdownFallback(res, rs, page, rr, dec, res0, "too_large", fmt.Errorf("%w (%d bytes)", errPageTooLarge, md.MaxBytes))
	case res0.Outcome == rewrite.SkippedCharset:
		return p.markdownFallback(res, rs, page, rr, dec, res0, "charset", errors.New(res0.Reason))
	}
	utf8Page, err := toUTF8(page, ct)
	if err != nil {
		return p.markdownFallback(res, rs, page, rr, dec, res0, "charset", err)
	}
	front, robots := servedHead(utf8Page)
	if front.URL == "" {
		front.URL = rs.m.SelfURL(false)
	}
	conv := md.Converter
	if base, err := url.Parse(front.URL); err == nil {
		conv = conv.WithBase(base)
	}
	out := new(bytes.Buffer)
	stats, err := conv.ConvertBytes(out, utf8Page, front)
	if err != nil {
		reason := "convert"
		if errors.Is(err, markdown.ErrTooLarge) {
			reason = "too_large"
		}
		return p.markdownFallback(res, rs, page, rr, dec, res0, reason, err)
	}
	rs.mdRec.Stats = stats
	rs.outcome = Markdown
	if dec != nil {
		dec.Release()
	}
	body.Close()
	p.markdownHeaders(res, rs, res0, out, front.URL, robots)
	return nil
}

// takeSlot waits up to wait for a conversion slot. It returns busy when
// none came free (the page goes out as HTML), an error when the client
// went away, or done, which the answer calls with its error: the slot then
// rides on the answer's body until it is closed (slotBody), or is given
// back at once when there is no body to send.
func (p *Proxy) takeSlot(res *http.Response, wait time.Duration) (busy error, done func(error), err error) {
	switch err := p.mdSlots.acquire(res.Request.Context(), wait); {
	case errors.Is(err, errNoSlot):
		return err, nil, nil
	case err != nil:
		return nil, nil, err
	}
	return nil, func(rerr error) {
		if rerr == nil && res.Body != nil && res.Body != http.NoBody {
			res.Body = &slotBody{ReadCloser: res.Body, slots: &p.mdSlots}
			return
		}
		p.mdSlots.release()
	}, nil
}

// markdownHeaders writes a Markdown answer's headers and body: out, in the
// coding the client's Accept-Encoding chooses among server.compress, as
// the HTML path does; for a HEAD, the same headers and no body.
func (p *Proxy) markdownHeaders(res *http.Response, rs *reqState, res0 *rewrite.Result, out *bytes.Buffer, canonical, robots string) {
	h := res.Header
	for _, k := range [...]string{"Content-Encoding", "Content-Length", "Etag", "Last-Modified", "Content-Disposition", "Content-Security-Policy"} {
		delete(h, k)
	}
	for _, k := range upstreamBytesHeaders {
		delete(h, k)
	}
	hset(h, "Content-Type", "text/markdown; charset=utf-8")
	hset(h, "X-Content-Type-Options", "nosniff")
	addVary(h, "Accept")
	coding := p.markdownCoding(res, rs)
	switch {
	case rs.mdHead:
		// The GET's headers, with no body (RFC 9110 §9.3.2).
		if coding == identity {
			hset(h, "Content-Length", strconv.Itoa(out.Len()))
		}
		res.Body, res.ContentLength = http.NoBody, 0
	case coding == identity:
		res.Body, res.ContentLength = io.NopCloser(out), int64(out.Len())
		hset(h, "Content-Length", strconv.Itoa(out.Len()))
	default:
		// Encoded as it is written (body.go's responseWriter); 0, not
		// -1: ReverseProxy leaves the flushing to the end.
		res.Body, res.ContentLength = io.NopCloser(out), 0
	}
	if res0.Head != nil {
		for _, hv := range res0.Head.Headers {
			h.Set(hv.Name, hv.Value)
		}
	}
	setCanonicalLink(h, canonical)
	if v := markdownRobots(h["X-Robots-Tag"], robots); v != nil {
		h["X-Robots-Tag"] = v
	}
	hset(h, "X-Markdown-Tokens", strconv.FormatInt(rs.mdRec.Stats.Tokens, 10))
	p.finishHeaders(h, rs)
}

// markdownCoding chooses the coding of an answer made from the page (its
// Markdown, or its HTML after a fallback) by the client's Accept-Encoding
// and server.compress, as rewriteBody does, says it in Content-Encoding
// and Vary, and starts the response writer's encoder for a GET. It
// returns the coding.
func (p *Proxy) markdownCoding(res *http.Response, rs *reqState) string {
	h := res.Header
	coding := rs.ae.choose(rs.st.cfg.Server.Compress)
	addVary(h, "Accept-Encoding")
	if rs.mdRec != nil {
		rs.mdRec.Coding = coding
	}
	if coding == identity {
		hdel(h, "Content-Encoding")
		return identity
	}
	hset(h, "Content-Encoding", coding)
	hdel(h, "Content-Length")
	if !rs.mdHead {
		rs.w.startEncoding(coding)
	}
	return coding
}

// errPageTooLarge: the page is longer than markdown.max_bytes.
var errPageTooLarge = errors.New("page larger than markdown.max_bytes")

// readUpTo reads r to its end, or to limit bytes and one more, which is
// errPageTooLarge (the bytes read are returned with it). hint is the
// length r will likely have (the upstream's Content-Length), -1 when
// unknown: the buffer is made that large at once.
func readUpTo(r io.Reader, limit, hint int64) ([]byte, error) {
	var buf bytes.Buffer
	if hint >= 0 {
		buf.Grow(int(min(hint, limit)) + bytes.MinRead)
	}
	n, err := io.Copy(&buf, io.LimitReader(r, limit+1))
	if err != nil {
		return buf.Bytes(), err
	}
	if n > limit {
		return buf.Bytes(), fmt.Errorf("%w (%d bytes)", errPageTooLarge, limit)
	}
	return buf.Bytes(), nil
}

// convSlots holds a slot for every Markdown answer being read, converted
// and sent (markdownBody, until its body is closed), so that the pages and
// outputs held at once are bounded whatever the number of requests and
// however slowly their clients read: at most this many times max_bytes
// plus the Markdown made of it. A conversion is CPU work, so more at once
// than twice the cores would not finish sooner. A request waits for a slot
// holding only its upstream connection, not yet read, and for at most
// upstream_timeout: then it is answered the page's HTML, streamed (fail
// open, counted as the fallback "busy"), so clients that never read can
// take the slots but not the site.
type convSlots struct {
	once sync.Once
	ch   chan struct{}
}

func (s *convSlots) slots() chan struct{} {
	s.once.Do(func() { s.ch = make(chan struct{}, max(4, 2*runtime.GOMAXPROCS(0))) })
	return s.ch
}

// errNoSlot is acquire's answer when no slot came free in time.
var errNoSlot = errors.New("every Markdown conversion slot stayed taken")

// acquire waits for a slot for at most wait, or until ctx (the client
// going away) ends.
func (s *convSlots) acquire(ctx context.Context, wait time.Duration) error {
	ch := s.slots()
	select {
	case ch <- struct{}{}:
		return nil
	default:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case ch <- struct{}{}:
		return nil
	case <-t.C:
		return fmt.Errorf("%w for %v", errNoSlot, wait)
	case <-ctx.Done():
		return fmt.Errorf("waiting for a Markdown conversion slot: %w", context.Cause(ctx))
	}
}

func (s *convSlots) release() { <-s.slots() }

// slotBody is a Markdown answer's body (or the HTML it fell back to)
// holding its conversion slot until the proxy closes it, after the last
// byte went to the client or the client went away.
type slotBody struct {
	io.ReadCloser
	slots *convSlots
	done  bool
}

func (b *slotBody) Close() error {
	err := b.ReadCloser.Close()
	if !b.done {
		b.done = true
		b.slots.release()
	}
	return err
}

// markdownFallback answers the page's HTML, as headgate serves it, after a
// conversion that could not be made; it counts and logs why.
func (p *Proxy) markdownFallback(res *http.Response, rs *reqState, page []byte, rr *rewrite.Reader, dec codec.Decoder, res0 *rewrite.Result, reason string, err error) error {
	rs.mdRec.Fallback, rs.mdRec.Err = reason, err.Error()
	p.mm.fallbacks.WithLabelValues(reason).Inc()
	p.log.Info("markdown not made: the page is answered as HTML", "path", rs.m.Path, "reason", reason, "err", err)
	rs.outcome = Outcome(res0.Outcome)
	return p.markdownAsHTML(res, rs, page, rr, dec, res0)
}

// markdownAsHTML sends the page's HTML: the bytes read so far, then the
// rest of the rewriter's output, decoded and encoded again in the coding
// the client accepts (markdownCoding); for a HEAD, no body.
func (p *Proxy) markdownAsHTML(res *http.Response, rs *reqState, page []byte, rr *rewrite.Reader, dec codec.Decoder, res0 *rewrite.Result) error {
	h := res.Header
	if rs.mdHead {
		if dec != nil {
			dec.Release()
		}
		rs.body.Close()
		res.Body = http.NoBody
	} else {
		res.Body = &pageBody{r: io.MultiReader(bytes.NewReader(page), rr), dec: dec, up: rs.body}
	}
	res.ContentLength = -1
	for _, k := range [...]string{"Content-Length", "Content-Encoding", "Etag"} {
		delete(h, k)
	}
	for _, k := range upstreamBytesHeaders {
		delete(h, k)
	}
	if p.markdownCoding(res, rs) != identity {
		res.ContentLength = 0 // encoded as written; flushed at the end
	}
	if res0.Outcome == rewrite.Rewritten || res0.Outcome == rewrite.Unchanged {
		p.applyHeaders(res, rs, res0.Head, false)
	} else {
		p.applyHeaders(res, rs, nil, true)
	}
	p.finishHeaders(h, rs)
	return nil
}

// pageBody is markdownAsHTML's body: the page read so far, then the rest.
type pageBody struct {
	r   io.Reader
	dec codec.Decoder
	up  *upstreamBody
}

func (b *pageBody) Read(p []byte) (int, error) { return b.r.Read(p) }

func (b *pageBody) Close() error {
	if b.dec != nil {
		b.dec.Release()
		b.dec = nil
	}
	return b.up.Close()
}

// toUTF8 decodes a page to UTF-8 by its Content-Type and meta charset;
// an error when the charset is not one headgate can decode.
func toUTF8(b []byte, contentType string) ([]byte, error) {
	enc, name, _ := charset.DetermineEncoding(b[:min(len(b), 1024)], contentType)
	if name == "utf-8" || enc == nil {
		return b, nil
	}
	d, err := enc.NewDecoder().Bytes(b)
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %w", name, err)
	}
	return d, nil
}

// agentHeaders writes what §19 adds to every proxied answer: on a
// successful answer of a path a content_signal rule applies to,
// Content-Signal and Content-Usage (§19.2); on every HTML answer of a page
// with a Markdown version, Vary: Accept and the Link to the Markdown.
func (p *Proxy) agentHeaders(res *http.Response, rs *reqState) {
	if rs.m == nil || !(res.StatusCode >= 200 && res.StatusCode < 300 || res.StatusCode == http.StatusNotModified) {
		return
	}
	h := res.Header
	if cs := rs.m.ContentSignal(); cs != nil {
		hset(h, "Content-Signal", cs.Line())
		if cu := cs.ContentUsage(); cu != "" {
			hset(h, "Content-Usage", cu)
		}
	}
	// decideResponse asked already: for a 200 to a GET or HEAD, SkipMethod
	// and SkipNotHTML are the answers that are no HTML page, and
	// SkippedFragment (the rewriter read the head before the headers go
	// out) is HTML that is no page, so has no Markdown version (§19.1).
	if rs.st.cfg.Markdown == nil || rs.st.shadow || rs.outcome == Markdown || res.StatusCode != http.StatusOK || rs.skip == SkipNotHTML || rs.skip == SkipMethod || rs.outcome == SkippedFragment {
		return
	}
	// The Match's own string (made once, with the head's alternate link
	// when the head was rendered), not bytes of the request's state:
	// net/http may write the header after the handler returned and the
	// state went back to reqStates (Proxy.release).
	link := rs.m.MarkdownLink()
	if link == "" {
		return
	}
	if vs := h["Vary"]; len(vs) == 1 && &vs[0] == &varyAcceptEncoding[0] {
		h["Vary"] = varyAcceptEncodingAccept // rewriteBody's, and ours: shared, full
	} else {
		addVary(h, "Accept")
	}
	if vs, ok := h["Link"]; ok {
		h["Link"] = append(vs, link) // after the upstream's, as before
		return
	}
	// None from the upstream: straight into the client's header, where
	// handOver would move it (and where headgate's own, if any, come first).
	dst := rs.w.Header()
	if vs, ok := dst["Link"]; ok {
		dst["Link"] = append(vs, link)
	} else {
		dst["Link"] = []string{link}
	}
}

var varyAcceptEncodingAccept = []string{"Accept-Encoding", "Accept"}
