package proxy

import (
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// An upstream that sends no response headers within upstream_timeout gets
// a 504 (the request's clock, not the transport's, keeps that time).
func TestHeaderTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	_, front := newTestProxy(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}, "[server]\nupstream_timeout = \"300ms\"\n"+testRules)
	t0 := time.Now()
	res, err := (&http.Client{Timeout: 5 * time.Second}).Get(front.URL + "/p")
	if err != nil {
		t.Fatal(err) // a client timeout: headgate kept no clock
	}
	res.Body.Close()
	if res.StatusCode != http.StatusGatewayTimeout {
		t.Errorf("status %d, want 504", res.StatusCode)
	}
	if d := time.Since(t0); d < 300*time.Millisecond || d > 3*time.Second {
		t.Errorf("took %v with upstream_timeout 300ms", d)
	}
}

// The sitemap's fetch keeps upstream_timeout for the response headers too,
// and says so; a fetch that got its headers is not cut by the clock
// however long its body takes.
func TestFetchHeaderTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	p, _ := newTestProxy(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow-body" {
			io.WriteString(w, "first ")
			w.(http.Flusher).Flush()
			time.Sleep(500 * time.Millisecond) // past upstream_timeout, after the headers
			io.WriteString(w, "second")
			return
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}, "[server]\nupstream_timeout = \"200ms\"\n"+testRules)

	done := make(chan error, 1)
	go func() {
		_, err := p.Fetch(context.Background(), "/hang")
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, errHeaderTimeout) || !strings.Contains(err.Error(), "/hang") {
			t.Errorf("fetch error %v, want one that names the path and errHeaderTimeout", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("fetch of an upstream that never answers did not end within 5s (upstream_timeout 200ms)")
	}

	rc, err := p.Fetch(context.Background(), "/slow-body")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || string(b) != "first second" {
		t.Errorf("slow body: %q, %v", b, err)
	}
}

