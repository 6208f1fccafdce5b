package proxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/headgate/headgate/rules"
)

// allPaths is a sitemap handler that answers every path it is asked for.
type allPaths struct{}

func (allPaths) Handles(path string) bool { return path == "/llms.txt" || path == "/robots.txt" }
func (allPaths) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.WriteString(w, "# Notes\n")
}

// /llms.txt is counted as outcome="llms_txt".
func TestLLMSTxtOutcome(t *testing.T) {
	reg := prometheus.NewRegistry()
	p, err := New(testConfig(t, "http://127.0.0.1:1", ""), Options{
		Registry: reg,
		Sitemap: func(*rules.Config, func(context.Context, string) (io.ReadCloser, error)) SitemapHandler {
			return allPaths{}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		p.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/llms.txt", nil))
	}
	p.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/robots.txt", nil))
	if v := testutil.ToFloat64(p.m.requests.WithLabelValues("llms_txt")); v != 2 {
		t.Errorf("llms_txt outcome %v, want 2", v)
	}
	if v := testutil.ToFloat64(p.m.requests.WithLabelValues("robots")); v != 1 {
		t.Errorf("robots outcome %v, want 1", v)
	}
}
