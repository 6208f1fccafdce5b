// Package headgate is headgate's engine as a Caddy module: the HTTP
// handler http.handlers.headgate and the Caddyfile directive headgate.
//
//	{
//		order headgate before reverse_proxy   # the default; needed only to move it
//	}
//	example.com {
//		headgate {
//			config /etc/headgate/headgate.toml
//		}
//		reverse_proxy 127.0.0.1:8080           # or file_server, php_fastcgi, …
//	}
//
// or, in one line, `headgate * /etc/headgate/headgate.toml`: a first
// argument that starts with a slash is a path matcher to Caddyfile, so an
// absolute path needs the matcher (`*`) before it.
//
// The handler is host code only: Provision loads the config file
// (rules.Load, so a bad file fails `caddy validate` and `caddy reload`
// with headgate's HG codes and file:line) and wraps the rest of Caddy's
// route with proxy.Middleware; ServeHTTP hands every request to it;
// Cleanup closes it. Every decision — deny rules, redirects, [bots], the
// sitemap and robots.txt, the head rewrite, Markdown — is package proxy's,
// made in the same ServeHTTP as `headgate serve`'s. The config's
// server.upstream must be "builtin:next": the handlers after headgate in
// the route are its upstream. A reload of Caddy's config provisions a new
// handler with the file as it is then.
//
// Registration is by init, as Caddy requires of its modules; it lives
// here, in a Go module of its own (caddy/go.mod), so that headgate's own
// module never depends on Caddy.
package headgate
