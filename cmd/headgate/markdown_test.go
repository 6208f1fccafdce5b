package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rewrite -markdown prints the Markdown headgate serves for a saved page,
// with [markdown]'s defaults when the config has no such table.
func TestRewriteMarkdown(t *testing.T) {
	cfg := writeConfig(t, `[server]
upstream = "http://127.0.0.1:9"
[site]
base_url = "https://notes.example"
[[rule]]
match = "/notes/*"
title = "Note by rule"
canonical = "self"
`)
	page := `<html lang="en"><head><title>T</title></head><body><nav>menu</nav><main><h1>Hi</h1><p>Some <b>text</b>.</p></main></body></html>`
	code, out, errs := runCmd(t, page, "rewrite", "-config", cfg, "-path", "/notes/1", "-markdown")
	want := "---\ntitle: \"Note by rule\"\nurl: \"https://notes.example/notes/1\"\nlang: \"en\"\n---\n\n# Hi\n\nSome **text**.\n"
	if code != exitOK || out != want {
		t.Errorf("exit %d\nstdout %q\nwant   %q\nstderr %s", code, out, want, errs)
	}
	// A fragment has no Markdown: its HTML is printed and the exit says so.
	code, _, errs = runCmd(t, "<li>x</li>", "rewrite", "-config", cfg, "-path", "/notes/1", "-markdown")
	if code != exitFix || !strings.Contains(errs, "no Markdown") {
		t.Errorf("fragment: exit %d\n%s", code, errs)
	}
}

// explain prints the decision record's Markdown part: whether the path has
// a Markdown version and why not, the path form, and what an agent asking
// with Accept: text/markdown gets.
func TestExplainMarkdown(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "h.toml")
	if err := os.WriteFile(cfg, []byte(`[server]
upstream = "http://127.0.0.1:9"
[site]
base_url = "https://notes.example"
[markdown]
enabled = true
match = ["/notes/*"]
max_bytes = "1KiB"
[[rule]]
match = "/notes/raw/*"
rewrite = false
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"/notes/1", []string{
			"Markdown for agents:",
			`its HTML answers link it: Link: <https://notes.example/notes/1.md>; rel="alternate"; type="text/markdown"`,
			"and say Vary: Accept-Encoding, Accept",
			"with Accept: text/markdown:",
			"answered as Markdown (200, text/markdown; charset=utf-8, coding identity",
			`Link: <https://notes.example/notes/1>; rel="canonical"`,
			"X-Markdown-Tokens: ",
		}},
		{"/notes/1.md", []string{"this is the suffix path form", "answered as Markdown"}},
		{"/other", []string{"no Markdown version (not under markdown.match)"}},
		{"/notes/raw/2", []string{"no Markdown version (rewrite = false)"}},
	} {
		code, out, errs := runCmd(t, "", "explain", "-config", cfg, tc.path)
		if code != exitOK {
			t.Fatalf("%s: exit %d\n%s", tc.path, code, errs)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: explain lacks %q:\n%s", tc.path, w, out)
			}
		}
	}
	// Without [markdown], explain says so.
	_, out, _ := runCmd(t, "", "explain", "-config", writeConfig(t, "[server]\nupstream = \"http://127.0.0.1:9\"\n[site]\nbase_url = \"https://notes.example\"\n"), "/notes/1")
	if !strings.Contains(out, "[markdown] is off") {
		t.Errorf("explain without [markdown]:\n%s", out)
	}
}

func writeConfig(t *testing.T, s string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "c.toml")
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
