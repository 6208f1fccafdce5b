package proxy_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/headgate/headgate/proxy"
	"github.com/headgate/headgate/rules"
)

// New returns the public handler for a config: here in front of a test
// upstream whose page lacks a canonical and a description.
func ExampleNew() {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!doctype html><html><head><title>Note 7</title></head><body>A note.</body></html>")
	}))
	defer upstream.Close()

	cfg, err := rules.Parse("headgate.toml", []byte(`
[server]
upstream = "`+upstream.URL+`"
[site]
base_url = "https://notes.example"
[[rule]]
match = "/notes/:id"
description = "Note {id} of the notes."
canonical = "self"
`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := proxy.New(cfg, proxy.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	front := httptest.NewServer(p)
	defer front.Close()

	res, err := http.Get(front.URL + "/notes/7?utm_source=x")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	fmt.Println(res.Status)
	fmt.Println(string(body))
	// Output:
	// 200 OK
	// <!doctype html><html><head><title>Note 7</title><meta name="description" content="Note 7 of the notes.">
	// <link rel="canonical" href="https://notes.example/notes/7">
	// </head><body>A note.</body></html>
}
