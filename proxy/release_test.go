package proxy

import (
	"net/http"
	"net/http/httptest"
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
	other := &state{cfg: own.cfg, transport: roundTripperFunc(func(*http.Request) (*http.Response, error) { return nil, nil })}
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
		{"identity header, own transport", "GET", "", own, func(rs *reqState) { rs.botHdr[0] = "v" }, true},
		{"identity header, another transport", "GET", "", other, func(rs *reqState) { rs.botHdr[0] = "v" }, false},
		{"another transport, no identity header", "GET", "", other, nil, true},
		{"observed", "GET", "", own, func(rs *reqState) { rs.obs = &observeHook{} }, false},
		{"Markdown alternate Link", "GET", "", own, func(rs *reqState) { rs.mdLink[0] = "</a.md>" }, false},
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
