package app

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/headgate/headgate/rules"
)

// In shadow mode the public listener forwards /sitemap.xml to the upstream
// (§6), while the inspector's index still lists the sitemap headgate would
// serve (§14): it is the mode operators inspect in.
func TestShadowSitemapForwardedButInspected(t *testing.T) {
	for _, mode := range []string{"production", "shadow"} {
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/sitemap.xml" {
				io.WriteString(w, "the app's own sitemap")
				return
			}
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<!doctype html><title>x</title>")
		}))
		defer up.Close()
		cfg, err := rules.Parse("t.toml", []byte("[server]\nupstream = \""+up.URL+"\"\n[site]\nbase_url = \"https://notes.example\"\nmode = \""+mode+"\"\n"+
			"[[rule]]\nmatch = \"/about\"\nsitemap = true\n"), nil)
		if err != nil {
			t.Fatal(err)
		}
		p, stop, err := Proxy(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer stop()
		admin := httptest.NewServer(p.Admin())
		defer admin.Close()
		public := httptest.NewServer(p)
		defer public.Close()
		get := func(u string) string {
			t.Helper()
			res, err := http.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			return string(b)
		}
		if idx := get(admin.URL + "/inspect?format=json"); !strings.Contains(idx, "/about") {
			t.Errorf("%s: the inspector's index lists no sitemap URL: %s", mode, idx)
		}
		forwarded := get(public.URL+"/sitemap.xml") == "the app's own sitemap"
		if forwarded != (mode == "shadow") {
			t.Errorf("%s: /sitemap.xml forwarded to the upstream: %v", mode, forwarded)
		}
	}
}
