package audit

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/headgate/headgate/proxy"
	"github.com/headgate/headgate/rewrite"
	"github.com/headgate/headgate/rules"
)

// resp is one canned answer of a test site. In every string, {origin} is
// replaced by the server's origin ("http://127.0.0.1:port").
type resp struct {
	status int               // 0: 200; noAnswer: the connection is closed unanswered
	ctype  string            // "": text/html; charset=utf-8
	header map[string]string // extra headers
	body   string
}

// noAnswer is a resp status: the server closes the connection without an
// answer, as a crashed or firewalled page does.
const noAnswer = -1

// doc is a 200 HTML page with that head and body.
func doc(head, body string) resp {
	return resp{body: "<!doctype html><html><head>" + head + "</head><body>" + body + "</body></html>"}
}

// clean is the head of a page with nothing wrong: a title and a
// description of its own, an absolute canonical to itself.
func clean(path string) string {
	return `<meta charset="utf-8"><title>Title of ` + path + ` on the audit's test site</title>` +
		`<meta name="description" content="About ` + path + `, one page of the audit's test site, described at a length results show.">` +
		`<link rel="canonical" href="{origin}` + path + `">`
}

// canon is a canonical link to path on the test site.
func canon(path string) string { return `<link rel="canonical" href="{origin}` + path + `">` }

func redirect(code int, to string) resp {
	return resp{status: code, header: map[string]string{"Location": to}}
}

func text(ctype, body string) resp { return resp{ctype: ctype, body: body} }

func sitemapOf(paths ...string) resp {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for _, p := range paths {
		b.WriteString("<url><loc>{origin}" + p + "</loc></url>")
	}
	b.WriteString("</urlset>")
	return text("application/xml", b.String())
}

// serveSite serves the answers by request URI; anything else is a 404.
func serveSite(t testing.TB, site map[string]resp) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(siteHandler(site))
	t.Cleanup(srv.Close)
	return srv
}

func siteHandler(site map[string]resp) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, ok := site[r.URL.RequestURI()]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if res.status == noAnswer {
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
		origin := "http://" + r.Host
		fill := func(s string) string { return strings.ReplaceAll(s, "{origin}", origin) }
		ct := res.ctype
		if ct == "" {
			ct = "text/html; charset=utf-8"
		}
		w.Header().Set("Content-Type", ct)
		for k, v := range res.header {
			w.Header().Set(k, fill(v))
		}
		status := res.status
		if status == 0 {
			status = http.StatusOK
		}
		w.WriteHeader(status)
		io.WriteString(w, fill(res.body))
	})
}

// auditLive serves site and audits it live from start.
func auditLive(t testing.TB, site map[string]resp, o Options, start ...string) (*Report, *httptest.Server) {
	t.Helper()
	srv := serveSite(t, site)
	o.Live = srv.URL
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := Run(ctx, o, start)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return r, srv
}

// pathsOf returns the paths of the pages that hold a finding of check,
// sorted, each once.
func pathsOf(r *Report, origin, check string) []string {
	var out []string
	for _, f := range r.Findings {
		if f.Check == check {
			p := strings.TrimPrefix(f.URL, origin)
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	sort.Strings(out)
	return out
}

func findingsOf(r *Report, check string) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Check == check {
			out = append(out, f)
		}
	}
	return out
}

// skipped returns the skips whose reason contains s.
func skipped(r *Report, s string) []Skip {
	var out []Skip
	for _, k := range r.Skipped {
		if strings.Contains(k.Reason, s) {
			out = append(out, k)
		}
	}
	return out
}

func pageOf(r *Report, url string) *Page {
	for i := range r.Pages {
		if r.Pages[i].URL == url {
			return &r.Pages[i]
		}
	}
	return nil
}

// withHeadgate gives an in-process Options headgate's own pipeline, as
// app.AuditInProcess does for the commands (which this package's
// tests can not import): the proxy for o.Config over o.Upstream, the
// staging mode audited as production, sm (when set) as its sitemap handler.
func withHeadgate(t testing.TB, o *Options, sm proxy.SitemapHandler) {
	t.Helper()
	cfg := *o.Config
	if o.Upstream != "" {
		cfg.Server.Upstream = o.Upstream
	}
	if cfg.Site.Mode == rules.ModeStaging {
		cfg.Site.Mode = rules.ModeProduction
	}
	po := proxy.Options{}
	if sm != nil {
		po.Sitemap = func(*rules.Config, func(context.Context, string) (io.ReadCloser, error)) proxy.SitemapHandler {
			return sm
		}
	}
	p, err := proxy.New(&cfg, po)
	if err != nil {
		t.Fatal(err)
	}
	o.Handler = p
	o.Observe = func(ctx context.Context, fn func(string, []byte, *rewrite.Result)) context.Context {
		return proxy.Observe(ctx, func(r *proxy.Record) { fn(string(r.Outcome), r.Upstream, r.Result) })
	}
}