// The clocks: a deadline that passes cancels its request with its phase's
// cause; a stopped clock cancels nothing; a clock that ends sooner than the
// one the sweeper waits for wakes it; the list stays in deadline order.
func TestClocks(t *testing.T) {
	d := newDeadlines()
	defer d.close()
	type req struct {
		rs     *reqState
		causes chan error
	}
	newReq := func() req {
		r := req{rs: &reqState{}, causes: make(chan error, 1)}
		r.rs.cancel = func(err error) { r.causes <- err }
		r.rs.clock.rs = r.rs
		return r
	}
	wait := func(t *testing.T, r req, want error) {
		t.Helper()
		select {
		case err := <-r.causes:
			if !errors.Is(err, want) {
				t.Fatalf("cancelled with %v, want %v", err, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("not cancelled within 5s (want %v)", want)
		}
	}

	long := newReq()
	d.start(&long.rs.clock, phaseHeader, time.Hour) // the sweeper now waits an hour
	short := newReq()
	d.start(&short.rs.clock, phaseHead, time.Millisecond)
	wait(t, short, errHeadTimeout) // a sooner deadline woke it

	stopped, later := newReq(), newReq()
	d.start(&stopped.rs.clock, phaseHeader, 10*time.Millisecond)
	d.stop(&stopped.rs.clock)
	d.start(&later.rs.clock, phaseHeader, 20*time.Millisecond)
	wait(t, later, errHeaderTimeout)
	select {
	case err := <-stopped.causes:
		t.Errorf("a stopped clock cancelled its request: %v", err)
	default:
	}

	// Restarting moves a clock; the list is in deadline order.
	a, b, c := newReq(), newReq(), newReq()
	d.start(&a.rs.clock, phaseHeader, 3*time.Hour)
	d.start(&b.rs.clock, phaseHeader, 2*time.Hour)
	d.start(&c.rs.clock, phaseHeader, 4*time.Hour)
	d.start(&a.rs.clock, phaseHead, 90*time.Minute)
	d.mu.Lock()
	var order []*reqState
	for k := d.head; k != nil; k = k.next {
		order = append(order, k.rs)
		if k.next != nil && k.next.prev != k {
			t.Error("broken back link")
		}
	}
	tail := d.tail
	d.mu.Unlock()
	if want := []*reqState{long.rs, a.rs, b.rs, c.rs}; !slices.Equal(order, want) || tail != &c.rs.clock {
		t.Errorf("list order wrong: %d entries, tail is c: %v", len(order), tail == &c.rs.clock)
	}
	for _, r := range []req{long, a, b, c} {
		d.stop(&r.rs.clock)
		d.stop(&r.rs.clock) // twice: no harm
	}
	d.mu.Lock()
	empty := d.head == nil && d.tail == nil
	d.mu.Unlock()
	if !empty {
		t.Error("list not empty after every clock stopped")
	}
}

// reqCtx answers reqStateOf and keeps derived contexts on the standard
// library's fast path: a child registers with the embedded cancelCtx, where
// a context type it did not recognize would cost a goroutine per child.
func TestReqCtx(t *testing.T) {
	rs := &reqState{}
	parent, cancel := context.WithCancelCause(context.Background())
	ctx := context.WithValue(&reqCtx{Context: parent, rs: rs}, struct{ k int }{1}, "v")
	if reqStateOf(ctx) != rs {
		t.Fatal("reqStateOf does not find the state through a derived context")
	}
	before := runtime.NumGoroutine()
	var stops []context.CancelFunc
	for range 200 {
		_, stop := context.WithCancel(ctx)
		stops = append(stops, stop)
	}
	if n := runtime.NumGoroutine() - before; n > 20 {
		t.Errorf("200 children of a reqCtx started %d goroutines", n)
	}
	child, stop := context.WithCancel(ctx)
	defer stop()
	cancel(errHeadTimeout)
	<-child.Done() // cancelling the embedded context reaches the children
	if !errors.Is(context.Cause(child), errHeadTimeout) {
		t.Errorf("child's cause %v", context.Cause(child))
	}
	for _, s := range stops {
		s()
	}
}

// The wait for the response headers starts once the request's body is
// written, as the transport's ResponseHeaderTimeout did: an upload slower
// than upstream_timeout is not cut, and an upstream that reads the body
// and then says nothing still gets a 504.
func TestHeaderTimeoutAfterUpload(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	_, front := newTestProxy(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/hang" {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		io.WriteString(w, strconv.FormatInt(n, 10))
	}, "[server]\nupstream_timeout = \"300ms\"\n"+testRules)
	client := &http.Client{Timeout: 10 * time.Second}

	// The body comes in three parts with 250 ms between them: 500 ms in all.
	pr, pw := io.Pipe()
	go func() {
		for i := range 3 {
			if i > 0 {
				time.Sleep(250 * time.Millisecond) // the client's pace is the point
			}
			pw.Write([]byte("part of an upload "))
		}
		pw.Close()
	}()
	res, err := client.Post(front.URL+"/upload", "text/plain", pr)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || string(body) != "54" {
		t.Errorf("slow upload: status %d, body %q; want 200 and the 54 bytes counted", res.StatusCode, body)
	}

	t0 := time.Now()
	res, err = client.Post(front.URL+"/hang", "text/plain", strings.NewReader("a body"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusGatewayTimeout {
		t.Errorf("upstream silent after the body: status %d, want 504", res.StatusCode)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("took %v with upstream_timeout 300ms", d)
	}
}

// The sweeper belongs to its Proxy: New starts it, Close stops it (and
// waits for it), and a second Close does nothing.
func TestCloseStopsClocks(t *testing.T) {
	p, _ := newTestProxy(t, func(w http.ResponseWriter, r *http.Request) {}, testRules)
	r := &reqState{}
	r.cancel = func(error) {}
	r.clock.rs = r
	p.clocks.start(&r.clock, phaseHeader, time.Hour) // the sweeper waits on its timer
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.clocks.done:
	default:
		t.Fatal("Close returned with the sweeper still running")
	}
	p.Close()

	d := newDeadlines() // a sweeper with nothing to wait for
	d.close()
	select {
	case <-d.done:
	default:
		t.Fatal("close returned with the idle sweeper still running")
	}
}
