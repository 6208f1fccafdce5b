package proxy

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/textproto"
	"reflect"
	"strings"

	"github.com/headgate/headgate/bots"
	"github.com/headgate/headgate/rules"
)

// Crawler identity (SPEC §18): the proxy owns one *bots.Verifier for its
// whole life, so that its DNS and key directory caches survive reloads;
// each config gets its own *bots.Access. Per request, after deny and
// before redirects (§11.2 step 1b), Identify names the client, taken from
// server.trusted_proxies exactly as §11.1 says (clientaddr.Trust.Client),
// and Access.Decide may answer 403. robots.txt, the sitemap files and
// llms.txt are always served, to every crawler.

// botHeader is the request header headgate sends the identity in by
// convention; a client's own copy is always removed, whatever the config.
const botHeader = "Headgate-Bot"

// botState is [bots] under one config; nil when bots.enabled is off.
type botState struct {
	v   *bots.Verifier
	acc *bots.Access
	// robots is the served robots.txt's verdict for a crawler by name
	// (sitemap.RobotsDisallows through its tokens); nil when the sitemap
	// handler gives none. known is false where the file is the upstream's.
	robots func(name, target string) (deny, known bool)
}

// botVerifier is the Proxy's verifier and the config it was built from.
type botVerifier struct {
	v    *bots.Verifier
	cfg  bots.Config // the parts New reads (verifierPart)
	stop context.CancelFunc
}

// verifierPart is the part of a [bots] config that bots.New reads: a
// reload that changes only the rest (access, spoofed, enforce_robots,
// upstream_header, enabled) keeps the verifier and its caches.
func verifierPart(c bots.Config) bots.Config {
	c.Enabled, c.Access, c.Spoofed, c.EnforceRobots, c.UpstreamHeader = false, nil, "", false, ""
	return c
}

// swapBots builds st's [bots] state, reusing the Proxy's verifier when the
// config leaves its part unchanged (it then reads ranges_dir again; a file
// that does not parse keeps its old table, logged and counted in the
// verifier's Stats). A new verifier replaces the old one, whose refresh
// stops. Called under swapMu.
func (p *Proxy) swapBots(st *state, cfg *rules.Config) error {
	if h := cfg.Bots.UpstreamHeader; h != "" {
		st.botHeader = textproto.CanonicalMIMEHeaderKey(h)
	}
	if !cfg.Bots.Enabled {
		if p.bots != nil && p.bots.stop != nil {
			p.bots.stop()
			p.bots.stop = nil
		}
		return nil
	}
	part := verifierPart(cfg.Bots)
	bv := p.bots
	if bv != nil && reflect.DeepEqual(bv.cfg, part) {
		if err := bv.v.Reload(); err != nil {
			p.log.Warn("bots: a range file was refused on reload; its old table is kept", "err", err)
		}
	} else {
		v, err := bots.New(cfg.Bots, bots.Options{Logger: p.log})
		if err != nil {
			return fmt.Errorf("[bots]: %w", err)
		}
		if bv != nil && bv.stop != nil {
			bv.stop()
		}
		bv = &botVerifier{v: v, cfg: part}
		p.bots = bv
	}
	tokens := map[string][]string{}
	for _, c := range bv.v.Crawlers() {
		tokens[c.Name] = c.Tokens
	}
	opt := bots.AccessOptions{
		Compile: func(s string) (bots.PathMatcher, error) {
			pat, err := rules.ParsePattern(s)
			if err != nil {
				return nil, err
			}
			return patternMatcher{pat}, nil
		},
	}
	var robots func(name, target string) (bool, bool)
	if v, ok := st.sitemap.(robotsVerdict); ok {
		robots = func(name, target string) (bool, bool) { return v.RobotsDisallows(tokens[name], target) }
	}
	if robots != nil && cfg.Bots.EnforceRobots {
		opt.Disallowed = func(name, target string) bool {
			deny, known := robots(name, target)
			return known && deny
		}
	}
	acc, err := bots.NewAccess(cfg.Bots, opt)
	if err != nil {
		return fmt.Errorf("[bots]: %w", err)
	}
	st.bots = &botState{v: bv.v, acc: acc, robots: robots}
	if bv.stop == nil && cfg.Bots.RefreshURLs {
		ctx, cancel := context.WithCancel(context.Background())
		bv.stop = cancel
		go bv.v.Run(ctx)
	}
	return nil
}

