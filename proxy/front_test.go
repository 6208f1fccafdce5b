package proxy_test

import (
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/headgate/headgate/app"
	"github.com/headgate/headgate/internal/hgtest"
	"github.com/headgate/headgate/proxy"
	"github.com/headgate/headgate/rules"
)

// front is headgate as `headgate serve` builds it — the proxy with
// app's sitemap handler and the builtin:demo site, a JSON log and
// a registry of its own — behind two httptest servers (public and admin),
// on 127.0.0.1: for the behaviour tests that need no binary (no signal,
// reload, shutdown or process memory). The tests that do are in test/.
type front = hgtest.Server

func serve(t *testing.T, c hgtest.Config) *front {
	t.Helper()
	cfg, err := rules.Parse("headgate.toml", []byte(c.Render("", "")), nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &front{Logs: &hgtest.LogBuffer{}}
	log := slog.New(slog.NewJSONHandler(f.Logs, nil))
	reg := prometheus.NewRegistry()
	demo := &app.Demo{Logger: log}
	t.Cleanup(demo.Close)
	p, err := proxy.New(cfg, proxy.Options{Logger: log, Registry: reg, Sitemap: app.Sitemaps(log, reg), Demo: demo.URL})
	if err != nil {
		t.Fatal(err)
	}
	pub, adm := httptest.NewServer(p), httptest.NewServer(p.Admin())
	t.Cleanup(func() {
		pub.Close()
		adm.Close()
		if t.Failed() {
			t.Logf("headgate log:\n%s", f.Logs.String())
		}
	})
	f.URL, f.Admin = pub.URL, adm.URL
	return f
}
