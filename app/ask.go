package app

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"time"

	"github.com/headgate/headgate/proxy"
	"github.com/headgate/headgate/rules"
)

// Asker is headgate's pipeline for cfg in front of a stand-in upstream: the
// one-shot commands that show what headgate does with one request
// (`headgate explain`, `headgate rewrite`) send it through the proxy this
// way, so that what they print is what `headgate serve` would answer.
type Asker struct {
	p    *proxy.Proxy
	srv  *http.Server
	stop func()
}

// NewAsker builds the pipeline for cfg with upstream answering in place of
// server.upstream (on a loopback port of its own, through the proxy's own
// upstream client). Close releases both.
func NewAsker(cfg *rules.Config, log *slog.Logger, upstream http.Handler) (*Asker, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: upstream, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	c := *cfg
	c.Server.Upstream = (&url.URL{Scheme: "http", Host: l.Addr().String()}).String()
	p, stop, err := Proxy(&c, log)
	if err != nil {
		srv.Close()
		return nil, err
	}
	return &Asker{p: p, srv: srv, stop: stop}, nil
}

// Request is one request as a client sends it to headgate.
type Request struct {
	Method string      // "" is GET
	Target string      // the request target as it arrives: "/a/b?c=d", percent-encoded
	Host   string      // the Host header; "" is site.base_url's host
	HTTPS  bool        // the client connected with TLS
	Header http.Header // more request headers; may be nil
	// Client is the address the request comes from (the peer, which
	// server.trusted_proxies may name a proxy); the zero Addr is
	// 192.0.2.1, a client that is never a trusted proxy.
	Client netip.Addr
	// OnRecord, when set, receives the Record as the proxy delivers it:
	// before the response's headers are written to w.
	OnRecord func(*proxy.Record)
}

// ErrCut is Ask's error when the proxy cut its answer short: the upstream
// did (the stand-in's source failed) or the client side failed to take it.
var ErrCut = errors.New("the response was cut short")

// Ask sends req through the proxy, writes its answer to w and returns the
// proxy's Record of it.
func (a *Asker) Ask(ctx context.Context, req Request, w http.ResponseWriter) (rec *proxy.Record, err error) {
	if req.Method == "" {
		req.Method = http.MethodGet
	}
	if req.Host == "" {
		if u, err := url.Parse(a.p.Config().Site.BaseURL); err == nil {
			req.Host = u.Host
		}
	}
	ctx = proxy.Observe(ctx, func(r *proxy.Record) {
		rec = r
		if req.OnRecord != nil {
			req.OnRecord(r)
		}
	})
	r, err := http.NewRequestWithContext(ctx, req.Method, "http://"+req.Host+"/", nil)
	if err != nil {
		r, _ = http.NewRequestWithContext(ctx, req.Method, "http://headgate.invalid/", nil)
	}
	if u, err := url.ParseRequestURI(req.Target); err == nil {
		r.URL.Path, r.URL.RawPath, r.URL.RawQuery = u.Path, u.RawPath, u.RawQuery
	}
	r.RequestURI = req.Target
	r.Host = req.Host
	r.RemoteAddr = "192.0.2.1:1" // a client, never a trusted proxy
	if req.Client.IsValid() {
		r.RemoteAddr = netip.AddrPortFrom(req.Client, 1).String()
	}
	if req.HTTPS {
		r.TLS = &tls.ConnectionState{}
	}
	for k, vs := range req.Header {
		r.Header[k] = vs
	}
	defer func() {
		// A response cut mid-body: the server would close the connection.
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler {
				panic(v)
			}
			err = ErrCut
		}
		if rec == nil {
			rec = &proxy.Record{}
		}
	}()
	a.p.ServeHTTP(w, r)
	return rec, nil
}

// Close stops the stand-in upstream and the pipeline.
func (a *Asker) Close() {
	a.srv.Close()
	a.stop()
}
