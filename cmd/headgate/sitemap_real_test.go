package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// headgate sitemap exits 1 when a rule's source yielded lines but no
// entry, after writing what it has (SPEC §16.5).
func TestSitemapCommandEmptyRule(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://notes.example/2024/05/a-post/</loc></url></urlset>`)
	}))
	defer up.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "headgate.toml")
	write := func(pattern string) {
		if err := os.WriteFile(cfg, []byte(`[server]
upstream = "`+up.URL+`"
[site]
base_url = "https://notes.example"
[[rule]]
match = "/about"
sitemap = true
[[rule]]
match = "`+pattern+`"
sitemap = true
sitemap_source = "upstream-sitemap:/wp-sitemap.xml"
`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("/:slug/") // "Post name" permalinks, but the site has dates in them
	code, out, errs := runCmd(t, "", "sitemap", "-config", cfg)
	if code != exitFix || !strings.Contains(errs, "yielded lines but no entry") || !strings.Contains(out, "https://notes.example/about") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	write("/:year{[0-9]{4}}/:month{[0-9]{2}}/:slug/")
	code, out, errs = runCmd(t, "", "sitemap", "-config", cfg)
	if code != exitOK || !strings.Contains(out, "<loc>https://notes.example/2024/05/a-post/</loc>") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
}

// explain shows query conditions, the values they bind, what inherit =
// false leaves out and rewrite = false (SPEC §16.1, §16.2).
func TestExplainRealUpstream(t *testing.T) {
	cfg := "../../docs/examples/wordpress.toml"
	code, out, errs := runCmd(t, "", "explain", "-config", cfg, "/?s=M%C3%BCll")
	if code != exitOK || !strings.Contains(out, "/?s=:q") || !strings.Contains(out, `q="Müll"`) ||
		!strings.Contains(out, `<link rel="canonical" href="https://notes.example/search/M%C3%BCll/">`) {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = runCmd(t, "", "explain", "-config", cfg, "/wp-admin/admin-ajax.php?action=rest-nonce")
	if code != exitOK || !strings.Contains(out, "rewrite = false") || !strings.Contains(out, "not inherited (a more specific rule says inherit = false): /*") {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}
}
