package bots_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/netip"

	"github.com/headgate/headgate/bots"
)

func ExampleVerifier_Identify() {
	cfg := bots.Defaults()
	cfg.Enabled = true
	cfg.RangesDir = "testdata/ranges" // googlebot.json as Google publishes it
	cfg.ReverseDNS = false
	v, err := bots.New(cfg, bots.Options{})
	if err != nil {
		panic(err)
	}
	acc, _ := bots.NewAccess(bots.Config{Spoofed: "deny"}, bots.AccessOptions{})

	r := httptest.NewRequest("GET", "/page", nil)
	r.Header.Set("User-Agent", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)")
	for _, client := range []string{"66.249.64.1", "203.0.113.9"} {
		id := v.Identify(context.Background(), r, netip.MustParseAddr(client))
		deny, rule := acc.Decide(id, r.URL.Path)
		fmt.Printf("%s: %s deny=%v rule=%d\n", client, id.Header(), deny, rule)
	}
	// Output:
	// 66.249.64.1: name=googlebot, category=search, verified=ip deny=false rule=-1
	// 203.0.113.9: name=googlebot, category=search, verified=no deny=true rule=-2
}
