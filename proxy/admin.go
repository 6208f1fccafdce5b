package proxy

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Readiness: the upstream is probed on demand, at most once per
// readyTTL, with a short timeout; concurrent /readyz calls share a probe.
const (
	readyTTL     = 2 * time.Second
	probeTimeout = 2 * time.Second
)

type readiness struct {
	mu      sync.Mutex
	checked time.Time
	ok      bool
	detail  string
}

// Admin returns the handler of the admin listener: /metrics, /healthz
// (alive) and /readyz (a config is loaded and the upstream answered the
// last probe, with any HTTP status), /inspect and the profiles. Only a
// Host that is an IP literal, localhost or one of server.admin_hosts (of
// the config in force: a reload applies it) is answered (adminHostOK); any
// other gets 421, on every path.
func (p *Proxy) Admin() http.Handler {
	return &adminGuard{next: p.adminMux(), p: p, log: p.log}
}

// adminGuard answers 421 to a request for a Host the admin listener does
// not serve. A page on a DNS-rebinding name (one that resolves to the
// attacker's server, then to 127.0.0.1 or the pod's address) is
// same-origin with that name in the browser, so it could read /metrics,
// /inspect or a profile; but the browser sends that name as Host, and no
// attacker can make a name the operator listed, an IP literal or
// localhost its own origin.
type adminGuard struct {
	next http.Handler
	p    *Proxy // its state's admin: server.admin_hosts, lower case, no trailing dot
	log  *slog.Logger
}

func (g *adminGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if adminHostOK(r.Host, g.p.state.Load().admin) {
		g.next.ServeHTTP(w, r)
		return
	}
	g.p.m.misdirected.Inc()
	if ok, left := g.p.misdirected.allow(); ok {
		host := r.Host
		if len(host) > 256 {
			host = host[:256] + "…"
		}
		// Quoted: the Host is the client's bytes, the log line is the operator's.
		g.log.Warn("admin: refused a request for another host (421): add the name to server.admin_hosts if it is yours",
			"host", strconv.Quote(host), "path", strconv.Quote(r.URL.Path), "client", r.RemoteAddr, "suppressed", left)
	}
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusMisdirectedRequest)
	io.WriteString(w, "421 misdirected request: headgate's admin listener answers only an IP address, localhost or a name in server.admin_hosts\n")
}

// lineLimit lets one log line a second through, so that a client who
// sends request after request with a foreign Host cannot flood the log;
// the next line says how many it left out (suppressed), and a metric
// counts every one (headgate_admin_misdirected_total). One per Proxy,
// whichever Admin handler refused.
type lineLimit struct {
	now        func() time.Time // nil: time.Now (tests set it)
	last       atomic.Int64     // Unix second of the last line
	suppressed atomic.Uint64    // lines left out since
}

// allow reports whether a line may go out now and, if so, how many were
// left out before it.
func (l *lineLimit) allow() (bool, uint64) {
	now := time.Now
	if l.now != nil {
		now = l.now
	}
	sec := now().Unix()
	last := l.last.Load()
	if sec <= last || !l.last.CompareAndSwap(last, sec) {
		l.suppressed.Add(1)
		return false, 0
	}
	return true, l.suppressed.Swap(0)
}

// adminHostSet is the lookup table of server.admin_hosts.
func adminHostSet(names []string) map[string]bool {
	set := make(map[string]bool, len(names))
	for _, n := range names {
		if n = hostName(n); n != "" {
			set[n] = true
		}
	}
	return set
}

// hostName is the name of a Host value without its port, lower case and
// without a trailing dot; "" when it has no name.
func hostName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// adminHostOK reports whether the admin listener answers a request whose
// Host is host: an IP literal (v4, or v6 in brackets), localhost, or a
// name in allowed, any port. An empty Host (HTTP/1.0) is no browser's: it
// names nothing a page could rebind.
func adminHostOK(host string, allowed map[string]bool) bool {
	if host == "" {
		return true
	}
	name := host
	if h, port, err := net.SplitHostPort(host); err == nil {
		if _, err := strconv.ParseUint(port, 10, 16); err != nil && port != "" {
			return false
		}
		name = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		name = host[1 : len(host)-1]
	} else if strings.Contains(host, ":") {
		return false // an IPv6 literal must be in brackets; anything else is no Host
	}
	if a, err := netip.ParseAddr(name); err == nil {
		// A v6 literal must come bracketed; SplitHostPort or the branch
		// above took the brackets off. A v4 literal must not.
		return a.Is4() != strings.HasPrefix(host, "[")
	}
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	return name == "localhost" || allowed[name]
}

// adminMux routes the admin listener's paths.
func (p *Proxy) adminMux() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(p.reg, promhttp.HandlerOpts{
		Registry:          prometheus.Registerer(p.reg),
		EnableOpenMetrics: true,
	}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ok, detail := p.Ready(r.Context())
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		io.WriteString(w, detail+"\n")
	})
	// The inspector (SPEC §14): what headgate does to one page.
	mux.HandleFunc("GET /inspect", p.inspect)
	// What crawlers do (§20.1) and the upstream's changes (§20.2).
	mux.Handle("GET /crawlers", p.insight.Handler())
	mux.HandleFunc("GET /changes", p.changesHandler)
	// Profiles, for operators chasing a hot path: the admin listener is
	// private (server.admin_listen, 127.0.0.1 by default).
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	return mux
}

// Ready reports whether the proxy is ready: a config is loaded and the
// upstream answered its last probe. detail says why not.
func (p *Proxy) Ready(ctx context.Context) (bool, string) {
	st := p.state.Load()
	if st == nil {
		return false, "no config loaded"
	}
	r := &p.ready
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Since(r.checked) < readyTTL {
		return r.ok, r.detail
	}
	// The probe's result is shared: a caller that gives up must not fail it.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, st.upstream.String(), nil)
	if err == nil {
		if st.cfg.Server.PreserveHost && st.host != "" {
			req.Host = st.host
		}
		req.Header.Set("User-Agent", "headgate-readyz")
		var res *http.Response
		res, err = st.transport.RoundTrip(req)
		if err == nil {
			res.Body.Close()
		}
	}
	r.checked = time.Now()
	r.ok = err == nil
	r.detail = "ready"
	if err != nil {
		r.detail = "upstream did not answer: " + err.Error()
	}
	return r.ok, r.detail
}
