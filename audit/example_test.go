package audit_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/headgate/headgate/audit"
)

// A two-page site crawled live: a relative canonical, a missing one, a
// missing description, a title the two pages share, a title and a
// description too short to read well in results.
func ExampleRun() {
	pages := map[string]string{
		"/":      `<!doctype html><title>Home</title><link rel="canonical" href="/"><a href="/about">About</a>`,
		"/about": `<!doctype html><title>Home</title><meta name="description" content="Who we are.">`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page)
	}))
	defer srv.Close()

	r, err := audit.Run(context.Background(), audit.Options{Live: srv.URL}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range r.Findings {
		fmt.Println(f.Check, f.Severity, strings.TrimPrefix(f.URL, srv.URL))
	}
	fmt.Println("fails on errors:", r.Fails("error"))
	// Output:
	// canonical-missing warning /about
	// canonical-relative error /
	// description-length warning /about
	// description-missing warning /
	// title-duplicate warning /
	// title-duplicate warning /about
	// title-length warning /
	// title-length warning /about
	// fails on errors: true
}
