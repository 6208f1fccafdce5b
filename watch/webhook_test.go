package watch

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// receiver is a webhook on loopback that answers with the statuses it is
// given, in turn (then 200), and keeps the bodies it got.
type receiver struct {
	mu       sync.Mutex
	statuses []int
	bodies   []string
	got      chan struct{}
}

func newReceiver(t *testing.T, statuses ...int) (*receiver, *httptest.Server) {
	r := &receiver{statuses: statuses, got: make(chan struct{}, 100)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		st := 200
		if len(r.statuses) > 0 {
			st, r.statuses = r.statuses[0], r.statuses[1:]
		}
		r.bodies = append(r.bodies, string(b))
		r.mu.Unlock()
		if req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/json" {
			st = 400
		}
		w.WriteHeader(st)
		r.got <- struct{}{}
	}))
	t.Cleanup(srv.Close)
	return r, srv
}

func (r *receiver) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.bodies...)
}

func ev(url, signal, after string) Event {
	return Event{Time: time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC), URL: url, Signal: signal, Before: "", After: after, Severity: Critical}
}

// now is an After that never waits.
func now(time.Duration) <-chan time.Time {
	c := make(chan time.Time, 1)
	c <- time.Time{}
	return c
}

func TestSenderBatches(t *testing.T) {
	rc, srv := newReceiver(t)
	tick := make(chan time.Time)
	s, err := NewSender(SenderOptions{URL: srv.URL, Tick: tick, After: now})
	if err != nil {
		t.Fatal(err)
	}
	s.Send(ev("https://a.example/1", "title", "One"))
	s.Send(ev("https://a.example/2", "robots", "noindex"))
	tick <- time.Time{} // the window closes: one POST of both
	<-rc.got
	s.Send(ev("https://a.example/3", "status", "500"))
	if err := s.Close(context.Background()); err != nil { // flushes the last one
		t.Fatal(err)
	}
	b := rc.all()
	if len(b) != 2 {
		t.Fatalf("%d posts: %q", len(b), b)
	}
	var first []Event
	if err := json.Unmarshal([]byte(b[0]), &first); err != nil || len(first) != 2 || first[0].After != "One" || first[1].Signal != "robots" {
		t.Errorf("first batch %s (%v)", b[0], err)
	}
	if !strings.Contains(b[1], `"after":"500"`) {
		t.Errorf("last batch %s", b[1])
	}
	if sent, dropped, failed := s.Stats(); sent != 3 || dropped != 0 || failed != 0 {
		t.Errorf("stats %d %d %d", sent, dropped, failed)
	}
	s.Send(ev("x", "title", "late")) // after Close: dropped quietly
}

func TestSenderRetries(t *testing.T) {
	rc, srv := newReceiver(t, 500, 503, 200)
	var waits []time.Duration
	s, _ := NewSender(SenderOptions{URL: srv.URL, Tick: make(chan time.Time), After: func(d time.Duration) <-chan time.Time {
		waits = append(waits, d)
		return now(d)
	}})
	s.Send(ev("u", "title", "T"))
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(rc.all()); n != 3 {
		t.Errorf("%d attempts, want 3", n)
	}
	if len(waits) != 2 || waits[0] != time.Second || waits[1] != 2*time.Second {
		t.Errorf("backoff %v", waits)
	}
	if sent, _, failed := s.Stats(); sent != 1 || failed != 0 {
		t.Errorf("sent %d failed %d", sent, failed)
	}
}

