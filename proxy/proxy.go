package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/headgate/headgate/insight"
	"github.com/headgate/headgate/internal/clientaddr"
	"github.com/headgate/headgate/internal/codec"
	"github.com/headgate/headgate/rewrite"
	"github.com/headgate/headgate/rules"
	"github.com/headgate/headgate/sitemap"
	"github.com/headgate/headgate/watch"
)

// Options configures a Proxy. The zero value works.
type Options struct {
	// Logger receives the access log and every operational message; nil
	// discards them.
	Logger *slog.Logger
	// Registry receives headgate's metrics and serves /metrics; nil means a
	// new registry with the Go and process collectors.
	Registry *prometheus.Registry
	// Transport carries requests to the upstream; nil means headgate's
	// own (h1Transport, proxy/h1.go: GETs and HEADs without a body on its
	// own pooled connections, the rest through a tuned *http.Transport;
	// compression off, 256 idle connections per host), one for the
	// Proxy's life, kept across reloads and closed by Close;
	// server.upstream_timeout is each request's own clock.
	Transport http.RoundTripper
	// Sitemap builds the handler of headgate's own endpoints (/sitemap.xml,
	// /robots.txt) for a config; it is called again on every reload. fetch
	// GETs a path from the upstream. nil: no such endpoints, everything is
	// forwarded.
	Sitemap func(cfg *rules.Config, fetch func(ctx context.Context, path string) (io.ReadCloser, error)) SitemapHandler
	// Demo returns the address of the builtin:demo upstream, starting it on
	// first use; nil: a config whose upstream is builtin:demo is refused.
	// cmd/headgate supplies it (app.Demo): the proxy knows no
	// demo site.
	Demo func() (*url.URL, error)
	// Next carries the requests of a config whose server.upstream is
	// builtin:next to the handler headgate wraps, in process; Middleware
	// sets it. nil: such a config is refused.
	Next http.RoundTripper
	// WebhookClient sends [watch]'s webhook; nil is a client with a 10 s
	// timeout that follows no redirect.
	WebhookClient *http.Client
	// WebhookTick says when [watch]'s webhook sends what it gathered
	// (tests inject it); nil is every 10 s.
	WebhookTick <-chan time.Time
}

// SitemapHandler answers the paths it Handles instead of the upstream.
type SitemapHandler interface {
	http.Handler
	Handles(path string) bool
}

// Proxy is the public handler: it checks and resolves each request, answers
// deny rules and the sitemap itself, and forwards the rest through an
// httputil.ReverseProxy whose ModifyResponse rewrites HTML heads.
type Proxy struct {
	log  *slog.Logger
	reg  *prometheus.Registry
	m    *metrics
	rm   *redirectMetrics
	mm   *markdownMetrics
	opts Options
	rp   *httputil.ReverseProxy
	// viaReverseProxy sends every request through rp, forward's too (for
	// TestForwardLikeReverseProxy)
	viaReverseProxy bool
	state           atomic.Pointer[state]
	swapMu          sync.Mutex // serialises Swap
	ready           readiness
	bufPool         bufferPool
	mdSlots         convSlots    // Markdown conversions in flight (markdown.go)
	idle            idleConns    // the public port's idle keep-alive connections (limits.go)
	clocks          *deadlines   // upstream_timeout's clocks (timer.go); their sweeper runs until Close
	bots            *botVerifier // [bots]' verifier, kept across reloads (bots.go); nil until enabled
	h1              *h1Transport // the upstream transport when Options has none, kept across reloads; nil until a config needs it

	insight      *insight.Tracker // §20.1, one for the Proxy's life (insight.go)
	watch        *watchState      // [watch]'s watcher, kept across reloads (watch.go); nil until enabled
	watchMetrics watchMetrics     // the current watcher's families, registered once
	misdirected  lineLimit        // the admin listener's 421 log lines (admin.go)
}

