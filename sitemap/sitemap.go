package sitemap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/flate"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/headgate/headgate/internal/robotsmeta"
	"github.com/headgate/headgate/rules"
)

// Options configures a Sitemap. The zero value works: no upstream sources,
// no log, no metrics, the system clock, 30 s per source.
type Options struct {
	// Fetch reads a path from the upstream: the body of an upstream:
	// sitemap source, and /robots.txt in append mode. It must honour ctx,
	// return the decoded body (no content coding) of a 2xx response, and
	// an error otherwise; for a non-2xx status the error should implement
	// HTTPStatus() int (StatusError does), which tells an absent
	// robots.txt (4xx) from an unreachable one. nil: upstream: sources
	// fail, and robots.txt append mode serves the generated robots.txt.
	Fetch func(ctx context.Context, path string) (io.ReadCloser, error)
	// Logger receives warnings about left-out entries and failed
	// generations. nil: discard.
	Logger *slog.Logger
	// Registerer gets the headgate_sitemap_* metrics. nil: no metrics. A
	// collector already registered (by the Sitemap of the config before a
	// reload) is reused.
	Registerer prometheus.Registerer
	// Now is the clock for cache_ttl and retry_after. nil: time.Now.
	Now func() time.Time
	// SourceTimeout bounds the time to read and process one sitemap source,
	// and to fetch the upstream's robots.txt. 0: 30 s.
	SourceTimeout time.Duration
}

// DefaultSourceTimeout is Options.SourceTimeout when it is 0.
const DefaultSourceTimeout = 30 * time.Second

// StatusError is an error a Fetch function may return for a response
// whose status is not 2xx.
type StatusError struct {
	Path       string
	StatusCode int
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("GET %s: upstream answered %d", e.Path, e.StatusCode)
}

// HTTPStatus returns the status code.
func (e *StatusError) HTTPStatus() int { return e.StatusCode }

// Limits of the sitemap protocol (sitemaps.org).
const (
	maxLoc       = 2048     // characters in a <loc>
	maxFileBytes = 50 << 20 // uncompressed bytes per file, exclusive
	maxFiles     = 50000    // <sitemap> entries in an index
)

// XML namespaces.
const (
	nsSitemap = "http://www.sitemaps.org/schemas/sitemap/0.9"
	nsXHTML   = "http://www.w3.org/1999/xhtml"
)

type robotsMode int

const (
	robotsUpstream robotsMode = iota // forwarded by the proxy
	robotsGenerate
	robotsAppend
	robotsStaging
)

// Sitemap generates, caches and serves /sitemap.xml, its parts and
// /robots.txt for one configuration. It is safe for concurrent use. A
// config reload builds a new Sitemap; the old one needs no closing.
type Sitemap struct {
	cfg        *rules.Config
	fetch      func(context.Context, string) (io.ReadCloser, error)
	log        *slog.Logger
	now        func() time.Time
	timeout    time.Duration
	metrics    *metrics
	enabled    bool
	shadow     bool // site.mode = "shadow": crawler files are forwarded
	robots     robotsMode
	resolve    bool     // some rule may keep an address out: addresses are resolved …
	prefixes   []string // … when they start with one of these (decoded); nil: all
	checkHead  bool     // some rule may make a page noindex or canonical elsewhere
	perFile    int
	maxURLs    int
	cacheTTL   time.Duration
	retryAfter time.Duration
	maxBytes   int64 // uncompressed bytes per file, exclusive; tests lower it

	urlsetPre []prefix // [0] without, [1] with xmlns:xhtml
	indexPre  []prefix

	mu       sync.Mutex
	good     *result // last good generation; nil before the first
	failed   bool    // the last generation failed …
	failedAt time.Time
	flight   *flight // the generation in progress

	onWait func() // test hook: a request waits for a generation in flight
}

// result is one generation's files.
type result struct {
	main  *file     // /sitemap.xml: the only urlset, or the index
	parts []*file   // /sitemap-1.xml …; nil without an index
	llms  *llmsFile // /llms.txt; nil without [llms_txt]
	urls  int
	at    time.Time
	empty []string // rules whose source yielded lines but no entry (§16.5)
}

