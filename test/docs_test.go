package test

// The documentation, run: every ```sh block of README.md and
// docs/getting-started.md is executed against the real binary, in order,
// as a newcomer would type it, and its output is checked against the HTML
// comments that follow the block:
//
//	<!-- expect: TEXT -->        the output (stdout and stderr) contains TEXT
//	<!-- expect-exit: N -->      the block exits N (default 0)
//	<!-- not run: REASON -->     the block is not run (network, cluster, docker)
//
// `go run ./cmd/headgate` is replaced by the binary TestMain builds. A
// block that starts the server (headgate with no subcommand, or serve) runs
// in the background until the next server block or the end of the file, as
// the reader's first terminal would; it gets free ports: localhost:8080 and
// 127.0.0.1:9090 in the commands (and in the files they write) become the
// ports of this run, and the listener is set with HEADGATE_LISTEN.
// 127.0.0.1:3000, the reader's own app, becomes a small upstream of the
// test. Commands run with bash -e -o pipefail in a temporary directory that
// holds a copy of config.example.toml.
//
// The test also parses every complete config (a ```toml block with a
// [site] table) in the docs this file owns, and checks their relative links.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headgate/headgate/rules"
)

// docsRun lists the files whose sh blocks are run.
var docsRun = []string{"README.md", "docs/getting-started.md"}

// docsOwned lists the docs whose configs and links this test checks.
var docsOwned = []string{
	"docs/index.md", "docs/getting-started.md", "docs/cookbook.md",
	"docs/operations.md", "docs/security.md", "docs/deploy.md",
	"docs/crawlers.md", "docs/experiments.md", "docs/caddy.md",
	"docs/performance.md", "docs/performance-log.md", "README.md",
}

// docBlock is one fenced code block and the markers after it.
type docBlock struct {
	file, lang, text string
	line             int // of the opening fence
	expect           []string
	exit             int
	notRun           string
	dataFile         string // <!-- file: NAME -->: a data table the doc's configs read
}

func TestDocsCommands(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not on PATH: the docs use it")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not on PATH")
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	// binary is built once by TestMain (harness_test.go), from ./cmd/headgate.
	if out, err := exec.Command(binary, "version").CombinedOutput(); err != nil || !bytes.HasPrefix(out, []byte("headgate ")) {
		t.Fatalf("%s is not cmd/headgate (%v): %s", binary, err, out)
	}
	example, err := os.ReadFile(filepath.Join(root, "config.example.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range docsRun {
		t.Run(file, func(t *testing.T) {
			blocks := docBlocks(t, filepath.Join(root, file), file)
			s := &docSession{t: t, dir: t.TempDir(), headgate: binary}
			s.listen, s.admin = freePort(t), freePort(t)
			s.app = docsUpstream(t)
			if err := os.WriteFile(filepath.Join(s.dir, "config.example.toml"), []byte(s.substitute(string(example))), 0o644); err != nil {
				t.Fatal(err)
			}
			defer s.stopServer()
			ran := 0
			for _, b := range blocks {
				if b.lang != "sh" {
					continue
				}
				where := fmt.Sprintf("%s:%d", b.file, b.line)
				switch {
				case b.notRun != "":
					t.Logf("%s: not run: %s", where, b.notRun)
					continue
				case strings.HasPrefix(strings.TrimSpace(b.text), "go test"):
					// Running the test suite from inside itself would recurse.
					t.Logf("%s: not run: it is the test suite (mark it <!-- not run: ... -->)", where)
					continue
				}
				ran++
				s.run(where, b)
			}
			if ran == 0 {
				t.Errorf("%s: no sh block ran", file)
			}
		})
	}
}

// docSession is one reader working through one file.
type docSession struct {
	t             *testing.T
	dir           string
	headgate      string // the binary
	listen, admin string // 127.0.0.1:PORT
	app           string // the reader's own app
	server        *exec.Cmd
	serverOut     *logBuffer
	serverDone    chan error
	serverWhere   string
}