func TestSenderGivesUp(t *testing.T) {
	rc, srv := newReceiver(t, 500, 500, 500, 500, 500, 500)
	s, _ := NewSender(SenderOptions{URL: srv.URL, Tick: make(chan time.Time), After: now, Attempts: 3})
	s.Send(ev("u", "title", "T"))
	s.Close(context.Background())
	if n := len(rc.all()); n != 3 {
		t.Errorf("%d attempts, want 3", n)
	}
	if _, _, failed := s.Stats(); failed != 1 {
		t.Errorf("failed %d", failed)
	}
	// A 4xx or a redirect is not retried.
	rc2, srv2 := newReceiver(t, 404)
	s2, _ := NewSender(SenderOptions{URL: srv2.URL, Tick: make(chan time.Time), After: now})
	s2.Send(ev("u", "title", "T"))
	s2.Close(context.Background())
	if n := len(rc2.all()); n != 1 {
		t.Errorf("404: %d attempts", n)
	}
	redir := httptest.NewServer(http.RedirectHandler(srv2.URL, http.StatusFound))
	defer redir.Close()
	s3, _ := NewSender(SenderOptions{URL: redir.URL, Tick: make(chan time.Time), After: now})
	s3.Send(ev("u", "title", "T"))
	s3.Close(context.Background())
	if n := len(rc2.all()); n != 1 {
		t.Errorf("the redirect was followed")
	}
	if _, _, failed := s3.Stats(); failed != 1 {
		t.Errorf("redirect not failed")
	}
}

func TestSenderQueueBound(t *testing.T) {
	rc, srv := newReceiver(t)
	s, _ := NewSender(SenderOptions{URL: srv.URL, Tick: make(chan time.Time), After: now, QueueSize: 3})
	for _, a := range []string{"1", "2", "3", "4", "5"} {
		s.Send(ev("u", "title", a))
	}
	s.Close(context.Background())
	var got []Event
	json.Unmarshal([]byte(rc.all()[0]), &got)
	if len(got) != 3 || got[0].After != "3" || got[2].After != "5" {
		t.Errorf("sent %+v", got)
	}
	if _, dropped, _ := s.Stats(); dropped != 2 {
		t.Errorf("dropped %d", dropped)
	}
}

// TestSenderHangs: a receiver that never answers holds Close only until
// its deadline.
func TestSenderHangs(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	s, _ := NewSender(SenderOptions{URL: srv.URL, Tick: make(chan time.Time), After: now})
	s.Send(ev("u", "title", "T"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the deadline has passed
	if err := s.Close(ctx); err == nil {
		t.Errorf("Close reported no error for an unsent batch")
	}
}

func TestSlackFormat(t *testing.T) {
	rc, srv := newReceiver(t)
	s, _ := NewSender(SenderOptions{URL: srv.URL, Format: FormatSlack, Tick: make(chan time.Time), After: now})
	s.Send(ev("https://a.example/p?x=<1>", "title", "<!channel> & <https://evil.example|click>\nsecond line"))
	s.Send(Event{URL: "https://a.example/q", Signal: "status", Before: "200", After: "500", Severity: Critical})
	s.Close(context.Background())
	var msg map[string]string
	if err := json.Unmarshal([]byte(rc.all()[0]), &msg); err != nil || len(msg) != 1 {
		t.Fatalf("%s: %v", rc.all()[0], err)
	}
	want := "[critical] https://a.example/p?x=&lt;1&gt;: title (none) → “&lt;!channel&gt; &amp; &lt;https://evil.example|click&gt; second line”\n" +
		"[critical] https://a.example/q: status “200” → “500”"
	if msg["text"] != want {
		t.Errorf("text\n%s\nwant\n%s", msg["text"], want)
	}
}

// TestSenderHangsInFlight: a batch under way to a receiver that never
// answers is cut when Close's deadline ends.
func TestSenderHangsInFlight(t *testing.T) {
	release, got := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(got)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	tick := make(chan time.Time)
	s, _ := NewSender(SenderOptions{URL: srv.URL, Tick: tick, After: now})
	s.Send(ev("u", "title", "T"))
	tick <- time.Time{}
	<-got // the loop is waiting on the receiver
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Close(ctx); err == nil {
		t.Errorf("Close reported no error for a batch cut short")
	}
	if _, _, failed := s.Stats(); failed != 1 {
		t.Errorf("failed %d", failed)
	}
}
