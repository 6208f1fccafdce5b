package proxy

import (
	"log/slog"
	"net/http"
	"net/http/httputil"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/headgate/headgate/internal/clientaddr"
	"github.com/headgate/headgate/rules"
)

// redirectMetrics counts the redirects headgate answers.
type redirectMetrics struct {
	total *prometheus.CounterVec // source, status
	// cells holds each source and status's counter once it has counted:
	// a redirect answered looks its counter up without a string built or
	// a map searched.
	cells [3][5]atomic.Pointer[counterCell]
}

type counterCell struct{ c prometheus.Counter }

func newRedirectMetrics(reg prometheus.Registerer, m *metrics) (*redirectMetrics, error) {
	rm := &redirectMetrics{total: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "headgate_redirects_total",
		Help: "Redirects (and 410s) headgate answered itself, by the first hop's source (normalize, rule, table) and status.",
	}, []string{"source", "status"})}
	if err := reg.Register(rm.total); err != nil {
		return nil, err
	}
	m.requests.WithLabelValues(string(Redirected))
	return rm, nil
}

func (rm *redirectMetrics) inc(source string, status int) {
	i, j := sourceIndex(source), statusIndex(status)
	if i < 0 || j < 0 {
		rm.total.WithLabelValues(source, strconv.Itoa(status)).Inc()
		return
	}
	cell := rm.cells[i][j].Load()
	if cell == nil {
		// Two first redirects at once may both get here: WithLabelValues
		// returns the same counter to both.
		cell = &counterCell{rm.total.WithLabelValues(source, strconv.Itoa(status))}
		rm.cells[i][j].Store(cell)
	}
	cell.c.Inc()
}

func sourceIndex(s string) int {
	switch s {
	case rules.SourceNormalize:
		return 0
	case rules.SourceRule:
		return 1
	case rules.SourceTable:
		return 2
	}
	return -1
}

func statusIndex(n int) int {
	switch n {
	case 301:
		return 0
	case 302:
		return 1
	case 307:
		return 2
	case 308:
		return 3
	case 410:
		return 4
	}
	return -1
}

// redirect answers the request with a redirect when §11's normalization,
// tables or rules say so, and reports whether it did. It runs after the
// 400 checks, deny and headgate's own endpoints (§11.2).
func (p *Proxy) redirect(rs *reqState, w http.ResponseWriter, r *http.Request, target string) bool {
	st := rs.st
	if !st.redirects {
		return false
	}
	https := false
	if st.cfg.Normalize.HTTPS { // the only rule that asks how the request came
		https = st.trust.HTTPS(r)
	}
	var rd rules.Redirect // on the stack: only its Location is allocated
	ok, err := st.cfg.RedirectInto(rules.RedirectRequest{Method: r.Method, Host: r.Host, HTTPS: https, Target: target}, &rd)
	if err != nil {
		// A loop among templated targets, or one that came out invalid:
		// the rules are ignored for this request (fail open). Logged
		// sparingly: every request to the address meets it.
		if n := st.redirectErrors.Add(1); n <= 10 || n%1000 == 0 {
			p.log.Warn("redirect not followed: the request is served as if no redirect rule matched",
				"path", r.URL.EscapedPath(), "err", err, "occurrences", n)
		}
	}
	if !ok {
		return false
	}
	p.rm.inc(rd.Source, rd.Status)
	if rs.obs != nil {
		c := rd // a copy: rd stays on the stack
		rs.obs.rec.Redirect = &c
	}
	if st.shadow {
		// Shadow mode (§6): what headgate would have answered goes to the
		// log and the metrics; the request is served as it would be
		// without redirects.
		p.log.Info("shadow: would redirect", "path", r.URL.EscapedPath(), "status", rd.Status,
			"location", rd.Location, "source", rd.Source, "where", rd.Where())
		return false
	}
	rs.outcome, rs.kind, rs.redirect = Redirected, KindRedirect, rd.Source
	if rs.mdPage != "" && rd.Location != "" {
		rd.Location = markdownLocation(st.cfg.Markdown, st.cfg.Site.BaseURL, rd.Location) // markdown.go
	}
	writeRedirect(rs.w, r, &rd)
	return true
}

