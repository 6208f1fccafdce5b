package proxy

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/headgate/headgate/watch"
)

// downUpstream serves testPage until the test takes it down: then it
// drops each connection unanswered (headgate answers 502) or, with slow,
// holds each request until headgate gives up on it (504).
type downUpstream struct {
	down, slow atomic.Bool
}

func (u *downUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case u.slow.Load():
		<-r.Context().Done() // headgate's upstream_timeout ends it
		return
	case u.down.Load():
		c, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			c.Close()
		}
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	io.WriteString(w, testPage)
}

// syncBuffer is a log sink the handler's goroutines may share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// headgate's own 502 and 504, answered when the upstream is down or too
// slow, are the page's status as the record says it went out: a page that
// flips from 200 to them raises a critical status change after confirm
// responses (the metric, the log line, /changes, the webhook), and not
// before.
func TestWatchSeesHeadgatesOwnGatewayErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		want int
		take func(u *downUpstream)
	}{
		{"502 upstream down", http.StatusBadGateway, func(u *downUpstream) { u.down.Store(true) }},
		{"504 upstream timeout", http.StatusGatewayTimeout, func(u *downUpstream) { u.slow.Store(true) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := make(chan []watch.Event, 4)
			hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var evs []watch.Event
				if err := json.NewDecoder(r.Body).Decode(&evs); err != nil {
					t.Errorf("webhook body: %v", err)
				}
				got <- evs
			}))
			t.Cleanup(hook.Close)
			tick := make(chan time.Time)
			u := &downUpstream{}
			up := httptest.NewServer(u)
			t.Cleanup(up.Close)
			cfg := testConfig(t, up.URL, watchRules+"\n[watch]\nenabled = true\nconfirm = 2\nwebhook = "+quote(hook.URL)+"\n")
			cfg.Server.UpstreamTimeout = 200 * time.Millisecond
			var logs syncBuffer
			p, err := New(cfg, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), WebhookTick: tick})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Close() })

			if w := get(t, p, "http://notes.example/page"); w.Code != 200 {
				t.Fatalf("baseline: %d", w.Code)
			}
			tc.take(u)
			if w := get(t, p, "http://notes.example/page"); w.Code != tc.want {
				t.Fatalf("upstream down: headgate answered %d, want %d", w.Code, tc.want)
			}
			if n := len(p.watcher().Events("")); n != 0 {
				t.Fatalf("%d events below confirm", n)
			}
			get(t, p, "http://notes.example/page")
			evs := p.watcher().Events(watch.Critical)
			if len(evs) != 1 || evs[0].Signal != "status" || evs[0].Before != "200" || evs[0].After != strconv.Itoa(tc.want) {
				t.Fatalf("events %+v, want one critical status change 200 → %d", evs, tc.want)
			}
			if n := p.changesCount(t, "status", "critical"); n != 1 {
				t.Errorf("headgate_upstream_changes_total{status,critical} = %v", n)
			}
			var js []watch.Event
			if err := json.Unmarshal(get(t, p.Admin(), "http://127.0.0.1/changes?format=json&severity=critical").Body.Bytes(), &js); err != nil || len(js) != 1 || js[0].After != strconv.Itoa(tc.want) {
				t.Errorf("/changes JSON: %v %+v", err, js)
			}
			if !strings.Contains(logs.String(), "after="+strconv.Itoa(tc.want)) {
				t.Errorf("no change log line with after=%d:\n%s", tc.want, logs.String())
			}
			tick <- time.Now()
			select {
			case evs := <-got:
				if len(evs) != 1 || evs[0].Signal != "status" || evs[0].After != strconv.Itoa(tc.want) || evs[0].Severity != watch.Critical {
					t.Errorf("webhook got %+v", evs)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the webhook got nothing")
			}
		})
	}
}
