package proxy_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/headgate/headgate/app"
	"github.com/headgate/headgate/internal/heappeak"
	"github.com/headgate/headgate/proxy"
	"github.com/headgate/headgate/rules"
)

const libraryTOML = `
[server]
upstream = "builtin:next"
[site]
base_url = "https://notes.example"
[[rule]]
match = "/notes/:id"
title = "Note {id}"
canonical = "self"
[[rule]]
match = "/internal/*"
deny = true
[[redirect]]
from = "/old/:id{[0-9]+}"
to = "/notes/{id}"
`

// libraryServer serves next behind proxy.Middleware on a loopback port.
func libraryServer(t *testing.T, toml string, next http.HandlerFunc) *httptest.Server {
	t.Helper()
	cfg, err := rules.Parse("headgate.toml", []byte(toml), nil)
	if err != nil {
		t.Fatal(err)
	}
	mw, p, err := proxy.Middleware(cfg, proxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mw(next))
	t.Cleanup(func() { srv.Close(); p.Close() })
	return srv
}

func libraryGet(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

func TestLibraryRewritesAndAnswers(t *testing.T) {
	var hits atomic.Int32
	var seen atomic.Value
	srv := libraryServer(t, libraryTOML, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		seen.Store(r.Host + " " + r.RequestURI + " " + r.Header.Get("X-Forwarded-Proto"))
		switch {
		case strings.HasSuffix(r.URL.Path, ".css"):
			w.Header().Set("Content-Type", "text/css")
			io.WriteString(w, "<head><title>x</title></head>")
		default:
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html><head><title>untitled</title></head><body>hi</body></html>")
		}
	})

	res, body := libraryGet(t, srv.URL+"/notes/7?a=b")
	want := `<html><head><title>Note 7</title><link rel="canonical" href="https://notes.example/notes/7">` + "\n" + `</head><body>hi</body></html>`
	if res.StatusCode != 200 || body != want {
		t.Errorf("page: %d %q, want %q", res.StatusCode, body, want)
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	if got := seen.Load(); got != host+" /notes/7?a=b http" {
		t.Errorf("next saw %q: want the client's Host, the request URI and X-Forwarded-Proto", got)
	}
	if _, body := libraryGet(t, srv.URL+"/notes/x.css"); body != "<head><title>x</title></head>" {
		t.Errorf("non-HTML changed: %q", body)
	}

	before := hits.Load()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Get(srv.URL + "/old/12")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMovedPermanently || res.Header.Get("Location") != "https://notes.example/notes/12" {
		t.Errorf("redirect: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	if res, _ := libraryGet(t, srv.URL+"/internal/secret"); res.StatusCode != http.StatusNotFound {
		t.Errorf("denied path: %d, want 404", res.StatusCode)
	}
	if n := hits.Load() - before; n != 0 {
		t.Errorf("next was called %d times for a redirect and a denied path", n)
	}
}

// TestLibraryStreamsBoundedBody sends 50 MB through: the pipe hands next's
// writes over one by one, so the heap stays flat.
func TestLibraryStreamsBoundedBody(t *testing.T) {
	if testing.Short() {
		t.Skip("50 MB body")
	}
	const total = 50 << 20
	chunk := bytes.Repeat([]byte("<p>streamed paragraph of text</p>\n"), 1000)
	srv := libraryServer(t, libraryTOML, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><head><title>big</title></head><body>")
		for n := 0; n < total; n += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	runtime.GC()
	stop := heappeak.Start()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	res, err := http.Get(srv.URL + "/notes/1")
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 64)
	io.ReadFull(res.Body, head)
	n, err := io.Copy(io.Discard, res.Body)
	res.Body.Close()
	peak := stop()
	if err != nil || n+64 < total {
		t.Fatalf("read %d bytes, err %v", n+64, err)
	}
	if !bytes.Contains(head, []byte("<title>Note 1</title>")) {
		t.Errorf("head not rewritten: %q", head)
	}
	t.Logf("50 MiB through: live heap peak %d KiB above the start", (int64(peak)-int64(base.HeapAlloc))>>10)
	if grow := int64(peak) - int64(base.HeapAlloc); grow > 16<<20 {
		t.Errorf("heap grew by %d MiB for a 50 MiB body: it is being buffered", grow>>20)
	}
}

func TestLibraryNextPanics(t *testing.T) {
	srv := libraryServer(t, libraryTOML, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/late" {
			w.Header().Set("Content-Type", "text/plain")
			w.Write(bytes.Repeat([]byte("x"), 1000))
			w.(http.Flusher).Flush()
		}
		panic("boom")
	})
	if res, _ := libraryGet(t, srv.URL+"/notes/1"); res.StatusCode != http.StatusBadGateway {
		t.Errorf("panic before the header: %d, want 502", res.StatusCode)
	}
	res, err := http.Get(srv.URL + "/late")
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(res.Body)
	res.Body.Close()
	if err == nil {
		t.Errorf("panic after the header: the body ended cleanly, want a cut response")
	}
}