// state is everything that changes with the config; requests load it once.
type state struct {
	cfg       *rules.Config
	upstream  *url.URL
	transport http.RoundTripper
	sitemap   SitemapHandler
	shadow    bool
	staging   bool
	host      string         // the base URL's host: the Host of headgate's own upstream requests
	warned    sync.Map       // refused rule values already logged under this config
	plans     *rewrite.Cache // rewrites of heads already seen, under this config

	trust          clientaddr.Trust // server.trusted_proxies: who the client is, and its scheme
	admin          map[string]bool  // server.admin_hosts, for the admin listener's Host check
	redirects      bool             // the config redirects something (§11)
	redirectErrors redirectErrors   // requests whose redirect rules could not be followed

	bots      *botState // [bots] (bots.go); nil when off
	botHeader string    // bots.upstream_header, canonical; "" when none

	watch *watch.Watcher // [watch] (watch.go); nil when off
}

// New returns a Proxy serving cfg.
func New(cfg *rules.Config, o Options) (*Proxy, error) {
	p := &Proxy{opts: o, log: o.Logger, reg: o.Registry}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.reg == nil {
		p.reg = newRegistry()
	}
	m, err := newMetrics(p.reg)
	if err != nil {
		return nil, fmt.Errorf("registering metrics: %w", err)
	}
	p.m = m
	if p.rm, err = newRedirectMetrics(p.reg, m); err != nil {
		return nil, fmt.Errorf("registering metrics: %w", err)
	}
	if p.mm, err = newMarkdownMetrics(p.reg, m); err != nil {
		return nil, fmt.Errorf("registering metrics: %w", err)
	}
	if p.insight, err = newTracker(p); err != nil {
		return nil, fmt.Errorf("registering metrics: %w", err)
	}
	if err := p.reg.Register(&p.watchMetrics); err != nil {
		return nil, fmt.Errorf("registering metrics: %w", err)
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite:        p.rewriteRequest,
		ModifyResponse: p.modifyResponse,
		ErrorHandler:   p.proxyError,
		Transport:      roundTripperFunc(p.roundTrip),
		BufferPool:     &p.bufPool,
		ErrorLog:       slog.NewLogLogger(p.log.Handler(), slog.LevelDebug),
	}
	if err := p.Swap(cfg); err != nil {
		return nil, err
	}
	p.clocks = newDeadlines()
	return p, nil
}

// Close stops what New started: the goroutine that keeps
// server.upstream_timeout's clocks, the upstream connections idle in
// headgate's own transport (a request still in flight keeps its
// connection until it ends, then closes it), [bots]' refresh of range URLs and
// [watch]'s webhook, which first sends the events it holds (for at most
// 5 s). Call it once no request is served any more (after
// http.Server.Shutdown); a request still in flight then keeps no
// upstream_timeout. It returns the webhook's error when its last events
// could not all be sent; calling it again does nothing.
func (p *Proxy) Close() error {
	p.clocks.close()
	p.swapMu.Lock()
	if p.h1 != nil {
		p.h1.close()
	}
	p.swapMu.Unlock()
	p.closeBots()
	ctx, cancel := context.WithTimeout(context.Background(), watchCloseWait)
	defer cancel()
	return p.closeWatch(ctx)
}

// flushInterval is how soon a rewritten response's bytes reach the client
// when the upstream pauses and the client was given no length (flush.go):
// 10 ms measured no faster streaming for clients and more flushes under
// load. ReverseProxy's own FlushInterval is 0: a response whose length is
// known is written as it is read, with no timer (one less goroutine wake-up
// and lock per write), and one of unknown length passed through is flushed
// after every write.
const flushInterval = 50 * time.Millisecond

