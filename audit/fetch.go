package audit

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"

	"github.com/headgate/headgate/rewrite"
	"github.com/headgate/headgate/rules"
)

const userAgent = "headgate-audit/1 (+https://github.com/headgate/headgate)"

// response is one answer, headers already as the proxy would send them.
type response struct {
	status   int
	header   http.Header
	body     io.ReadCloser // decoded; http.NoBody when there is none to read
	location *url.URL      // a redirect's target, absolute (on the site's origin when it is the site's)
	outcome  string
	changes  []rewrite.Change
	// xRobots are the X-Robots-Tag values the checks judge: in staging
	// mode, the ones production would send (see doc.go).
	xRobots []string
	// upTap and outTap keep, in process, the head of the upstream's page
	// and of the page headgate serves.
	upTap, outTap *headTap
}

// Bounds of the heads kept for the HTML report's before/after view.
const (
	maxHeadShown = 32 << 10 // bytes of one head
	maxHeadsKept = 200      // pages whose heads are kept
)

// headTap copies the first maxHeadShown bytes read through it.
type headTap struct {
	r   io.Reader
	buf []byte
}

func (t *headTap) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if room := maxHeadShown - len(t.buf); room > 0 && n > 0 {
		t.buf = append(t.buf, p[:min(n, room)]...)
	}
	return n, err
}

// head returns what was read up to and including the first </head> (else
// up to the first <body, else all of it), as text.
func (t *headTap) head() string {
	b := t.buf
	low := bytes.ToLower(b)
	if i := bytes.Index(low, []byte("</head")); i >= 0 {
		end := i + len("</head")
		if j := bytes.IndexByte(b[end:], '>'); j >= 0 {
			end += j + 1
		}
		b = b[:end]
	} else if i := bytes.Index(low, []byte("<body")); i >= 0 {
		b = b[:i]
	}
	return strings.ToValidUTF8(string(b), "\ufffd")
}

// fetcher gets one key, live or through the rewrite engine.
type fetcher struct {
	o       *Options
	site    *site
	client  *http.Client
	cfg     *rules.Config
	live    bool
	staging bool // the config's site.mode is staging
}

func newFetcher(o *Options, s *site) *fetcher {
	f := &fetcher{
		o:    o,
		site: s,
		cfg:  o.Config,
		live: o.Live != "",
		client: &http.Client{
			Transport: o.Transport,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		},
	}
	f.staging = f.cfg != nil && f.cfg.Site.Mode == rules.ModeStaging
	return f
}

func (f *fetcher) fetch(ctx context.Context, key string) (*response, error) {
	if f.live {
		return f.fetchLive(ctx, key)
	}
	return f.fetchInProcess(ctx, key)
}

