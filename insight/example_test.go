package insight_test

import (
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/headgate/headgate/bots"
	"github.com/headgate/headgate/insight"
)

func ExampleSource() {
	for _, ref := range []string{"https://www.google.co.uk/", "https://gemini.google.com/app", "https://google.evil.com/", "https://chat.openai.com/"} {
		fmt.Println(insight.Source(ref))
	}
	// Output:
	// google true
	// gemini true
	//  false
	// chatgpt true
}

func ExampleTracker() {
	tr, err := insight.New(insight.Options{Registerer: prometheus.NewRegistry()})
	if err != nil {
		panic(err)
	}
	// What the proxy does once per request, where it writes the access log:
	tr.Observe(insight.Request{
		Identity: bots.Identity{Name: "gptbot", Category: bots.AITraining, Verified: bots.VerifiedIP},
		Path:     "/notes/3", Status: 200, Bytes: 5120,
	})
	tr.Observe(insight.Request{Identity: bots.None, Path: "/notes/3", Status: 200, Referer: "https://chatgpt.com/"})

	// And what the admin listener serves at /crawlers:
	rec := httptest.NewRecorder()
	tr.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/crawlers?format=json", nil))
	fmt.Println(rec.Code, strings.Contains(rec.Body.String(), `"name": "gptbot"`))
	s := tr.Snapshot()
	fmt.Println(s.Crawlers[0].Name, s.Crawlers[0].Requests, s.Crawlers[0].Verified["yes"], s.Referrals[0].Source, s.Referrals[0].Total)
	// Output:
	// 200 true
	// gptbot 1 1 chatgpt 1
}
