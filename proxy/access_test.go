package proxy

import (
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/headgate/headgate/internal/hgtest"
)

// The access log line names the client, its user agent, the rule set and
// the outcome.
func TestAccessLogLine(t *testing.T) {
	up := httptest.NewServer(htmlPage(testPage))
	defer up.Close()
	var logs hgtest.LogBuffer
	cfg := testConfig(t, up.URL, "[server]\naccess_log = true\n\n"+testRules+`
[[rule]]
match = "/p"
robots = { index = false }
`)
	p, err := New(cfg, Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(p)
	defer front.Close()
	req, _ := http.NewRequest("GET", front.URL+"/p?utm_source=x", nil)
	req.Header.Set("User-Agent", "Googlebot/2.1 \"quoted\"")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	front.Close() // the request is finished and logged
	var line map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "request" {
			line = m
		}
	}
	if line == nil {
		t.Fatalf("no access log line in:\n%s", logs.String())
	}
	if line["client"] != "127.0.0.1" || line["user_agent"] != "Googlebot/2.1 \"quoted\"" || line["outcome"] != "rewritten" {
		t.Errorf("access log %v", line)
	}
	if rs, _ := line["rules"].([]any); len(rs) != 2 || rs[0] != "/*" || rs[1] != "/p" {
		t.Errorf("rules %v", line["rules"])
	}
}

func TestClientAddr(t *testing.T) {
	for in, want := range map[string]string{
		"203.0.113.7:5555": "203.0.113.7",
		"[2001:db8::1]:80": "2001:db8::1",
		"no-port":          "no-port",
		"":                 "",
	} {
		if got := clientAddr(&http.Request{RemoteAddr: in}); got != want {
			t.Errorf("clientAddr(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestInspectURL(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:9090": "http://127.0.0.1:9090/inspect",
		"0.0.0.0:9090":   "http://localhost:9090/inspect",
		"[::]:9090":      "http://localhost:9090/inspect",
		"[::1]:9090":     "http://[::1]:9090/inspect",
	} {
		a, err := net.ResolveTCPAddr("tcp", in)
		if err != nil {
			t.Fatal(err)
		}
		if got := inspectURL(a); got != want {
			t.Errorf("inspectURL(%s) = %q, want %q", in, got, want)
		}
	}
}
