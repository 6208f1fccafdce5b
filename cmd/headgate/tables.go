package main

import (
	"fmt"
	"io"

	"github.com/headgate/headgate/rules"
)

// explainRows names the data table rows (§12) that applied to the page,
// each at its file:line.
func explainRows(w io.Writer, head *rules.Head, rows []rules.DataRow) {
	if head.HreflangTable {
		fmt.Fprintln(w, "\nOn a non-HTML response, from the hreflang table:")
		for _, a := range head.Alternates {
			fmt.Fprintf(w, "  Link: <%s>; rel=\"alternate\"; hreflang=\"%s\"\n", a.Href, a.Hreflang)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "\nTable rows that applied:")
	for _, r := range rows {
		what := r.Kind
		if r.Table != "" {
			what += " " + r.Table
		}
		if !r.Found {
			fmt.Fprintf(w, "  %-22s %s: no row for %q (its fields are not written)\n", what, r.File, r.Key)
			continue
		}
		fmt.Fprintf(w, "  %-22s %s:%d  %s\n", what, r.File, r.Line, r.Key)
	}
}

// checkTables lists the data tables check loaded, with their rows.
func checkTables(w io.Writer, cfg *rules.Config) {
	for _, t := range cfg.RedirectTables {
		fmt.Fprintf(w, "  redirect_table: %s, %d rows", t.File, t.Rows)
		if t.Redundant > 0 {
			fmt.Fprintf(w, " (%d more left out: [normalize] already sends their from to their to)", t.Redundant)
		}
		fmt.Fprintln(w)
	}
	for _, t := range cfg.Tables() {
		what := t.Kind
		if t.Name != "" {
			what += " " + t.Name
		}
		fmt.Fprintf(w, "  %s: %s, %d rows\n", what, t.File, t.Rows)
	}
}
