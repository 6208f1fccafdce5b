// Command plainproxy is the reference of the load benchmark: an
// httputil.ReverseProxy with headgate's transport settings (proxy.NewTransport)
// and nothing else; a gzip response is decoded and re-encoded with the
// library and level headgate uses (klauspost gzip, proxy.GzipLevel), pooled, in
// the response writer as headgate does, without rewriting (test/internal/recode). It runs as its
// own process, like headgate, so that both pay the same cross-process
// costs.
package main

import (
	"flag"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"

	"github.com/headgate/headgate/proxy"
	"github.com/headgate/headgate/test/internal/recode"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "listen address")
	upstream := flag.String("upstream", "", "upstream URL")
	flag.Parse()
	target, err := url.Parse(*upstream)
	if err != nil {
		log.Fatal(err)
	}
	rc := &recode.Gzip{Level: proxy.GzipLevel}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.SetXForwarded()
		},
		Transport:      proxy.NewTransport(30 * time.Second),
		ModifyResponse: rc.ModifyResponse,
	}
	srv := &http.Server{Addr: *listen, Handler: rc.Handler(rp), ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}
