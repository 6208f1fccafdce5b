package proxy_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/headgate/headgate/proxy"
	"github.com/headgate/headgate/rules"
)

// Middleware puts headgate in front of a handler of the same server: the
// handler is the upstream (server.upstream = "builtin:next"), and what it
// serves goes through the same decisions as `headgate serve`'s.
func ExampleMiddleware() {
	cfg, err := rules.Parse("headgate.toml", []byte(`
[server]
upstream = "builtin:next"
[site]
base_url = "https://notes.example"
[[rule]]
match = "/notes/:id"
title = "Note {id} · Notes"
`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	mw, p, err := proxy.Middleware(cfg, proxy.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()

	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!doctype html><html><head><title>untitled</title></head><body>A note.</body></html>")
	})
	w := httptest.NewRecorder()
	mw(app).ServeHTTP(w, httptest.NewRequest("GET", "/notes/7", nil))
	fmt.Println(w.Code)
	fmt.Println(w.Body.String())
	// Output:
	// 200
	// <!doctype html><html><head><title>Note 7 · Notes</title></head><body>A note.</body></html>
}