// closeBots stops the verifier's refresh.
func (p *Proxy) closeBots() {
	p.swapMu.Lock()
	defer p.swapMu.Unlock()
	if p.bots != nil && p.bots.stop != nil {
		p.bots.stop()
		p.bots.stop = nil
	}
}

// robotsVerdict is what enforce_robots asks of the SitemapHandler: the
// verdict of the robots.txt it serves (sitemap.Sitemap.RobotsDisallows).
// A handler without it (or no handler) enforces nothing.
type robotsVerdict interface {
	RobotsDisallows(tokens []string, path string) (disallowed, known bool)
}

// patternMatcher is a §2.2 path pattern as a bots.PathMatcher; it matches
// the request path as it arrived (percent-encoded), as Resolve does. Decide
// is handed the whole target, because robots.txt rules see the query.
type patternMatcher struct{ p *rules.Pattern }

func (m patternMatcher) Match(target string) bool {
	path, _, _ := strings.Cut(target, "?")
	_, ok := m.p.Bind(path)
	return ok
}

// identify names the request's client, after deny.
func (rs *reqState) identify(r *http.Request) {
	bs := rs.st.bots
	client, _ := rs.st.trust.Client(r)
	rs.bot = bs.v.Identify(r.Context(), r, client)
}

// botAccess decides [[bots.access]], bots.spoofed and bots.enforce_robots
// for an identified request (after headgate's own files, before
// redirects) and answers 403 when they deny it; it reports whether it
// answered. In shadow mode the decision is recorded and logged, not
// enforced.
func (p *Proxy) botAccess(rs *reqState, w http.ResponseWriter, r *http.Request, target string) bool {
	if !rs.bot.Known() || r.URL.Path == "/robots.txt" || r.URL.Path == "/llms.txt" {
		return false // always served, also when the upstream serves them
	}
	if bs := rs.st.bots; bs.robots != nil {
		// Asked whether or not enforce_robots acts on it: the record
		// carries it for §20.1's robots violations.
		d, known := bs.robots(rs.bot.Name, target)
		rs.botRobots = d && known
	}
	deny, rule := rs.st.bots.acc.Decide(rs.bot, target)
	rs.botRule, rs.botDeny = bots.Reason(rule), deny
	if !deny || rs.st.shadow {
		return false
	}
	rs.outcome, rs.kind = BotDenied, KindBotDenied
	h := w.Header()
	hset(h, "Content-Type", "text/plain; charset=utf-8")
	hset(h, "Cache-Control", "no-store")
	hset(h, "X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusForbidden)
	if r.Method != http.MethodHead {
		w.Write([]byte("403 Forbidden: this crawler may not fetch this address.\n"))
	}
	return true
}

// setBotHeader removes any identity header the client sent and, with
// bots.upstream_header, sends the request's identity upstream.
func (rs *reqState) setBotHeader(h http.Header) {
	hdel(h, botHeader)
	name := rs.st.botHeader
	if name == "" {
		return
	}
	delete(h, name)
	if rs.st.bots == nil {
		return
	}
	if id := rs.bot; (id.Name == "" || id.Name == bots.None.Name) && id.Category == "" && id.Verified == "" {
		h[name] = noneHeader // most requests: made once, shared
		return
	}
	// A slice of its own, not in rs: a transport may still read the
	// upstream request's header after the request ended and its state was
	// recycled (http.Transport's writer, an h2 stream being encoded when
	// the context ends; Proxy.release).
	var buf [96]byte
	h[name] = []string{string(rs.bot.AppendHeader(buf[:0]))}
}

// noneHeader is the identity header's value for a request that names no
// crawler, shared by every such request: full, so that an append copies.
var noneHeader = func() []string { v := bots.None.Header(); return []string{v}[:1:1] }()

// botAttrs are the access log's identity fields with [bots] on: bot,
// bot_category, bot_verified, and bot_rule when an access rule decided
// (the outcome says whether it denied). Empty Attrs, which slog leaves
// out, when off. An array, not a group: no allocation per request.
func botAttrs(rs *reqState) (a [4]slog.Attr) {
	if rs.st.bots == nil {
		return a
	}
	id := rs.bot
	if id.Name == "" {
		id = bots.None
	}
	a[0] = slog.String("bot", id.Name)
	a[1] = slog.String("bot_category", string(id.Category))
	a[2] = slog.String("bot_verified", string(id.Verified))
	if rs.botRule != "" {
		a[3] = slog.String("bot_rule", rs.botRule)
	}
	return a
}
