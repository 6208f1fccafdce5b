package proxy

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/headgate/headgate/internal/pct"
	"github.com/headgate/headgate/rules"
)

// The inspector (SPEC §14): GET /inspect?path=/notes/3 on the admin
// listener. It asks the proxy itself: a synthetic GET for the target,
// without client cookies or headers, goes through Proxy.ServeHTTP into a
// bounded recorder, and the request's observer (Observe, as for the
// in-process audit) hands over its Record: the upstream's status, headers
// and head bytes and the rewrite's change record. So the upstream is asked exactly as
// a client's request would ask it: the same transport, Host, timeouts,
// deny rules, sitemap and (where other parts add them) redirects.

// inspectSlack is how long after server.upstream_timeout the inspector
// stops waiting and shows what it has: the proxy itself answers a stalled
// upstream with a 504 by then; a body that stalls after the head is cut.
const inspectSlack = 3 * time.Second

// inspectUA is the User-Agent of the inspector's requests: the upstream's
// logs, and headgate's access log, can tell them apart.
const inspectUA = "headgate-inspector"

// errInspectEnough cancels the inspector's request once it has what it
// shows: the head, not the rest of a page of any size.
var errInspectEnough = errors.New("inspector: the head is read; the rest of the body is not needed")

// recorder is the inspector's response writer: it keeps the status, the
// headers and the first limit bytes of the body, then refuses more and
// cancels the request, so that a page of any size costs limit bytes.
type recorder struct {
	h      http.Header
	status int
	body   []byte
	limit  int
	full   bool
	cancel context.CancelCauseFunc
}

func (w *recorder) Header() http.Header { return w.h }

func (w *recorder) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
}

func (w *recorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	room := w.limit - len(w.body)
	if len(b) <= room {
		w.body = append(w.body, b...)
		return len(b), nil
	}
	w.body = append(w.body, b[:room]...)
	w.full = true
	w.cancel(errInspectEnough)
	return room, errInspectEnough
}

func (w *recorder) Flush() {}

// typedTarget is the path as the operator typed it into the form, spelled
// as a request target: a browser sends "/wiki/Café" as /wiki/Caf%C3%A9 in
// the form's query, which arrives here decoded, so its UTF-8 bytes are
// percent-encoded again with upper-case hex, as every URL headgate builds
// spells them (§16.4). Escapes already there are kept; ASCII that is no
// request target (a space, a control byte) and invalid UTF-8 are left for
// inspectTarget to refuse.
func typedTarget(raw string) string {
	if !utf8.ValidString(raw) {
		return raw
	}
	return pct.Encode(raw, pct.ASCII, pct.Keep)
}

// examplePath is a path of this config for the form's placeholder: the
// first sitemap rule's own path, or its first sitemap entry, else "/".
func examplePath(cfg *rules.Config) string {
	for _, r := range cfg.Rules {
		if !r.Sitemap || r.Deny || r.Pattern == nil || r.Localized {
			continue
		}
		if !r.Pattern.HasParams() {
			if s, err := r.Pattern.Fill(nil); err == nil {
				return s
			}
			continue
		}
		for _, e := range r.SitemapEntries {
			if s, err := r.Pattern.Fill(e.Params); err == nil {
				return s
			}
		}
	}
	return "/"
}

// inspectTarget checks the path parameter: an origin-form request target
// (RFC 9112 §3.2.1) that starts with a single "/", in visible ASCII.
func inspectTarget(raw string) (string, error) {
	switch {
	case raw == "":
		return "", errors.New("path is empty")
	case strings.HasPrefix(raw, "//"):
		return "", errors.New("path starts with //: that names a host, not a path on this site")
	case !strings.HasPrefix(raw, "/"):
		return "", errors.New("path must start with / (a path on this site, not an absolute URL)")
	}
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == '\r' || c == '\n':
			return "", errors.New("path contains a line break")
		case c <= ' ' || c >= 0x7f:
			return "", fmt.Errorf("path contains the byte %q at %d: percent-encode it (%%%02X)", c, i, c)
		case c == '#':
			return "", errors.New("path contains #: a fragment is not part of a request")
		case c == '\\':
			return "", errors.New(`path contains \: browsers read it as /`)
		case c == '%':
			if i+2 >= len(raw) || !isHexDigit(raw[i+1]) || !isHexDigit(raw[i+2]) {
				return "", fmt.Errorf("path contains a %% at %d that is not a percent-escape (%%XX): write %%25 for a percent sign", i)
			}
		case !targetByte(c):
			return "", fmt.Errorf("path contains %q at %d, which a request target may not hold raw (RFC 9112 origin-form): percent-encode it (%%%02X)", c, i, c)
		}
	}
	u, err := url.ParseRequestURI(raw)
	if err != nil || u.Host != "" || u.Scheme != "" {
		return "", errors.New("path is not a request target")
	}
	return raw, nil
}