func TestLibraryClientCancelReachesNext(t *testing.T) {
	done := make(chan error, 1)
	srv := libraryServer(t, libraryTOML, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("first"))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			done <- r.Context().Err()
		case <-time.After(10 * time.Second):
			done <- nil
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/stream", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	io.ReadFull(res.Body, buf)
	cancel()
	res.Body.Close()
	if err := <-done; err == nil {
		t.Errorf("next's context was not cancelled when the client left")
	}
}

func TestLibraryUpstreamRefused(t *testing.T) {
	cfg, err := rules.Parse("headgate.toml", []byte("[server]\nupstream = \"http://127.0.0.1:1\"\n[site]\nbase_url = \"https://a.example\"\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := proxy.Middleware(cfg, proxy.Options{}); err == nil || !strings.Contains(err.Error(), "builtin:next") {
		t.Errorf("Middleware over a network upstream: %v, want an error naming builtin:next", err)
	}
	cfg, err = rules.Parse("headgate.toml", []byte(libraryTOML), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := proxy.New(cfg, proxy.Options{}); err == nil {
		t.Errorf("New accepted builtin:next without a handler to serve it")
	}
}

// TestLibraryTimeoutAndHead: server.upstream_timeout holds for next as for
// an upstream (504, next's context cancelled); a HEAD reaches next and
// comes back with no body.
func TestLibraryTimeoutAndHead(t *testing.T) {
	cancelled := make(chan struct{}, 1)
	srv := libraryServer(t, strings.Replace(libraryTOML, "[site]", "upstream_timeout = \"200ms\"\n[site]", 1), func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			<-r.Context().Done()
			cancelled <- struct{}{}
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("X-Method", r.Method)
		io.WriteString(w, "<html><head><title>t</title></head></html>")
	})
	if res, _ := libraryGet(t, srv.URL+"/slow"); res.StatusCode != http.StatusGatewayTimeout {
		t.Errorf("next past upstream_timeout: %d, want 504", res.StatusCode)
	}
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Errorf("next's context was not cancelled at upstream_timeout")
	}
	res, err := http.Head(srv.URL + "/notes/3")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("X-Method") != "HEAD" {
		t.Errorf("HEAD: %d, next saw %q", res.StatusCode, res.Header.Get("X-Method"))
	}
}

type hostKey struct{}

// TestLibrarySitemapFromNext: the sitemap is generated apart from any
// request (context.Background), yet its source is fetched from next with
// the values a host keeps in its requests' contexts (Caddy's handlers
// panic without theirs) and base_url's Host.
func TestLibrarySitemapFromNext(t *testing.T) {
	cfg, err := rules.Parse("headgate.toml", []byte(libraryTOML+`
[[rule]]
match = "/n/:id{[0-9]+}"
sitemap = true
sitemap_source = "upstream:/src.jsonl"
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	mw, p, err := proxy.Middleware(cfg, proxy.Options{Sitemap: app.Sitemaps(nil, nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var srcHost atomic.Value
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.Context().Value(hostKey{}).(string) // as Caddy's Replacer: there, or a panic
		if r.URL.Path == "/src.jsonl" {
			srcHost.Store(r.Host)
			io.WriteString(w, `{"params": {"id": "5"}}`+"\n")
			return
		}
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><head></head></html>")
	})
	host := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mw(next).ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), hostKey{}, "host state")))
	})
	srv := httptest.NewServer(host)
	defer srv.Close()
	libraryGet(t, srv.URL+"/n/1")
	res, body := libraryGet(t, srv.URL+"/sitemap.xml")
	if res.StatusCode != 200 || !strings.Contains(body, "<loc>https://notes.example/n/5</loc>") {
		t.Errorf("sitemap: %d %.300q", res.StatusCode, body)
	}
	if h, _ := srcHost.Load().(string); h != "notes.example" {
		t.Errorf("next saw Host %q for headgate's own fetch, want base_url's", h)
	}
}
