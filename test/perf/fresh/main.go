// Command fresh is the upstream of test/perf/run.sh's fresh-head mode: it
// serves one page at every path with a token in its head that changes on
// every request (as a CSRF token or a nonce does), so that no head is ever
// seen twice and no proxy can reuse what it did for the last one. Identity
// only, with a Content-Length, in one write. It is a measuring tool, not
// part of headgate.
package main

import (
	"bytes"
	"flag"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:18001", "address to listen on (loopback only)")
	page := flag.String("page", "", "the HTML file to serve at every path")
	in := flag.String("in", "csrf", "which meta's content changes: csrf (a CSRF token, which nothing headgate decides reads: its plan still holds) or description (which headgate reads: every head is scanned)")
	flag.Parse()
	token := tokens[*in]
	if token == "" {
		log.Fatalf("-in is csrf or description, not %q", *in)
	}
	if host, _, err := net.SplitHostPort(*listen); err != nil || (host != "127.0.0.1" && host != "localhost") {
		log.Fatalf("fresh listens on loopback only, not %q", *listen)
	}
	doc, err := os.ReadFile(*page)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Addr: *listen, Handler: newFresh(doc, token), ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}

// tokens are the metas whose content changes; its digits are overwritten
// in place in a pooled copy of the page.
var tokens = map[string]string{
	"csrf":        `<meta name="csrf-token" content="0000000000">`,
	"description": `<meta name="description" content="0000000000">`,
}

// tokenAt is where the token goes: just after the head's start tag
// (<head> or <head profile=...>), else before the first <meta>, else at
// the start.
func tokenAt(doc []byte) int {
	low := bytes.ToLower(doc)
	for from := 0; ; {
		i := bytes.Index(low[from:], []byte("<head"))
		if i < 0 {
			break
		}
		i += from
		if j := i + len("<head"); j < len(low) && (low[j] == '>' || low[j] == ' ' || low[j] == '\t' || low[j] == '\n' || low[j] == '\r') {
			if k := bytes.IndexByte(low[j:], '>'); k >= 0 {
				return j + k + 1
			}
		}
		from = i + 1
	}
	if i := bytes.Index(low, []byte("<meta")); i >= 0 {
		return i
	}
	return 0
}

func newFresh(doc []byte, token string) http.Handler {
	i := tokenAt(doc)
	page := append(append(append([]byte{}, doc[:i]...), token...), doc[i:]...)
	at := i + strings.Index(token, `content="`) + len(`content="`)
	length := strconv.Itoa(len(page))
	pool := sync.Pool{New: func() any { b := append([]byte(nil), page...); return &b }}
	var n atomic.Int64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bp := pool.Get().(*[]byte)
		defer pool.Put(bp)
		body := *bp
		v := n.Add(1)
		for j := at + 9; j >= at; j-- {
			body[j] = byte('0' + v%10)
			v /= 10
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Length", length)
		w.Write(body)
	})
}