// targetByte reports whether an origin-form request target may hold c raw
// (RFC 3986 pchar, "/" and "?"; "%" is checked apart).
func targetByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-._~!$&'()*+,;=:@/?", c) >= 0
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// inspect serves GET /inspect on the admin listener.
func (p *Proxy) inspect(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	asJSON := q.Get("format") == "json"
	if f := q.Get("format"); f != "" && f != "json" && f != "html" && f != "markdown" {
		inspectError(w, asJSON, http.StatusBadRequest, "format must be html, json or markdown", examplePath(p.state.Load().cfg))
		return
	}
	raw, given := q["path"]
	if !given || len(raw) == 0 || raw[0] == "" && len(raw) == 1 {
		p.inspectIndex(w, r, asJSON)
		return
	}
	target, err := inspectTarget(typedTarget(raw[0]))
	if err != nil {
		inspectError(w, asJSON, http.StatusBadRequest, err.Error(), examplePath(p.state.Load().cfg))
		return
	}
	if q.Get("format") == "markdown" {
		p.inspectMarkdown(w, r, target) // inspect_markdown.go
		return
	}
	as, err := inspectClient(q)
	if err != nil {
		inspectError(w, asJSON, http.StatusBadRequest, err.Error(), examplePath(p.state.Load().cfg))
		return
	}
	rep := p.inspectPath(r, target, as)
	code := http.StatusOK
	if rep.Served.Status == 0 || rep.Served.Status == http.StatusGatewayTimeout {
		// Nothing, or the proxy's own timeout answer: the report says what
		// was seen, under the status that says it was not enough.
		code = http.StatusGatewayTimeout
	}
	if asJSON {
		writeJSON(w, code, rep)
		return
	}
	writeInspectPage(w, code, rep, p.imagePolicy(p.state.Load()).imgSrc(), examplePath(p.state.Load().cfg))
}

// imagePolicy is where the link card may load images from under st:
// base_url's origin and inspector.image_hosts.
func (p *Proxy) imagePolicy(st *state) *imagePolicy {
	return newImagePolicy(st.cfg.Site.BaseURL, st.cfg.Inspector.ImageHosts)
}

// inspectAs is who the inspector's request comes from: ua= and ip= (SPEC
// §18), so that the report shows how the proxy identifies that client and
// what [bots] decides for it. The zero value is the inspector itself.
type inspectAs struct {
	UA string     // the User-Agent; "" is inspectUA
	IP netip.Addr // the client address; invalid: the admin client's
}

// inspectClient reads ua= and ip=.
func inspectClient(q url.Values) (inspectAs, error) {
	as := inspectAs{UA: q.Get("ua")}
	if strings.ContainsAny(as.UA, "\r\n\x00") {
		return as, errors.New("ua contains a line break or NUL")
	}
	if s := q.Get("ip"); s != "" {
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return as, fmt.Errorf("ip %q is not an IP address", s)
		}
		as.IP = a
	}
	return as, nil
}

// inspectPath asks the proxy for target, as as's client, and builds the
// report.
func (p *Proxy) inspectPath(r *http.Request, target string, as inspectAs) *inspectReport {
	st := p.state.Load()
	cfg := st.cfg
	max := cfg.Server.MaxHeadBytes
	if max <= 0 {
		max = rules.DefaultMaxHeadBytes
	}
	// The rewriter reads at most max + 64 KiB and one read; what it writes
	// adds a few KiB: this holds every head the proxy edits, served.
	limit := max + 128<<10
	rec := &Record{} // stays empty when the proxy never tells (it always does)

	// A context of its own: no http.ServerContextKey, so that ReverseProxy
	// returns (rather than panics) when the recorder has enough; it ends
	// with the admin request, and at upstream_timeout + inspectSlack.
	base, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	unhook := context.AfterFunc(r.Context(), func() { stop(context.Cause(r.Context())) })
	defer unhook()
	wait := cfg.Server.UpstreamTimeout + inspectSlack
	observed := Observe(base, func(r *Record) { rec = r })
	ctx, cancelT := context.WithTimeoutCause(observed, wait,
		fmt.Errorf("inspector: nothing more within upstream_timeout + %s", inspectSlack))
	defer cancelT()

	host := st.host
	if host == "" {
		host = "localhost"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+target, nil)
	if err != nil {
		return &inspectReport{Path: target, Error: "path is not a request target: " + err.Error()}
	}
	req.RequestURI = target
	req.Host = host
	req.RemoteAddr = r.RemoteAddr
	if as.IP.IsValid() {
		// Through the same server.trusted_proxies as any request: an ip=
		// in them is a proxy, and the client is then the proxy's.
		req.RemoteAddr = netip.AddrPortFrom(as.IP, 1).String()
	}
	req.Header.Set("User-Agent", inspectUA)
	if as.UA != "" {
		req.Header.Set("User-Agent", as.UA)
	}
	req.Header.Set("Accept", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8")
	w := &recorder{h: http.Header{}, limit: limit, cancel: stop}
	start := time.Now()
	p.serveInspected(w, req)
	elapsed := time.Since(start)

	rep := buildReport(cfg, target, rec, w)
	p.imagePolicy(st).apply(rep.Card)
	rep.Markdown = markdownInspectURL(rec, target)
	if st.watch != nil {
		rep.UpstreamChanges = st.watch.EventsFor(target) // §20.2: this page's confirmed changes
	}
	rep.UpstreamURL = strings.TrimRight(st.upstream.String(), "/") + target
	rep.Elapsed = elapsed.Round(time.Millisecond).String()
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, errInspectEnough) {
		rep.Notes = append(rep.Notes, "stopped waiting after "+elapsed.Round(time.Millisecond).String()+": "+cause.Error()+"; shown: what came until then")
	}
	return rep
}

