package indexnow

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/headgate/headgate/internal/heappeak"
	"github.com/headgate/headgate/rules"
)

func config(t *testing.T, endpoint string) *rules.Config {
	t.Helper()
	cfg, err := rules.Parse("headgate.toml", []byte(`[server]
upstream = "http://127.0.0.1:1"
[site]
base_url = "https://notes.example"
[[rule]]
match = "/"
sitemap = true
[indexnow]
key = "abcdefgh"
endpoint = "`+endpoint+`"
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// urls is a sitemap of fixed URLs; lastmods change with gen.
func urls(locs ...string) func(context.Context, func(string, string)) error {
	return func(_ context.Context, fn func(string, string)) error {
		for _, l := range locs {
			fn(l, "2026-01-01")
		}
		return nil
	}
}

// runAll runs with -all (so that the first run submits) and fast bounds.
func runAll(t *testing.T, endpoint string, locs []string, tweak func(*Options)) (Summary, error, string) {
	t.Helper()
	state := filepath.Join(t.TempDir(), "state")
	o := Options{
		Config: config(t, endpoint), URLs: urls(locs...), State: state, All: true,
		AttemptTimeout: 300 * time.Millisecond, Attempts: 2, Backoff: 10 * time.Millisecond, MaxWait: time.Second,
	}
	if tweak != nil {
		tweak(&o)
	}
	sum, err := Run(context.Background(), o)
	return sum, err, state
}

func noState(t *testing.T, state string) {
	t.Helper()
	if _, err := os.Stat(state); err == nil {
		t.Errorf("a failed run wrote the state")
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(state), ".*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestReceiverHangs(t *testing.T) {
	release := make(chan struct{})
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		<-release
	}))
	defer srv.Close()
	defer close(release)
	start := time.Now()
	_, err, state := runAll(t, srv.URL, []string{"https://notes.example/"}, nil)
	if err == nil || !strings.Contains(err.Error(), "no answer within") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second || n.Load() != 2 {
		t.Errorf("took %v with %d attempts; want 2 bounded attempts", d, n.Load())
	}
	noState(t, state)
}

// The defaults keep a hanging receiver within 2 minutes (SPEC §17).
func TestWorstCaseDefaults(t *testing.T) {
	var o Options
	if w := o.WorstCase(); w > 2*time.Minute {
		t.Errorf("worst case with the defaults is %v, over 2 minutes", w)
	}
}

func TestReceiverGarbage(t *testing.T) {
	// 200 with a body that is not what anyone expects: 200 is success,
	// and the body is read only a little.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
		w.Write([]byte(strings.Repeat("\x00garbage\xff", 100000)))
	}))
	defer srv.Close()
	sum, err, _ := runAll(t, srv.URL, []string{"https://notes.example/"}, nil)
	if err != nil || sum.Submitted != 1 {
		t.Errorf("200 with garbage: %+v %v", sum, err)
	}

	// Not HTTP at all: a clear error, no state.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("SSH-2.0-garbage\r\n\x00\x01\x02"))
			c.Close()
		}
	}()
	_, err, state := runAll(t, "http://"+ln.Addr().String()+"/indexnow", []string{"https://notes.example/"}, nil)
	if err == nil {
		t.Fatal("a receiver that is not HTTP succeeded")
	}
	noState(t, state)
}

func TestReceiverRedirectsElsewhere(t *testing.T) {
	var other atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { other.Add(1) }))
	defer elsewhere.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/steal", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	_, err, state := runAll(t, srv.URL, []string{"https://notes.example/"}, nil)
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != 307 || !strings.Contains(err.Error(), "not followed") {
		t.Fatalf("err = %v", err)
	}
	if other.Load() != 0 {
		t.Errorf("the redirect was followed")
	}
	noState(t, state)
}

func TestOnlyBaseURLsHost(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 1<<16)
		n, _ := r.Body.Read(b)
		got = append(got, string(b[:n]))
	}))
	defer srv.Close()
	reg := prometheus.NewRegistry()
	sum, err, _ := runAll(t, srv.URL, []string{
		"https://notes.example/a", "https://evil.example/b", "http://notes.example/c", "https://notes.example.evil/d", "https://notes.example/a",
	}, func(o *Options) { o.Registerer = reg })
	if err != nil {
		t.Fatal(err)
	}
	if sum.Submitted != 1 || sum.SkippedHost != 3 || len(got) != 1 || strings.Contains(got[0], "evil") || strings.Contains(got[0], "http://") {
		t.Errorf("%+v %q", sum, got)
	}
	if v := testutil.ToFloat64(mustVec(t, reg).WithLabelValues("skipped_host")); v != 3 {
		t.Errorf("skipped_host = %v", v)
	}
}

func mustVec(t *testing.T, reg *prometheus.Registry) *prometheus.CounterVec {
	v := newMetrics(reg).urls
	if v == nil {
		t.Fatal("no metric")
	}
	return v
}

func TestRetryAfterBounds(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(503)
	}))
	defer srv.Close()
	start := time.Now()
	_, err, state := runAll(t, srv.URL, []string{"https://notes.example/"}, nil)
	if err == nil || !strings.Contains(err.Error(), "longer than this run waits") || time.Since(start) > 5*time.Second {
		t.Errorf("Retry-After: 3600: %v after %v", err, time.Since(start))
	}
	noState(t, state)

	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"", 0}, {"1", time.Second}, {"0", time.Millisecond}, {"-5", 0}, {"soon", 0},
		{"Tue, 01 Dec 2026 12:00:30 GMT", 30 * time.Second},
	} {
		if got := retryAfter(tc.in, now); got != tc.want {
			t.Errorf("retryAfter(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestBadState(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	os.WriteFile(state, []byte("not a state\n"), 0o644)
	_, err := Run(context.Background(), Options{Config: config(t, "http://127.0.0.1:1"), URLs: urls("https://notes.example/"), State: state})
	if err == nil || !strings.Contains(err.Error(), "not a headgate indexnow state file") {
		t.Errorf("err = %v", err)
	}
}

func TestSourceFails(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	_, err := Run(context.Background(), Options{
		Config: config(t, "http://127.0.0.1:1"), State: state,
		URLs: func(context.Context, func(string, string)) error { return errors.New("upstream answered 500") },
	})
	if err == nil || !strings.Contains(err.Error(), "generating the sitemap") {
		t.Errorf("err = %v", err)
	}
	noState(t, state)
}

// TestRun1M: a sitemap of 1,000,000 URLs is recorded, then 1,000 changes
// are found and submitted, with a bounded heap: the state is held as
// hashes and the URLs to submit are spooled to disk.
func TestRun1M(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: two runs over 1,000,000 URLs")
	}
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { posts.Add(1) }))
	defer srv.Close()
	state := filepath.Join(t.TempDir(), "state")
	gen := 0
	list := func(_ context.Context, fn func(string, string)) error {
		buf := make([]byte, 0, 64)
		for i := range 1000000 {
			buf = append(buf[:0], "https://notes.example/notes/"...)
			buf = strconv.AppendInt(buf, int64(i), 10)
			lm := "2026-01-01"
			if gen > 0 && i%1000 == 7 {
				lm = "2026-02-01"
			}
			fn(string(buf), lm)
		}
		return nil
	}
	o := Options{Config: config(t, srv.URL), URLs: list, State: state}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if sum, err := Run(context.Background(), o); err != nil || !sum.FirstRun || sum.URLs != 1000000 {
		t.Fatalf("first run: %+v %v", sum, err)
	}
	gen = 1
	start := time.Now()
	stopPeak := heappeak.Start()
	sum, err := Run(context.Background(), o)
	peak := stopPeak()
	if err != nil || sum.Changed != 1000 || sum.Submitted != 1000 || posts.Load() != 1 {
		t.Fatalf("second run: %+v %v, %d POSTs", sum, err, posts.Load())
	}
	runtime.ReadMemStats(&after)
	st, _ := os.Stat(state)
	growth := int64(peak) - int64(before.HeapAlloc)
	t.Logf("second run over 1,000,000 URLs: %v; state file %d MiB; peak heap growth %.1f MiB; %.0f MiB allocated over both runs",
		time.Since(start).Round(time.Millisecond), st.Size()>>20, float64(growth)/(1<<20), float64(after.TotalAlloc-before.TotalAlloc)/(1<<20))
	if growth > 128<<20 {
		t.Errorf("peak heap grew by %d MiB: the CronJob's limit is 256 MiB", growth>>20)
	}
}

// A status that is not retried (400 here) is sent once, and the error
// does not claim more attempts.
func TestRejectedOnce(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.WriteHeader(http.StatusBadRequest)
	}))
	defer srv.Close()
	_, err, state := runAll(t, srv.URL, []string{"https://notes.example/"}, nil)
	if err == nil || n.Load() != 1 || strings.Contains(err.Error(), "attempts") {
		t.Errorf("400: %d requests, error %v", n.Load(), err)
	}
	noState(t, state)
}
