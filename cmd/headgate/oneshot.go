package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"

	"github.com/headgate/headgate/app"
	"github.com/headgate/headgate/audit"
	"github.com/headgate/headgate/sitemap"
)

func cmdSitemap(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, cfgPath := newFlags("sitemap", "sitemap -config FILE [-o DIR]", stderr)
	dir := fs.String("o", "", "write sitemap.xml (an index when there is more than one file) and sitemap-N.xml into DIR; default: the sitemap to stdout")
	if code, stop := parse(fs, args); stop {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "headgate sitemap: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	cfg, code := load(*cfgPath, stderr)
	if cfg == nil {
		return code
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// The proxy's own upstream client: the file written is the one served.
	p, stop, err := app.Proxy(cfg, log)
	if err != nil {
		fmt.Fprintf(stderr, "headgate sitemap: %v\n", err)
		return exitFix
	}
	defer stop()
	sm := sitemap.New(cfg, sitemap.Options{Fetch: p.Fetch, Logger: log})
	if !sm.Enabled() {
		fmt.Fprintf(stderr, "headgate sitemap: no rule in %s has sitemap = true\n", *cfgPath)
		return exitFix
	}
	if *dir != "" {
		if err := os.MkdirAll(*dir, 0o755); err != nil {
			fmt.Fprintf(stderr, "headgate sitemap: %v\n", err)
			return exitFix
		}
		err = sm.WriteFiles(ctx, *dir)
	} else {
		err = sm.WriteTo(ctx, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "headgate sitemap: %v\n", err)
		return exitFix
	}
	return exitOK
}

func cmdAudit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, cfgPath := newFlags("audit", "audit -config FILE [-live URL] [-max-pages N] [-concurrency N] [-format text|json|html] [-o FILE] [-fail-on error|warning|never] [-baseline FILE] [-compare URL] [-experiment NAME] [URL...]", stderr)
	live := fs.String("live", "", "crawl this running site as it answers, instead of the upstream through the rewrite engine")
	maxPages := fs.Int("max-pages", audit.DefaultMaxPages, "the most URLs to fetch")
	conc := fs.Int("concurrency", audit.DefaultConcurrency, "requests under way at once")
	timeout := fs.Duration("timeout", audit.DefaultTimeout, "per-request timeout")
	format := fs.String("format", "text", "report format: text, json or html")
	out := fs.String("o", "", "write the report to FILE (default stdout)")
	failOn := fs.String("fail-on", "error", "exit 1 when a finding is at least this severe: error, warning or never")
	baseline := fs.String("baseline", "", "the JSON report of an earlier run: mark findings new or known, list the fixed, fail on new findings only")
	compare := fs.String("compare", "", "crawl this second site (production) along the same paths and report the differences")
	experiment := fs.String("experiment", "", "report the findings per group of this [[experiment]] (control, variant)")
	if code, stop := parse(fs, args); stop {
		return code
	}
	if !audit.ValidLevel(*failOn) {
		fmt.Fprintf(stderr, "headgate audit: -fail-on %q: use error, warning or never\n", *failOn)
		return exitUsage
	}
	if *format != "text" && *format != "json" && *format != "html" {
		fmt.Fprintf(stderr, "headgate audit: -format %q: use text, json or html\n", *format)
		return exitUsage
	}
	if *maxPages < 1 || *conc < 1 || *timeout <= 0 {
		fmt.Fprintln(stderr, "headgate audit: -max-pages, -concurrency and -timeout must be positive")
		return exitUsage
	}
	if *live != "" {
		if u, err := url.Parse(*live); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			fmt.Fprintf(stderr, "headgate audit: -live %q: give the http(s) URL of the running site\n", *live)
			return exitUsage
		}
	}
	if *compare != "" {
		if u, err := url.Parse(*compare); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			fmt.Fprintf(stderr, "headgate audit: -compare %q: give the http(s) URL of the site to compare with\n", *compare)
			return exitUsage
		}
	}
	var base *audit.Baseline
	if *baseline != "" {
		b, err := readBaseline(*baseline)
		if err != nil {
			fmt.Fprintf(stderr, "headgate audit: -baseline %s: %v\n", *baseline, err)
			return exitUsage
		}
		base = b
	}
	cfg, code := load(*cfgPath, stderr)
	if cfg == nil {
		return code
	}
	if *experiment != "" && cfg.Experiment(*experiment) == nil {
		fmt.Fprintf(stderr, "headgate audit: -experiment: no experiment %q in %s\n", *experiment, *cfgPath)
		return exitUsage
	}
	o := audit.Options{
		Compare:     *compare,
		Config:      cfg,
		Live:        *live,
		MaxPages:    *maxPages,
		Concurrency: *conc,
		Timeout:     *timeout,
		Logger:      slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	if *live == "" {
		// In process: the audit asks headgate's own request pipeline.
		stop, err := app.AuditInProcess(&o)
		if err != nil {
			fmt.Fprintf(stderr, "headgate audit: %v\n", err)
			return exitFix
		}
		defer stop()
	}
	if isTerminal(stderr) {
		o.Progress = stderr
	}
	rep, runErr := audit.Run(ctx, o, fs.Args())
	if rep == nil {
		fmt.Fprintf(stderr, "headgate audit: %v\n", runErr)
		return exitFix
	}
	if base != nil {
		rep.ApplyBaseline(base)
	}
	if *experiment != "" {
		if err := rep.ApplyExperiment(cfg, *experiment); err != nil {
			fmt.Fprintf(stderr, "headgate audit: -experiment: %v\n", err)
			return exitUsage
		}
	}
	if err := writeReport(rep, *format, *out, stdout); err != nil {
		fmt.Fprintf(stderr, "headgate audit: %v\n", err)
		return exitFix
	}
	if runErr != nil {
		// Interrupted: the report above covers what was crawled so far.
		fmt.Fprintf(stderr, "headgate audit: stopped early: %v\n", runErr)
		return exitFix
	}
	if rep.Fails(*failOn) {
		return exitFix
	}
	return exitOK
}

// writeReport writes the audit's report in format (text, json or html) to
// the file out, or to stdout when out is "".
func writeReport(rep *audit.Report, format, out string, stdout io.Writer) (err error) {
	w := stdout
	if out != "" {
		f, err := os.Create(out)
		if err != nil {
			return err
		}
		defer func() {
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}()
		w = f
	}
	switch format {
	case "json":
		return rep.WriteJSON(w)
	case "html":
		return rep.WriteHTML(w)
	}
	return rep.WriteText(w)
}

// isTerminal reports whether w is a character device (a terminal), for the
// audit's progress line.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// readBaseline reads the -baseline file.
func readBaseline(path string) (*audit.Baseline, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return audit.ReadBaseline(f)
}
