package rewrite

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headgate/headgate/rules"
)

var update = flag.Bool("update", false, "rewrite the expected output of golden files")

// A golden file holds sections "-- name --": options (path, content-type,
// csp, max-head-bytes, shadow, correct-upstream), config.toml, input.html,
// then the expected output.html and changes. -update rewrites the expected
// sections; a person reads every one before it is committed.
type golden struct {
	names    []string
	sections map[string][]byte
}

func readGolden(t *testing.T, path string) *golden {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	g := &golden{sections: map[string][]byte{}}
	var cur string
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line = data[:i+1]
		}
		data = data[len(line):]
		trim := bytes.TrimRight(line, "\n")
		if bytes.HasPrefix(trim, []byte("-- ")) && bytes.HasSuffix(trim, []byte(" --")) && len(trim) > 6 {
			cur = string(trim[3 : len(trim)-3])
			g.names = append(g.names, cur)
			g.sections[cur] = []byte{}
			continue
		}
		if cur == "" {
			g.names = append(g.names, "")
			cur = ""
		}
		g.sections[cur] = append(g.sections[cur], line...)
	}
	return g
}

func (g *golden) bytes() []byte {
	var b bytes.Buffer
	seen := map[string]bool{}
	for _, n := range g.names {
		if seen[n] {
			continue
		}
		seen[n] = true
		if n != "" {
			fmt.Fprintf(&b, "-- %s --\n", n)
		}
		b.Write(g.sections[n])
	}
	return b.Bytes()
}

func (g *golden) set(name string, v []byte) {
	if _, ok := g.sections[name]; !ok {
		g.names = append(g.names, name)
	}
	g.sections[name] = v
}

const goldenBaseConfig = `
[server]
upstream = "http://127.0.0.1:3000"
[site]
base_url = "https://notes.example"
`

func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatal("no golden files")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			g := readGolden(t, f)
			opts := map[string]string{"path": "/", "content-type": "text/html; charset=utf-8", "correct-upstream": "true"}
			for _, line := range strings.Split(string(g.sections["options"]), "\n") {
				if k, v, ok := strings.Cut(line, ":"); ok {
					opts[strings.TrimSpace(k)] = strings.TrimSpace(v)
				}
			}
			src := g.sections["config.toml"]
			if !bytes.Contains(src, []byte("[site]")) {
				src = append([]byte(goldenBaseConfig), src...)
			}
			cfg, err := rules.Parse(f, src, nil)
			if err != nil {
				t.Fatalf("config: %v", err)
			}
			o := Options{
				Match:           cfg.Resolve(opts["path"]),
				ContentType:     opts["content-type"],
				CSP:             opts["csp"],
				CorrectUpstream: opts["correct-upstream"] == "true",
				Shadow:          opts["shadow"] == "true",
			}
			if v := opts["max-head-bytes"]; v != "" {
				fmt.Sscan(v, &o.MaxHeadBytes)
			}
			in := g.sections["input.html"]
			r := NewReader(bytes.NewReader(in), o)
			out, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			res := r.Result()
			var ch strings.Builder
			fmt.Fprintf(&ch, "outcome=%s delta=%d wrote=%d replaced=%d corrected=%d dropped=%d\n", res.Outcome, res.Delta,
				res.Count(Wrote), res.Count(Replaced), res.Count(Corrected), res.Count(Dropped))
			for _, c := range res.Changes {
				line := fmt.Sprintf("%s %s", c.Action, c.Identity)
				if c.Key != "" && c.Key != c.Identity {
					line += " " + c.Key
				}
				if c.Reason != "" {
					line += " (" + c.Reason + ")"
				}
				fmt.Fprintf(&ch, "%s: %q\n", line, c.Value)
			}
			if res.Delta != len(out)-len(in) && !o.Shadow {
				t.Errorf("Delta = %d, want %d", res.Delta, len(out)-len(in))
			}
			if *update {
				g.set("output.html", out)
				g.set("changes", []byte(ch.String()))
				if err := os.WriteFile(f, g.bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if want := g.sections["output.html"]; !bytes.Equal(out, want) {
				t.Errorf("output differs (run with -update and read the diff):\n--- got\n%s\n--- want\n%s", out, want)
			}
			if want := string(g.sections["changes"]); ch.String() != want {
				t.Errorf("changes differ:\n--- got\n%s--- want\n%s", ch.String(), want)
			}
			// Idempotence (§17): headgate's own output, rewritten again
			// under the same rules, comes out byte for byte the same —
			// except where a rule's value reads the page it rewrites
			// ({page.title} in a title), which a golden says with
			// "idempotent: no".
			if opts["idempotent"] == "no" || o.Shadow || res.Outcome != Rewritten {
				return
			}
			r2 := NewReader(bytes.NewReader(out), o)
			again, err := io.ReadAll(r2)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, out) {
				t.Errorf("rewriting the output again changed it (not idempotent):\n--- once\n%s\n--- twice\n%s", out, again)
			}
		})
	}
}
