package proxy

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/headgate/headgate/rules"
	"github.com/headgate/headgate/watch"
)

// flipUpstream is an upstream page whose robots header and status the
// test flips.
type flipUpstream struct {
	noindex atomic.Bool
	status  atomic.Int32
}

func (u *flipUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if u.noindex.Load() {
		w.Header().Set("X-Robots-Tag", "noindex")
	}
	if s := u.status.Load(); s != 0 {
		w.WriteHeader(int(s))
	}
	io.WriteString(w, testPage)
}

const watchRules = testRules + `
[rule.robots]
index = true
follow = true
`

func watchProxy(t *testing.T, u *flipUpstream, keys string, tick <-chan time.Time) *Proxy {
	t.Helper()
	up := httptest.NewServer(u)
	t.Cleanup(up.Close)
	cfg := testConfig(t, up.URL, watchRules+"\n[watch]\nenabled = true\nconfirm = 2\n"+keys)
	p, err := New(cfg, Options{Logger: slog.New(slog.DiscardHandler), WebhookTick: tick})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func get(t *testing.T, h http.Handler, target string) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", target, nil))
	return w
}

// An upstream that starts answering noindex raises one critical event
// after confirm responses: on /changes (HTML, JSON, the severity filter),
// in headgate_upstream_changes_total, in the inspector's events of the
// path and at the webhook, whose batch goes out on the injected tick.
func TestWatchNoindexFlip(t *testing.T) {
	got := make(chan []watch.Event, 4)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var evs []watch.Event
		if err := json.NewDecoder(r.Body).Decode(&evs); err != nil {
			t.Errorf("webhook body: %v", err)
		}
		got <- evs
	}))
	defer hook.Close()
	tick := make(chan time.Time)
	u := &flipUpstream{}
	p := watchProxy(t, u, "webhook = "+quote(hook.URL), tick)

	get(t, p, "http://notes.example/page")
	u.noindex.Store(true)
	get(t, p, "http://notes.example/page")
	if n := len(p.watcher().Events("")); n != 0 {
		t.Fatalf("%d events below confirm", n)
	}
	get(t, p, "http://notes.example/page")
	evs := p.watcher().Events(watch.Critical)
	if len(evs) != 1 || evs[0].Signal != "robots" || !strings.Contains(evs[0].After, "noindex") {
		t.Fatalf("events %+v, want one critical robots change to noindex", evs)
	}
	if n := p.changesCount(t, "robots", "critical"); n != 1 {
		t.Errorf("headgate_upstream_changes_total{robots,critical} = %v", n)
	}
	if evs := p.watcher().EventsFor("/page"); len(evs) != 1 {
		t.Errorf("EventsFor(/page) = %d events", len(evs))
	}

	admin := p.Admin()
	html := get(t, admin, "http://127.0.0.1/changes")
	if html.Code != 200 || !strings.Contains(html.Body.String(), "https://notes.example/page") || !strings.Contains(html.Body.String(), "critical") {
		t.Errorf("/changes: %d\n%s", html.Code, html.Body)
	}
	var js []watch.Event
	if err := json.Unmarshal(get(t, admin, "http://127.0.0.1/changes?format=json&severity=critical").Body.Bytes(), &js); err != nil || len(js) != 1 {
		t.Errorf("/changes JSON critical: %v %+v", err, js)
	}
	if err := json.Unmarshal(get(t, admin, "http://127.0.0.1/changes?format=json&severity=info").Body.Bytes(), &js); err != nil || len(js) != 0 {
		t.Errorf("/changes JSON info: %v %+v", err, js)
	}
	if w := get(t, admin, "http://evil.example/changes"); w.Code != http.StatusMisdirectedRequest {
		t.Errorf("/changes under a foreign Host: %d", w.Code)
	}

	tick <- time.Now()
	select {
	case evs := <-got:
		if len(evs) != 1 || evs[0].Signal != "robots" || evs[0].Severity != watch.Critical {
			t.Errorf("webhook got %+v", evs)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the webhook got nothing")
	}
}

