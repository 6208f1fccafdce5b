package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/headgate/headgate/rewrite"
	"github.com/headgate/headgate/rules"
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

func cmdExplain(args []string, stdout, stderr io.Writer) int {
	fs, cfgPath := newFlags("explain", "explain -config FILE PATH", stderr)
	if code, stop := parse(fs, args); stop {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	cfg, code := load(*cfgPath, stderr)
	if cfg == nil {
		return code
	}
	target, req := explainTarget(cfg, fs.Arg(0))
	path, _, _ := strings.Cut(target, "?")
	if err := rules.CheckPath(path); err != nil {
		fmt.Fprintf(stdout, "%s: headgate answers 400 (a dot segment, a NUL or bad percent-encoding); nothing is forwarded\n", target)
		return exitOK
	}
	m := cfg.Resolve(target)
	fmt.Fprintf(stdout, "%s\n", fs.Arg(0))
	if !m.Deny && explainRedirect(stdout, cfg, req) {
		return exitOK
	}
	if !m.Any() {
		fmt.Fprintln(stdout, "  no rule matches: headgate only corrects the upstream's own tags")
	}
	for i, mr := range m.Matched {
		fmt.Fprintf(stdout, "  %d. %-30s %s:%d", i+1, m.Patterns()[i], *cfgPath, mr.Rule.Line)
		for _, p := range mr.Params {
			fmt.Fprintf(stdout, "  %s=%q", p.Name, p.Value)
		}
		fmt.Fprintln(stdout)
	}
	if m.Locale != "" {
		fmt.Fprintf(stdout, "  locale: %s\n", m.Locale)
	}
	explainReal(stdout, m)
	if m.Deny {
		fmt.Fprintln(stdout, "  deny: headgate answers 404; nothing is forwarded")
		return exitOK
	}
	fmt.Fprintf(stdout, "  policy: %s\n", m.Policy())
	// Render against an empty upstream head: what an HTML page would get.
	doc := []byte("<!DOCTYPE html><html><head></head><body></body></html>")
	r := rewrite.NewReader(bytes.NewReader(doc), rewrite.Options{Match: m, ContentType: "text/html; charset=utf-8", CorrectUpstream: cfg.Site.CorrectUpstream})
	out, _ := io.ReadAll(r)
	res := r.Result()
	head := res.Head
	fmt.Fprintln(stdout, "\nOn an HTML page with an empty head, headgate writes:")
	start := bytes.Index(out, []byte("<head>")) + len("<head>")
	end := bytes.LastIndex(out, []byte("</head>"))
	if start > 0 && end >= start {
		for _, line := range strings.Split(strings.TrimSpace(string(out[start:end])), "\n") {
			if line != "" {
				fmt.Fprintf(stdout, "  %s\n", line)
			}
		}
	}
	if head != nil {
		if head.Canonical != nil || head.Robots != nil {
			fmt.Fprintln(stdout, "\nOn a non-HTML response (a PDF, an image):")
			if head.Canonical != nil {
				fmt.Fprintf(stdout, "  Link: <%s>; rel=\"canonical\"\n", *head.Canonical)
			}
			if head.Robots != nil {
				fmt.Fprintf(stdout, "  X-Robots-Tag: %s\n", *head.Robots)
			}
		}
		if len(head.Headers) > 0 {
			fmt.Fprintln(stdout, "\nResponse headers:")
			for _, h := range head.Headers {
				fmt.Fprintf(stdout, "  %s: %s\n", h.Name, h.Value)
			}
		}
		for _, d := range head.Dropped {
			fmt.Fprintf(stdout, "\ndropped %s of rule %q: %q (%s)\n", d.Field, d.Rule, d.Value, d.Reason)
		}
		explainRows(stdout, head, m.DataRows(head))
	}
	if cfg.Site.Mode == rules.ModeStaging {
		fmt.Fprintln(stdout, "\nstaging mode: every response also gets X-Robots-Tag: noindex, nofollow")
	}
	return exitOK
}

func cmdRewrite(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs, cfgPath := newFlags("rewrite", "rewrite -config FILE -path PATH [-content-type TYPE] [-changes] [FILE]", stderr)
	path := fs.String("path", "", "the request target as it arrives (percent-encoded, optionally with ?query)")
	ctype := fs.String("content-type", "text/html", "the response's Content-Type; the default names no charset, so the document's own <meta charset> decides, as a browser does")
	csp := fs.String("csp", "", "the response's Content-Security-Policy (for a script nonce)")
	changes := fs.Bool("changes", false, "list what was changed on stderr")
	if code, stop := parse(fs, args); stop {
		return code
	}
	if *path == "" || fs.NArg() > 1 {
		fs.Usage()
		return exitUsage
	}
	cfg, code := load(*cfgPath, stderr)
	if cfg == nil {
		return code
	}
	in := stdin
	if fs.NArg() == 1 {
		f, err := os.Open(fs.Arg(0))
		if err != nil {
			fmt.Fprintf(stderr, "headgate rewrite: %v\n", err)
			return exitFix
		}
		defer f.Close()
		in = f
	}
	p, _, _ := strings.Cut(*path, "?")
	if err := rules.CheckPath(p); err != nil {
		fmt.Fprintf(stderr, "headgate rewrite: %q: the proxy answers 400 for this path (a dot segment, a NUL or bad percent-encoding)\n", *path)
		return exitFix
	}
	m := cfg.Resolve(*path)
	r := rewrite.NewReader(in, rewrite.Options{
		Match:           m,
		ContentType:     *ctype,
		CSP:             *csp,
		MaxHeadBytes:    cfg.Server.MaxHeadBytes,
		CorrectUpstream: cfg.Site.CorrectUpstream,
		Shadow:          cfg.Site.Mode == rules.ModeShadow,
	})
	if _, err := io.Copy(stdout, r); err != nil {
		fmt.Fprintf(stderr, "headgate rewrite: %v\n", err)
		return exitFix
	}
	if *changes {
		res := r.Result()
		fmt.Fprintf(stderr, "%s: wrote=%d replaced=%d corrected=%d dropped=%d\n", res.Outcome,
			res.Count(rewrite.Wrote), res.Count(rewrite.Replaced), res.Count(rewrite.Corrected), res.Count(rewrite.Dropped))
		if res.Reason != "" {
			fmt.Fprintf(stderr, "  %s\n", res.Reason)
		}
		for _, c := range res.Changes {
			line := fmt.Sprintf("  %-9s %-22s %s", c.Action, c.Label(), c.Value)
			if c.Reason != "" {
				line += " (" + c.Reason + ")"
			}
			fmt.Fprintln(stderr, strings.TrimRight(line, " "))
		}
	}
	return exitOK
}
