package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/headgate/headgate/app"
	"github.com/headgate/headgate/proxy"
	"github.com/headgate/headgate/rules"
	"github.com/headgate/headgate/sitemap"
)

// cmdExperiment runs `headgate experiment export` (SPEC §21).
func cmdExperiment(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "export" {
		fmt.Fprintln(stderr, "usage: headgate experiment export -config FILE -name NAME [-format csv|json] [-at TIME]")
		return exitUsage
	}
	fs, cfgPath := newFlags("experiment export", "experiment export -config FILE -name NAME [-format csv|json] [-at TIME]", stderr)
	name := fs.String("name", "", "the experiment (its name in [[experiment]])")
	format := fs.String("format", "csv", "csv (a url,group header line) or json")
	atFlag := fs.String("at", "", "the time whose groups to list, RFC 3339; default now, or the test's start when now is outside start..end")
	if code, stop := parse(fs, args[1:]); stop {
		return code
	}
	if *name == "" || fs.NArg() > 0 || (*format != "csv" && *format != "json") {
		fs.Usage()
		return exitUsage
	}
	cfg, code := load(*cfgPath, stderr)
	if cfg == nil {
		return code
	}
	e := cfg.Experiment(*name)
	if e == nil {
		var names []string
		for _, x := range cfg.Experiments() {
			names = append(names, x.Name)
		}
		fmt.Fprintf(stderr, "headgate experiment export: no experiment %q in %s (it has: %s)\n", *name, *cfgPath, strings.Join(names, ", "))
		return exitFix
	}
	at := exportTime(e, time.Now())
	if *atFlag != "" {
		t, err := time.Parse(time.RFC3339, *atFlag)
		if err != nil {
			fmt.Fprintf(stderr, "headgate experiment export: -at %q: %v\n", *atFlag, err)
			return exitUsage
		}
		at = t
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	p, stop, err := app.Proxy(cfg, log)
	if err != nil {
		fmt.Fprintf(stderr, "headgate experiment export: %v\n", err)
		return exitFix
	}
	defer stop()
	sm := sitemap.New(cfg, sitemap.Options{Fetch: p.Fetch, Logger: log})
	if !sm.Enabled() {
		fmt.Fprintf(stderr, "headgate experiment export: no rule in %s has sitemap = true: there are no URLs to list\n", *cfgPath)
		return exitFix
	}
	rows, err := exportRows(ctx, cfg.WithClock(func() time.Time { return at }), sm, e.Name)
	if err != nil {
		fmt.Fprintf(stderr, "headgate experiment export: %v\n", err)
		return exitFix
	}
	if *format == "json" {
		out := struct {
			Experiment string      `json:"experiment"`
			Match      string      `json:"match"`
			Share      int         `json:"variant_share"`
			At         string      `json:"at"`
			Pages      []exportRow `json:"pages"`
		}{e.Name, e.Match, e.Share, at.UTC().Format(time.RFC3339), rows}
		if out.Pages == nil {
			out.Pages = []exportRow{}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(out)
	} else {
		w := csv.NewWriter(stdout)
		w.Write([]string{"url", "group"})
		for _, r := range rows {
			w.Write([]string{r.URL, r.Group})
		}
		w.Flush()
		err = w.Error()
	}
	if err != nil {
		fmt.Fprintf(stderr, "headgate experiment export: %v\n", err)
		return exitFix
	}
	return exitOK
}

type exportRow struct {
	URL   string `json:"url"`
	Group string `json:"group"`
}

// exportTime is when the export reads the groups by default: now while
// the test runs; outside start..end, where every page is control, the
// start (or the last instant before the end), so that the file lists the
// groups the test assigns.
func exportTime(e *rules.Experiment, now time.Time) time.Time {
	switch {
	case !e.Start.IsZero() && now.Before(e.Start):
		return e.Start
	case !e.End.IsZero() && !now.Before(e.End):
		if !e.Start.IsZero() {
			return e.Start
		}
		return e.End.Add(-time.Nanosecond)
	}
	return now
}

// exportRows lists every sitemap URL the experiment covers, with its
// group, in sitemap order. Each URL's path goes through cfg.Resolve, the
// one decision the server makes for it, so the export is what is served.
func exportRows(ctx context.Context, cfg *rules.Config, sm *sitemap.Sitemap, name string) ([]exportRow, error) {
	var rows []exportRow
	err := sm.Each(ctx, func(loc, _ string) {
		u, err := url.Parse(loc)
		if err != nil {
			return
		}
		target := u.EscapedPath()
		if u.RawQuery != "" {
			target += "?" + u.RawQuery
		}
		m := cfg.Resolve(target)
		if n, g := m.Experiment(); n == name {
			rows = append(rows, exportRow{URL: loc, Group: g})
		}
	})
	return rows, err
}

// explainExperiment says which split test covers the page and its group
// (from the decision Record), and on a variant page which fields the
// variant sets.
func explainExperiment(w io.Writer, cfg *rules.Config, rec *proxy.Record) {
	if rec.Experiment == "" {
		return
	}
	fmt.Fprintf(w, "  experiment %s: group %s", rec.Experiment, rec.Group)
	if rec.Group == rules.GroupVariant {
		fmt.Fprint(w, " (the variant's fields merge over every rule and page_table row)")
	} else {
		fmt.Fprint(w, " (served as the rules say)")
	}
	fmt.Fprintln(w)
	if e := cfg.Experiment(rec.Experiment); e != nil {
		when := func(t time.Time) string {
			if t.IsZero() {
				return "—"
			}
			return t.Format(time.RFC3339)
		}
		fmt.Fprintf(w, "    bucket %d of 10000 (of %s, the page's canonical path), variant below %d; runs %s to %s (UTC; outside it every page is control)\n",
			rules.Bucket(e.Name, rec.Match.ExperimentPath()), rec.Match.ExperimentPath(), e.Share*100, when(e.Start), e.EndText())
	}
}
