package watch

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

func TestHandler(t *testing.T) {
	w := newWatcher(t, 1, nil)
	hostile := `"><script>alert(1)</script>`
	w.Observe("/p", "a=<b>", Response{Status: 200, Head: facts(t, page("Fine", ""))})
	w.Observe("/p", "a=<b>", Response{Status: 200, Head: facts(t, page("&lt;/td&gt;"+hostile, ""))})
	w.Observe("/p", "a=<b>", Response{Status: 500})
	get := func(q string) (*httptest.ResponseRecorder, string) {
		rr := httptest.NewRecorder()
		w.Handler().ServeHTTP(rr, httptest.NewRequest("GET", "/changes"+q, nil))
		return rr, rr.Body.String()
	}
	rr, body := get("")
	if rr.Code != 200 || !strings.HasPrefix(rr.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("%d %s", rr.Code, rr.Header())
	}
	if csp := rr.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") {
		t.Errorf("CSP %q", csp)
	}
	if strings.Contains(body, "<script") || strings.Contains(body, "a=<b>") || strings.Contains(body, "http://") && !strings.Contains(body, "https://shop.example") {
		t.Errorf("unescaped: %s", body)
	}
	// The page is one document; its table holds the two events, the
	// hostile title as text.
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var rows, scripts int
	var texts []string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "tr" {
			rows++
		}
		if n.Type == html.ElementNode && (n.Data == "script" || n.Data == "link" || n.Data == "img") {
			scripts++
		}
		if n.Type == html.TextNode {
			texts = append(texts, n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if rows != 3 || scripts != 0 {
		t.Errorf("rows %d, external or script elements %d", rows, scripts)
	}
	if !strings.Contains(strings.Join(texts, "|"), "</td>"+hostile) {
		t.Errorf("the hostile title is not shown as text: %q", texts)
	}
	_, crit := get("?severity=critical")
	if strings.Count(crit, "<tr class=") != 1 {
		t.Errorf("critical filter: %s", crit)
	}
	rr, js := get("?severity=info&format=json")
	var ev []Event
	if err := json.Unmarshal([]byte(js), &ev); err != nil || len(ev) != 1 || ev[0].Signal != "title" || rr.Header().Get("Content-Type") != "application/json" {
		t.Errorf("json %s %v", js, err)
	}
	if strings.Contains(js, "<script>") {
		t.Errorf("json not escaped: %s", js)
	}
	if rr, _ := get("?severity=bogus"); rr.Code != 400 {
		t.Errorf("bad severity: %d", rr.Code)
	}
	if _, empty := get("?format=json&severity=critical"); strings.TrimSpace(empty) == "null" {
		t.Errorf("null")
	}
}