func (f *fetcher) get(ctx context.Context, target, host string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	if host != "" {
		req.Host = host
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	return f.client.Do(req)
}

func (f *fetcher) fetchLive(ctx context.Context, key string) (*response, error) {
	resp, err := f.get(ctx, f.site.url(key), "")
	if err != nil {
		return nil, err
	}
	r := &response{status: resp.StatusCode, header: resp.Header, body: resp.Body}
	if !f.staging {
		r.xRobots = resp.Header.Values("X-Robots-Tag")
	}
	r.location = f.location(resp.Request.URL, resp.Header.Get("Location"))
	if err := decodeBody(r, resp); err != nil {
		resp.Body.Close()
		return nil, err
	}
	return r, nil
}

// location resolves a Location header against the request's URL; in the
// in-process mode one that names the upstream's origin names the site.
func (f *fetcher) location(base *url.URL, loc string) *url.URL {
	if loc == "" {
		return nil
	}
	u, kind := resolveRef(base, loc)
	if kind != refOK {
		return nil
	}
	if f.site.upstreamOrigin != "" && originOf(u) == f.site.upstreamOrigin {
		if v, err := url.Parse(f.site.origins[0] + pathQuery(u)); err == nil {
			u = v
		}
	}
	return u
}

func (f *fetcher) fetchInProcess(ctx context.Context, key string) (*response, error) {
	path, _, _ := strings.Cut(key, "?")
	if f.o.Sitemap != nil && f.o.Sitemap.Handles(path) {
		return f.serveLocal(ctx, key)
	}
	if rules.CheckPath(path) != nil {
		return &response{status: http.StatusBadRequest, header: http.Header{}, body: http.NoBody, outcome: "bad_path"}, nil
	}
	if f.o.Redirect != nil {
		if status, loc, ok := f.o.Redirect(key); ok {
			r := &response{status: status, header: http.Header{}, body: http.NoBody, outcome: "redirected"}
			if loc != "" {
				r.header.Set("Location", loc)
				r.location = f.location(f.site.parse(key), loc)
			} else {
				r.header.Set("X-Robots-Tag", "noindex")
			}
			r.xRobots = r.header.Values("X-Robots-Tag")
			return r, nil
		}
	}
	m := f.cfg.Resolve(key)
	if m.Deny {
		return &response{status: http.StatusNotFound, header: http.Header{}, body: http.NoBody, outcome: "denied"}, nil
	}
	host := ""
	if f.cfg.Server.PreserveHost {
		host = f.site.parse("/").Host
	}
	up := strings.TrimSuffix(f.site.upstream.Scheme+"://"+f.site.upstream.Host+f.site.upstream.EscapedPath(), "/")
	resp, err := f.get(ctx, up+key, host)
	if err != nil {
		return nil, err
	}
	r := &response{status: resp.StatusCode, header: resp.Header, body: resp.Body, outcome: "not_rewritten"}
	r.location = f.location(f.site.parse(key), resp.Header.Get("Location"))
	if err := decodeBody(r, resp); err != nil {
		resp.Body.Close()
		return nil, err
	}
	shadow := f.cfg.Site.Mode == rules.ModeShadow
	ct := r.header.Get("Content-Type")
	var head *rules.Head
	if r.status == http.StatusOK && isHTML(ct) {
		r.upTap = &headTap{r: r.body}
		rr := rewrite.NewReader(r.upTap, rewrite.Options{
			Match:           m,
			ContentType:     ct,
			CSP:             r.header.Get("Content-Security-Policy"),
			MaxHeadBytes:    f.cfg.Server.MaxHeadBytes,
			CorrectUpstream: f.cfg.Site.CorrectUpstream,
			Shadow:          shadow,
		})
		// A source that fails inside the head comes out as its bytes, then
		// the error: the page is checked as far as it was read.
		_ = rr.Prepare()
		res := rr.Result()
		r.outcome = string(res.Outcome)
		r.changes = append([]rewrite.Change(nil), res.Changes...)
		head = res.Head
		if head == nil && m.Any() {
			head = m.Render(res.Page)
		}
		r.outTap = &headTap{r: rr}
		r.body = readCloser{r.outTap, r.body}
	} else if m.Any() {
		// SPEC §4.8: a response that is not rewritten carries the
		// canonical and robots as headers.
		head = m.Render(rules.Page{})
		if !shadow {
			if head.Canonical != nil {
				setCanonicalLink(r.header, *head.Canonical)
			}
			if head.Robots != nil {
				r.header.Set("X-Robots-Tag", *head.Robots)
			}
		}
	}
	if head != nil && !shadow {
		for _, h := range head.Headers {
			r.header.Set(h.Name, h.Value)
		}
	}
	r.xRobots = r.header.Values("X-Robots-Tag")
	if f.staging {
		// §6: every staging response says noindex, nofollow; the checks
		// judge what production will send (r.xRobots, kept above).
		r.header.Set("X-Robots-Tag", "noindex, nofollow")
	}
	return r, nil
}

// serveLocal asks the in-process sitemap handler, streaming its answer.
func (f *fetcher) serveLocal(ctx context.Context, key string) (*response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.site.url(key), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", userAgent)
	req.RemoteAddr = "127.0.0.1:0"
	req.RequestURI = key
	pr, pw := io.Pipe()
	w := &pipeWriter{pw: pw, header: http.Header{}, ready: make(chan struct{})}
	go func() {
		defer func() {
			if p := recover(); p != nil {
				err := fmt.Errorf("the sitemap handler panicked: %v", p)
				if w.sent == nil {
					w.err = err
					close(w.ready)
				}
				pw.CloseWithError(err)
				return
			}
			w.WriteHeader(http.StatusOK) // no-op when the handler wrote one
			pw.Close()
		}()
		f.o.Sitemap.ServeHTTP(w, req)
	}()
	stop := context.AfterFunc(ctx, func() { pr.CloseWithError(ctx.Err()) })
	select {
	case <-w.ready:
	case <-ctx.Done():
		stop()
		pr.CloseWithError(ctx.Err())
		return nil, ctx.Err()
	}
	if w.err != nil {
		stop()
		return nil, w.err
	}
	r := &response{status: w.status, header: w.sent, outcome: "sitemap",
		body: readCloser{pr, closerFunc(func() error { stop(); return pr.Close() })}}
	r.location = f.location(f.site.parse(key), w.sent.Get("Location"))
	return r, nil
}

// pipeWriter is an http.ResponseWriter whose body goes into a pipe.
type pipeWriter struct {
	pw     *io.PipeWriter
	header http.Header
	sent   http.Header
	status int
	err    error         // set, with ready closed, when the handler panicked before a header
	ready  chan struct{} // closed once the header is sent
}

func (w *pipeWriter) Header() http.Header { return w.header }

func (w *pipeWriter) WriteHeader(code int) {
	if w.sent != nil || code < 200 && code >= 100 {
		return
	}
	w.status = code
	w.sent = w.header.Clone()
	close(w.ready)
}

func (w *pipeWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.pw.Write(p)
}

func (w *pipeWriter) Flush() {}

type readCloser struct {
	io.Reader
	io.Closer
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// decodeBody undoes a content coding the transport left in place, so that
// the body is what a browser would parse.
func decodeBody(r *response, resp *http.Response) error {
	ce := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding")))
	if ce == "" || ce == "identity" || resp.StatusCode != http.StatusOK {
		return nil
	}
	body := resp.Body
	var dec io.Reader
	closeDec := func() error { return nil }
	switch ce {
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(body)
		if err != nil {
			return fmt.Errorf("gzip body: %w", err)
		}
		dec = zr
	case "deflate":
		br := bufio.NewReader(body)
		b, err := br.Peek(2)
		if err == nil && b[0]&0x0f == 8 && (uint16(b[0])<<8|uint16(b[1]))%31 == 0 {
			zr, err := zlib.NewReader(br)
			if err != nil {
				return fmt.Errorf("deflate body: %w", err)
			}
			dec = zr
		} else {
			dec = flate.NewReader(br) // raw deflate, as some servers send
		}
	case "br":
		dec = brotli.NewReader(body)
	case "zstd":
		zr, err := zstd.NewReader(body, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxMemory(64<<20))
		if err != nil {
			return fmt.Errorf("zstd body: %w", err)
		}
		dec = zr
		closeDec = func() error { zr.Close(); return nil }
	default:
		return fmt.Errorf("content encoding %q is not one a browser decodes", ce)
	}
	r.body = readCloser{dec, closerFunc(func() error { closeDec(); return body.Close() })}
	r.header.Del("Content-Encoding")
	r.header.Del("Content-Length")
	return nil
}

// isHTML reports whether a Content-Type is one headgate rewrites.
func isHTML(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(strings.Split(ct, ";")[0]))
	}
	return mt == "text/html" || mt == "application/xhtml+xml"
}

// setCanonicalLink replaces any canonical in the Link header with url,
// keeping the header's other links.
func setCanonicalLink(h http.Header, target string) {
	var keep []string
	for _, l := range parseLinkHeader(h.Values("Link")) {
		if !l.has("canonical") {
			keep = append(keep, l.raw)
		}
	}
	keep = append(keep, "<"+target+`>; rel="canonical"`)
	h.Set("Link", strings.Join(keep, ", "))
}
