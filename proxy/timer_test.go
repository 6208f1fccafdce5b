package proxy

import (
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"
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

// A clock whose Stop came too late is never reused: its callback may still
// cancel, and must not cancel a later request. One stopped in time is.
func TestHeadTimerReuse(t *testing.T) {
	causes := make(chan error, 1)
	rs := &reqState{cancel: func(err error) { causes <- err }}
	ht := startHeadTimer(rs, time.Millisecond)
	if err := <-causes; !errors.Is(err, errHeaderTimeout) {
		t.Fatalf("header phase cancelled with %v", err)
	}
	ht.stop()
	if !ht.fired {
		t.Fatal("a clock that fired is not marked so")
	}
	ht.restart(phaseHead, time.Millisecond)
	if ht.armed {
		t.Error("a fired clock was started again")
	}
	ht.release()
	if ht.rs.Load() != rs {
		t.Error("a fired clock was reset for reuse")
	}

	rs2 := &reqState{cancel: func(err error) { causes <- err }}
	ht2 := startHeadTimer(rs2, time.Hour)
	ht2.restart(phaseHead, time.Millisecond)
	if err := <-causes; !errors.Is(err, errHeadTimeout) {
		t.Fatalf("head phase cancelled with %v", err)
	}
	ht3 := startHeadTimer(rs2, time.Hour)
	ht3.release()
	if ht3.fired || ht3.rs.Load() != nil {
		t.Errorf("a clock stopped in time: fired %v, still bound %v", ht3.fired, ht3.rs.Load() != nil)
	}
	ht3.fire() // unbound: cancels nothing
	select {
	case err := <-causes:
		t.Errorf("an unbound clock cancelled with %v", err)
	default:
	}
}

// reqCtx answers reqStateOf and keeps derived contexts on the standard
// library's fast path: a child registers with the embedded cancelCtx, where
// a context type it did not recognize would cost a goroutine per child.
func TestReqCtx(t *testing.T) {
	rs := &reqState{}
	parent, cancel := context.WithCancelCause(context.Background())
	rs.ctx = reqCtx{Context: parent, rs: rs}
	ctx := context.WithValue(&rs.ctx, struct{ k int }{1}, "v")
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
