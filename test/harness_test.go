// Package test holds headgate's end-to-end tests: they build the real
// binary and run it in front of upstream servers of the test process, on
// 127.0.0.1, with configs written to temporary directories. Only what needs
// the process is here — signals and reload, shutdown, the process's memory
// and output, raw connections (smuggling, h2c, slow clients), the
// commands, and the differential of the binary against the in-process
// audit; HTTP behaviour that needs no process is tested in package proxy
// (front_test.go), on headgate as serve builds it. Both share
// internal/hgtest. Besides: the deployment files, the docs' commands, and
// the audit against its fixture site.
package test

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headgate/headgate/internal/hgtest"
)

// binary is the headgate binary under test, built once by TestMain.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "headgate-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		b, err := build(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "building headgate:", err)
			return 1
		}
		binary = b
		return m.Run()
	}()
	os.Exit(code)
}

// build builds ./cmd/headgate.
func build(dir string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "headgate")
	if out, err := goBuild(root, bin, "./cmd/headgate"); err != nil {
		return "", fmt.Errorf("%v\n%s", err, out)
	}
	return bin, nil
}

func goBuild(root, out, pkg string) ([]byte, error) {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = root
	return cmd.CombinedOutput()
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	return filepath.Dir(strings.TrimSpace(string(out))), nil
}

// headgate is one running headgate process.
type headgate struct {
	hgtest.Server // its listeners and its output (Get, Metric, WaitLog)
	t             testing.TB
	cmd           *exec.Cmd
	Config        string // the config file's path
	exited        chan struct{}
	exitErr       error
}

// start runs headgate with the config, on free ports; it returns once the
// admin port answers /healthz.
func start(t testing.TB, c config) *headgate {
	t.Helper()
	return startWith(t, c, nil, nil)
}

// startWith is start with more serve flags and environment variables.
func startWith(t testing.TB, c config, args, env []string) *headgate {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "headgate.toml")
	var last error
	for attempt := 0; attempt < 5; attempt++ {
		listen, admin := freePort(t), freePort(t)
		if err := os.WriteFile(path, []byte(c.Render(listen, admin)), 0o644); err != nil {
			t.Fatal(err)
		}
		h, err := launchWith(t, path, listen, admin, args, env)
		if err == nil {
			return h
		}
		last = err
		if !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	t.Fatalf("headgate did not start: %v", last)
	return nil
}

// launch runs the binary on a config file already written.
func launch(t testing.TB, path, listen, admin string) (*headgate, error) {
	return launchWith(t, path, listen, admin, nil, nil)
}

// launchWith is launch with more serve flags and environment variables
// (added to this process's).
func launchWith(t testing.TB, path, listen, admin string, args, env []string) (*headgate, error) {
	h := &headgate{
		Server: hgtest.Server{URL: "http://" + listen, Admin: "http://" + admin, Logs: &logBuffer{}},
		t:      t,
		Config: path,
		exited: make(chan struct{}),
	}
	h.cmd = exec.Command(binary, append([]string{"serve", "-config", path, "-log-format", "json"}, args...)...)
	if env != nil {
		h.cmd.Env = append(os.Environ(), env...)
	}
	h.cmd.Stdout = h.Logs
	h.cmd.Stderr = h.Logs
	if err := h.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		h.exitErr = h.cmd.Wait()
		close(h.exited)
	}()
	deadline := time.Now().Add(15 * time.Second)
	for {
		select {
		case <-h.exited:
			return nil, fmt.Errorf("exited (%v): %s", h.exitErr, h.Logs.String())
		default:
		}
		if res, err := http.Get(h.Admin + "/healthz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			h.cmd.Process.Kill()
			<-h.exited
			return nil, fmt.Errorf("no /healthz within 15s: %s", h.Logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Cleanup(func() {
		h.stop()
		if t.Failed() {
			t.Logf("headgate log:\n%s", h.Logs.String())
		}
	})
	return h, nil
}

// stop ends headgate with SIGTERM (SIGKILL after 10 s).
func (h *headgate) stop() {
	select {
	case <-h.exited:
		return
	default:
	}
	h.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-h.exited:
	case <-time.After(10 * time.Second):
		h.t.Errorf("headgate did not stop within 10s of SIGTERM")
		h.cmd.Process.Kill()
		<-h.exited
	}
}

// peakRSS is headgate's VmHWM in bytes.
func (h *headgate) peakRSS(t testing.TB) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", h.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`VmHWM:\s+(\d+) kB`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("no VmHWM in /proc/%d/status", h.cmd.Process.Pid)
	}
	kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return kb << 10
}

// What the behaviour tests share with the in-process ones (package
// proxy), under the names the tests here use.
type (
	config    = hgtest.Config
	upstream  = hgtest.Upstream
	logBuffer = hgtest.LogBuffer
)

const (
	page      = hgtest.Page
	pageRules = hgtest.PageRules
)

var (
	client        = hgtest.Client
	newUpstream   = hgtest.NewUpstream
	newRecorder   = hgtest.NewRecorder
	rewrittenHead = hgtest.RewrittenHead
	htmlHandler   = hgtest.HTMLHandler
	clip          = hgtest.Clip
	encode        = hgtest.Encode
	decode        = hgtest.Decode
	rawGet        = hgtest.RawGet
	freePort      = hgtest.FreeAddr
)
