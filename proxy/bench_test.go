package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"testing"
	"time"
)

// The in-process counterpart of test.BenchmarkProxyLoad, for profiling:
//
//	go test -run '^$' -bench Serve -cpuprofile cpu.out ./proxy/
func benchUpstream(b *testing.B) (*httptest.Server, int) {
	name := os.Getenv("HEADGATE_LOAD_PAGE")
	if name == "" {
		name = "stackoverflow.html"
	}
	doc, err := os.ReadFile("../../shared/corpus/" + name)
	if err != nil {
		b.Skip(err)
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(len(doc)))
		w.Write(doc)
	}))
	b.Cleanup(up.Close)
	return up, len(doc)
}

func benchDrive(b *testing.B, h http.Handler, size int) {
	front := httptest.NewServer(h)
	defer front.Close()
	tr := &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 64}
	c := &http.Client{Transport: tr}
	b.ReportAllocs()
	b.SetBytes(int64(size))
	b.RunParallel(func(pb *testing.PB) {
		buf := make([]byte, 32<<10)
		for pb.Next() {
			res, err := c.Get(front.URL + "/p")
			if err != nil {
				b.Error(err)
				return
			}
			io.CopyBuffer(io.Discard, res.Body, buf)
			res.Body.Close()
		}
	})
}

func BenchmarkServe(b *testing.B) {
	up, size := benchUpstream(b)
	p, err := New(testConfig(b, up.URL, testRules+`
[rule.open_graph]
site_name = "Bench"
`), Options{})
	if err != nil {
		b.Fatal(err)
	}
	benchDrive(b, p, size)
}

func BenchmarkServePlain(b *testing.B) {
	up, size := benchUpstream(b)
	u, _ := url.Parse(up.URL)
	rp := &httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(u); pr.SetXForwarded() },
		Transport: NewTransport(30 * time.Second),
	}
	benchDrive(b, rp, size)
}
