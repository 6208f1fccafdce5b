package audit

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

func TestRedirectLoopIsNotedAndEnds(t *testing.T) {
	r, srv := auditLive(t, map[string]resp{
		"/":  doc(clean("/"), `<a href="/a">a</a>`),
		"/a": redirect(301, "/b"),
		"/b": redirect(302, "{origin}/a"),
	}, Options{})
	loops := skipped(r, "redirect loop")
	if len(loops) != 1 || loops[0].URL != srv.URL+"/a" || !strings.Contains(loops[0].Reason, srv.URL+"/b") {
		t.Errorf("loops = %+v, want one on /a naming /b", loops)
	}
	if p := pageOf(r, srv.URL+"/b"); p == nil || p.Status != 302 || p.Location != srv.URL+"/a" {
		t.Errorf("page /b = %+v, want a recorded 302 to /a", p)
	}
}

func TestRedirectChainIsBounded(t *testing.T) {
	site := map[string]resp{"/": doc(clean("/"), `<a href="/r/0">go</a>`)}
	for i := range 30 {
		site[fmt.Sprintf("/r/%d", i)] = redirect(301, fmt.Sprintf("/r/%d", i+1))
	}
	r, srv := auditLive(t, site, Options{})
	if len(skipped(r, "redirects in a row")) != 1 {
		t.Errorf("skipped = %+v, want one note about too many redirects", r.Skipped)
	}
	if p := pageOf(r, srv.URL+fmt.Sprintf("/r/%d", maxRedirectHops+1)); p != nil {
		t.Errorf("followed past %d redirects: %+v", maxRedirectHops, p)
	}
}

func TestLinksNotFollowed(t *testing.T) {
	var otherHits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { otherHits.Add(1) }))
	defer other.Close()
	r, _ := auditLive(t, map[string]resp{
		"/": doc(clean("/"), `<a href="javascript:void(0)">js</a> <a href="mailto:a@example.com">mail</a>`+
			`<a href="tel:+1">tel</a> <a href="`+other.URL+`/x">other</a> <a href="http://[::1">bad</a> <a href="">self</a>`+
			`<a href="/b#one">b</a> <a href="/b#two">b again</a> <a href="/b">b</a>`),
		"/b": withHead("/b", ""),
	}, Options{})
	for _, want := range []string{"javascript: link", "mailto: link", "tel: link", "link to another site", "does not parse"} {
		if len(skipped(r, want)) != 1 {
			t.Errorf("want one skip %q in %+v", want, r.Skipped)
		}
	}
	if n := otherHits.Load(); n != 0 {
		t.Errorf("the other site got %d requests", n)
	}
	if len(r.Pages) != 2 {
		t.Errorf("pages = %+v, want / and /b once each", r.Pages)
	}
}

func TestEnormousPageIsCut(t *testing.T) {
	big := doc(clean("/big"), strings.Repeat("<p>lorem ipsum dolor sit amet</p>\n", 40000)+`<a href="/after">after</a>`)
	r, srv := auditLive(t, map[string]resp{
		"/":      doc(clean("/"), `<a href="/big">big</a>`),
		"/big":   big,
		"/after": withHead("/after", ""),
	}, Options{MaxBytes: 64 << 10})
	cut := skipped(r, "page longer than 65536 bytes")
	if len(cut) != 1 || cut[0].URL != srv.URL+"/big" {
		t.Errorf("skipped = %+v, want /big cut", r.Skipped)
	}
	if pageOf(r, srv.URL+"/after") != nil {
		t.Error("followed a link past the size limit")
	}
	if len(pathsOf(r, srv.URL, TitleMissing)) != 0 || len(pathsOf(r, srv.URL, CanonicalMissing)) != 0 {
		t.Errorf("the head of the cut page was not read: %+v", r.Findings)
	}
}

