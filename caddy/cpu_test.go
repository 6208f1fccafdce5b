package headgate_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestCaddyCPUPerRequest measures the CPU one request costs with headgate
// inside Caddy (the module in front of file_server) beside headgate serve
// as a second hop in front of the same Caddy file_server, on the same
// page. It builds headgate too, so it runs only when asked:
//
//	HEADGATE_CADDY_CPU=1 go test -run CPU -v ./...
func TestCaddyCPUPerRequest(t *testing.T) {
	if os.Getenv("HEADGATE_CADDY_CPU") == "" {
		t.Skip("set HEADGATE_CADDY_CPU=1 to measure CPU per request (builds headgate and Caddy)")
	}
	bin := buildCaddy(t)
	dir := t.TempDir()
	hg := filepath.Join(dir, "headgate")
	if out, err := exec.Command("go", "build", "-o", hg, "github.com/headgate/headgate/cmd/headgate").CombinedOutput(); err != nil {
		t.Fatalf("building headgate: %v\n%s", err, out)
	}
	page := "<!doctype html><html><head><title>old</title><meta name=\"viewport\" content=\"width=device-width\"></head><body>" + strings.Repeat("<p>Some text of the page.</p>\n", 600) + "</body></html>"
	write(t, filepath.Join(dir, "site/about.html"), page)
	rules := `
[site]
base_url = "https://site.example"
[[rule]]
match = "/about.html"
title = "About us"
description = "Who we are."
canonical = "self"
`
	write(t, filepath.Join(dir, "module.toml"), "[server]\nupstream = \"builtin:next\"\n"+rules)
	files, module, admin := freePort(t), freePort(t), freePort(t)
	write(t, filepath.Join(dir, "Caddyfile"), fmt.Sprintf(`{
	admin %s
	auto_https off
	persist_config off
	log default {
		output discard
	}
}
http://%s {
	root * %s
	file_server
}
http://%s {
	headgate * %s
	root * %s
	file_server
}
`, admin, files, filepath.Join(dir, "site"), module, filepath.Join(dir, "module.toml"), filepath.Join(dir, "site")))
	serveAddr, serveAdmin := freePort(t), freePort(t)
	write(t, filepath.Join(dir, "serve.toml"), fmt.Sprintf("[server]\nupstream = \"http://%s\"\nlisten = \"%s\"\nadmin_listen = \"%s\"\n%s", files, serveAddr, serveAdmin, rules))

	caddyCmd := start(t, dir, bin, "run", "--config", filepath.Join(dir, "Caddyfile"), "--adapter", "caddyfile")
	serveCmd := start(t, dir, hg, "serve", "-config", filepath.Join(dir, "serve.toml"), "-log-level", "error")
	waitUp(t, "http://"+files+"/about.html")
	waitUp(t, "http://"+module+"/about.html")
	waitUp(t, "http://"+serveAddr+"/about.html")

	const n = 20000
	run := func(url string) (caddy, serve float64) {
		load(t, url, 300)
		c0, s0 := cpu(t, caddyCmd.Process.Pid), cpu(t, serveCmd.Process.Pid)
		load(t, url, n)
		c1, s1 := cpu(t, caddyCmd.Process.Pid), cpu(t, serveCmd.Process.Pid)
		return float64(c1-c0) / n, float64(s1-s0) / n
	}
	base, _ := run("http://" + files + "/about.html")
	mod, _ := run("http://" + module + "/about.html")
	srvCaddy, srv := run("http://" + serveAddr + "/about.html")
	t.Logf("CPU per request (a %d-byte page, %d requests, 4 at a time, keep-alive):", len(page), n)
	t.Logf("  Caddy file_server alone:             %6.1f µs", base)
	t.Logf("  Caddy + headgate module:             %6.1f µs (headgate's share %.1f µs)", mod, mod-base)
	t.Logf("  headgate serve → Caddy file_server:  %6.1f µs (serve %.1f µs + Caddy %.1f µs)", srv+srvCaddy, srv, srvCaddy)
}

func start(t *testing.T, dir, bin string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// load GETs url n times, 4 at a time, over kept-alive connections.
func load(t *testing.T, url string, n int) {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true}}
	defer c.CloseIdleConnections()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed error
	next := make(chan struct{}, n)
	for range n {
		next <- struct{}{}
	}
	close(next)
	for range 4 {
		wg.Go(func() {
			for range next {
				res, err := c.Get(url)
				if err == nil {
					_, err = io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if res.StatusCode != 200 {
						err = fmt.Errorf("status %d", res.StatusCode)
					}
				}
				if err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if failed != nil {
		t.Fatalf("GET %s: %v", url, failed)
	}
}

// cpu returns the user and system CPU time of process pid, in µs.
func cpu(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	const hz = 100 // USER_HZ on Linux
	return (utime + stime) * int64(time.Second/time.Microsecond) / hz
}
