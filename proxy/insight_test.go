package proxy

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/headgate/headgate/insight"
)

// With [bots] on, each request of an identified crawler is counted by
// insight from the record; /crawlers lists it; a referral is counted.
func TestInsightWired(t *testing.T) {
	p, _, _ := botsProxy(t, "", "", "")
	identityOf(t, p, "/notes/1", "127.66.1.2:4000", "User-Agent: "+uaGooglebot)
	identityOf(t, p, "/notes/2", "127.0.0.9:4000", "User-Agent: "+uaGooglebot)
	identityOf(t, p, "/notes/3", "127.0.0.9:4000", "User-Agent: "+uaBrowser, "Referer: https://www.google.com/")
	want := `
# HELP headgate_bot_requests_total Requests of identified crawlers: bot is a directory name or other; verified ip, dns, signature, no (spoofed) or unverifiable; code_class 2xx to 5xx; group control or variant on split-test pages, absent elsewhere.
# TYPE headgate_bot_requests_total counter
headgate_bot_requests_total{bot="googlebot",category="search",code_class="2xx",verified="ip"} 1
headgate_bot_requests_total{bot="googlebot",category="search",code_class="2xx",verified="no"} 1
`
	if err := testutil.GatherAndCompare(p.reg, strings.NewReader(want), "headgate_bot_requests_total"); err != nil {
		t.Error(err)
	}
	if n := referrals(t, p, "google"); n != 1 {
		t.Errorf("referrals{google} = %v", n)
	}
	w := httptest.NewRecorder()
	p.Admin().ServeHTTP(w, httptest.NewRequest("GET", "http://127.0.0.1/crawlers?format=json", nil))
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"googlebot"`) {
		t.Errorf("/crawlers: %d %s", w.Code, w.Body)
	}
	w = httptest.NewRecorder()
	p.Admin().ServeHTTP(w, httptest.NewRequest("GET", "http://evil.example/crawlers", nil))
	if w.Code != http.StatusMisdirectedRequest {
		t.Errorf("/crawlers under a foreign Host: %d", w.Code)
	}
}

// With [bots] off, referrals are still counted: they need no identity.
func TestInsightReferralsWithoutBots(t *testing.T) {
	p, front := newTestProxy(t, func(w http.ResponseWriter, r *http.Request) {}, "")
	req, _ := http.NewRequest("GET", front.URL+"/x", nil)
	req.Header.Set("Referer", "https://chatgpt.com/c/1")
	req.Header.Set("User-Agent", uaGooglebot)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if n := referrals(t, p, "chatgpt"); n != 1 {
		t.Errorf("referrals{chatgpt} = %v", n)
	}
	if n, _ := testutil.GatherAndCount(p.reg, "headgate_bot_requests_total"); n != 0 {
		t.Errorf("%d bot series with [bots] off", n)
	}
}

func referrals(t *testing.T, p *Proxy, source string) float64 {
	t.Helper()
	mfs, err := p.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "headgate_referrals_total" {
			for _, m := range mf.GetMetric() {
				if m.GetLabel()[0].GetValue() == source {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return -1
}

// A crawler a reload adds ([[bots.crawler]]) is counted under its own
// name from the reload on, not as other until a restart.
func TestInsightFollowsReload(t *testing.T) {
	p, _, _ := botsProxy(t, "", "", "")
	cfg := testConfig(t, p.Config().Server.Upstream, "[bots]\nenabled = true\nreverse_dns = false\nranges_dir = "+quote(rangesDir(t))+
		"\n\n[[bots.crawler]]\nname = \"acmebot\"\ntokens = [\"AcmeBot\"]\ncategory = \"monitor\"\n")
	if err := p.Swap(cfg); err != nil {
		t.Fatal(err)
	}
	rec, _ := identityOf(t, p, "/notes/1", "127.0.0.9:4000", "User-Agent: AcmeBot/1.0")
	if rec.Bot.Name != "acmebot" {
		t.Fatalf("the reloaded verifier names the agent %q", rec.Bot.Name)
	}
	want := `
# HELP headgate_bot_requests_total Requests of identified crawlers: bot is a directory name or other; verified ip, dns, signature, no (spoofed) or unverifiable; code_class 2xx to 5xx; group control or variant on split-test pages, absent elsewhere.
# TYPE headgate_bot_requests_total counter
headgate_bot_requests_total{bot="acmebot",category="monitor",code_class="2xx",verified="unverifiable"} 1
`
	if err := testutil.GatherAndCompare(p.reg, strings.NewReader(want), "headgate_bot_requests_total"); err != nil {
		t.Error(err)
	}
}

// Insight counts the path as it arrived, percent-encoded, as [watch] keys
// a page (the Match's Path): /crawlers' top paths and /changes spell one
// page alike.
func TestInsightPathAsWatchKeysIt(t *testing.T) {
	p, _, _ := botsProxy(t, "", "", "")
	rec, _ := identityOf(t, p, "/caf%C3%A9?x=1", "127.0.0.9:4000", "User-Agent: "+uaGooglebot)
	w := httptest.NewRecorder()
	p.Admin().ServeHTTP(w, httptest.NewRequest("GET", "http://127.0.0.1/crawlers?format=json", nil))
	var snap insight.Snapshot
	if err := json.Unmarshal(w.Body.Bytes(), &snap); err != nil || len(snap.Crawlers) != 1 || len(snap.Crawlers[0].TopPaths) != 1 {
		t.Fatalf("/crawlers JSON: %v\n%s", err, w.Body)
	}
	if got := snap.Crawlers[0].TopPaths[0].Path; got != "/caf%C3%A9" || got != rec.Match.Path {
		t.Errorf("insight counts %q; want /caf%%C3%%A9, the path [watch] keys (%q)", got, rec.Match.Path)
	}
}

// With [bots] off nothing is identified, so the tracker holds no crawler
// windows: New allocated about 2.5 MiB of them (40 directory crawlers'
// top-path sketches) that stayed live for the process's life, raising the
// collector's heap goal and peak RSS (issue 40). A reload that turns
// [bots] on gives the directory's crawlers their own names from then on.
func TestInsightNoCrawlerWindowsWithoutBots(t *testing.T) {
	cfg := testConfig(t, "http://127.0.0.1:1", "")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p, err := New(cfg, Options{})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	// The race detector's instrumentation allocates beside the program
	// (1.3 MiB here): the bound is the program's.
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 && !raceEnabled {
		t.Errorf("New with [bots] off allocated %d KiB, want under 1 MiB", n>>10)
	}
	on := testConfig(t, p.Config().Server.Upstream, "[bots]\nenabled = true\nreverse_dns = false\nranges_dir = "+quote(rangesDir(t))+"\n")
	if err := p.Swap(on); err != nil {
		t.Fatal(err)
	}
	// The upstream is closed: a 502, counted under the crawler's name.
	identityOf(t, p, "/notes/1", "127.0.0.9:4000", "User-Agent: "+uaGooglebot)
	want := `
# HELP headgate_bot_requests_total Requests of identified crawlers: bot is a directory name or other; verified ip, dns, signature, no (spoofed) or unverifiable; code_class 2xx to 5xx; group control or variant on split-test pages, absent elsewhere.
# TYPE headgate_bot_requests_total counter
headgate_bot_requests_total{bot="googlebot",category="search",code_class="5xx",verified="no"} 1
`
	if err := testutil.GatherAndCompare(p.reg, strings.NewReader(want), "headgate_bot_requests_total"); err != nil {
		t.Error(err)
	}
}