// Swap makes cfg the config of every request that starts from now on;
// requests in flight finish with the one they started with. It fails only
// when cfg's upstream can not be reached at all (builtin:demo without
// Options.Demo).
func (p *Proxy) Swap(cfg *rules.Config) error {
	p.swapMu.Lock()
	defer p.swapMu.Unlock()
	st := &state{
		plans:   rewrite.NewCache(0),
		cfg:     cfg,
		shadow:  cfg.Site.Mode == rules.ModeShadow,
		staging: cfg.Site.Mode == rules.ModeStaging,
		trust:   clientaddr.New(cfg.Server.TrustedProxies),
		admin:   adminHostSet(cfg.Server.AdminHosts),
	}
	st.redirects = cfg.HasRedirects()
	p.warnRedirects(cfg)
	if u, err := url.Parse(cfg.Site.BaseURL); err == nil {
		st.host = u.Host
	}
	if cfg.Server.Upstream == rules.BuiltinNext {
		if p.opts.Next == nil {
			return errors.New(`upstream "builtin:next" is for headgate used as a library (proxy.Middleware, the Caddy module)`)
		}
		st.upstream = nextURL
	} else if cfg.Server.Upstream == rules.BuiltinDemo {
		if p.opts.Demo == nil {
			return errors.New(`upstream "builtin:demo" needs Options.Demo (headgate's commands supply it)`)
		}
		u, err := p.opts.Demo()
		if err != nil {
			return fmt.Errorf("starting builtin:demo: %w", err)
		}
		st.upstream = u
	} else {
		u, err := url.Parse(cfg.Server.Upstream)
		if err != nil {
			return fmt.Errorf("upstream: %w", err)
		}
		st.upstream = u
	}
	st.transport = p.opts.Transport
	if st.upstream == nextURL {
		st.transport = p.opts.Next
	}
	if st.transport == nil {
		// The transport holds no setting of the config (upstream_timeout
		// is the request's own clock, timer.go): a reload keeps its
		// connections.
		if p.h1 == nil {
			p.h1 = newH1Transport(newTransport(), p.log)
		}
		st.transport = p.h1
	}
	if p.opts.Sitemap != nil {
		st.sitemap = p.opts.Sitemap(cfg, st.fetch)
	}
	if err := p.swapBots(st, cfg); err != nil {
		return err
	}
	if err := p.swapWatch(st, cfg); err != nil {
		return err
	}
	p.swapInsight(cfg) // insight.go
	p.state.Store(st)
	return nil
}

// Fetch GETs path from the upstream as headgate's own sitemap and robots.txt
// do (no client headers, no cookies, the base URL's host under
// preserve_host, the config's transport and upstream_timeout), and returns
// the decoded body of a 2xx response; any other status is a *sitemap.StatusError (the one error type sources branch on).
// `headgate sitemap` and `headgate indexnow` read their sources through it,
// so what they write is what the proxy serves.
func (p *Proxy) Fetch(ctx context.Context, path string) (io.ReadCloser, error) {
	return p.state.Load().fetch(ctx, path)
}

// Upstream returns the address requests are forwarded to under the config
// in use: server.upstream, or the demo site's loopback address.
func (p *Proxy) Upstream() *url.URL {
	u := *p.state.Load().upstream
	return &u
}

// Config returns the config in use.
func (p *Proxy) Config() *rules.Config { return p.state.Load().cfg }

// NewTransport returns a transport like headgate's toward an upstream, with
// timeout for the response headers: for tools that proxy as headgate does.
// headgate's own requests keep their clock themselves (timer.go).
func NewTransport(timeout time.Duration) *http.Transport {
	t := newTransport()
	t.ResponseHeaderTimeout = timeout
	return t
}

