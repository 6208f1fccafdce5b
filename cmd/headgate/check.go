package main

import (
	"fmt"
	"io"
)

func cmdCheck(args []string, stdout, stderr io.Writer) int {
	fs, cfgPath := newFlags("check", "check -config FILE", stderr)
	if code, stop := parse(fs, args); stop {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "headgate check: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	cfg, code := load(*cfgPath, stderr)
	if cfg == nil {
		return code
	}
	fmt.Fprintf(stdout, "%s: ok (%d rules, upstream %s, base URL %s, mode %s)\n",
		*cfgPath, len(cfg.Rules), cfg.Server.Upstream, cfg.Site.BaseURL, cfg.Site.Mode)
	checkTables(stdout, cfg)
	return exitOK
}
