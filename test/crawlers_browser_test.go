package test

// The /crawlers page (SPEC §20.1) in Debian's headless Chromium with
// scripts off: the DOM Chromium builds carries the numbers the tracker
// was given, each crawler's chart has 24 bars, and a screenshot is kept
// as an artifact for a person to look at (go test -artifacts).

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/headgate/headgate/bots"
	"github.com/headgate/headgate/insight"
)

func TestCrawlersPageInChromium(t *testing.T) {
	if _, err := exec.LookPath("chromium"); err != nil {
		if _, err := os.Stat("/usr/bin/chromium"); err != nil {
			t.Skip("chromium not installed (Debian: apt-get install chromium): the browser check of the /crawlers page is skipped")
		}
	}
	now := time.Date(2026, 12, 6, 14, 35, 0, 0, time.UTC)
	tr, err := insight.New(insight.Options{Now: func() time.Time { return now }, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	google := bots.Identity{Name: "googlebot", Category: bots.Search, Verified: bots.VerifiedDNS}
	fake := bots.Identity{Name: "googlebot", Category: bots.Search, Verified: bots.VerifiedNo}
	gpt := bots.Identity{Name: "gptbot", Category: bots.AITraining, Verified: bots.VerifiedIP}
	claude := bots.Identity{Name: "claudebot", Category: bots.AITraining, Verified: bots.VerifiedUnverifiable}
	agent := bots.Identity{Name: "agent.example", Verified: bots.VerifiedSignature}
	want := map[string]struct{ req, spoofed, viol int }{}
	observe := func(id bots.Identity, h int, path string, status int, viol bool) {
		tr.Observe(insight.Request{Identity: id, Path: path, Status: status, Bytes: 4096, RobotsViolation: viol,
			Time: now.Add(-time.Duration(h) * time.Hour)})
		name := id.Name
		if name == "agent.example" {
			name = insight.Other
		}
		w := want[name]
		w.req++
		if id.Verified == bots.VerifiedNo {
			w.spoofed++
		}
		if viol {
			w.viol++
		}
		want[name] = w
	}
	for h := 0; h < 24; h++ {
		// googlebot: a daily curve; a spoofer at night.
		for i := 0; i < 20+15*((h+6)%12); i++ {
			observe(google, h, fmt.Sprintf("/notes/%d", i%7), []int{200, 200, 200, 304, 404}[i%5], false)
		}
		if h >= 2 && h < 6 {
			for i := 0; i < 40; i++ {
				observe(fake, h, "/admin/"+strconv.Itoa(i%3), 403, i%4 == 0)
			}
		}
		// gptbot: bursts; claudebot: a steady trickle.
		if h%4 == 0 {
			for i := 0; i < 60; i++ {
				observe(gpt, h, fmt.Sprintf("/docs/page-%d", i%11), 200, i%10 == 0)
			}
		}
		for i := 0; i < 5; i++ {
			observe(claude, h, "/llms.txt", 200, false)
		}
	}
	observe(agent, 1, `/search?q="><b>hi</b>`, 503, false)
	for i := 0; i < 30; i++ {
		tr.Observe(insight.Request{Identity: bots.None, Referer: []string{"https://www.google.com/", "https://chatgpt.com/", "https://www.perplexity.ai/"}[i%3],
			Time: now.Add(-time.Duration(i%9) * time.Hour)})
	}

	srv := httptest.NewServer(tr.Handler())
	defer srv.Close()
	url := srv.URL + "/crawlers"
	// Scripts off: the page's Content-Security-Policy (default-src 'none')
	// forbids every script, and it has none. Chromium's own switch
	// (--blink-settings=scriptEnabled=false) also stops --dump-dom and
	// --screenshot, which run script in the page to do their work.
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") {
		t.Errorf("Content-Security-Policy %q: want default-src 'none' and no script-src", csp)
	}
	args := []string{"--hide-scrollbars", "--window-size=1280,2400"}
	dom := runChromium(t, append(args, "--dump-dom", url)...)
	doc, err := html.Parse(bytes.NewReader(dom))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(dom, []byte("What crawlers do")) {
		t.Fatalf("not the page:\n%s", tail(string(dom), 2000))
	}
	sections := 0
	walkNodes(doc, func(n *html.Node) {
		if n.Data != "section" || attrVal(n, "class") != "crawler" {
			return
		}
		sections++
		name := attrVal(n, "data-crawler")
		w, ok := want[name]
		if !ok {
			t.Errorf("a section for %q, which made no request", name)
			return
		}
		bars, titled := 0, 0
		var sum int
		walkNodes(n, func(m *html.Node) {
			switch {
			case m.Data == "rect" && attrVal(m, "class") == "bar":
				bars++
			case m.Data == "g" && attrVal(m, "class") == "h":
				// <title>Dec 6 13:00–14:00 UTC: 42 requests…</title>
				for c := m.FirstChild; c != nil; c = c.NextSibling {
					if c.Data == "title" {
						titled++
						_, after, _ := strings.Cut(textOf(c), "UTC: ")
						k, _ := strconv.Atoi(strings.Fields(after)[0])
						sum += k
					}
				}
			}
		})
		if bars != 24 || titled != 24 {
			t.Errorf("%s: %d bars, %d titled; want 24", name, bars, titled)
		}
		if sum != w.req {
			t.Errorf("%s: the bars' titles add up to %d, observed %d", name, sum, w.req)
		}
		got := map[string]string{}
		walkNodes(n, func(m *html.Node) {
			for _, k := range []string{"req", "spoofed", "violations"} {
				if strings.Contains(" "+attrVal(m, "class")+" ", " "+k+" ") && m.Data == "b" {
					got[k] = textOf(m)
				}
			}
		})
		if got["req"] != strconv.Itoa(w.req) || got["spoofed"] != strconv.Itoa(w.spoofed) || got["violations"] != strconv.Itoa(w.viol) {
			t.Errorf("%s: page says %v; observed requests %d, spoofed %d, violations %d", name, got, w.req, w.spoofed, w.viol)
		}
	})
	if sections != len(want) {
		t.Errorf("%d crawler sections, want %d", sections, len(want))
	}
	referrals := map[string]string{}
	walkNodes(doc, func(n *html.Node) {
		if n.Data == "tr" && attrVal(n, "data-source") != "" {
			walkNodes(n, func(m *html.Node) {
				if attrVal(m, "class") == "n total" {
					referrals[attrVal(n, "data-source")] = textOf(m)
				}
			})
		}
	})
	if referrals["google"] != "10" || referrals["chatgpt"] != "10" || referrals["perplexity"] != "10" || len(referrals) != 3 {
		t.Errorf("referrals on the page %v, want 10 each of google, chatgpt, perplexity", referrals)
	}
	walkNodes(doc, func(n *html.Node) {
		if n.Type == html.ElementNode && (n.Data == "script" || n.Data == "img" || n.Data == "link" || n.Data == "iframe") {
			t.Errorf("a <%s> element on the page", n.Data)
		}
	})
	if strings.Contains(string(dom), "<b>hi</b>") {
		t.Error("a path's markup reached the DOM")
	}

	shot := filepath.Join(t.ArtifactDir(), "crawlers.png")
	runChromium(t, append(args, "--screenshot="+shot, url)...)
	if fi, err := os.Stat(shot); err != nil || fi.Size() == 0 {
		t.Fatalf("no screenshot: %v", err)
	}
	t.Logf("screenshot: %s", shot)
}
