package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The Record carries the proxy's own decision: its kind, its outcome and,
// for a forwarded response the rewriter never saw, why — set where the
// proxy decides, so that no observer works it out again.
func TestRecordDecision(t *testing.T) {
	upstream := func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/asset.css":
			h.Set("Content-Type", "text/css")
		case "/gone":
			w.WriteHeader(http.StatusGone)
		case "/dl":
			h.Set("Content-Disposition", "attachment; filename=page.html")
		case "/coded":
			h.Set("Content-Encoding", "x-unknown")
		case "/redirect-up":
			h.Set("Location", "/elsewhere")
			w.WriteHeader(http.StatusFound)
			return
		}
		io.WriteString(w, testPage)
	}
	p, _ := newTestProxy(t, upstream, testRules+`
[[rule]]
match = "/internal/*"
deny = true

[[rule]]
match = "/raw/*"
rewrite = false
`)
	bare, _ := newTestProxy(t, upstream, "correct_upstream = false\n\n[[rule]]\nmatch = \"/only\"\ntitle = \"x\"\n")
	for _, c := range []struct {
		name     string
		p        *Proxy
		method   string
		target   string
		outcome  Outcome
		kind     Kind
		skip     Skip
		reasonIn string // a word of SkipReason; "" for none
	}{
		{"rewritten", p, "GET", "/p", Rewritten, KindRules, SkipNone, ""},
		{"not html", p, "GET", "/asset.css", Passthrough, KindRules, SkipNotHTML, `"text/css"`},
		{"not 200", p, "GET", "/gone", Passthrough, KindRules, SkipStatus, "410"},
		{"upstream redirect", p, "GET", "/redirect-up", Passthrough, KindRules, SkipStatus, "302"},
		{"rewrite = false", p, "GET", "/raw/x", SkippedRule, KindRules, SkipRule, "rewrite = false"},
		{"download", p, "GET", "/dl", Passthrough, KindRules, SkipDownload, "attachment"},
		{"HEAD", p, "HEAD", "/p", Passthrough, KindRules, SkipHEAD, "HEAD"},
		{"POST", p, "POST", "/p", Passthrough, KindRules, SkipMethod, "GET and HEAD"},
		{"unknown coding", p, "GET", "/coded", SkippedEncoding, KindRules, SkipEncoding, "content coding"},
		{"nothing could change", bare, "GET", "/p", Passthrough, KindNoRules, SkipNothing, "correct_upstream"},
		{"deny", p, "GET", "/internal/x", Denied, KindDeny, SkipNone, ""},
		{"bad request", p, "GET", "/a%00b", BadRequest, KindBadRequest, SkipNone, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got *Record
			req := httptest.NewRequest(c.method, c.target, nil)
			req = req.WithContext(Observe(req.Context(), func(r *Record) { got = r }))
			c.p.ServeHTTP(httptest.NewRecorder(), req)
			if got == nil {
				t.Fatal("no record")
			}
			if got.Outcome != c.outcome || got.Kind != c.kind || got.Skip != c.skip {
				t.Errorf("outcome %q kind %q skip %d; want %q %q %d", got.Outcome, got.Kind, got.Skip, c.outcome, c.kind, c.skip)
			}
			why := got.SkipReason()
			if c.reasonIn == "" && why != "" || !strings.Contains(why, c.reasonIn) {
				t.Errorf("SkipReason %q, want one with %q", why, c.reasonIn)
			}
		})
	}
}

func TestOutcomeAnsweredItself(t *testing.T) {
	for o, want := range map[Outcome]bool{
		BadRequest: true, Denied: true, Redirected: true, Sitemap: true, Robots: true, LLMSTxt: true,
		Rewritten: false, Passthrough: false, Shadow: false, UpstreamError: false, SkippedRule: false,
	} {
		if got := o.AnsweredItself(); got != want {
			t.Errorf("%s.AnsweredItself() = %v, want %v", o, got, want)
		}
	}
}
