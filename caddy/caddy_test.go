package headgate_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// buildCaddy builds Caddy with headgate's module, as xcaddy would: a go
// build of cmd/caddy, which imports Caddy's main and this module. It skips
// when Caddy's modules cannot be had from the module proxy.
func buildCaddy(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds Caddy")
	}
	bin := filepath.Join(t.TempDir(), "caddy")
	start := time.Now()
	out, err := exec.Command("go", "build", "-o", bin, "./cmd/caddy").CombinedOutput()
	if err != nil {
		s := string(out)
		for _, net := range []string{"dial tcp", "proxy.golang.org", "GOPROXY", "GOFLAGS=-mod=mod", "missing go.sum entry", "lookup ", "no required module", "connection refused", "TLS handshake"} {
			if strings.Contains(s, net) {
				t.Skipf("Caddy's modules could not be downloaded, the Caddy tests skip: %v\n%s", err, s)
			}
		}
		t.Fatalf("go build ./cmd/caddy: %v\n%s", err, s)
	}
	t.Logf("built Caddy with headgate in %v", time.Since(start).Round(time.Millisecond))
	return bin
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

const filesTOML = `
[server]
upstream = "builtin:next"
[site]
base_url = "https://site.example"
[[rule]]
match = "/about.html"
title = "%s"
canonical = "self"
[[rule]]
match = "/private/*"
deny = true
[[redirect]]
from = "/old"
to = "/about.html"
[[rule]]
match = "/notes/:id{[0-9]+}"
sitemap = true
sitemap_source = "upstream:/internal/notes.jsonl"
`

const proxyTOML = `
[server]
upstream = "builtin:next"
[site]
base_url = "https://app.example"
[[rule]]
match = "/notes/:id"
title = "Note {id}"
description = "The note numbered {id}."
`

