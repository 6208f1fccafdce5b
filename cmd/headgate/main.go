package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Exit codes (SPEC §1).
const (
	exitOK    = 0
	exitFix   = 1 // a problem the user must fix: a bad config, audit findings
	exitUsage = 2
)

const usage = `headgate — a reverse proxy that fixes the document head of every HTML page.

Usage:
  headgate [serve] -config FILE            run the proxy
  headgate check -config FILE              validate the config; every problem, exit 1 if any
  headgate explain -config FILE PATH       which rules match PATH, in merge order, and what they write
                                           (-ua UA -ip ADDR: as that client; how [bots] identifies it)
  headgate rewrite -config FILE -path PATH [-content-type TYPE] [FILE]
                                           rewrite one HTML document (FILE or stdin) to stdout, through the proxy
  headgate sitemap -config FILE [-o DIR]   write the sitemap (to stdout, or DIR for an index + parts)
  headgate audit -config FILE [flags] [URL...]
                                           crawl and report head problems
  headgate indexnow -config FILE -state FILE [-dry-run] [-all]
                                           submit new and changed sitemap URLs to IndexNow
  headgate experiment export -config FILE -name NAME [-format csv|json]
                                           the sitemap URLs of a split test with their group (url,group)
  headgate version                         print the version

-config defaults to $HEADGATE_CONFIG, then headgate.toml. HEADGATE_LISTEN,
HEADGATE_ADMIN_LISTEN, HEADGATE_UPSTREAM and HEADGATE_BASE_URL override
server.listen, server.admin_listen, server.upstream and site.base_url.

Exit codes: 0 ok, 1 a problem to fix (bad config, audit findings), 2 usage.
Run "headgate COMMAND -h" for a command's flags. Docs: docs/index.md.
`

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	cmd := "serve"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return cmdServe(ctx, args, stderr)
	case "check":
		return cmdCheck(args, stdout, stderr)
	case "explain":
		return cmdExplain(args, stdout, stderr)
	case "rewrite":
		return cmdRewrite(args, stdin, stdout, stderr)
	case "sitemap":
		return cmdSitemap(ctx, args, stdout, stderr)
	case "audit":
		return cmdAudit(ctx, args, stdout, stderr)
	case "experiment":
		return cmdExperiment(ctx, args, stdout, stderr)
	case "indexnow":
		return cmdIndexnow(ctx, args, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "headgate", version())
		return exitOK
	case "help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "headgate: unknown command %q\n\n%s", cmd, usage)
	return exitUsage
}