// A remembered page that starts answering 500 is a status change, from
// status-only observations (no head is read on an error).
func TestWatchStatusLeaves2xx(t *testing.T) {
	u := &flipUpstream{}
	p := watchProxy(t, u, "", nil)
	get(t, p, "http://notes.example/page")
	u.status.Store(500)
	get(t, p, "http://notes.example/page")
	get(t, p, "http://notes.example/page")
	evs := p.watcher().Events(watch.Critical)
	if len(evs) != 1 || evs[0].Signal != "status" || evs[0].After != "500" {
		t.Fatalf("events %+v, want one critical status change to 500", evs)
	}
	// An asset never answered with a head takes no room.
	get(t, p, "http://notes.example/missing.png")
	if n := p.watcher().Pages(); n != 1 {
		t.Errorf("%d pages remembered, want 1", n)
	}
}

// A reload with the same [watch] keeps the watcher and its memory; one
// that changes it builds a new one; /changes is 404 with [watch] off.
func TestWatchReload(t *testing.T) {
	u := &flipUpstream{}
	p := watchProxy(t, u, "", nil)
	get(t, p, "http://notes.example/page")
	w0 := p.watcher()
	cfg := p.Config()
	if err := p.Swap(cfg); err != nil {
		t.Fatal(err)
	}
	if p.watcher() != w0 || w0.Pages() != 1 {
		t.Errorf("a reload with the same [watch] rebuilt the watcher")
	}
	c2 := *cfg
	c2.Watch.Confirm = 3
	if err := p.Swap(&c2); err != nil {
		t.Fatal(err)
	}
	if p.watcher() == w0 || p.watcher().Pages() != 0 {
		t.Errorf("a changed [watch] kept the old watcher")
	}
	c3 := *cfg
	c3.Watch.Enabled = false
	if err := p.Swap(&c3); err != nil {
		t.Fatal(err)
	}
	if w := get(t, p.Admin(), "http://127.0.0.1/changes"); w.Code != 404 {
		t.Errorf("/changes with [watch] off: %d", w.Code)
	}
	if _, err := p.reg.Gather(); err != nil {
		t.Errorf("/metrics after the rebuilds: %v", err)
	}
}

// watchMetricsCounter is the current watcher's counter child.
func (p *Proxy) changesCount(t *testing.T, signal, severity string) float64 {
	t.Helper()
	mfs, err := p.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "headgate_upstream_changes_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, lp := range m.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			if l["signal"] == signal && l["severity"] == severity {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no headgate_upstream_changes_total{%s,%s}", signal, severity)
	return 0
}

// The inspector lists the page's changes, under the path as it arrived
// (percent-encoded) and its query.
func TestWatchInspector(t *testing.T) {
	u := &flipUpstream{}
	p := watchProxy(t, u, "", nil)
	get(t, p, "http://notes.example/caf%C3%A9?x=1")
	u.noindex.Store(true)
	get(t, p, "http://notes.example/caf%C3%A9?x=1")
	get(t, p, "http://notes.example/caf%C3%A9?x=1")
	w := get(t, p.Admin(), "http://127.0.0.1/inspect?path=/caf%25C3%25A9%3Fx%3D1")
	if !strings.Contains(w.Body.String(), `id="upstream-changes"`) || !strings.Contains(w.Body.String(), "noindex") {
		t.Errorf("the inspector shows no upstream change:\n%s", w.Body)
	}
	w = get(t, p.Admin(), "http://127.0.0.1/inspect?path=/caf%25C3%25A9%3Fx%3D1&format=json")
	if !strings.Contains(w.Body.String(), `"upstream_changes"`) {
		t.Errorf("the inspector's JSON has no upstream_changes:\n%s", w.Body)
	}
}

// The watcher reads the upstream's X-Robots-Tag as the upstream sent it:
// staging's `noindex, nofollow`, which headgate puts on every response,
// is no change of the upstream's.
func TestWatchReadsUpstreamRobots(t *testing.T) {
	u := &flipUpstream{}
	p := watchProxy(t, u, "", nil)
	get(t, p, "http://notes.example/page")
	staging := *p.Config()
	staging.Site.Mode = rules.ModeStaging
	if err := p.Swap(&staging); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		w := get(t, p, "http://notes.example/page")
		if !strings.Contains(w.Header().Get("X-Robots-Tag"), "noindex") {
			t.Fatalf("staging served X-Robots-Tag %q", w.Header().Get("X-Robots-Tag"))
		}
	}
	if evs := p.watcher().Events(""); len(evs) != 0 {
		t.Errorf("headgate's own robots header was taken for the upstream's: %+v", evs)
	}
}
