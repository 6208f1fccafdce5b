package proxy

import (
	"bufio"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The upstream's header fields reach the client as they came, each once
// and its values in order, whatever became of the page: rewritten,
// passed through, a 304, a HEAD; and under staging the noindex the
// response gets comes once. modifyResponse hands the fields over itself
// (handOver) instead of leaving them to ReverseProxy's copy.
func TestHeadersHandedOver(t *testing.T) {
	for _, site := range []string{"", "mode = \"staging\"\n"} {
		_, front := newTestProxy(t, func(w http.ResponseWriter, r *http.Request) {
			h := w.Header()
			h["Set-Cookie"] = []string{"a=1; Path=/", "b=2; Path=/"}
			h["X-Multi"] = []string{"one", "two", "three"}
			h.Set("Cache-Control", "max-age=60")
			h.Set("X-Empty", "")
			switch r.URL.Path {
			case "/page":
				h.Set("Content-Type", "text/html; charset=utf-8")
				io.WriteString(w, testPage)
			case "/data":
				h.Set("Content-Type", "application/json")
				io.WriteString(w, `{"a":1}`)
			case "/cached":
				w.WriteHeader(http.StatusNotModified)
			}
		}, site+testRules)
		for _, tc := range []struct{ method, path string }{
			{"GET", "/page"}, {"HEAD", "/page"}, {"GET", "/data"}, {"GET", "/cached"},
		} {
			req, _ := http.NewRequest(tc.method, front.URL+tc.path, nil)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			h := res.Header
			what := strings.TrimSpace(site) + " " + tc.method + " " + tc.path
			for k, want := range map[string][]string{
				"Set-Cookie":    {"a=1; Path=/", "b=2; Path=/"},
				"X-Multi":       {"one", "two", "three"},
				"Cache-Control": {"max-age=60"},
				"X-Empty":       {""},
			} {
				if got := h[k]; !slices.Equal(got, want) {
					t.Errorf("%s: %s: got %q, want %q", what, k, got, want)
				}
			}
			if tc.path != "/cached" {
				if got := h["Content-Type"]; len(got) != 1 {
					t.Errorf("%s: Content-Type %q, want one", what, got)
				}
			}
			if site != "" {
				if got := h["X-Robots-Tag"]; !slices.Equal(got, []string{stagingRobots}) {
					t.Errorf("%s: X-Robots-Tag %q, want one %q", what, got, stagingRobots)
				}
			}
		}
	}
}

// An event stream is flushed to the client as the upstream writes it, also
// when it announces a length: ReverseProxy decides that from the
// response's Content-Type, after ModifyResponse, which therefore leaves
// that field on the response. Without the flush the client would see no
// event until the upstream finished, and the upstream here finishes only
// once the client has read the first event.
func TestEventStreamWithLengthFlushed(t *testing.T) {
	read := make(chan struct{})
	first, second := "data: one\n\n", "data: two\n\n"
	_, front := newTestProxy(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Length", strconv.Itoa(len(first)+len(second)))
		io.WriteString(w, first)
		w.(http.Flusher).Flush()
		select {
		case <-read:
		case <-r.Context().Done():
			return
		case <-time.After(10 * time.Second):
			return // the test has failed by then; do not hold the server
		}
		io.WriteString(w, second)
	}, testRules)
	res, err := http.Get(front.URL + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	got := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(res.Body).ReadString('\n')
		got <- line
	}()
	select {
	case line := <-got:
		if line != "data: one\n" {
			t.Fatalf("first line %q", line)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the first event did not arrive before the stream ended: not flushed")
	}
	close(read)
}