// writeRedirect writes the status, an absolute Location and a short page
// with the link (none for HEAD). A 410 says noindex.
func writeRedirect(w http.ResponseWriter, r *http.Request, rd *rules.Redirect) {
	h := w.Header()
	bp := redirectPages.Get().(*[]byte)
	defer redirectPages.Put(bp)
	body := (*bp)[:0]
	// The header values share one array; each slice is capped at its own
	// value, so that a later Add to one header copies rather than writes
	// over the next.
	vals := make([]string, 5)
	vals[0], vals[1] = "text/html; charset=utf-8", "nosniff"
	h["Content-Type"], h["X-Content-Type-Options"] = vals[0:1:1], vals[1:2:2]
	if rd.Location != "" {
		vals[2] = rd.Location
		h["Location"] = vals[2:3:3]
		text := http.StatusText(rd.Status)
		body = append(body, "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>"...)
		body = strconv.AppendInt(body, int64(rd.Status), 10)
		body = append(body, ' ')
		body = append(body, text...)
		body = append(body, "</title></head>\n<body><h1>"...)
		body = append(body, text...)
		body = append(body, "</h1><p>This page is now at <a href=\""...)
		body = appendHTMLEscaped(body, rd.Location)
		body = append(body, "\">"...)
		body = appendHTMLEscaped(body, rd.Location)
		body = append(body, "</a>.</p></body></html>\n"...)
	} else {
		if hget(h, "X-Robots-Tag") == "" { // staging's noindex, nofollow says more
			vals[3] = "noindex"
			h["X-Robots-Tag"] = vals[3:4:4]
		}
		body = append(body, "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>410 Gone</title></head>\n"+
			"<body><h1>Gone</h1><p>This page has been removed.</p></body></html>\n"...)
	}
	vals[4] = strconv.Itoa(len(body))
	h["Content-Length"] = vals[4:5:5]
	w.WriteHeader(rd.Status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
	*bp = body
}

// redirectPages holds the buffers redirect pages are written from.
var redirectPages = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// appendHTMLEscaped appends s escaped as html.EscapeString escapes it, the
// runs between special bytes in one append each.
func appendHTMLEscaped(b []byte, s string) []byte {
	last := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '&':
			esc = "&amp;"
		case '\'':
			esc = "&#39;"
		case '"':
			esc = "&#34;"
		default:
			continue
		}
		b = append(b, s[last:i]...)
		b = append(b, esc...)
		last = i + 1
	}
	return append(b, s[last:]...)
}

// ---- trusted proxies (§11.1, §17): internal/clientaddr decides ----

// setForwarded writes the X-Forwarded-* headers of the upstream request:
// a trusted peer's X-Forwarded-For is extended with the peer's address
// ("client, peer") and its X-Forwarded-Proto kept; any other peer's are
// replaced with what headgate saw (ReverseProxy has already removed them
// from the outbound request).
func setForwarded(pr *httputil.ProxyRequest, st *state) {
	trusted := st.trust.FromTrusted(pr.In)
	if trusted {
		if prior := hvalues(pr.In.Header, "X-Forwarded-For"); len(prior) > 0 {
			pr.Out.Header["X-Forwarded-For"] = append([]string(nil), prior...)
		}
	}
	pr.SetXForwarded()
	if trusted {
		if proto := clientaddr.ForwardedProto(pr.In.Header); proto == "http" || proto == "https" {
			hset(pr.Out.Header, "X-Forwarded-Proto", proto)
		}
	}
}

// client is the access log's client address: the peer's as the connection
// gave it (clientAddr), or the one a trusted proxy's X-Forwarded-For
// names.
func (st *state) client(r *http.Request) string {
	if a, forwarded := st.trust.Client(r); forwarded {
		return a.String()
	}
	return clientAddr(r)
}

// redirectAttr names a redirect's source in the access log.
func redirectAttr(rs *reqState) slog.Attr {
	if rs.redirect == "" {
		return slog.Attr{}
	}
	return slog.String("redirect", rs.redirect)
}

// redirectErrors counts, per config, requests whose redirect rules could
// not be followed.
type redirectErrors = atomic.Int64

// warnRedirects logs what in a config's redirects is valid but most likely
// a mistake: normalize.https with no trusted proxy. headgate itself listens
// on plain http, so without a trusted proxy to say a request came over
// https every request is redirected, and a client behind the TLS
// terminator that forwards to headgate loops.
func (p *Proxy) warnRedirects(cfg *rules.Config) {
	if cfg.Normalize.HTTPS && len(cfg.Server.TrustedProxies) == 0 {
		p.log.Warn("normalize.https is on but server.trusted_proxies is empty: every request reaches headgate over plain http and is redirected; "+
			"list the load balancer or ingress that terminates TLS in server.trusted_proxies, or clients loop", "config", cfg.File)
	}
}
