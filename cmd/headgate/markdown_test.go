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
	dir := t.TempDir()
	cfg := filepath.Join(dir, "h.toml")
	if err := os.WriteFile(cfg, []byte(`[server]
upstream = "http://127.0.0.1:9"
[site]
base_url = "https://notes.example"
[[rule]]
match = "/notes/*"
title = "Note by rule"
canonical = "self"
`), 0o644); err != nil {
		t.Fatal(err)
	}
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