func TestPageThatNeverEnds(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html><head><title>Slow</title>"+strings.ReplaceAll(canon("/"), "{origin}", "http://"+r.Host)+
				`</head><body><a href="/silent">s</a>`)
			w.(http.Flusher).Flush()
		case "/silent": // never answers at all
		default:
			http.NotFound(w, r)
			return
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	began := time.Now()
	r, err := Run(context.Background(), Options{Live: srv.URL, Timeout: 300 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("took %v with a 300ms timeout", d)
	}
	if s := skipped(r, "reading stopped: "); len(s) != 1 || s[0].URL != srv.URL+"/" {
		t.Errorf("skipped = %+v, want / noted as stopped", r.Skipped)
	}
	if s := skipped(r, "no answer: timed out"); len(s) != 1 || s[0].URL != srv.URL+"/silent" {
		t.Errorf("skipped = %+v, want /silent noted as timed out", r.Skipped)
	}
	if p := pageOf(r, srv.URL+"/"); p == nil || p.Canonical != srv.URL+"/" {
		t.Errorf("page / = %+v: its head was read before the body stalled", p)
	}
}

func TestInvalidHTML(t *testing.T) {
	r, srv := auditLive(t, map[string]resp{
		"/":  {body: "\x00\xff\xfe<<<<a href=/b>b</a><html><head <title>>>&&&</ti<meta name=\"description\" content=x></head></\"<a href=/c>"},
		"/b": {body: `<title>B</title><link rel=canonical href={origin}/b><p><table><tr><div></td>` + "\xe9\xe8"},
	}, Options{})
	if len(r.Pages) != 2 {
		t.Errorf("pages = %+v", r.Pages)
	}
	if got := pathsOf(r, srv.URL, TitleMissing); len(got) != 1 || got[0] != "/" {
		t.Errorf("title-missing on %v, want /", got)
	}
}

func TestUnparsableRobots(t *testing.T) {
	for _, tc := range []struct {
		name, ctype, body, want string
	}{
		{"garbage lines", "text/plain", "User-agent: *\nthis is not a rule\nDisallow /x\n<html>\n", "line 2"},
		{"an HTML page", "text/html", "<!doctype html><title>Not found</title>", "an HTML page"},
		{"rules before a User-agent", "text/plain", "Disallow: /x\n", "before any User-agent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, srv := auditLive(t, map[string]resp{
				"/robots.txt": text(tc.ctype, tc.body),
				"/":           doc(clean("/"), `<a href="/b">b</a>`),
				"/b":          withHead("/b", ""),
			}, Options{})
			ok := false
			for _, f := range findingsOf(r, RobotsTxtInvalid) {
				ok = ok || strings.Contains(f.Detail, tc.want) && f.URL == srv.URL+"/robots.txt"
			}
			if !ok {
				t.Errorf("findings = %+v, want robots-txt-invalid %q on robots.txt", r.Findings, tc.want)
			}
			if len(r.Pages) != 2 {
				t.Errorf("the crawl stopped: pages = %+v", r.Pages)
			}
		})
	}
}

// robots.txt never stops the crawl: an auditor audits staging, which
// disallows everything.
func TestRobotsDoesNotStopTheCrawl(t *testing.T) {
	r, srv := auditLive(t, map[string]resp{
		"/robots.txt": text("text/plain", "User-agent: *\nDisallow: /\n"),
		"/":           doc(clean("/"), `<a href="/b">b</a>`),
		"/b":          withHead("/b", ""),
	}, Options{})
	// robots-blocked says what crawlers would not fetch.
	if got := pathsOf(r, srv.URL, RobotsBlocked); len(r.Pages) != 2 || len(r.Findings) != 1 || !slices.Equal(got, []string{"/"}) {
		t.Errorf("pages %+v, findings %+v", r.Pages, r.Findings)
	}
}

func linkedSite(n int) map[string]resp {
	site := map[string]resp{}
	for i := range n {
		p := fmt.Sprintf("/p/%d", i)
		if i == 0 {
			p = "/"
		}
		site[p] = doc(clean(p), fmt.Sprintf(`<a href="/p/%d">next</a> <a href="/p/%d">skip</a>`, i+1, i+2))
	}
	return site
}

func TestMaxPages(t *testing.T) {
	r, _ := auditLive(t, linkedSite(50), Options{MaxPages: 10})
	if len(r.Pages) != 10 {
		t.Errorf("%d pages, want 10", len(r.Pages))
	}
	if len(skipped(r, "max pages (10) reached")) != 1 {
		t.Errorf("skipped = %+v, want the max pages note", r.Skipped)
	}
}

