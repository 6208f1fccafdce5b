package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// A request's state goes back to reqStates only when nothing can read it
// once ServeHTTP returned (release); each case that keeps it names what
// could.
func TestReleaseState(t *testing.T) {
	p, err := New(testConfig(t, "http://127.0.0.1:1", testRules), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	own := p.state.Load()
	for _, tc := range []struct {
		name     string
		method   string
		body     string
		st       *state
		set      func(rs *reqState)
		recycled bool
	}{
		{"GET", "GET", "", own, nil, true},
		{"HEAD", "HEAD", "", own, nil, true},
		{"observed", "GET", "", own, func(rs *reqState) { rs.obs = &observeHook{} }, false},
		{"POST", "POST", "", own, nil, false},
		{"GET with a body", "GET", "x", own, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := &reqState{st: tc.st}
			rs.w = &rs.wv
			lat := &latency{}
			rs.w.lat = lat
			if tc.set != nil {
				tc.set(rs)
			}
			var r *http.Request
			if tc.body != "" {
				r = httptest.NewRequest(tc.method, "/a", strings.NewReader(tc.body))
			} else {
				r = httptest.NewRequest(tc.method, "/a", nil)
			}
			p.release(rs, r)
			if got := rs.st == nil; got != tc.recycled {
				t.Fatalf("recycled %v, want %v", got, tc.recycled)
			}
			if tc.recycled && !lat.stopped {
				t.Error("the flush timer was not stopped before the state went back")
			}
		})
	}
}

// The Markdown alternate's Link value outlives the request's state, which
// net/http may write after the handler returned and after the state went
// back to reqStates, whichever header the value went into (after the
// upstream's Link, after headgate's own, or alone): the next request takes
// the same state (the pool's per-P slot) and must not change the first
// answer's value. (A value made of the state's bytes read as zeros here.)
func TestReleaseKeepsMarkdownLink(t *testing.T) {
	for _, upLink := range []string{"", `</style.css>; rel=preload`} {
		p, _ := newTestProxy(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			if upLink != "" {
				w.Header().Set("Link", upLink)
			}
			io.WriteString(w, mdPage)
		}, mdConfig)
		for _, method := range []string{"HEAD", "GET"} {
			first := httptest.NewRecorder()
			p.ServeHTTP(first, httptest.NewRequest(method, "http://notes.example/notes/1", nil))
			links := first.Result().Header.Values("Link")
			second := httptest.NewRecorder()
			p.ServeHTTP(second, httptest.NewRequest(method, "http://notes.example/notes/222", nil))
			want := `<https://notes.example/notes/1.md>; rel="alternate"; type="text/markdown"`
			if !slices.Contains(links, want) {
				t.Errorf("upstream Link %q, %s: the first answer's Link is %q after the second request, want %s among them", upLink, method, links, want)
			}
		}
	}
}
