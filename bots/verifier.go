package bots

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Verified says how an identity was established (SPEC §18.1).
type Verified string

// The verdicts.
const (
	VerifiedIP           Verified = "ip"           // in the crawler's published ranges
	VerifiedDNS          Verified = "dns"          // forward-confirmed reverse DNS in its domains
	VerifiedSignature    Verified = "signature"    // a valid Web Bot Auth signature
	VerifiedNo           Verified = "no"           // claims a verifiable crawler; nothing held (spoofed)
	VerifiedUnverifiable Verified = "unverifiable" // a known crawler with no way to verify it
)

// Yes reports whether the identity was verified (ip, dns or signature).
func (v Verified) Yes() bool {
	return v == VerifiedIP || v == VerifiedDNS || v == VerifiedSignature
}

// Identity is who is asking. The zero value and None are "no identity".
type Identity struct {
	Name     string   // directory name, an unknown agent's host[:port], or "-"
	Category Category // "" for an unknown agent or no identity
	Verified Verified // "" when Name is "-" and nothing was signed
}

// None is the identity of a request that names no crawler.
var None = Identity{Name: "-"}

// Known reports whether the request was identified as some crawler.
func (id Identity) Known() bool { return id.Name != "" && id.Name != "-" }

// Header returns the identity as an RFC 8941 dictionary for the upstream
// header: `name=gptbot, category=ai-training, verified=ip`. A value that
// is not a token (a name from config or an agent's host) is an sf-string
// with `"` and `\` escaped and any other byte outside printable ASCII
// replaced, so the field can never be split or injected into.
func (id Identity) Header() string {
	return string(id.AppendHeader(make([]byte, 0, 64)))
}

// AppendHeader appends Header's value to b.
func (id Identity) AppendHeader(b []byte) []byte {
	name := id.Name
	if name == "" {
		name = "-"
	}
	b = append(b, "name="...)
	if name == "-" {
		b = appendSFString(b, name) // "-" is not a token
	} else {
		b = appendSFTokenOrString(b, name)
	}
	if id.Category != "" {
		b = append(b, ", category="...)
		b = appendSFTokenOrString(b, string(id.Category))
	}
	if id.Verified != "" {
		b = append(b, ", verified="...)
		b = appendSFTokenOrString(b, string(id.Verified))
	}
	return b
}

// Options are the verifier's injected parts; the zero value works.
type Options struct {
	Logger *slog.Logger // nil: slog.Default()
	// Client fetches range URLs and key directories; nil: for ranges a
	// client with a 30s timeout, for key directories one that refuses
	// non-public addresses (but those of insecure_directories) and
	// redirects.
	Client   *http.Client
	Resolver Resolver         // nil: NewResolver(cfg.Resolver)
	Now      func() time.Time // nil: time.Now
	// MaxLookups bounds DNS lookups in flight (default 256); key
	// directory fetches have their own bound of 32.
	MaxLookups int
}

// table is one immutable generation of the directory and its ranges.
type table struct {
	crawlers []Crawler
	ua       uaMatcher
	fileRgs  []*Ranges // from ranges_dir, by crawler index
	urlRgs   []*Ranges // from refresh_urls, by crawler index; wins when set
	byAgent  map[string]int
	domains  []string // every domain of the directory
}

func (t *table) ranges(i int) *Ranges {
	if r := t.urlRgs[i]; r != nil {
		return r
	}
	return t.fileRgs[i]
}

// Verifier identifies requests. It is safe for concurrent use; Reload
// swaps its tables atomically while requests run.
type Verifier struct {
	cfg    Config
	log    *slog.Logger
	client *http.Client
	now    func() time.Time
	stats  *Stats
	tab    atomic.Pointer[table]
	swapMu sync.Mutex // serializes Reload and RefreshNow's read-modify-write of tab
	dns    *dnsCache
	dirs   *keyDirectories
	nonces nonces
}

