package proxy

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/headgate/headgate/rewrite"
)

// Every observed request reports one Record, before its headers go out:
// the outcome, the upstream's own status and headers (not the served
// ones), the bytes the rewriter read, and the change record; a request
// nobody observes pays for none of it.
func TestObserveRecord(t *testing.T) {
	p, _ := newTestProxy(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/asset.css":
			w.Header().Set("Content-Type", "text/css")
			io.WriteString(w, "body{}")
		case "/gone":
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusGone)
			io.WriteString(w, testPage)
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("ETag", `"up1"`)
			io.WriteString(w, testPage)
		}
	}, testRules+`
[[rule]]
match = "/internal/*"
deny = true
`)
	serve := func(target string) (*httptest.ResponseRecorder, []*Record) {
		t.Helper()
		var recs []*Record
		var headerSent []bool
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", target, nil)
		req = req.WithContext(Observe(req.Context(), func(r *Record) {
			recs = append(recs, r)
			headerSent = append(headerSent, rec.Code != http.StatusOK || rec.Body.Len() > 0)
		}))
		p.ServeHTTP(rec, req)
		if len(recs) != 1 {
			t.Fatalf("%s: %d records, want 1", target, len(recs))
		}
		if headerSent[0] {
			t.Errorf("%s: the record came after the response had started", target)
		}
		return rec, recs
	}

	t.Run("rewritten", func(t *testing.T) {
		w, recs := serve("/p")
		r := recs[0]
		if r.Outcome != Outcome(rewrite.Rewritten) || r.UpstreamStatus != 200 {
			t.Fatalf("outcome %q, upstream status %d", r.Outcome, r.UpstreamStatus)
		}
		if got := r.UpstreamHeader.Get("ETag"); got != `"up1"` {
			t.Errorf("upstream ETag %q, want the upstream's own", got)
		}
		if served := w.Header().Get("ETag"); served == `"up1"` || served == "" {
			t.Errorf("served ETag %q: want headgate's, beside the upstream's in the record", served)
		}
		if !bytes.Contains(r.Upstream, []byte("<title>Upstream title</title>")) || r.UpstreamCut {
			t.Errorf("upstream bytes (cut %v):\n%s", r.UpstreamCut, r.Upstream)
		}
		if r.Result == nil || r.Result.Count(rewrite.Wrote) == 0 {
			t.Fatalf("result %+v", r.Result)
		}
		if !strings.Contains(w.Body.String(), "<title>Rewritten title</title>") {
			t.Errorf("served:\n%s", w.Body)
		}
	})
	t.Run("not HTML", func(t *testing.T) {
		_, recs := serve("/asset.css")
		r := recs[0]
		if r.Outcome != Passthrough || r.UpstreamStatus != 200 || r.Result != nil || r.Upstream != nil {
			t.Errorf("%+v", r)
		}
		if r.UpstreamHeader.Get("Content-Type") != "text/css" {
			t.Errorf("upstream header %v", r.UpstreamHeader)
		}
	})
	t.Run("upstream error status", func(t *testing.T) {
		_, recs := serve("/gone")
		if r := recs[0]; r.UpstreamStatus != http.StatusGone || r.Result != nil {
			t.Errorf("%+v", r)
		}
	})
	t.Run("denied", func(t *testing.T) {
		w, recs := serve("/internal/x")
		if r := recs[0]; r.Outcome != Denied || r.UpstreamStatus != 0 || r.UpstreamHeader != nil || w.Code != 404 {
			t.Errorf("%d %+v", w.Code, r)
		}
	})
	t.Run("bad request", func(t *testing.T) {
		_, recs := serve("/a/%2e%2e/b")
		if r := recs[0]; r.Outcome != BadRequest || r.UpstreamStatus != 0 {
			t.Errorf("%+v", r)
		}
	})
}

// A head longer than the record keeps is cut at the bound, and says so.
func TestObserveRecordBound(t *testing.T) {
	long := "<!doctype html><html><head><title>t</title>" + strings.Repeat("<meta name=x content=y>", 20000) + "</head><body>b</body></html>"
	p, _ := newTestProxy(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, long)
	}, "[server]\nmax_head_bytes = 65536\n\n"+testRules)
	var got *Record
	req := httptest.NewRequest("GET", "/p", nil)
	req = req.WithContext(Observe(req.Context(), func(r *Record) { got = r }))
	p.ServeHTTP(httptest.NewRecorder(), req)
	if got == nil {
		t.Fatal("no record")
	}
	if limit := 65536 + 80<<10; len(got.Upstream) > limit {
		t.Errorf("%d upstream bytes kept, bound %d", len(got.Upstream), limit)
	}
	if got.Result == nil || len(got.Upstream) == 0 {
		t.Errorf("record %+v", got)
	}
}
