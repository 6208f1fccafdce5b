package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/headgate/headgate/app"
	"github.com/headgate/headgate/internal/gcfloor"
	"github.com/headgate/headgate/proxy"
	"github.com/headgate/headgate/rules"
)

func cmdServe(ctx context.Context, args []string, stderr io.Writer) int {
	fs, cfgPath := newFlags("serve", "[serve] -config FILE [-log-format text|json] [-log-level debug|info|warn|error] [-gc-floor MIB]", stderr)
	format := fs.String("log-format", "text", "log format: text or json")
	level := fs.String("log-level", "info", "log level: debug, info, warn or error")
	gcFloor := fs.Uint64("gc-floor", defaultGCFloorMiB, "MiB the heap may always grow by before the Go collector runs\n(GOGC tuned after each collection; 0: off; GOGC in the\nenvironment turns it off too, GOMEMLIMIT still binds). See docs/operations.md")
	if code, stop := parse(fs, args); stop {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "headgate serve: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	log, err := newLogger(stderr, *format, *level)
	if err != nil {
		fmt.Fprintf(stderr, "headgate serve: %v\n", err)
		return exitUsage
	}
	// Lines the standard library writes through the log package (net/http's
	// transport: "Unsolicited response received on idle HTTP channel…") go
	// through the same handler, so -log-format json never emits plain text.
	slog.SetDefault(log)
	if *gcFloor > 1<<20 {
		fmt.Fprintf(stderr, "headgate serve: -gc-floor %d: a number of MiB, at most %d\n", *gcFloor, 1<<20)
		return exitUsage
	}
	if t := gcfloor.Start(*gcFloor << 20); t != nil {
		defer t.Stop()
		log.Debug("collector headroom floor", "mib", *gcFloor)
	}

	hup := make(chan os.Signal, 1)
	notifyReload(hup)
	defer signal.Stop(hup)
	reload := make(chan struct{}, 1)
	go func() {
		for range hup {
			select {
			case reload <- struct{}{}:
			default: // a reload is already pending
			}
		}
	}()

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	demo := &app.Demo{Logger: log}
	defer demo.Close()
	o := proxy.ServeOptions{
		Options: proxy.Options{
			Logger:   log,
			Registry: reg,
			Sitemap:  app.Sitemaps(log, reg),
			Demo:     demo.URL,
		},
		Reload: reload,
		Stderr: stderr,
	}
	if err := proxy.Serve(ctx, *cfgPath, o); err != nil {
		var ps rules.Problems
		if errors.As(err, &ps) {
			fmt.Fprintf(stderr, "%s: %d problem(s); headgate did not start\n", *cfgPath, len(ps))
			return exitFix
		}
		log.Error("headgate stopped", "err", err)
		return exitFix
	}
	return exitOK
}

// defaultGCFloorMiB is serve's -gc-floor: off, the Go default. With its
// own upstream client (proxy/h1.go) headgate measured no CPU back from a
// floor of 8 MiB (paired against the plain proxy: 0.8785 with it, 0.8645
// without, fresh head, 32 connections; 0.854 and 0.826 at 256), by the
// collector's own account 2 % (3.3 us of mark a request), for a peak RSS of
// 1.84x the plain proxy's against 1.47x (docs/performance.md, "The
// collector"). An operator who has CPU to save and memory to spare sets it.
const defaultGCFloorMiB = 0

func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("-log-level %q: use debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("-log-format %q: use text or json", format)
}