// New builds a verifier from a checked config: the built-in directory
// merged with cfg.Crawler and cfg.Categories, and the range files of
// cfg.RangesDir. A range file that does not parse is an error (HG200 at
// start); a missing one is not.
func New(cfg Config, opt Options) (*Verifier, error) {
	d := Defaults()
	if cfg.CacheSize <= 0 {
		cfg.CacheSize = d.CacheSize
	}
	if cfg.CacheTTL.Duration <= 0 {
		cfg.CacheTTL = d.CacheTTL
	}
	if cfg.Refresh.Duration <= 0 {
		cfg.Refresh = d.Refresh
	}
	v := &Verifier{cfg: cfg, log: opt.Logger, client: opt.Client, now: opt.Now, stats: new(Stats)}
	if v.log == nil {
		v.log = slog.Default()
	}
	dirClient := v.client
	if v.client == nil {
		// Range URLs come from the config: a plain client. Key
		// directories come from request headers: a guarded one.
		v.client = &http.Client{Timeout: 30 * time.Second}
		dirClient = defaultClient(cfg.InsecureDirectories)
	}
	if v.now == nil {
		v.now = time.Now
	}
	res := opt.Resolver
	if res == nil {
		res = NewResolver(cfg.Resolver)
	}
	crawlers := Merge(Directory(), cfg.Crawler, cfg.Categories)
	t := &table{crawlers: crawlers, ua: newUAMatcher(crawlers), fileRgs: make([]*Ranges, len(crawlers)),
		urlRgs: make([]*Ranges, len(crawlers)), byAgent: map[string]int{}}
	for i, c := range crawlers {
		if o, err := agentOrigin(c.SignatureAgent); err == nil && c.SignatureAgent != "" {
			t.byAgent[o] = i
		}
		t.domains = append(t.domains, c.Domains...)
	}
	v.tab.Store(t)
	if cfg.RangesDir != "" {
		if err := v.loadRanges(t, false); err != nil {
			return nil, err
		}
	}
	wanted := func(name string) bool { return hasDomain(name, v.tab.Load().domains) }
	v.dns = newDNSCache(res, cfg.CacheSize, cfg.CacheTTL.Duration, wanted, v.now, v.stats)
	if opt.MaxLookups > 0 {
		v.dns.maxInflight = opt.MaxLookups
	}
	insecure := map[string]bool{}
	for _, o := range cfg.InsecureDirectories {
		if n, err := agentOrigin(o); err == nil {
			insecure[n] = true
		}
	}
	v.dirs = &keyDirectories{client: dirClient, insecure: insecure, now: v.now, stats: v.stats, entries: map[string]*dirEntry{}}
	v.nonces.seen = map[string]time.Time{}
	return v, nil
}

// defaultClient fetches range files and key directories. A key
// directory's origin comes from a request header, so the client refuses to
// connect to loopback, private, link-local and other non-global addresses
// (no reaching into the cluster on a client's say-so), except the hosts of
// insecure_directories, and follows no redirect.
func defaultClient(insecure []string) *http.Client {
	allowed := map[string]bool{}
	for _, o := range insecure {
		if u, err := url.Parse(o); err == nil {
			allowed[u.Host] = true
		}
	}
	d := &net.Dialer{Timeout: 5 * time.Second}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if !allowed[addr] {
			dd := *d
			dd.Control = func(_, address string, _ syscall.RawConn) error {
				ap, err := netip.ParseAddrPort(address)
				if err != nil {
					return err
				}
				if a := ap.Addr().Unmap(); !a.IsGlobalUnicast() || a.IsPrivate() {
					return fmt.Errorf("bots: refusing to fetch from non-public address %s", a)
				}
				return nil
			}
			return dd.DialContext(ctx, network, addr)
		}
		return d.DialContext(ctx, network, addr)
	}
	return &http.Client{
		Timeout:       10 * time.Second,
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Stats returns the verifier's counters.
func (v *Verifier) Stats() *Stats { return v.stats }

// Crawlers returns the merged directory the verifier uses (do not modify).
func (v *Verifier) Crawlers() []Crawler { return v.tab.Load().crawlers }

// Reload reads ranges_dir again and swaps in the new tables. A file that
// does not parse keeps its old table; it is logged, counted and returned
// (joined) so the caller can report it.
func (v *Verifier) Reload() error {
	if v.cfg.RangesDir == "" {
		return nil
	}
	return v.loadRanges(v.tab.Load(), true)
}

func (v *Verifier) loadRanges(old *table, reload bool) error {
	v.swapMu.Lock()
	defer v.swapMu.Unlock()
	old = v.tab.Load()
	t := *old
	t.fileRgs = append([]*Ranges(nil), old.fileRgs...)
	var errs []error
	for i, c := range t.crawlers {
		p := filepath.Join(v.cfg.RangesDir, c.Name+".json")
		f, err := os.Open(p)
		if errors.Is(err, os.ErrNotExist) {
			t.fileRgs[i] = nil
			continue
		}
		var rs *Ranges
		if err == nil {
			rs, err = ParseRanges(f)
			f.Close()
		}
		if err != nil {
			e := &RangesError{Crawler: c.Name, Source: p, Err: err}
			errs = append(errs, e)
			if reload {
				v.stats.RangeReloadFailures.Add(1)
				v.log.Warn("bots: range file refused, the old one is kept", "crawler", c.Name, "file", p, "err", err)
			}
			continue
		}
		t.fileRgs[i] = rs
	}
	if !reload && len(errs) > 0 {
		return errors.Join(errs...)
	}
	v.tab.Store(&t)
	return errors.Join(errs...)
}

// RefreshNow fetches every entry's ranges URL once; a fetch or parse that
// fails keeps the last good copy, is logged and counted.
func (v *Verifier) RefreshNow(ctx context.Context) error {
	crawlers := v.tab.Load().crawlers // the directory does not change after New
	got := make(map[int]*Ranges)
	var errs []error
	for i, c := range crawlers {
		if c.RangesURL == "" {
			continue
		}
		rs, err := v.fetchRanges(ctx, c.RangesURL)
		if err != nil {
			v.stats.RangeRefreshFailures.Add(1)
			v.log.Warn("bots: range URL refused, the last good copy is kept", "crawler", c.Name, "url", c.RangesURL, "err", err)
			errs = append(errs, &RangesError{Crawler: c.Name, Source: c.RangesURL, Err: err})
			continue
		}
		got[i] = rs
	}
	v.swapMu.Lock()
	defer v.swapMu.Unlock()
	old := v.tab.Load()
	t := *old
	t.urlRgs = append([]*Ranges(nil), old.urlRgs...)
	for i, rs := range got {
		t.urlRgs[i] = rs
	}
	v.tab.Store(&t)
	return errors.Join(errs...)
}

func (v *Verifier) fetchRanges(ctx context.Context, u string) (*Ranges, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	res, err := v.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d", res.StatusCode)
	}
	return ParseRanges(res.Body)
}

