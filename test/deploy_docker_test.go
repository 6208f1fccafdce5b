package test

// deploy/Dockerfile, checked statically: there is no Docker engine where
// the tests run.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestDeployDockerfile(t *testing.T) {
	root := deployRoot(t)
	df := readDeployDockerfile(t, root)
	if len(df.stages) < 2 {
		t.Fatalf("Dockerfile: %d stage(s), want a build stage and a run stage", len(df.stages))
	}
	build, final := df.stages[0], df.stages[len(df.stages)-1]

	gomod, err := os.ReadFile(filepath.Join(root, "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(gomod)
	if goVersion == nil {
		t.Fatal("go.mod: no go directive")
	}
	if want := "golang:" + string(goVersion[1]); !strings.HasPrefix(build.image, want) {
		t.Errorf("build stage FROM %s: want %s (go.mod says go %s)", build.image, want, goVersion[1])
	}
	for _, s := range df.stages {
		if strings.HasSuffix(s.image, ":latest") || !strings.Contains(s.image, ":") && s.image != "scratch" {
			t.Errorf("FROM %s: name a version, not latest", s.image)
		}
		if s.image != "scratch" && !strings.Contains(s.image, "@sha256:") {
			t.Logf("note: FROM %s is not pinned by digest; production builds should pin it", s.image)
		}
	}

	// The build: static, trimmed, versioned, from ./cmd/headgate.
	var out string
	for _, run := range build.instr("RUN") {
		if !strings.Contains(run, "go build") {
			continue
		}
		for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "-ldflags", "-s -w", "-X main.buildVersion=", "./cmd/headgate"} {
			if !strings.Contains(run, want) {
				t.Errorf("RUN go build: no %q in %q", want, run)
			}
		}
		if m := regexp.MustCompile(`-o\s+(\S+)`).FindStringSubmatch(run); m != nil {
			out = m[1]
		}
	}
	if out == "" {
		t.Fatal("build stage: no RUN go build -o FILE")
	}
	src, err := os.ReadFile(filepath.Join(root, "..", "cmd", "headgate", "flags.go"))
	if err != nil || !bytes.Contains(src, []byte("var buildVersion")) {
		t.Errorf("cmd/headgate has no var buildVersion for -X main.buildVersion (%v)", err)
	}

	// The run stage: the binary where ENTRYPOINT says, a non-root user.
	if !strings.HasPrefix(final.image, "gcr.io/distroless/static") && final.image != "scratch" {
		t.Errorf("run stage FROM %s: want gcr.io/distroless/static… or scratch", final.image)
	}
	if final.image == "scratch" && !slices.ContainsFunc(final.instr("COPY"), func(s string) bool { return strings.Contains(s, "ca-certificates") }) {
		t.Error("a scratch image needs CA certificates for https upstreams")
	}
	var binary string
	for _, c := range final.instr("COPY") {
		f := strings.Fields(c)
		if len(f) == 3 && f[0] == "--from="+build.name && f[1] == out {
			binary = f[2]
		}
	}
	if binary == "" {
		t.Errorf("run stage: no COPY --from=%s %s …", build.name, out)
	}
	if got := final.last("ENTRYPOINT"); got != fmt.Sprintf(`["%s"]`, binary) {
		t.Errorf(`ENTRYPOINT %s: want ["%s"] (exec form, the copied binary)`, got, binary)
	}
	if got := final.last("CMD"); got != `["serve"]` {
		t.Errorf(`CMD %s: want ["serve"]`, got)
	}
	user := final.last("USER")
	uid, _, _ := strings.Cut(user, ":")
	if n, err := strconv.Atoi(uid); err != nil || n == 0 {
		t.Errorf("USER %q: want a numeric non-root uid (Kubernetes can only verify runAsNonRoot for a number)", user)
	}
	if df.env["HEADGATE_CONFIG"] != deployConfigPath {
		t.Errorf("ENV HEADGATE_CONFIG=%q, want %q", df.env["HEADGATE_CONFIG"], deployConfigPath)
	}
	for _, p := range []string{"8080", "9090"} {
		if !slices.Contains(df.expose, p) {
			t.Errorf("EXPOSE %v: want %s", df.expose, p)
		}
	}

	// What the build needs must reach the build context.
	ignore, err := os.ReadFile(filepath.Join(root, "Dockerfile.dockerignore"))
	if err == nil {
		for _, line := range strings.Split(string(ignore), "\n") {
			line = strings.Trim(strings.TrimSpace(line), "/")
			for _, need := range []string{"go.mod", "go.sum", "cmd", "internal", "rules", "rewrite", "proxy", "sitemap", "audit", "*", "**"} {
				if line == need {
					t.Errorf("Dockerfile.dockerignore excludes %s, which the build needs", need)
				}
			}
		}
	}
}

// ---- Dockerfile -------------------------------------------------------------

type deployDockerStage struct {
	image, name string
	instrs      [][2]string // instruction, arguments
}

func (s *deployDockerStage) instr(name string) []string {
	var out []string
	for _, in := range s.instrs {
		if in[0] == name {
			out = append(out, in[1])
		}
	}
	return out
}

func (s *deployDockerStage) last(name string) string {
	all := s.instr(name)
	if len(all) == 0 {
		return ""
	}
	return all[len(all)-1]
}

type deployDockerfile struct {
	stages []*deployDockerStage
	env    map[string]string // the final stage's
	expose []string
}

func (d *deployDockerfile) entrypointBinary() string {
	e := d.stages[len(d.stages)-1].last("ENTRYPOINT")
	e = strings.TrimSuffix(strings.TrimPrefix(e, `["`), `"]`)
	return e
}

func readDeployDockerfile(t *testing.T, root string) *deployDockerfile {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	d := &deployDockerfile{env: map[string]string{}}
	var cur *deployDockerStage
	text := strings.ReplaceAll(string(src), "\\\n", " ")
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		in, args, _ := strings.Cut(line, " ")
		in = strings.ToUpper(in)
		args = strings.Join(strings.Fields(args), " ")
		if in == "FROM" {
			f := strings.Fields(args)
			cur = &deployDockerStage{image: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				cur.name = f[2]
			}
			d.stages = append(d.stages, cur)
			d.env = map[string]string{}
			d.expose = nil
			continue
		}
		if cur == nil {
			if in != "ARG" {
				t.Fatalf("Dockerfile:%d: %s before FROM", n+1, in)
			}
			continue
		}
		cur.instrs = append(cur.instrs, [2]string{in, args})
		switch in {
		case "ENV":
			k, v, _ := strings.Cut(args, "=")
			d.env[k] = v
		case "EXPOSE":
			d.expose = append(d.expose, strings.Fields(args)...)
		}
	}
	if len(d.stages) == 0 {
		t.Fatal("Dockerfile: no FROM")
	}
	return d
}