// TestCaddyFrontsFileServerAndReverseProxy runs a real Caddy with the
// headgate directive in front of file_server and of reverse_proxy.
func TestCaddyFrontsFileServerAndReverseProxy(t *testing.T) {
	bin := buildCaddy(t)
	dir := t.TempDir()
	page := "<!doctype html><html><head><title>old</title></head><body>" + strings.Repeat("<p>text</p>", 2000) + "</body></html>"
	write(t, filepath.Join(dir, "site/about.html"), page)
	write(t, filepath.Join(dir, "site/style.css"), "head { title: x }")
	write(t, filepath.Join(dir, "site/private/key.txt"), "secret")
	write(t, filepath.Join(dir, "site/internal/notes.jsonl"), `{"params": {"id": "41"}}`+"\n")
	write(t, filepath.Join(dir, "files.toml"), fmt.Sprintf(filesTOML, "About us"))
	write(t, filepath.Join(dir, "proxy.toml"), proxyTOML)

	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api" {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"head":"<title>x</title>"}`)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			// A compressed upstream: headgate decodes it to rewrite.
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			io.WriteString(zw, "<html><head><title>untitled</title></head><body>note</body></html>")
			zw.Close()
			return
		}
		io.WriteString(w, "<html><head><title>untitled</title></head><body>note</body></html>")
	}))
	defer upstream.Close()

	files, prox, admin := freePort(t), freePort(t), freePort(t)
	caddyfile := filepath.Join(dir, "Caddyfile")
	write(t, caddyfile, fmt.Sprintf(`{
	admin %s
	auto_https off
	persist_config off
}
http://%s {
	encode gzip
	headgate * %s
	root * %s
	file_server
}
http://%s {
	headgate {
		config %s
	}
	reverse_proxy %s
}
`, admin, files, filepath.Join(dir, "files.toml"), filepath.Join(dir, "site"), prox, filepath.Join(dir, "proxy.toml"), strings.TrimPrefix(upstream.URL, "http://")))

	var logs bytes.Buffer
	cmd := exec.Command(bin, "run", "--config", caddyfile, "--adapter", "caddyfile")
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("caddy's log:\n%s", logs.String())
		}
	}()
	waitUp(t, "http://"+files+"/style.css")
	waitUp(t, "http://"+prox+"/api")

	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(url string, header ...string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", url, nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		res, err := c.Do(req)
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

	// file_server: the head is rewritten, the rest of the page and
	// non-HTML files untouched.
	res, body := get("http://" + files + "/about.html")
	wantHead := `<title>About us</title><link rel="canonical" href="https://site.example/about.html">`
	if res.StatusCode != 200 || !strings.Contains(body, wantHead) || !strings.HasSuffix(body, strings.Repeat("<p>text</p>", 2000)+"</body></html>") {
		t.Errorf("file_server page: %d %.300q", res.StatusCode, body)
	}
	// Compressed: Go's client asks for gzip and decodes it.
	if !res.Uncompressed {
		t.Errorf("file_server page was not compressed (Content-Encoding %q)", res.Header.Get("Content-Encoding"))
	}
	if _, body := get("http://" + files + "/style.css"); body != "head { title: x }" {
		t.Errorf("non-HTML file changed: %q", body)
	}
	res, _ = get("http://" + files + "/old")
	if res.StatusCode != http.StatusMovedPermanently || res.Header.Get("Location") != "https://site.example/about.html" {
		t.Errorf("redirect: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	if res, body := get("http://" + files + "/private/key.txt"); res.StatusCode != http.StatusNotFound || strings.Contains(body, "secret") {
		t.Errorf("denied file: %d %q", res.StatusCode, body)
	}
	if res, _ := get("http://" + files + "/missing.html"); res.StatusCode != http.StatusNotFound {
		t.Errorf("a file file_server does not have: %d, want its 404", res.StatusCode)
	}

	// The sitemap: generated apart from any request, its source fetched
	// from file_server through the rest of Caddy's route.
	if res, body := get("http://" + files + "/sitemap.xml"); res.StatusCode != 200 || !strings.Contains(body, "<loc>https://site.example/notes/41</loc>") {
		t.Errorf("sitemap from a file_server source: %d %.400q", res.StatusCode, body)
	}

	// reverse_proxy, to an upstream that compresses when asked.
	res, body = get("http://" + prox + "/notes/7")
	want := `<html><head><title>Note 7</title><meta name="description" content="The note numbered 7.">` + "\n" + `</head><body>note</body></html>`
	if res.StatusCode != 200 || body != want {
		t.Errorf("reverse_proxy page: %d %q, want %q", res.StatusCode, body, want)
	}
	res, body = get("http://"+prox+"/notes/8", "Accept-Encoding", "gzip")
	if res.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("gzip asked of a gzip upstream: Content-Encoding %q", res.Header.Get("Content-Encoding"))
	} else if zr, err := gzip.NewReader(strings.NewReader(body)); err != nil {
		t.Errorf("gzip body: %v", err)
	} else if b, _ := io.ReadAll(zr); !strings.Contains(string(b), "<title>Note 8</title>") {
		t.Errorf("gzip page not rewritten: %q", b)
	}
	if _, body := get("http://" + prox + "/api"); body != `{"head":"<title>x</title>"}` {
		t.Errorf("JSON changed: %q", body)
	}

	// Reload: Caddy provisions a new handler from the file as it is now.
	write(t, filepath.Join(dir, "files.toml"), fmt.Sprintf(filesTOML, "About, reloaded"))
	out, err := exec.Command(bin, "reload", "--config", caddyfile, "--adapter", "caddyfile", "--address", admin, "--force").CombinedOutput()
	if err != nil {
		t.Fatalf("caddy reload: %v\n%s", err, out)
	}
	if _, body := get("http://" + files + "/about.html"); !strings.Contains(body, "<title>About, reloaded</title>") {
		t.Errorf("after reload: %.200q", body)
	}

	// A config that is not for a library host is refused at reload, and
	// the running config keeps serving.
	write(t, filepath.Join(dir, "files.toml"), "[server]\nupstream = \"http://127.0.0.1:1\"\n[site]\nbase_url = \"https://site.example\"\n")
	out, err = exec.Command(bin, "reload", "--config", caddyfile, "--adapter", "caddyfile", "--address", admin, "--force").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "builtin:next") {
		t.Errorf("reload with a network upstream: %v, want refused naming builtin:next\n%s", err, out)
	}
	if _, body := get("http://" + files + "/about.html"); !strings.Contains(body, "<title>About, reloaded</title>") {
		t.Errorf("after a refused reload: %.200q", body)
	}
}

func waitUp(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := http.Get(url)
		if err == nil {
			res.Body.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("caddy did not answer %s: %v", url, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