// substitute maps the addresses the docs use to this session's.
func (s *docSession) substitute(text string) string {
	return strings.NewReplacer(
		"localhost:8080", s.listen,
		"127.0.0.1:8080", s.listen,
		"localhost:9090", s.admin,
		"127.0.0.1:9090", s.admin,
		"localhost:3000", s.app,
		"127.0.0.1:3000", s.app,
	).Replace(text)
}

var serverCommand = regexp.MustCompile(`^((?:[A-Z_]+=\S+\s+)*)go run \./cmd/headgate(\s+serve)?\s+(-\S.*)?$`)

func (s *docSession) run(where string, b docBlock) {
	t := s.t
	script := strings.TrimSpace(b.text)
	if m := serverCommand.FindStringSubmatch(script); m != nil && !strings.Contains(script, "\n") {
		if len(b.expect) > 0 || b.exit != 0 {
			t.Errorf("%s: a server block cannot carry expectations", where)
		}
		s.startServer(where, s.substitute(m[1]+"exec "+s.headgate+" serve "+m[3]))
		return
	}
	script = s.substitute(strings.ReplaceAll(script, "go run ./cmd/headgate", s.headgate))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", script)
	cmd.Dir = s.dir
	cmd.Env = s.env()
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		code = -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
	}
	failed := false
	if code != b.exit {
		t.Errorf("%s: exit %d, want %d (%v)", where, code, b.exit, err)
		failed = true
	}
	for _, e := range b.expect {
		if !strings.Contains(string(out), s.substitute(e)) {
			t.Errorf("%s: output lacks %q", where, e)
			failed = true
		}
	}
	if failed {
		t.Logf("%s: ran\n%s\noutput:\n%s", where, script, out)
		if s.serverOut != nil {
			t.Logf("server log (%s):\n%s", s.serverWhere, tail(s.serverOut.String(), 4000))
		}
	}
}

func (s *docSession) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HEADGATE_") {
			env = append(env, kv)
		}
	}
	return append(env, "HEADGATE_LISTEN="+s.listen)
}

// startServer stops the previous server, as the reader's Ctrl-C would, and
// starts this one; it returns once /healthz answers on the admin port.
func (s *docSession) startServer(where, script string) {
	t := s.t
	s.stopServer()
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = s.dir
	cmd.Env = s.env()
	inOwnGroup(cmd)
	out := &logBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	s.server, s.serverOut, s.serverDone, s.serverWhere = cmd, out, done, where
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case err := <-done:
			s.server = nil
			t.Fatalf("%s: the server exited (%v):\n%s", where, err, out.String())
		default:
		}
		res, err := http.Get("http://" + s.admin + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			s.stopServer()
			t.Fatalf("%s: no /healthz on %s within 20s:\n%s", where, s.admin, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stopServer sends SIGINT (Ctrl-C) and expects a clean exit within the
// example's shutdown_timeout.
func (s *docSession) stopServer() {
	if s.server == nil {
		return
	}
	cmd := s.server
	s.server = nil
	signalGroup(cmd, false) // Ctrl-C
	select {
	case err := <-s.serverDone:
		if err != nil {
			s.t.Errorf("%s: the server did not exit cleanly on Ctrl-C: %v\n%s", s.serverWhere, err, tail(s.serverOut.String(), 4000))
		}
	case <-time.After(20 * time.Second):
		signalGroup(cmd, true)
		<-s.serverDone
		s.t.Errorf("%s: the server did not stop within 20s of Ctrl-C", s.serverWhere)
	}
}

// docsUpstream stands for the reader's own site: a legacy page on every
// path, a 404 for robots.txt.
func docsUpstream(t *testing.T) string {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Welcome!</title>`+
			`<link rel="canonical" href="/index.php?utm_source=x"></head><body><h1>My site</h1></body></html>`)
	})
	return strings.TrimPrefix(u.URL, "http://")
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// docBlocks reads the fenced blocks of a Markdown file with their markers.
func docBlocks(t *testing.T, path, name string) []docBlock {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []docBlock
	var cur *docBlock
	var body []string
	marker := regexp.MustCompile(`^<!--\s*(expect|expect-exit|not run|file)\s*:\s*(.*?)\s*-->$`)
	lines := strings.Split(string(src), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if cur == nil {
			if f, ok := strings.CutPrefix(line, "```"); ok {
				cur = &docBlock{file: name, lang: strings.TrimSpace(f), line: i + 1}
				body = nil
			}
			continue
		}
		if strings.TrimSpace(line) != "```" {
			body = append(body, line)
			continue
		}
		cur.text = strings.Join(body, "\n") + "\n"
		// Markers: the comment lines right after the fence.
		for i+1 < len(lines) {
			m := marker.FindStringSubmatch(strings.TrimSpace(lines[i+1]))
			if m == nil {
				if strings.HasPrefix(strings.TrimSpace(lines[i+1]), "<!--") {
					t.Errorf("%s:%d: unknown marker %s", name, i+2, lines[i+1])
				}
				break
			}
			i++
			switch m[1] {
			case "expect":
				cur.expect = append(cur.expect, m[2])
			case "expect-exit":
				n, err := strconv.Atoi(m[2])
				if err != nil {
					t.Errorf("%s:%d: expect-exit %q", name, i+1, m[2])
				}
				cur.exit = n
			case "not run":
				cur.notRun = m[2]
			case "file":
				cur.dataFile = m[2]
			}
		}
		blocks = append(blocks, *cur)
		cur = nil
	}
	if cur != nil {
		t.Errorf("%s:%d: unterminated code block", name, cur.line)
	}
	return blocks
}

