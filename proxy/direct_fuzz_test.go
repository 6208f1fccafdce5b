package proxy

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// FuzzDirectSameBytes: whatever page or body the upstream sends (of known
// length), the client gets the same status, headers and bytes by the
// direct way (a writer with a ReadFrom) as by ReverseProxy's copy.
func FuzzDirectSameBytes(f *testing.F) {
	if !canSplice || !canPeek {
		f.Skip("the direct write path is for Linux only (splice(2))")
	}
	for _, seed := range []string{
		directPage(200 << 10),
		directPage(3000),
		"<html><head><title>x</title></head><body>short</body></html>",
		strings.Replace(directPage(300<<10), "</head>", strings.Repeat("<meta name=\"x\" content=\"y\">\n", 6000)+"</head>", 1),
		"<!doctype html><p>no head</p>" + strings.Repeat("x", 70000),
		"",
	} {
		for ct := range uint8(len(fuzzTypes)) {
			f.Add([]byte(seed), ct)
		}
	}
	// One upstream and one proxy for the run: every answer is whole and
	// the connection kept, so a long run uses one connection.
	var answer atomic.Pointer[string]
	up := newScriptedUpstream(f, func(int, *http.Request) (string, bool) { return *answer.Load(), false })
	p, err := New(testConfig(f, up.url(""), testRules), Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { p.Close() })
	f.Fuzz(func(t *testing.T, body []byte, ct uint8) {
		a := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s", fuzzTypes[int(ct)%len(fuzzTypes)], len(body), body)
		answer.Store(&a)
		// A hang is a failure: the worker exits with every goroutine's
		// stack, and the fuzzer keeps the input.
		dog := time.AfterFunc(10*time.Second, func() {
			buf := make([]byte, 1<<20)
			os.Stderr.Write(buf[:runtime.Stack(buf, true)])
			panic(fmt.Sprintf("FuzzDirectSameBytes hung on a %d-byte body", len(body)))
		})
		defer dog.Stop()
		direct := &readFromRecorder{ResponseRecorder: httptest.NewRecorder()}
		p.ServeHTTP(direct, httptest.NewRequest("GET", "http://notes.example/p", nil))
		copied := httptest.NewRecorder()
		p.ServeHTTP(copied, httptest.NewRequest("GET", "http://notes.example/p", nil))
		if direct.Code != copied.Code || direct.Body.String() != copied.Body.String() {
			t.Fatalf("direct: %d, %d bytes (%d by ReadFrom); copied: %d, %d bytes", direct.Code, direct.Body.Len(), direct.readFrom, copied.Code, copied.Body.Len())
		}
		var hd, hc strings.Builder
		direct.Result().Header.Write(&hd)
		copied.Result().Header.Write(&hc)
		if a, b := dateRE.ReplaceAllString(hd.String(), ""), dateRE.ReplaceAllString(hc.String(), ""); a != b {
			t.Fatalf("headers differ:\n%s\n---\n%s", a, b)
		}
	})
}

var fuzzTypes = [...]string{"text/html; charset=utf-8", "image/png", "text/event-stream", "application/xhtml+xml", "text/html; charset=windows-1252"}
