package sitemap

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/headgate/headgate/rules"
)

// RobotsDisallows answers from the file headgate serves, and says when
// that file is the upstream's (known false).
func TestRobotsDisallows(t *testing.T) {
	load := func(mode string) *Sitemap {
		cfg, err := rules.Parse("t.toml", []byte(`[server]
upstream = "http://127.0.0.1:9"
[site]
base_url = "https://notes.example"
[robots]
mode = "`+mode+`"
[[robots.group]]
user_agents = ["GPTBot"]
disallow = ["/private/", "/*.pdf$"]
allow = ["/private/open"]
[[robots.group]]
user_agents = ["Googlebot"]
disallow = ["/tmp/"]
`), nil)
		if err != nil {
			t.Fatal(err)
		}
		return New(cfg, Options{Fetch: func(ctx context.Context, p string) (io.ReadCloser, error) { return nil, errors.New("no") }})
	}
	gen, app := load("generate"), load("append")
	for _, c := range []struct {
		s           *Sitemap
		tokens      []string
		path        string
		deny, known bool
	}{
		{gen, []string{"GPTBot"}, "/private/x", true, true},
		{gen, []string{"gptbot"}, "/private/open/1", false, true},
		{gen, []string{"GPTBot"}, "/a.pdf", true, true},
		{gen, []string{"GPTBot"}, "/a.pdf?x", false, true},
		{gen, []string{"GPTBot"}, "/tmp/x", false, true}, // its own group only
		{gen, []string{"Googlebot"}, "/tmp/x", true, true},
		{gen, []string{"Googlebot"}, "/private/x", false, true},
		{gen, []string{"Bingbot"}, "/private/x", false, true}, // User-agent: * / Disallow:
		{app, []string{"GPTBot"}, "/private/x", true, true},
		{app, []string{"Bingbot"}, "/tmp/x", false, false}, // the upstream's part decides
	} {
		deny, known := c.s.RobotsDisallows(c.tokens, c.path)
		if deny != c.deny || known != c.known {
			t.Errorf("%v %s: (%v, %v), want (%v, %v)", c.tokens, c.path, deny, known, c.deny, c.known)
		}
	}
}
