// Command caddy is Caddy with headgate's module, built as xcaddy would:
//
//	cd caddy && go build -o caddy ./cmd/caddy
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/headgate/headgate/caddy"
)

func main() {
	caddycmd.Main()
}
