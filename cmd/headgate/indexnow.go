package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/headgate/headgate/app"
	"github.com/headgate/headgate/indexnow"
	"github.com/headgate/headgate/sitemap"
)

// cmdIndexnow is headgate indexnow (SPEC §13.3): the sitemap generated as
// headgate sitemap generates it (same upstream client), then the new and
// changed URLs submitted. The logic is in package indexnow.
func cmdIndexnow(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, cfgPath := newFlags("indexnow", "indexnow -config FILE -state FILE [-dry-run] [-all] [-metrics FILE]", stderr)
	state := fs.String("state", "", "the state file of the last successful run (required; written only when every batch succeeded)")
	dryRun := fs.Bool("dry-run", false, "log what would be submitted; submit nothing and leave the state as it is")
	all := fs.Bool("all", false, "submit every URL, also on a first run and when unchanged")
	metricsFile := fs.String("metrics", "", "write headgate_indexnow_urls_total to FILE in the Prometheus text format (node_exporter's textfile collector)")
	if code, stop := parse(fs, args); stop {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "headgate indexnow: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *state == "" {
		fmt.Fprintln(stderr, "headgate indexnow: -state FILE is required")
		return exitUsage
	}
	cfg, code := load(*cfgPath, stderr)
	if cfg == nil {
		return code
	}
	if cfg.IndexNow == nil {
		fmt.Fprintf(stderr, "headgate indexnow: %s has no [indexnow] table (key = …)\n", *cfgPath)
		return exitFix
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	// The proxy's own upstream client, as for headgate sitemap.
	p, stop, err := app.Proxy(cfg, log)
	if err != nil {
		fmt.Fprintf(stderr, "headgate indexnow: %v\n", err)
		return exitFix
	}
	defer stop()
	sm := sitemap.New(cfg, sitemap.Options{Fetch: p.Fetch, Logger: log})
	if !sm.Enabled() {
		fmt.Fprintf(stderr, "headgate indexnow: no rule in %s has sitemap = true: there are no URLs to submit\n", *cfgPath)
		return exitFix
	}
	reg := prometheus.NewRegistry()
	sum, err := indexnow.Run(ctx, indexnow.Options{
		Config: cfg, URLs: sm.Each, State: *state, DryRun: *dryRun, All: *all,
		Logger: log, Registerer: reg,
	})
	if *metricsFile != "" {
		if werr := writeMetrics(reg, *metricsFile); werr != nil {
			fmt.Fprintf(stderr, "headgate indexnow: -metrics: %v\n", werr)
		}
	}
	fmt.Fprintf(stdout, "urls=%d new=%d changed=%d submitted=%d batches=%d skipped_host=%d first_run=%v dry_run=%v\n",
		sum.URLs, sum.New, sum.Changed, sum.Submitted, sum.Batches, sum.SkippedHost, sum.FirstRun, *dryRun)
	if err != nil {
		fmt.Fprintf(stderr, "headgate indexnow: %v; the state is not written, the next run submits these URLs again\n", err)
		return exitFix
	}
	return exitOK
}

// writeMetrics writes reg's metrics to path atomically (temporary file and
// rename), as node_exporter's textfile collector wants.
func writeMetrics(reg *prometheus.Registry, path string) error {
	mfs, err := reg.Gather()
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(tmp, mf); err != nil {
			tmp.Close()
			return err
		}
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
