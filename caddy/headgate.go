package headgate

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/headgate/headgate/app"
	"github.com/headgate/headgate/proxy"
	"github.com/headgate/headgate/rules"
)

func init() {
	caddy.RegisterModule(Handler{})
	httpcaddyfile.RegisterHandlerDirective("headgate", parseCaddyfile)
	// After redir, rewrite, header and encode (encode then leaves
	// headgate's own Content-Encoding alone), before the handlers that
	// serve content: reverse_proxy, php_fastcgi, file_server.
	httpcaddyfile.RegisterDirectiveOrder("headgate", httpcaddyfile.Before, "reverse_proxy")
}

// Handler is the http.handlers.headgate module.
type Handler struct {
	// Config is the path of headgate's TOML config file; its
	// server.upstream must be "builtin:next".
	Config string `json:"config,omitempty"`

	mw func(http.Handler) http.Handler
	p  *proxy.Proxy
}

// CaddyModule returns the module's information.
func (Handler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.headgate",
		New: func() caddy.Module { return new(Handler) },
	}
}

// Provision loads the config and builds the engine.
func (h *Handler) Provision(ctx caddy.Context) error {
	if h.Config == "" {
		return errors.New("headgate: config is required (the path of headgate.toml)")
	}
	cfg, err := rules.Load(h.Config)
	if err != nil {
		return fmt.Errorf("headgate: %w", err)
	}
	log := ctx.Slogger()
	mw, p, err := proxy.Middleware(cfg, proxy.Options{
		Logger:  log,
		Sitemap: app.Sitemaps(log, nil),
	})
	if err != nil {
		return fmt.Errorf("headgate: %s: %w", h.Config, err)
	}
	h.mw, h.p = mw, p
	return nil
}

// Cleanup stops the engine: Caddy calls it once the config it belongs to
// serves no more requests.
func (h *Handler) Cleanup() error {
	if h.p != nil {
		return h.p.Close()
	}
	return nil
}

// ServeHTTP runs the request through headgate, whose upstream is the rest
// of Caddy's route. An error of the rest of the route is answered with its
// status (caddyhttp.HandlerError's, else 500) when nothing was written:
// headgate treats it as an upstream's answer.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	h.mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := next.ServeHTTP(w, r); err != nil {
			status := http.StatusInternalServerError
			var he caddyhttp.HandlerError
			if errors.As(err, &he) && he.StatusCode != 0 {
				status = he.StatusCode
			}
			w.WriteHeader(status)
		}
	})).ServeHTTP(w, r)
	return nil
}

// UnmarshalCaddyfile reads
//
//	headgate <config>
//	headgate {
//		config <path>
//	}
func (h *Handler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive's name
	if d.NextArg() {
		h.Config = d.Val()
		if d.NextArg() {
			return d.ArgErr()
		}
	}
	for d.NextBlock(0) {
		switch d.Val() {
		case "config":
			if !d.NextArg() {
				return d.ArgErr()
			}
			h.Config = d.Val()
			if d.NextArg() {
				return d.ArgErr()
			}
		default:
			return d.Errf("headgate: unknown subdirective %q", d.Val())
		}
	}
	if h.Config == "" {
		return d.Err("headgate: the config file is required: headgate { config <path> } (in one line, an absolute path needs a matcher first: headgate * /etc/headgate.toml)")
	}
	return nil
}

func parseCaddyfile(helper httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	h := new(Handler)
	err := h.UnmarshalCaddyfile(helper.Dispenser)
	return h, err
}

var (
	_ caddy.Provisioner           = (*Handler)(nil)
	_ caddy.CleanerUpper          = (*Handler)(nil)
	_ caddyhttp.MiddlewareHandler = (*Handler)(nil)
	_ caddyfile.Unmarshaler       = (*Handler)(nil)
)
