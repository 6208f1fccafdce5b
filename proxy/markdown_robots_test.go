package proxy

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

func TestMarkdownRobots(t *testing.T) {
	tests := []struct {
		name   string
		values []string
		meta   string
		want   []string
	}{
		{"none", nil, "", nil},
		{"meta only", nil, "max-snippet:50", []string{"max-snippet:50"}},
		{"header only", []string{"noindex"}, "", []string{"noindex"}},
		{"both, header first", []string{"noindex"}, "max-snippet:50", []string{"noindex, max-snippet:50"}},
		{"repeats once", []string{"noindex, nofollow", "NOINDEX"}, "noindex,noarchive", []string{"noindex, nofollow, noarchive"}},
		{"one crawler's stays apart", []string{"googlebot: noindex", "noarchive"}, "max-image-preview:large", []string{"noarchive, max-image-preview:large", "googlebot: noindex"}},
		{"a valued directive is not a crawler", []string{"unavailable_after: 25 Jun 2030 15:00:00 PST"}, "", []string{"unavailable_after: 25 Jun 2030 15:00:00 PST"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := markdownRobots(tt.values, tt.meta); !slices.Equal(got, tt.want) {
				t.Errorf("markdownRobots(%q, %q) = %q, want %q", tt.values, tt.meta, got, tt.want)
			}
		})
	}
}

// A page kept out of the index by its X-Robots-Tag, the upstream's or a
// rule's, is kept out as Markdown too: the Markdown answer's X-Robots-Tag
// carries the page's directives from the header and from the head's
// robots meta, not the meta's alone (SPEC §19.1).
func TestMarkdownKeepsHeaderRobots(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path == "/notes/xr" {
			w.Header().Set("X-Robots-Tag", "noindex")
		}
		io.WriteString(w, `<!DOCTYPE html><html><head><title>T</title><meta name="robots" content="max-snippet:50"></head><body><main><p>Words.</p></main></body></html>`)
	}))
	t.Cleanup(up.Close)
	cfg := testConfig(t, up.URL, `
[[rule]]
match = "/notes/*"
canonical = "self"

[[rule]]
match = "/notes/5"
[rule.headers]
x-robots-tag = "noarchive"

[markdown]
enabled = true
`)
	p, err := New(cfg, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	for path, want := range map[string]string{
		"/notes/xr.md": "noindex, max-snippet:50",
		"/notes/5.md":  "noarchive, max-snippet:50",
		"/notes/1.md":  "max-snippet:50",
	} {
		w := httptest.NewRecorder()
		p.ServeHTTP(w, httptest.NewRequest("GET", "http://notes.example"+path, nil))
		if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/markdown") {
			t.Fatalf("%s: %d %q, want Markdown", path, w.Code, ct)
		}
		if got := w.Header().Values("X-Robots-Tag"); !slices.Equal(got, []string{want}) {
			t.Errorf("%s: X-Robots-Tag %q, want %q", path, got, want)
		}
	}
}
