package audit

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/headgate/headgate/internal/codec"
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

// fetchInProcess asks headgate's own request pipeline (Options.Handler)
// for key, as a client would ask headgate: every decision — 400, deny,
// headgate's own files, redirects, pass-through or rewrite, headers — is the
// proxy's. Options.Observe hands back the outcome, the upstream's head and
// the change record of each response.
func (f *fetcher) fetchInProcess(ctx context.Context, key string) (*response, error) {
	var outcome string
	var upstream []byte
	var res *rewrite.Result
	if f.o.Observe != nil {
		ctx = f.o.Observe(ctx, func(o string, up []byte, rr *rewrite.Result) {
			outcome, upstream, res = o, up, rr
		})
	}
	r, err := f.serveLocal(ctx, f.o.Handler, key)
	if err != nil {
		return nil, err
	}
	// The observer was told before the header went out: it is set now.
	r.outcome = outcome
	if r.outcome == "" {
		r.outcome = "unknown"
	}
	if res != nil {
		r.changes = append([]rewrite.Change(nil), res.Changes...)
		if res.Outcome == rewrite.Rewritten && upstream != nil {
			r.upTap = &headTap{buf: upstream[:min(len(upstream), maxHeadShown)]}
			r.outTap = &headTap{r: r.body}
			r.body = readCloser{r.outTap, r.body}
		}
	}
	if err := decodeBody(r, &http.Response{StatusCode: r.status, Header: r.header, Body: r.body}); err != nil {
		r.body.Close()
		return nil, err
	}
	r.xRobots = r.header.Values("X-Robots-Tag")
	if f.staging {
		// §6: every staging response says noindex, nofollow; the checks
		// judge what production will send (r.xRobots, kept above: cmd
		// builds the handler with the production mode, see Handler).
		r.header.Set("X-Robots-Tag", "noindex, nofollow")
	}
	return r, nil
}

// serveLocal asks h for key, streaming its answer through a pipe: the
// handler runs on its own goroutine, as behind a connection.
func (f *fetcher) serveLocal(ctx context.Context, h http.Handler, key string) (*response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.site.url(key), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	req.RemoteAddr = "127.0.0.1:0"
	req.RequestURI = key
	pr, pw := io.Pipe()
	w := &pipeWriter{pw: pw, header: http.Header{}, ready: make(chan struct{})}
	go func() {
		defer func() {
			if p := recover(); p != nil {
				err := fmt.Errorf("headgate's handler panicked: %v", p)
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
		h.ServeHTTP(w, req)
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
	r := &response{status: w.status, header: w.sent,
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
	if resp.StatusCode != http.StatusOK {
		return nil
	}
	ce, ok := codec.Normalize(resp.Header.Get("Content-Encoding"))
	if !ok {
		return fmt.Errorf("content encoding %q is not one a browser decodes", ce)
	}
	if ce == codec.Identity {
		return nil
	}
	body := resp.Body
	dec, err := codec.NewDecoder(ce, body)
	if err != nil {
		return fmt.Errorf("%s body: %w", ce, err)
	}
	r.body = readCloser{dec, closerFunc(func() error { dec.Release(); return body.Close() })}
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
