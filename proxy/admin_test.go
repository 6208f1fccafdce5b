package proxy

import (
	"bufio"
	"bytes"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestAdminHost: the admin listener answers only a Host that is an IP
// literal, localhost or a name in server.admin_hosts (SPEC §23), on every path; a
// DNS-rebinding name gets 421 and a log line with the Host quoted.
func TestAdminHost(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "<html><head><title>x</title></head><body>x</body></html>")
	}))
	t.Cleanup(up.Close)
	var logs bytes.Buffer
	p, err := New(testConfig(t, up.URL, "[server]\nadmin_hosts = [\"Headgate-Admin.internal\", \"ops.example.\"]\n\n"+testRules), Options{
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	adm := httptest.NewServer(p.Admin())
	t.Cleanup(adm.Close)

	paths := []string{"/metrics", "/healthz", "/readyz", "/inspect", "/inspect?path=/notes/3", "/debug/pprof/", "/no-such-page"}
	for _, tc := range []struct {
		host string
		ok   bool
	}{
		{"evil.example", false},
		{"evil.example:9090", false},
		{"127.0.0.1.rebind.evil.example:9090", false}, // a rebinding name that resolves to 127.0.0.1
		{"7f000001.c0a80001.rbndr.us:9090", false},
		{"localhost.evil.example", false},
		{"headgate-admin.internal.evil.example", false},
		{"[127.0.0.1]", false},    // no v4 in brackets
		{"::1", false},            // v6 without brackets is no Host
		{"localhost:http", false}, // a port is digits
		{"127.0.0.1", true},
		{"127.0.0.1:9090", true},
		{"[::1]:9090", true},
		{"[::1]", true},
		{"10.1.2.3:9090", true}, // the kubelet's probe and a ServiceMonitor's scrape: the pod's IP
		{"localhost", true},
		{"LOCALHOST:9090", true},
		{"localhost.", true},
		{"headgate-admin.internal", true},
		{"HEADGATE-ADMIN.internal:9090", true},
		{"ops.example", true},
	} {
		for _, path := range paths {
			req, err := http.NewRequest(http.MethodGet, adm.URL+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = tc.host
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("%s %s: %v", tc.host, path, err)
			}
			body, _ := io.ReadAll(io.LimitReader(res.Body, 120))
			res.Body.Close()
			if got := res.StatusCode != http.StatusMisdirectedRequest; got != tc.ok {
				t.Errorf("Host %q, %s: %d %q; want answered=%v", tc.host, path, res.StatusCode, body, tc.ok)
			}
			if !tc.ok && (!strings.Contains(string(body), "admin_hosts") || res.Header.Get("Content-Type") != "text/plain; charset=utf-8") {
				t.Errorf("Host %q, %s: the 421 says %q (%s)", tc.host, path, body, res.Header.Get("Content-Type"))
			}
		}
	}
	// The first refusal is logged (the rest of the second's are counted:
	// TestAdminMisdirectedFlood).
	if !strings.Contains(logs.String(), `host="\"evil.example\""`) {
		t.Errorf("no log line names the refused Host, quoted:\n%s", logs.String())
	}

	// HTTP/1.0 with no Host at all: nothing a browser sends.
	for _, tc := range []struct{ req, want string }{
		{"GET /healthz HTTP/1.0\r\n\r\n", "HTTP/1.0 200"},
		{"GET /healthz HTTP/1.0\r\nHost: evil.example\r\n\r\n", "HTTP/1.0 421"},
		{"GET /metrics HTTP/1.1\r\nHost: \x1b[31mred\r\nConnection: close\r\n\r\n", "HTTP/1.1 400"}, // net/http refuses it first
	} {
		c, err := net.Dial("tcp", adm.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, tc.req)
		line, _ := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if !strings.HasPrefix(line, tc.want) {
			t.Errorf("%q: %q, want %s", tc.req, line, tc.want)
		}
	}
}

// TestAdminHostEscapesLog: a Host with control bytes reaches the log only
// quoted.
func TestAdminHostEscapesLog(t *testing.T) {
	var logs bytes.Buffer
	p, err := New(testConfig(t, "http://127.0.0.1:9", testRules), Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	g := p.Admin()
	r := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	r.Host = "evil.example\n\x1b[2Jlevel=INFO msg=forged"
	w := httptest.NewRecorder()
	g.ServeHTTP(w, r)
	if w.Code != http.StatusMisdirectedRequest {
		t.Fatalf("%d", w.Code)
	}
	if strings.Count(logs.String(), "\n") != 1 || strings.ContainsRune(logs.String(), 0x1b) {
		t.Errorf("the Host's bytes reach the log raw:\n%q", logs.String())
	}
}

// TestAdminMisdirectedFlood: a client sending request after request with
// a foreign Host gets its 421s, each counted in
// headgate_admin_misdirected_total, but the log gets one line a second;
// the next line says how many were left out.
func TestAdminMisdirectedFlood(t *testing.T) {
	var logs syncBuffer
	p, err := New(testConfig(t, "http://127.0.0.1:9", testRules), Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	now := time.Unix(1_800_000_000, 0)
	p.misdirected.now = func() time.Time { return now }
	g := p.Admin()
	refuse := func() bool {
		r := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		r.Host = "evil.example"
		w := httptest.NewRecorder()
		g.ServeHTTP(w, r)
		if w.Code != http.StatusMisdirectedRequest {
			t.Errorf("%d", w.Code)
			return false
		}
		return true
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 10_000 / 4 {
				if !refuse() {
					return
				}
			}
		})
	}
	wg.Wait()
	if n := strings.Count(logs.String(), "\n"); n != 1 {
		t.Fatalf("%d log lines for 10,000 refused requests in one second, want 1", n)
	}
	if n := testutil.ToFloat64(p.m.misdirected); n != 10_000 {
		t.Errorf("headgate_admin_misdirected_total = %v, want 10000", n)
	}
	now = now.Add(time.Second)
	refuse() // one, after the flood: every suppression before it is counted
	// Every refused request is either a line or counted in a later
	// line's suppressed: 9,999 in all. A refusal racing the first line's
	// own (its compare-and-swap lost before the winner read the count)
	// is counted in the first line, so the split between the two lines
	// varies; the sum does not.
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	sum := 0
	for _, l := range lines {
		_, v, ok := strings.Cut(l, "suppressed=")
		v, _, _ = strings.Cut(v, " ")
		n, err := strconv.Atoi(v)
		if !ok || err != nil {
			t.Fatalf("no suppressed count in %q", l)
		}
		sum += n
	}
	if len(lines) != 2 || sum != 9999 {
		t.Errorf("a second later: want one more line, the two saying suppressed=9999 together:\n%s", logs.String())
	}
}