func TestConcurrencyIsBounded(t *testing.T) {
	var now, peak atomic.Int32
	h := siteHandler(linkedSite(40))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := now.Add(1)
		defer now.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	r, err := Run(context.Background(), Options{Live: srv.URL, Concurrency: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Pages) != 42 { // 40 pages and the two 404s the last ones link to
		t.Errorf("%d pages, want 42", len(r.Pages))
	}
	if p := peak.Load(); p > 3 {
		t.Errorf("%d requests at once, Concurrency is 3", p)
	}
}

func TestCancel(t *testing.T) {
	started := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<title>root</title><a href="/hang">x</a>`)
			return
		}
		if r.URL.Path == "/hang" {
			once.Do(func() { close(started) })
			<-r.Context().Done()
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var r *Report
	var err error
	go func() {
		defer close(done)
		r, err = Run(ctx, Options{Live: srv.URL, Timeout: time.Minute}, nil)
	}()
	<-started
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if !errors.Is(err, context.Canceled) || r == nil || pageOf(r, srv.URL+"/") == nil {
		t.Errorf("err = %v, report = %+v: want the partial report and context.Canceled", err, r)
	}
}

func TestProgress(t *testing.T) {
	var b strings.Builder
	_, _ = auditLive(t, linkedSite(5), Options{Progress: &b})
	out := b.String()
	if !strings.HasPrefix(out, "\rpages ") || !strings.HasSuffix(out, "\rpages 7/7 queued, 0 findings\n") {
		t.Errorf("progress = %q", out)
	}
}

func TestStartURLs(t *testing.T) {
	r, srv := auditLive(t, map[string]resp{
		"/":    doc(clean("/"), ""),
		"/x":   withHead("/x", ""),
		"/y?q": withHead("/y?q", ""),
	}, Options{}, "/x", "https://elsewhere.example/z", "y?q")
	for _, p := range []string{"/", "/x", "/y?q"} {
		if pageOf(r, srv.URL+p) == nil {
			t.Errorf("%s not crawled: %+v", p, r.Pages)
		}
	}
	if len(skipped(r, "start URL on another site")) != 1 {
		t.Errorf("skipped = %+v", r.Skipped)
	}
}

func TestBadOptions(t *testing.T) {
	for _, o := range []Options{{}, {Live: "ftp://x"}, {Live: "/relative"}} {
		if _, err := Run(context.Background(), o, nil); err == nil {
			t.Errorf("Run(%+v) = nil error", o)
		}
	}
}

// A page in a content coding the transport does not undo is decoded as a
// browser would.
func TestContentCodings(t *testing.T) {
	page := func(path string) []byte {
		return []byte(strings.ReplaceAll(doc(clean(path), "").body, "{origin}", "http://placeholder"))
	}
	encode := map[string]func(io.Writer) io.WriteCloser{
		"gzip":    func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) },
		"deflate": func(w io.Writer) io.WriteCloser { return zlib.NewWriter(w) },
		"br":      func(w io.Writer) io.WriteCloser { return brotli.NewWriter(w) },
		"zstd": func(w io.Writer) io.WriteCloser {
			z, _ := zstd.NewWriter(w)
			return z
		},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ce := strings.TrimPrefix(r.URL.Path, "/")
		enc, ok := encode[ce]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", ce) // whatever the request accepts
		zw := enc(w)
		zw.Write(bytes.ReplaceAll(page(r.URL.Path), []byte("http://placeholder"), []byte("http://"+r.Host)))
		zw.Close()
	}))
	defer srv.Close()
	r, err := Run(context.Background(), Options{Live: srv.URL}, []string{"/gzip", "/deflate", "/br", "/zstd"})
	if err != nil {
		t.Fatal(err)
	}
	for ce := range encode {
		p := pageOf(r, srv.URL+"/"+ce)
		if p == nil || p.Canonical != srv.URL+"/"+ce {
			t.Errorf("%s: page %+v, want its canonical read", ce, p)
		}
	}
	if len(r.Findings) != 0 {
		t.Errorf("findings: %+v", r.Findings)
	}
}
