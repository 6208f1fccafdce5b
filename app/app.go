// Package app is headgate's composition root: the one package above
// proxy, audit and sitemap that imports them all (only cmd/headgate and
// the tests sit above it). It builds headgate's one request pipeline the
// way every entry point needs it: `headgate serve`, the one-shot commands
// (sitemap, indexnow, the in-process audit) and the tests that check them
// against each other. Nothing here decides what happens to a request —
// package proxy does — it only connects the packages: the proxy, the
// sitemap handler it serves, and the builtin:demo upstream.
package app

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/headgate/headgate/audit"
	"github.com/headgate/headgate/internal/demo"
	"github.com/headgate/headgate/proxy"
	"github.com/headgate/headgate/rewrite"
	"github.com/headgate/headgate/rules"
	"github.com/headgate/headgate/sitemap"
)

// Sitemaps returns the proxy.Options.Sitemap of headgate: the sitemap
// package's handler (/sitemap.xml and its parts, /robots.txt, /llms.txt,
// the IndexNow key file) over the proxy's own upstream client. reg may be
// nil (no sitemap metrics).
func Sitemaps(log *slog.Logger, reg prometheus.Registerer) func(*rules.Config, func(context.Context, string) (io.ReadCloser, error)) proxy.SitemapHandler {
	return func(cfg *rules.Config, fetch func(context.Context, string) (io.ReadCloser, error)) proxy.SitemapHandler {
		return sitemap.New(cfg, sitemap.Options{Fetch: fetch, Logger: log, Registerer: reg})
	}
}

// Demo runs the builtin:demo site on a loopback port, started on first use.
type Demo struct {
	Logger *slog.Logger // nil: discard

	once sync.Once
	u    *url.URL
	err  error
	srv  *http.Server
}

// URL starts the demo site once and returns its address: the
// proxy.Options.Demo of headgate.
func (d *Demo) URL() (*url.URL, error) {
	d.once.Do(func() {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			d.err = err
			return
		}
		d.srv = &http.Server{Handler: demo.Handler(), ReadHeaderTimeout: 10 * time.Second}
		go d.srv.Serve(l)
		d.u = &url.URL{Scheme: "http", Host: l.Addr().String()}
		if d.Logger != nil {
			d.Logger.Info("builtin:demo serving", "addr", d.u.Host)
		}
	})
	return d.u, d.err
}

// Close stops the demo site, if it was started.
func (d *Demo) Close() {
	if d.srv != nil {
		d.srv.Close()
	}
}

// Proxy returns headgate's request pipeline for cfg, as `headgate serve`
// builds it, for a one-shot command: the proxy with its sitemap handler
// and, for builtin:demo, the demo site. stop closes the proxy and the demo
// site.
func Proxy(cfg *rules.Config, log *slog.Logger) (p *proxy.Proxy, stop func(), err error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	d := &Demo{}
	p, err = proxy.New(cfg, proxy.Options{
		Logger:   log,
		Registry: prometheus.NewRegistry(),
		Sitemap:  Sitemaps(log, nil),
		Demo:     d.URL,
	})
	if err != nil {
		d.Close()
		return nil, nil, err
	}
	return p, func() { p.Close(); d.Close() }, nil
}

// AuditInProcess sets o's Handler, Observe and Upstream to headgate's
// pipeline for o.Config, so that the in-process audit reads what headgate
// serves. A staging config is audited as production will serve it (the
// audit marks the responses noindex itself, §6). stop releases the demo
// site when there is one.
func AuditInProcess(o *audit.Options) (stop func(), err error) {
	cfg := o.Config
	if cfg.Site.Mode == rules.ModeStaging || o.Upstream != "" {
		c := *cfg
		if c.Site.Mode == rules.ModeStaging {
			c.Site.Mode = rules.ModeProduction
		}
		if o.Upstream != "" {
			c.Server.Upstream = o.Upstream // Options.Upstream: where the pages are
		}
		cfg = &c
	}
	p, stop, err := Proxy(cfg, o.Logger)
	if err != nil {
		return nil, err
	}
	o.Handler, o.Observe = p, AuditObserve
	if o.Upstream == "" {
		o.Upstream = p.Upstream().String()
	}
	return stop, nil
}

// AuditObserve is the audit's Options.Observe: proxy.Observe, handing the
// audit the parts of each Record it reads (the audit does not import
// proxy).
func AuditObserve(ctx context.Context, fn func(outcome string, upstream []byte, res *rewrite.Result)) context.Context {
	return proxy.Observe(ctx, func(r *proxy.Record) { fn(string(r.Outcome), r.Upstream, r.Result) })
}