// TestDocsConfigs parses every complete config in the docs with the same
// validation as headgate check.
func TestDocsConfigs(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, file := range docsOwned {
		path := filepath.Join(root, file)
		if _, err := os.Stat(path); err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		// The data tables the configs read are blocks marked
		// <!-- file: NAME -->, written beside them.
		dir := t.TempDir()
		blocks := docBlocks(t, path, file)
		for _, b := range blocks {
			if b.dataFile != "" {
				if err := os.WriteFile(filepath.Join(dir, b.dataFile), []byte(b.text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, b := range blocks {
			if b.lang != "toml" || !regexp.MustCompile(`(?m)^\[site\]`).MatchString(b.text) {
				continue
			}
			n++
			name := fmt.Sprintf("%s:%d", file, b.line)
			if _, err := rules.Parse(filepath.Join(dir, filepath.Base(name)), []byte(b.text), nil); err != nil {
				t.Errorf("%s: the config does not pass check:\n%v", name, err)
			}
		}
	}
	if n == 0 {
		t.Error("no complete configs in the docs")
	}
}

// TestDocsLinks checks the relative links of the docs this test owns: the
// file exists and, for #anchors, so does the heading.
func TestDocsLinks(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, file := range docsOwned {
		src, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		inCode := false
		sc := bufio.NewScanner(bytes.NewReader(src))
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			if strings.HasPrefix(line, "```") {
				inCode = !inCode
			}
			if inCode {
				continue
			}
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				p, anchor, _ := strings.Cut(target, "#")
				full := filepath.Join(root, filepath.Dir(file), p)
				if p == "" {
					full = filepath.Join(root, file)
				}
				if _, err := os.Stat(full); err != nil {
					t.Errorf("%s:%d: link %s: no such file", file, n, target)
					continue
				}
				if anchor != "" && strings.HasSuffix(full, ".md") && !docsHasAnchor(full, anchor) {
					t.Errorf("%s:%d: link %s: no heading with that anchor", file, n, target)
				}
			}
		}
	}
}

var docsAnchorCache sync.Map

// docsHasAnchor reports whether a Markdown file has a heading whose
// GitHub-style anchor is anchor.
func docsHasAnchor(path, anchor string) bool {
	if v, ok := docsAnchorCache.Load(path); ok {
		return v.(map[string]bool)[anchor]
	}
	anchors := map[string]bool{}
	src, _ := os.ReadFile(path)
	inCode := false
	for _, line := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
		}
		if inCode || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		var b strings.Builder
		for _, r := range h {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127:
				b.WriteRune(r)
			}
		}
		anchors[b.String()] = true
	}
	docsAnchorCache.Store(path, anchors)
	return anchors[anchor]
}
