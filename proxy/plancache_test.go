package proxy

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/headgate/headgate/rewrite"
)

// headgate_plan_cache_total counts what the plan cache did for each
// rewritten head, and a replayed plan serves the new response's own bytes:
// a CSRF token that changed goes out as the upstream sent it.
func TestPlanCacheMetric(t *testing.T) {
	var token, title atomic.Value
	token.Store("tok-0001")
	title.Store("T1")
	p, front := newTestProxy(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><head><meta name="csrf-token" content="%s"><title>%s</title></head><body><p>x</p></body></html>`,
			token.Load(), title.Load())
	}, testRules)
	steps := []struct {
		token, title string
		use          rewrite.PlanUse
	}{
		{"tok-0001", "T1", rewrite.PlanMiss}, // the first: no plan yet
		{"tok-0001", "T1", rewrite.PlanHit},
		{"tok-0002", "T1", rewrite.PlanNear},
		{"tok-0003", "T1", rewrite.PlanNear},
		{"tok-0003", "T2", rewrite.PlanMiss}, // the title is read: scanned
	}
	want := map[rewrite.PlanUse]float64{}
	for i, s := range steps {
		token.Store(s.token)
		title.Store(s.title)
		res, err := http.Get(front.URL + "/p")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		body := string(b)
		if !strings.Contains(body, `content="`+s.token+`"`) || !strings.Contains(body, "<title>Rewritten title</title>") {
			t.Fatalf("step %d: not the upstream's token under the rules' title:\n%s", i, body)
		}
		want[s.use]++
		for _, u := range []rewrite.PlanUse{rewrite.PlanHit, rewrite.PlanNear, rewrite.PlanMiss, rewrite.PlanSkip} {
			if got := testutil.ToFloat64(p.m.plans[u]); got != want[u] {
				t.Errorf("step %d: headgate_plan_cache_total{result=%q} = %v, want %v", i, u, got, want[u])
			}
		}
	}
}

// The inspector says what the plan cache did for the page it shows: a
// report asked after the page changed only in its CSRF token says "near",
// in JSON and on the page.
func TestInspectPlanUse(t *testing.T) {
	var token atomic.Value
	token.Store("tok-0001")
	f := newInspector(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><head><meta name="csrf-token" content="%s"><title>T</title></head><body><p>x</p></body></html>`, token.Load())
	}, testRules)
	if _, rep := f.report(t, "/p"); rep.Plan != string(rewrite.PlanMiss) || rep.Cached {
		t.Errorf("first report: plan %q, cached %v; want miss, not cached", rep.Plan, rep.Cached)
	}
	token.Store("tok-0002")
	if _, rep := f.report(t, "/p"); rep.Plan != string(rewrite.PlanNear) || !rep.Cached {
		t.Errorf("after the token changed: plan %q, cached %v; want near, cached", rep.Plan, rep.Cached)
	}
	token.Store("tok-0003")
	_, _, page := f.get(t, f.admin, "/inspect", url.Values{"path": {"/p"}})
	if !strings.Contains(string(page), "the head differed only where nothing headgate decides reads") {
		t.Errorf("the inspector page does not say the plan was a near match:\n%.2000s", page)
	}
}