// serveInspected runs the proxy on the synthetic request; a panic (the
// proxy re-raises http.ErrAbortHandler for a response cut short) ends the
// inspection with what was recorded.
func (p *Proxy) serveInspected(w *recorder, r *http.Request) {
	defer func() {
		if v := recover(); v != nil && v != http.ErrAbortHandler {
			p.log.Error("inspector: panic asking the proxy", "path", r.RequestURI, "panic", fmt.Sprint(v))
		}
	}()
	p.ServeHTTP(w, r)
}

// inspectIndex is /inspect without a path: a form and the first sitemap
// URLs.
func (p *Proxy) inspectIndex(w http.ResponseWriter, r *http.Request, asJSON bool) {
	st := p.state.Load()
	idx := &inspectIndexPage{BaseURL: st.cfg.Site.BaseURL, Upstream: strings.TrimRight(st.upstream.String(), "/")}
	idx.Links, idx.Note = p.sitemapSample(r.Context(), st, 50)
	if asJSON {
		writeJSON(w, http.StatusOK, idx)
		return
	}
	writeIndexPage(w, idx, examplePath(st.cfg))
}

// sitemapSample reads the first n URLs of headgate's own sitemap (through
// the first part of an index), as paths on the base URL's origin.
func (p *Proxy) sitemapSample(ctx context.Context, st *state, n int) ([]inspectLink, string) {
	// Enabled, not Handles: in shadow mode the public listener forwards
	// /sitemap.xml, but the sitemap headgate would serve is the one to show.
	if en, ok := st.sitemap.(interface{ Enabled() bool }); st.sitemap == nil || ok && !en.Enabled() || !ok && !st.sitemap.Handles("/sitemap.xml") {
		return nil, "headgate serves no sitemap under this config (no rule has sitemap = true)."
	}
	base, err := url.Parse(st.cfg.Site.BaseURL)
	if err != nil {
		return nil, ""
	}
	ctx, cancel := context.WithTimeout(ctx, st.cfg.Server.UpstreamTimeout+inspectSlack)
	defer cancel()
	var links []inspectLink
	path := "/sitemap.xml"
	for hop := 0; hop < 2 && path != ""; hop++ {
		rec := &recorder{h: http.Header{}, limit: 1 << 20, cancel: func(error) {}}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+base.Host+path, nil)
		if err != nil {
			break
		}
		req.RequestURI = path
		req.Header.Set("User-Agent", inspectUA)
		st.sitemap.ServeHTTP(rec, req)
		if rec.status != http.StatusOK {
			return links, fmt.Sprintf("%s answered %d.", path, rec.status)
		}
		locs, index := sitemapLocs(rec.body, n)
		path = ""
		for _, loc := range locs {
			u, err := url.Parse(loc)
			if err != nil || u.Scheme != base.Scheme || u.Host != base.Host {
				continue
			}
			target := u.EscapedPath()
			if u.RawQuery != "" {
				target += "?" + u.RawQuery
			}
			if index {
				path = target // the first part of the index
				break
			}
			links = append(links, inspectLink{URL: loc, Path: target})
		}
	}
	return links, ""
}

// sitemapLocs returns up to n <loc> values of a sitemap or an index.
func sitemapLocs(b []byte, n int) (locs []string, index bool) {
	d := xml.NewDecoder(strings.NewReader(string(b)))
	for len(locs) < n {
		tok, err := d.Token()
		if err != nil {
			break
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch se.Name.Local {
		case "sitemapindex":
			index = true
		case "loc":
			var s string
			if d.DecodeElement(&s, &se) == nil {
				locs = append(locs, strings.TrimSpace(s))
			}
		}
	}
	return locs, index
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // application/json with nosniff: readable tags, nothing for a browser to run
	enc.Encode(v)
}

func inspectError(w http.ResponseWriter, asJSON bool, status int, msg, example string) {
	if asJSON {
		writeJSON(w, status, map[string]string{"error": msg})
		return
	}
	setPageHeaders(w.Header(), "")
	w.WriteHeader(status)
	inspectTemplates().ExecuteTemplate(w, "error", struct {
		Status  int
		Text    string
		Msg     string
		Example string
	}{status, http.StatusText(status), msg, example})
}

// inspectURL is the inspector's address on the admin listener, for the
// start-up line: a wildcard listener is named as localhost.
func inspectURL(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "http://" + a.String() + "/inspect"
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port) + "/inspect"
}