// newTransport returns the transport headgate uses toward an upstream:
// compression off (headgate asks for codings itself; Go's transparent gzip
// costs 60% of throughput), 256 idle connections per host (the default 2
// churns connections under load). It sets no ResponseHeaderTimeout:
// server.upstream_timeout is kept by each request's clock (timer.go, and
// fetch's own), which spares the transport's timer and channel select on
// every request.
func newTransport() *http.Transport {
	return &http.Transport{
		Proxy: nil, // an upstream is reached directly, whatever HTTP_PROXY says
		DialContext: (&net.Dialer{
			Timeout:   5 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		ForceAttemptHTTP2:     true,
		DisableCompression:    true,
		MaxIdleConns:          512,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ExpectContinueTimeout: 1 * time.Second,
		// The rewriter reads a head into its own buffer and the rest of a
		// body into the copy buffer, both larger than this: a bufio
		// buffer hands reads that large straight to the socket, so a
		// larger one would only be copied through and held by every idle
		// connection (measured in docs/performance.md: 4 KiB, the
		// default, against 32 KiB cost no syscall and 10+ MiB at 256
		// connections).
		ReadBufferSize:  4 << 10,
		WriteBufferSize: 4 << 10,
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// roundTrip sends r with the transport of the config the request started
// with, under the request's clock for upstream_timeout (timer.go).
func (p *Proxy) roundTrip(r *http.Request) (*http.Response, error) {
	rs := reqStateOf(r.Context())
	if rs == nil {
		// Not one of ServeHTTP's (it always sets one): no clock to keep.
		return p.state.Load().transport.RoundTrip(r)
	}
	d := rs.st.cfg.Server.UpstreamTimeout
	if r.Body == nil || r.Body == http.NoBody {
		p.clocks.start(&rs.clock, phaseHeader, d)
	} else {
		// As ResponseHeaderTimeout did, the wait for the headers starts
		// once the request's body is written: a slow upload is the
		// client's time, not the upstream's.
		r.Body = &bodyClock{ReadCloser: r.Body, clocks: p.clocks, c: &rs.clock, d: d}
	}
	res, err := rs.st.transport.RoundTrip(r)
	p.clocks.endHeader(&rs.clock)
	if err == nil && rs.partOfPage(r, res) {
		// A range of a page: its bytes carry the upstream's head as it
		// came (a link preview's crawler asking for the first 512 KiB
		// would read the tags headgate replaces). The whole page is asked
		// for instead, and the client gets it rewritten, in a 200, which
		// RFC 9110 §14.2 lets a server answer a Range with. The part is
		// done with first (one request upstream at a time, as for any
		// other request): a small one read to its end, so that its
		// connection is kept, under the clock; a failure of the second
		// request is the upstream's, as any other (a 502, or a 504 when
		// the clock ran out).
		p.clocks.start(&rs.clock, phaseHeader, d)
		if res.ContentLength >= 0 && res.ContentLength <= partDrain {
			io.Copy(io.Discard, res.Body)
		}
		res.Body.Close()
		whole := r.Clone(r.Context())
		hdel(whole.Header, "Range")
		hdel(whole.Header, "If-Range")
		rs.upWhole = true
		res, err = rs.st.transport.RoundTrip(whole)
		p.clocks.endHeader(&rs.clock)
	}
	return res, err
}

// partDrain is the longest part of a page read to its end before the whole
// page is asked for (so that its upstream connection is kept); a longer
// one's connection is closed.
const partDrain = 64 << 10

// partOfPage reports an answer to a GET with a Range that is a part of a
// page headgate would rewrite: a 206 of HTML (or of several parts, whose
// type the multipart body says: taken for a page, the whole of anything
// else being as good an answer to a Range), on a path whose rules rewrite
// it, not in shadow mode (which changes nothing), not a download
// (Content-Disposition: attachment) nor a coding headgate can not read,
// which decideResponse passes through as they came.
func (rs *reqState) partOfPage(r *http.Request, res *http.Response) bool {
	if res.StatusCode != http.StatusPartialContent || r.Method != http.MethodGet || hget(r.Header, "Range") == "" ||
		rs.st.shadow || !rs.m.Rewrite() || rs.nothingToChange() {
		return false
	}
	h := res.Header
	ct := hget(h, "Content-Type")
	if !htmlType(ct) && !multipartRanges(ct) {
		return false
	}
	_, known := codec.Normalize(hget(h, "Content-Encoding"))
	return known && !isAttachment(hget(h, "Content-Disposition"))
}

// multipartRanges reports a multipart/byteranges Content-Type.
func multipartRanges(ct string) bool {
	t, _, _ := strings.Cut(ct, ";")
	return strings.EqualFold(strings.TrimSpace(t), "multipart/byteranges")
}

// fetch GETs path from the upstream for the sitemap: no client headers,
// no cookies, the base URL's host (with preserve_host). It returns the
// decoded body of a 2xx response; any other status is a *sitemap.StatusError (the one error type sources branch on).
func (st *state) fetch(ctx context.Context, path string) (io.ReadCloser, error) {
	if !strings.HasPrefix(path, "/") {
		return nil, fmt.Errorf("fetch %q: not a path", path)
	}
	var res *http.Response
	for hop := 0; ; hop++ {
		var loc string
		var err error
		res, loc, err = st.fetchOnce(ctx, path)
		if err != nil {
			return nil, err
		}
		if loc == "" {
			break
		}
		// A redirect on the upstream's own site (an app that adds a
		// slash, or sends its public https address, which headgate
		// fetches from the upstream again): followed, as crawlers follow
		// five (RFC 9309 §2.3.1.2). Anything else is the status.
		next, ok := st.redirectPath(path, loc)
		res.Body.Close()
		if !ok || hop == maxFetchRedirects {
			return nil, &sitemap.StatusError{Path: path, StatusCode: res.StatusCode}
		}
		path = next
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		res.Body.Close()
		return nil, &sitemap.StatusError{Path: path, StatusCode: res.StatusCode}
	}
	coding, ok := codec.Normalize(hget(res.Header, "Content-Encoding"))
	switch {
	case !ok:
		res.Body.Close()
		return nil, fmt.Errorf("fetch %s: Content-Encoding %q", path, coding)
	case coding != identity:
		// Not asked for, but sent: read it anyway.
		d, err := codec.NewDecoder(coding, res.Body)
		if err != nil {
			res.Body.Close()
			return nil, fmt.Errorf("fetch %s: %w", path, err)
		}
		return &decodedBody{d, res.Body}, nil
	}
	return res.Body, nil
}

// maxFetchRedirects bounds the redirects fetch follows.
const maxFetchRedirects = 5

// fetchOnce GETs path from the upstream. A 3xx with a Location comes back
// with loc set (its body still open); any other answer with loc "".
func (st *state) fetchOnce(ctx context.Context, path string) (*http.Response, string, error) {
	ref, err := url.Parse(path)
	if err != nil {
		return nil, "", fmt.Errorf("fetch %q: %w", path, err)
	}
	u := *st.upstream
	u.Path = strings.TrimSuffix(u.Path, "/") + ref.Path
	u.RawPath = ""
	if ref.RawPath != "" {
		u.RawPath = strings.TrimSuffix(st.upstream.EscapedPath(), "/") + ref.RawPath
	}
	u.RawQuery = ref.RawQuery
	// upstream_timeout for the response headers: a context of its own,
	// cancelled by a clock until they come, and by Close after.
	ctx, cancel := context.WithCancelCause(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		cancel(nil)
		return nil, "", fmt.Errorf("fetch %q: %w", path, err)
	}
	if st.cfg.Server.PreserveHost && st.host != "" {
		// The upstream expects the public host, as on proxied requests.
		req.Host = st.host
	}
	hset(req.Header, "User-Agent", "headgate")
	clock := time.AfterFunc(st.cfg.Server.UpstreamTimeout, func() { cancel(errHeaderTimeout) })
	res, err := st.transport.RoundTrip(req)
	clock.Stop()
	if err != nil {
		if cause := context.Cause(ctx); errors.Is(cause, errHeaderTimeout) {
			err = cause
		}
		cancel(nil)
		return nil, "", fmt.Errorf("fetch %s: %w", path, err)
	}
	res.Body = &cancelBody{res.Body, cancel}
	if res.StatusCode >= 300 && res.StatusCode <= 399 {
		return res, hget(res.Header, "Location"), nil
	}
	return res, "", nil
}

// redirectPath is the path a fetch of path follows to loc: loc resolved
// against the upstream's URL of path, when it is on the upstream's own
// origin or on base_url's (the app's public address, which headgate
// fetches from the upstream); ok false for another host or a bad URL.
func (st *state) redirectPath(path, loc string) (string, bool) {
	from, err := url.Parse(st.upstream.Scheme + "://" + st.upstream.Host + strings.TrimSuffix(st.upstream.EscapedPath(), "/") + path)
	if err != nil {
		return "", false
	}
	to, err := from.Parse(loc)
	if err != nil || to.User != nil || to.Scheme != "http" && to.Scheme != "https" {
		return "", false
	}
	p := to.EscapedPath()
	if p == "" {
		p = "/"
	}
	base, _ := url.Parse(st.cfg.Site.BaseURL)
	switch {
	case strings.EqualFold(to.Host, st.upstream.Host) && to.Scheme == st.upstream.Scheme:
		// On the upstream itself: under its path prefix, which fetch adds.
		pre := strings.TrimSuffix(st.upstream.EscapedPath(), "/")
		if !strings.HasPrefix(p, pre+"/") {
			return "", false
		}
		p = p[len(pre):]
	case base != nil && strings.EqualFold(to.Hostname(), base.Hostname()):
		// The public address: its paths are the upstream's, as proxied.
	default:
		return "", false
	}
	if to.RawQuery != "" {
		p += "?" + to.RawQuery
	}
	return p, true
}

// cancelBody ends a fetch's context when its body is closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelCauseFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel(nil)
	return err
}

type decodedBody struct {
	d  codec.Decoder
	rc io.ReadCloser
}

func (b *decodedBody) Read(p []byte) (int, error) { return b.d.Read(p) }

func (b *decodedBody) Close() error {
	if b.d != nil {
		b.d.Release()
		b.d = nil
	}
	return b.rc.Close()
}

// bufferPool is ReverseProxy's copy buffers. A response gets one of
// bigCopyBuffers 128 KiB buffers while one is free, else a 48 KiB one: a
// head of up to 32 KiB and what was read with it go out in one write, a
// 115 KB page's body in one read and one write more where 48 KiB takes
// two of each (2 system calls fewer a response, 2-12 % less CPU measured
// at 32 connections), and the large ones are bounded for the process, so
// what they hold does not grow with the connections (1 MiB at most; at
// 256 connections the peak stayed within 1.34-1.42x the plain proxy's).
// 48 KiB: a 115 KB page in 3 body writes where ReverseProxy's default 32
// KiB takes 5; 64 KiB wrote no fewer for it and held 16 KiB more per
// response in flight (docs/performance.md).
const copyBufferSize = 48 << 10

type bufferPool struct{ p sync.Pool }

// copyBuffer is one buffer; the pool holds pointers to arrays, so that
// putting a buffer back allocates nothing (a *[]byte would).
type copyBuffer [copyBufferSize]byte

func (b *bufferPool) Get() []byte {
	select {
	case buf := <-bigFree:
		return buf[:]
	default:
	}
	if bigMade.Add(1) <= bigCopyBuffers {
		return newBigCopyBuffer()[:]
	}
	bigMade.Add(-1)
	if buf, ok := b.p.Get().(*copyBuffer); ok {
		return buf[:]
	}
	return new(copyBuffer)[:]
}

func (b *bufferPool) Put(buf []byte) {
	switch len(buf) {
	case copyBufferSize:
		b.p.Put((*copyBuffer)(buf))
	case bigCopyBufferSize:
		bigFree <- (*bigCopyBuffer)(buf)
	}
}

// The large copy buffers: at most bigCopyBuffers are ever made, for the
// whole process (every Proxy a reload makes shares them); a free one
// waits in bigFree, whose capacity is that bound, so Put never blocks.
const (
	bigCopyBufferSize = 128 << 10
	bigCopyBuffers    = 8
)

type bigCopyBuffer [bigCopyBufferSize]byte

var (
	bigFree = make(chan *bigCopyBuffer, bigCopyBuffers)
	bigMade atomic.Int32 // large buffers made so far, at most bigCopyBuffers
)
