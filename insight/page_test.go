package insight

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/headgate/headgate/bots"
)

func get(t *testing.T, h http.Handler, target string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
	return rec
}

func TestPageEscapes(t *testing.T) {
	c := newClock(t0)
	tr := newTracker(t, nil, c)
	hostile := `/"><script>alert(1)</script><svg onload=alert(2)>&amp;`
	tr.Observe(Request{Identity: googleFake, Path: hostile, Status: 200})
	tr.Observe(Request{Identity: bots.None, Referer: "https://www.bing.com/?q=<script>"})
	rec := get(t, tr.Handler(), "/crawlers")
	body := rec.Body.String()
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("%d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	if strings.Contains(body, "<script") || strings.Contains(body, "<svg onload") {
		t.Errorf("the hostile path reached the page unescaped")
	}
	csp := rec.Header().Get("Content-Security-Policy")
	if !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") {
		t.Errorf("CSP %q", csp)
	}
	// The page parses and carries the path as text.
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode && n.Data == hostile {
			found = true
		}
		if n.Type == html.ElementNode && (n.Data == "script" || n.Data == "link" || n.Data == "img") {
			t.Errorf("element <%s> on the page", n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if !found {
		t.Error("the hostile path is not on the page as text")
	}
}

func TestPageJSON(t *testing.T) {
	c := newClock(t0)
	tr := newTracker(t, nil, c)
	tr.Observe(Request{Identity: gptbot, Path: "/a", Status: 200, Bytes: 10})
	tr.Observe(Request{Identity: bots.None, Referer: "https://chatgpt.com/"})
	rec := get(t, tr.Handler(), "/crawlers?format=json")
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	var s Snapshot
	if err := json.Unmarshal(rec.Body.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Hours) != Hours || len(s.Crawlers) != 1 || s.Crawlers[0].Name != "gptbot" || s.Crawlers[0].ByHour[Hours-1] != 1 ||
		s.Crawlers[0].TopPaths[0].Path != "/a" || s.Referrals[0].Source != "chatgpt" || s.Referrals[0].Total != 1 {
		t.Errorf("json %s", rec.Body)
	}
}

func TestPageBars(t *testing.T) {
	c := newClock(t0)
	tr := newTracker(t, nil, c)
	for _, id := range []bots.Identity{googleIP, gptbot, claudeUnver} {
		tr.Observe(Request{Identity: id, Path: "/", Status: 200})
	}
	body := get(t, tr.Handler(), "/crawlers").Body.String()
	// 3 crawlers, 24 bars each, each with its <title>; no referral chart.
	if n := strings.Count(body, `<rect class="bar"`); n != 3*Hours {
		t.Errorf("%d bars, want %d", n, 3*Hours)
	}
	if n := strings.Count(body, "<title>"); n != 3*Hours+1 {
		t.Errorf("%d titles, want %d", n, 3*Hours+1)
	}
}

func TestPageMethod(t *testing.T) {
	tr := newTracker(t, nil, newClock(t0))
	rec := httptest.NewRecorder()
	tr.Handler().ServeHTTP(rec, httptest.NewRequest("POST", "/crawlers", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", rec.Code)
	}
}