// Run refreshes the range URLs every cfg.Refresh until ctx ends, when
// refresh_urls is on; otherwise it returns at once. Start it with go.
func (v *Verifier) Run(ctx context.Context) {
	if !v.cfg.RefreshURLs {
		return
	}
	for {
		_ = v.RefreshNow(ctx)
		t := time.NewTimer(v.cfg.Refresh.Duration)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// Identify returns who is asking. client is the client address as §11.1
// decides it (the peer, or the rightmost untrusted X-Forwarded-For entry
// behind trusted proxies); the caller computes it, this package never
// reads X-Forwarded-For. It waits at most dns_wait (for a first DNS lookup
// of client or a first key directory fetch); with the address cached and
// no signature it costs well under a microsecond and allocates nothing.
// A signature that does not verify is logged and yields Verified "no".
func (v *Verifier) Identify(ctx context.Context, r *http.Request, client netip.Addr) Identity {
	t := v.tab.Load()
	client = client.Unmap()
	ua := ""
	if vs := r.Header["User-Agent"]; len(vs) > 0 { // Get's answer, without canonicalizing the key
		ua = vs[0]
	}
	idx := t.ua.match(ua)
	if v.cfg.WebBotAuth && (len(r.Header["Signature"]) > 0 || len(r.Header["Signature-Input"]) > 0) {
		agent, err := v.verifySignature(ctx, r)
		if err == nil {
			v.stats.SignatureVerified.Add(1)
			if i, ok := t.byAgent[agent]; ok {
				return Identity{Name: t.crawlers[i].Name, Category: t.crawlers[i].Category, Verified: VerifiedSignature}
			}
			return Identity{Name: agentName(agent), Verified: VerifiedSignature}
		}
		if !errors.Is(err, errNoSignature) {
			v.stats.SignatureFailed.Add(1)
			v.log.Info("bots: signature refused", "client", client, "err", err)
			if idx >= 0 {
				return Identity{Name: t.crawlers[idx].Name, Category: t.crawlers[idx].Category, Verified: VerifiedNo}
			}
			if i, ok := t.byAgent[agent]; ok {
				return Identity{Name: t.crawlers[i].Name, Category: t.crawlers[i].Category, Verified: VerifiedNo}
			}
			if agent != "" {
				return Identity{Name: agentName(agent), Verified: VerifiedNo}
			}
			return Identity{Name: "-", Verified: VerifiedNo}
		}
	}
	if idx < 0 {
		return None
	}
	return v.verifyClaim(ctx, t, idx, client)
}

// verifyClaim checks a user agent's claim to be crawler idx by address.
func (v *Verifier) verifyClaim(ctx context.Context, t *table, idx int, client netip.Addr) Identity {
	c := &t.crawlers[idx]
	id := Identity{Name: c.Name, Category: c.Category}
	rs := t.ranges(idx)
	if rs.Contains(client) {
		id.Verified = VerifiedIP
		return id
	}
	canDNS := v.cfg.ReverseDNS && len(c.Domains) > 0
	if canDNS && client.IsValid() {
		if name, ok := v.dns.name(ctx, client, v.cfg.DNSWait.Duration); ok && name != "" && hasDomain(name, c.Domains) {
			id.Verified = VerifiedDNS
			return id
		}
	}
	if rs == nil && !canDNS && !(v.cfg.WebBotAuth && c.SignatureAgent != "") {
		id.Verified = VerifiedUnverifiable
		return id
	}
	id.Verified = VerifiedNo
	return id
}

// agentName names an unknown agent by its origin's host, with the port
// when it is not the scheme's default (SPEC §24).
func agentName(origin string) string {
	u, err := url.Parse(origin)
	if err != nil {
		return origin
	}
	return strings.ToLower(u.Host) // agentOrigin already dropped a default port
}

// IdentifyUA identifies a user agent and address without a request, for
// the inspector and `explain -ua … -ip …`: no signature, the same
// directory, ranges and DNS cache (a first lookup waits at most dns_wait).
func (v *Verifier) IdentifyUA(ctx context.Context, ua string, client netip.Addr) Identity {
	r := &http.Request{Header: http.Header{"User-Agent": {ua}}, URL: &url.URL{Path: "/"}}
	return v.Identify(ctx, r, client)
}
