package test

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Reload: after SIGHUP, after a file change, after a ConfigMap-style
// symlink swap; a broken config is refused and the old one keeps serving.
func TestReload(t *testing.T) {
	up := newUpstream(t, htmlHandler(page))
	c := config{Upstream: up.URL, Rules: pageRules}
	hg := start(t, c)
	listen, admin := strings.TrimPrefix(hg.URL, "http://"), strings.TrimPrefix(hg.Admin, "http://")
	title := func() string {
		_, body := hg.Get(t, "GET", "/r")
		_, rest, _ := strings.Cut(string(body), "<title>")
		t, _, _ := strings.Cut(rest, "</title>")
		return t
	}
	waitTitle := func(t *testing.T, want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for title() != want {
			if time.Now().After(deadline) {
				t.Fatalf("title still %q, want %q", title(), want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	write := func(path, rules string) {
		c.Rules = rules
		if err := os.WriteFile(path, []byte(c.Render(listen, admin)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	retitle := func(s string) string { return strings.Replace(pageRules, "Rewritten title", s, 1) }

	t.Run("SIGHUP", func(t *testing.T) {
		// Same size and mtime: only the signal can make headgate see it.
		fi, _ := os.Stat(hg.Config)
		write(hg.Config, retitle("Rewritten TITLE"))
		os.Chtimes(hg.Config, fi.ModTime(), fi.ModTime())
		time.Sleep(1500 * time.Millisecond) // past a poll: it must not have noticed
		if got := title(); got != "Rewritten title" {
			t.Fatalf("title %q before SIGHUP", got)
		}
		hg.cmd.Process.Signal(syscall.SIGHUP)
		waitTitle(t, "Rewritten TITLE")
		hg.WaitLog(t, `config reloaded.*signal`)
	})
	t.Run("file change", func(t *testing.T) {
		write(hg.Config, retitle("Changed on disk"))
		waitTitle(t, "Changed on disk")
	})
	t.Run("broken config refused", func(t *testing.T) {
		write(hg.Config, pageRules+"\n[[rule]]\nmatch = \"/x\"\nopen_graf = 1\n")
		deadline := time.Now().Add(10 * time.Second)
		for hg.Metric(t, `headgate_config_reloads_total{result="refused"}`) < 1 {
			if time.Now().After(deadline) {
				t.Fatal("broken config not refused")
			}
			time.Sleep(50 * time.Millisecond)
		}
		hg.WaitLog(t, `config refused.*HG140`)
		if got := title(); got != "Changed on disk" {
			t.Errorf("title %q after a refused config", got)
		}
		hg.cmd.Process.Signal(syscall.SIGHUP)
		deadline = time.Now().Add(10 * time.Second)
		for hg.Metric(t, `headgate_config_reloads_total{result="refused"}`) < 2 {
			if time.Now().After(deadline) {
				t.Fatal("broken config not refused on SIGHUP")
			}
			time.Sleep(50 * time.Millisecond)
		}
		if got := title(); got != "Changed on disk" {
			t.Errorf("title %q after a refused config", got)
		}
	})
	t.Run("ConfigMap symlink swap", func(t *testing.T) {
		// A second headgate whose config path is ConfigMap-shaped:
		// headgate.toml -> ..data/headgate.toml, ..data -> ..v1.
		dir := t.TempDir()
		cm := config{Upstream: up.URL, Rules: retitle("Version one")}
		l2, a2 := freePort(t), freePort(t)
		for _, v := range []string{"..v1", "..v2"} {
			os.Mkdir(filepath.Join(dir, v), 0o755)
		}
		os.WriteFile(filepath.Join(dir, "..v1", "headgate.toml"), []byte(cm.Render(l2, a2)), 0o644)
		cm.Rules = retitle("Version two")
		os.WriteFile(filepath.Join(dir, "..v2", "headgate.toml"), []byte(cm.Render(l2, a2)), 0o644)
		os.Symlink("..v1", filepath.Join(dir, "..data"))
		os.Symlink(filepath.Join("..data", "headgate.toml"), filepath.Join(dir, "headgate.toml"))
		hg2, err := launch(t, filepath.Join(dir, "headgate.toml"), l2, a2)
		if err != nil {
			t.Fatal(err)
		}
		_, body := hg2.Get(t, "GET", "/r")
		if !bytes.Contains(body, []byte("<title>Version one</title>")) {
			t.Fatalf("before the swap:\n%s", body)
		}
		tmp := filepath.Join(dir, "..data_tmp")
		os.Symlink("..v2", tmp)
		if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, body = hg2.Get(t, "GET", "/r")
			if bytes.Contains(body, []byte("<title>Version two</title>")) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("not reloaded after the symlink swap:\n%s", body)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}

// A config that does not load stops serve at start with the problem report
// and exit code 1.
func TestBadConfigAtStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "headgate.toml")
	os.WriteFile(path, []byte("[server]\nupstream = \"ftp://x\"\nlisten = \"127.0.0.1:1\"\n[site]\nbase_url = \"https://x.example\"\n[[rule]]\nmatch = \"/\"\nopen_graf = 1\n"), 0o644)
	cmd := exec.Command(binary, "serve", "-config", path)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("serve started on a bad config:\n%s", out)
	}
	if cmd.ProcessState.ExitCode() != 1 {
		t.Errorf("exit code %d, want 1", cmd.ProcessState.ExitCode())
	}
	for _, want := range []string{"HG102", "HG140", "did you mean open_graph"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
}

// SIGTERM drains: a request in flight completes, then the process exits 0.
func TestGracefulShutdown(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-release
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, page)
	})
	hg := start(t, config{Upstream: up.URL, Rules: pageRules})
	done := make(chan []byte, 1)
	go func() {
		res, err := client.Get(hg.URL + "/slow")
		if err != nil {
			done <- nil
			return
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		done <- b
	}()
	<-started
	hg.cmd.Process.Signal(syscall.SIGTERM)
	hg.WaitLog(t, "shutting down")
	close(release)
	body := <-done
	rewrittenHead(t, body, "/slow")
	select {
	case <-hg.exited:
	case <-time.After(5 * time.Second):
		t.Fatal("no exit within 5s of SIGTERM")
	}
	if hg.exitErr != nil {
		t.Errorf("exit: %v", hg.exitErr)
	}
}

// serve -gc-floor keeps a floor under the collector's headroom
// (internal/gcfloor): at a small heap GOGC goes over 100 as soon as it
// starts; the default (0) leaves the Go default, an operator's GOGC is
// kept as it is, and a GOMEMLIMIT (the Kubernetes manifests set one) goes
// with the floor. Read from the Go collector's own gauge on /metrics.
func TestGCFloor(t *testing.T) {
	up := newUpstream(t, htmlHandler(page))
	c := config{Upstream: up.URL, Rules: pageRules}
	for _, tc := range []struct {
		name      string
		args, env []string
		want      func(float64) bool
		says      string
	}{
		{"floor", []string{"-gc-floor", "8"}, []string{"GOGC=", "GOMEMLIMIT="}, func(v float64) bool { return v > 100 }, "over 100"},
		{"default", nil, []string{"GOGC=", "GOMEMLIMIT="}, func(v float64) bool { return v == 100 }, "100"},
		{"off", []string{"-gc-floor", "0"}, []string{"GOGC=", "GOMEMLIMIT="}, func(v float64) bool { return v == 100 }, "100"},
		{"operator GOGC", []string{"-gc-floor", "8"}, []string{"GOGC=150"}, func(v float64) bool { return v == 150 }, "150"},
		{"with GOMEMLIMIT", []string{"-gc-floor", "8"}, []string{"GOGC=", "GOMEMLIMIT=100MiB"}, func(v float64) bool { return v > 100 }, "over 100 (the limit still binds)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hg := startWith(t, c, tc.args, tc.env)
			if v := hg.Metric(t, "go_gc_gogc_percent"); !tc.want(v) {
				t.Errorf("go_gc_gogc_percent = %v, want %s", v, tc.says)
			}
			if res, err := client.Get(hg.URL + "/x"); err != nil || res.StatusCode != http.StatusOK {
				t.Fatalf("GET /x: %v %v", res, err)
			} else {
				res.Body.Close()
			}
		})
	}
}
