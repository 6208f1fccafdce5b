package watch_test

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/headgate/headgate/rewrite"
	"github.com/headgate/headgate/watch"
)

// headOf runs the rewriter over a page, as the proxy does, and returns
// what the upstream head said.
func headOf(page string) *rewrite.HeadFacts {
	r := rewrite.NewReader(strings.NewReader(page), rewrite.Options{ContentType: "text/html"})
	r.Prepare()
	io.Copy(io.Discard, r)
	f := r.Result().Upstream
	return &f
}

// A Watcher reports a change once it holds for Confirm responses in a
// row: the upstream starts answering noindex.
func Example() {
	cfg := watch.Defaults()
	cfg.Confirm = 2
	w, err := watch.New(watch.Options{Config: cfg, BaseURL: "https://shop.example",
		Now: func() time.Time { return time.Date(2026, 12, 6, 9, 30, 0, 0, time.UTC) }})
	if err != nil {
		fmt.Println(err)
		return
	}
	good := headOf(`<html><head><title>Boots</title></head><body>…`)
	bad := headOf(`<html><head><title>Boots</title><meta name="robots" content="noindex"></head><body>…`)
	for _, head := range []*rewrite.HeadFacts{good, good, bad, good, bad, bad} {
		w.Observe("/boots", "", watch.Response{Status: 200, Head: head})
	}
	for _, e := range w.Events("") {
		fmt.Println(e.Time.Format(time.RFC3339), e.Severity, e.URL, e.Signal, fmt.Sprintf("%q → %q", e.Before, e.After))
	}
	// Output:
	// 2026-12-06T09:30:00Z critical https://shop.example/boots robots "" → "noindex"
}