func (r *result) lookup(path string) *file {
	if path == "/sitemap.xml" {
		return r.main
	}
	if n := partNumber(path); n > 0 && n <= len(r.parts) {
		return r.parts[n-1]
	}
	return nil
}

type flight struct {
	done chan struct{}
	res  *result
	err  error
}

// New prepares the sitemap of cfg. It reads nothing: sources are read when
// a sitemap is first asked for.
func New(cfg *rules.Config, o Options) *Sitemap {
	s := &Sitemap{
		cfg:        cfg,
		fetch:      o.Fetch,
		log:        o.Logger,
		now:        o.Now,
		timeout:    o.SourceTimeout,
		perFile:    cfg.Sitemap.MaxURLsPerFile,
		maxURLs:    cfg.Sitemap.MaxURLs,
		cacheTTL:   cfg.Sitemap.CacheTTL,
		retryAfter: cfg.Sitemap.RetryAfter,
		maxBytes:   maxFileBytes,
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.timeout <= 0 {
		s.timeout = DefaultSourceTimeout
	}
	if s.perFile <= 0 || s.perFile > 50000 {
		s.perFile = 50000
	}
	if s.maxURLs <= 0 {
		s.maxURLs = 1000000
	}
	if s.cacheTTL <= 0 {
		s.cacheTTL = 5 * time.Minute
	}
	if s.retryAfter <= 0 {
		s.retryAfter = 30 * time.Second
	}
	all := false
	for _, r := range cfg.Rules {
		if r.Pattern == nil {
			continue
		}
		s.enabled = s.enabled || r.Sitemap
		head := r.Robots != nil && (r.Robots.Index != nil && !*r.Robots.Index || robotsmeta.Noindex(strings.Join(r.Robots.Directives, ","))) ||
			r.Canonical != nil && r.Canonical.Raw != "self"
		if !r.Deny && !head {
			continue
		}
		s.resolve = true
		s.checkHead = s.checkHead || head
		if p, ok := literalPrefix(r); ok {
			s.prefixes = append(s.prefixes, p)
		} else {
			all = true
		}
	}
	if cfg.PageTables() {
		// A page_table row may make any address noindex or canonical
		// elsewhere: every address is resolved.
		s.resolve, s.checkHead, all = true, true, true
	}
	if all {
		s.prefixes = nil
	}
	s.shadow = cfg.Site.Mode == rules.ModeShadow
	switch {
	case cfg.Site.Mode == rules.ModeStaging:
		s.robots = robotsStaging
	case s.shadow:
		// §6: what crawlers read is the upstream's until rules may write.
		s.robots = robotsUpstream
		if s.enabled || cfg.Robots.HasPolicy() {
			s.log.Info("shadow mode: /robots.txt, /sitemap.xml and /llms.txt are the upstream's; headgate sitemap prints the sitemap headgate would serve")
		}
	case !s.enabled && !cfg.Robots.HasPolicy() || cfg.Robots.Mode == "upstream":
		s.robots = robotsUpstream
	case cfg.Robots.Mode == "append" && s.fetch != nil:
		s.robots = robotsAppend
	case cfg.Robots.Mode == "append":
		s.log.Warn("sitemap: robots.mode = \"append\" without an upstream fetcher; serving the generated robots.txt")
		s.robots = robotsGenerate
	default:
		s.robots = robotsGenerate
	}
	const decl = `<?xml version="1.0" encoding="UTF-8"?>` + "\n"
	pre := newPrefixes(
		decl+`<urlset xmlns="`+nsSitemap+`">`+"\n",
		decl+`<urlset xmlns="`+nsSitemap+`" xmlns:xhtml="`+nsXHTML+`">`+"\n",
		decl+`<sitemapindex xmlns="`+nsSitemap+`">`+"\n",
	)
	s.urlsetPre, s.indexPre = pre[:2:2], pre[2:]
	s.metrics = newMetrics(o.Registerer, s.log)
	return s
}

// literalPrefix returns the decoded literal segments a rule's pattern
// starts with, as a path with runs of "/" collapsed: a path the rule
// matches, in any of the forms rules.Config.Resolve tries (%2F decoded,
// empty segments removed), starts with it when fully decoded and collapsed
// the same way. A rule with no literal first segment, or a localized one,
// has none (ok is false): every address is resolved.
func literalPrefix(r *rules.Rule) (string, bool) {
	if r.Localized {
		return "", false
	}
	var b strings.Builder
	for _, seg := range strings.Split(r.Pattern.Raw[1:], "/") {
		if strings.HasPrefix(seg, ":") || seg == "*" || strings.ContainsAny(seg, "{}") {
			break
		}
		lit, err := url.PathUnescape(seg)
		if err != nil {
			return "", false
		}
		b.WriteByte('/')
		b.WriteString(lit)
	}
	p := collapse(b.String())
	if p == "" || p == "/" {
		return "", false
	}
	return p, true
}

// mayMatch reports whether path may be one a rule with this literal
// prefix matches.
func mayMatch(path, prefix string) bool {
	if !strings.HasPrefix(path, prefix) {
		return false
	}
	return len(path) == len(prefix) || path[len(prefix)] == '/' || prefix[len(prefix)-1] == '/'
}

// collapse removes empty segments: "//" becomes "/".
func collapse(p string) string {
	if !strings.Contains(p, "//") {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '/' && i > 0 && p[i-1] == '/' {
			continue
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// Enabled reports whether some rule has sitemap = true: only then do
// /sitemap.xml and its parts exist.
func (s *Sitemap) Enabled() bool { return s.enabled }

// Handles reports whether headgate answers path itself (rather than
// forwarding it): /sitemap.xml and /sitemap-N.xml when the sitemap is
// enabled, /robots.txt in generate or append mode with a sitemap, and in
// staging mode; in shadow mode only the IndexNow key file (§6: the
// upstream's bytes go out). path is the request path without query.
func (s *Sitemap) Handles(path string) bool {
	return s.serves(path) && (!s.shadow || s.isKeyPath(path))
}

// serves reports whether headgate has an answer for path, shadow mode or
// not: ServeHTTP answers it when asked directly (the inspector's sample of
// the sitemap headgate would serve), while Handles routes the public
// listener.
func (s *Sitemap) serves(path string) bool {
	switch {
	case path == "/robots.txt":
		return s.robots != robotsUpstream
	case s.isKeyPath(path):
		return true
	case !s.enabled:
		return false
	case path == "/sitemap.xml":
		return true
	case path == "/llms.txt":
		return s.cfg.LLMSTxt != nil
	}
	return partNumber(path) > 0
}

// partNumber returns N of "/sitemap-N.xml" (1 to 50 000, no leading
// zero), or 0.
func partNumber(path string) int {
	s, ok := strings.CutPrefix(path, "/sitemap-")
	if !ok {
		return 0
	}
	s, ok = strings.CutSuffix(s, ".xml")
	if !ok || s == "" || len(s) > 5 || s[0] == '0' {
		return 0
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0
		}
		n = n*10 + int(s[i]-'0')
	}
	if n > maxFiles {
		return 0
	}
	return n
}

// get returns the files to serve: the cached generation, a new one (one
// generation in flight for all requests), or the last good one while a
// failed generation's retry_after runs. With nothing to serve, res is nil
// and retry says when to try again. err is ctx's error when the caller gave
// up waiting.
func (s *Sitemap) get(ctx context.Context) (res *result, retry time.Duration, err error) {
	s.mu.Lock()
	now := s.now()
	if s.good != nil && now.Sub(s.good.at) < s.cacheTTL {
		res = s.good
		s.mu.Unlock()
		return res, 0, nil
	}
	if s.failed {
		if wait := s.retryAfter - now.Sub(s.failedAt); wait > 0 {
			res = s.good
			s.mu.Unlock()
			return res, wait, nil
		}
	}
	f := s.flight
	if f == nil {
		f = &flight{done: make(chan struct{})}
		s.flight = f
		go s.run(f)
	} else if s.onWait != nil {
		s.onWait()
	}
	s.mu.Unlock()

	select {
	case <-f.done:
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	}
	if f.err == nil {
		return f.res, 0, nil
	}
	s.mu.Lock()
	res = s.good
	s.mu.Unlock()
	return res, s.retryAfter, nil
}

// run is one cached generation. It is detached from the request that
// started it, so that a client hanging up does not fail it for every other
// waiter; its sources are bounded by SourceTimeout.
func (s *Sitemap) run(f *flight) {
	defer func() {
		if p := recover(); p != nil {
			f.res, f.err = nil, fmt.Errorf("internal error: %v", p)
			s.log.Error("sitemap: generation panicked", "panic", p, "stack", string(debug.Stack()))
		}
		s.mu.Lock()
		if f.err == nil {
			s.good, s.failed = f.res, false
		} else {
			s.failed, s.failedAt = true, s.now()
		}
		s.flight = nil
		s.mu.Unlock()
		close(f.done)
	}()
	f.res, f.err = s.generate(context.Background())
	if f.err != nil {
		s.log.Error("sitemap: generation failed; serving the last good sitemap until retry_after has passed",
			"error", f.err, "retry_after", s.retryAfter, "have_last_good", s.hasGood())
	}
}

func (s *Sitemap) hasGood() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.good != nil
}

// generate runs one generation and counts it.
func (s *Sitemap) generate(ctx context.Context) (*result, error) { return s.generateEach(ctx, nil) }

// generateEach is generate, calling each (when not nil) for every URL
// written.
func (s *Sitemap) generateEach(ctx context.Context, each func(loc, lastmod string)) (*result, error) {
	start := time.Now()
	g := &generation{
		s:      s,
		ctx:    ctx,
		budget: s.maxBytes - 1 - int64(max(len(s.urlsetPre[0].text), len(s.urlsetPre[1].text))+len(urlsetClose)),
		each:   each,
	}
	g.fw, _ = flate.NewWriter(nil, compressionLevel)
	g.llms = newLLMS(s.cfg.LLMSTxt, s.cfg.Markdown)
	res, err := g.run()
	if err != nil {
		s.metrics.generation(false, 0, time.Since(start))
		return nil, err
	}
	res.at = s.now()
	g.finishLLMS(res)
	s.metrics.generation(true, res.urls, time.Since(start))
	s.log.Info("sitemap: generated", "urls", res.urls, "files", max(1, len(res.parts)),
		"bytes", sumSize(res), "duration", time.Since(start).Round(time.Millisecond))
	return res, nil
}

func sumSize(r *result) int64 {
	n := r.main.size
	for _, p := range r.parts {
		n += p.size
	}
	return n
}

// metrics are the collectors the sitemap owns; nil counts nothing.
type metrics struct {
	generations *prometheus.CounterVec
	urls        prometheus.Gauge
	seconds     prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer, log *slog.Logger) *metrics {
	if reg == nil {
		return nil
	}
	m := &metrics{
		generations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "headgate_sitemap_generations_total",
			Help: "Sitemap generations, by result (ok or error).",
		}, []string{"result"}),
		urls: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "headgate_sitemap_urls",
			Help: "URLs in the last good sitemap generation.",
		}),
		seconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "headgate_sitemap_generation_seconds",
			Help:    "Time to generate the sitemap, sources included.",
			Buckets: prometheus.ExponentialBuckets(0.005, 4, 9), // 5 ms … 5.5 min
		}),
	}
	m.generations = register(reg, m.generations, log)
	m.urls = register(reg, m.urls, log)
	m.seconds = register(reg, m.seconds, log)
	m.generations.WithLabelValues("ok")
	m.generations.WithLabelValues("error")
	return m
}

// register registers c, or returns the collector already registered in its
// place (a reloaded config's Sitemap shares the registry).
func register[C prometheus.Collector](reg prometheus.Registerer, c C, log *slog.Logger) C {
	err := reg.Register(c)
	if err == nil {
		return c
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if old, ok := are.ExistingCollector.(C); ok {
			return old
		}
	}
	log.Warn("sitemap: metric not registered", "error", err)
	return c
}

func (m *metrics) generation(ok bool, urls int, d time.Duration) {
	if m == nil {
		return
	}
	if ok {
		m.generations.WithLabelValues("ok").Inc()
		m.urls.Set(float64(urls))
	} else {
		m.generations.WithLabelValues("error").Inc()
	}
	m.seconds.Observe(d.Seconds())
}
