package proxy

import (
	"context"
	"io"
	"net/http"
	"net/http/pprof"
	"sync"
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
// last probe, with any HTTP status).
func (p *Proxy) Admin() http.Handler {
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
