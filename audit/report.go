package audit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"sort"

	"github.com/headgate/headgate/rewrite"
)

// sorted returns a copy of the report in the stable order of Run.
func (r *Report) sorted() *Report {
	c := &Report{
		Findings: append([]Finding(nil), r.Findings...),
		Pages:    append([]Page(nil), r.Pages...),
		Skipped:  append([]Skip(nil), r.Skipped...),
	}
	c.sort()
	return c
}

// counts returns the errors and warnings.
func (r *Report) counts() (errs, warns int) {
	for _, f := range r.Findings {
		if f.Severity == Error {
			errs++
		} else {
			warns++
		}
	}
	return errs, warns
}

type group struct {
	Check    Check
	Findings []Finding
}

// groups returns the findings by check, in the order of Checks; a check
// the package does not know (a report read back from JSON) comes last.
func (r *Report) groups() []group {
	by := map[string][]Finding{}
	for _, f := range r.Findings {
		by[f.Check] = append(by[f.Check], f)
	}
	var gs []group
	for _, c := range checks {
		if fs := by[c.ID]; len(fs) > 0 {
			gs = append(gs, group{c, fs})
			delete(by, c.ID)
		}
	}
	var rest []string
	for id := range by {
		rest = append(rest, id)
	}
	sort.Strings(rest)
	for _, id := range rest {
		gs = append(gs, group{Check{ID: id, Severity: by[id][0].Severity}, by[id]})
	}
	return gs
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// WriteText writes the findings grouped by check, then what was skipped,
// then a summary line.
func (r *Report) WriteText(w io.Writer) error {
	r = r.sorted()
	bw := bufio.NewWriter(w)
	for _, g := range r.groups() {
		fmt.Fprintf(bw, "%s (%s, %d) — %s\n", g.Check.ID, g.Check.Severity, len(g.Findings), g.Check.Finds)
		for _, f := range g.Findings {
			fmt.Fprintf(bw, "  %s\n      %s\n", f.URL, f.Detail)
		}
		fmt.Fprintln(bw)
	}
	if len(r.Skipped) > 0 {
		fmt.Fprintf(bw, "skipped (%d)\n", len(r.Skipped))
		for _, s := range r.Skipped {
			if s.URL == "" {
				fmt.Fprintf(bw, "  %s\n", s.Reason)
			} else {
				fmt.Fprintf(bw, "  %s\n      %s\n", s.URL, s.Reason)
			}
		}
		fmt.Fprintln(bw)
	}
	errs, warns := r.counts()
	fmt.Fprintf(bw, "%s, %s on %s", plural(errs, "error"), plural(warns, "warning"), plural(len(r.Pages), "page"))
	if changed := r.changedPages(); changed > 0 {
		fmt.Fprintf(bw, "; headgate changes the head of %s (-format html or json lists the tags)", plural(changed, "page"))
	}
	fmt.Fprintln(bw)
	return bw.Flush()
}

func (r *Report) changedPages() int {
	n := 0
	for _, p := range r.Pages {
		if len(p.Changes) > 0 {
			n++
		}
	}
	return n
}

type jsonChange struct {
	Action   string `json:"action"`
	Identity string `json:"identity"`
	Reason   string `json:"reason,omitempty"`
	Value    string `json:"value,omitempty"`
}

type jsonPage struct {
	URL       string       `json:"url"`
	Status    int          `json:"status"`
	Location  string       `json:"location,omitempty"`
	Canonical string       `json:"canonical,omitempty"`
	Outcome   string       `json:"outcome,omitempty"`
	Changes   []jsonChange `json:"changes,omitempty"`
}

type jsonReport struct {
	Findings []Finding  `json:"findings"`
	Pages    []jsonPage `json:"pages"`
	Skipped  []Skip     `json:"skipped"`
}

// WriteJSON writes {"findings": […], "pages": […], "skipped": […]}, in a
// stable order: findings by check, URL and detail; pages by URL.
func (r *Report) WriteJSON(w io.Writer) error {
	r = r.sorted()
	out := jsonReport{Findings: r.Findings, Pages: []jsonPage{}, Skipped: r.Skipped}
	if out.Findings == nil {
		out.Findings = []Finding{}
	}
	if out.Skipped == nil {
		out.Skipped = []Skip{}
	}
	for _, p := range r.Pages {
		jp := jsonPage{URL: p.URL, Status: p.Status, Location: p.Location, Canonical: p.Canonical, Outcome: p.Outcome}
		for _, c := range p.Changes {
			jp.Changes = append(jp.Changes, jsonChange{string(c.Action), c.Identity, c.Reason, c.Value})
		}
		out.Pages = append(out.Pages, jp)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

type htmlSummary struct {
	ID, Severity, Finds string
	Count               int
}

type htmlPage struct {
	URL     string
	Outcome string
	Changes []rewrite.Change
}

type htmlData struct {
	Errors, Warnings, Pages, Skips int
	Summary                        []htmlSummary
	Groups                         []group
	Changed                        []htmlPage
	Skipped                        []Skip
}

// WriteHTML writes one self-contained HTML file: a summary with the count
// per check, the findings grouped by check, the tags headgate writes,
// replaces, corrects and drops per page (in-process mode), and what was
// skipped. It has no scripts and loads nothing.
func (r *Report) WriteHTML(w io.Writer) error {
	r = r.sorted()
	d := htmlData{Pages: len(r.Pages), Skips: len(r.Skipped), Skipped: r.Skipped, Groups: r.groups()}
	d.Errors, d.Warnings = r.counts()
	for _, g := range d.Groups {
		d.Summary = append(d.Summary, htmlSummary{g.Check.ID, g.Check.Severity, g.Check.Finds, len(g.Findings)})
	}
	for _, p := range r.Pages {
		if len(p.Changes) > 0 {
			d.Changed = append(d.Changed, htmlPage{p.URL, p.Outcome, p.Changes})
		}
	}
	return htmlReport.Execute(w, d)
}

var htmlReport = template.Must(template.New("report").Funcs(template.FuncMap{"plural": plural}).Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>headgate audit: {{plural .Errors "error"}}, {{plural .Warnings "warning"}}</title>
<style>
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;color:#1d1d1f;background:#fff}
h1{font-size:1.6rem;margin-bottom:.3rem}h2{font-size:1.2rem;margin-top:2.2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
h3{font-size:1rem;margin:1.2rem 0 .3rem;word-break:break-all}
table{border-collapse:collapse;width:100%;margin:.5rem 0}th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #eee;vertical-align:top}
th{background:#f6f6f6;font-weight:600}td.url{word-break:break-all;width:40%}
.sev{display:inline-block;border-radius:.25rem;padding:0 .4rem;font-size:.8rem;font-weight:600;color:#fff}
.error{background:#c62828}.warning{background:#b26a00}
.totals span{margin-right:1.2rem}.muted{color:#666}code{font:13px ui-monospace,SFMono-Regular,Menlo,monospace}
.wrote{color:#1b5e20}.replaced{color:#0d47a1}.corrected{color:#4a148c}.dropped{color:#b71c1c}
</style>
</head>
<body>
<h1>headgate audit</h1>
<p class="totals"><span>{{plural .Errors "error"}}</span><span>{{plural .Warnings "warning"}}</span><span>{{plural .Pages "page"}}</span><span>{{.Skips}} skipped</span></p>
{{if .Summary}}
<h2>Summary</h2>
<table>
<tr><th>check</th><th>severity</th><th>finds</th><th>count</th></tr>
{{range .Summary}}<tr><td><a href="#{{.ID}}"><code>{{.ID}}</code></a></td><td><span class="sev {{.Severity}}">{{.Severity}}</span></td><td>{{.Finds}}</td><td>{{.Count}}</td></tr>
{{end}}</table>
{{else}}
<p>No findings.</p>
{{end}}
{{range .Groups}}
<h2 id="{{.Check.ID}}"><code>{{.Check.ID}}</code> <span class="sev {{.Check.Severity}}">{{.Check.Severity}}</span> <span class="muted">{{len .Findings}}</span></h2>
{{if .Check.Finds}}<p class="muted">{{.Check.Finds}}</p>{{end}}
<table>
<tr><th>page</th><th>detail</th></tr>
{{range .Findings}}<tr><td class="url"><a href="{{.URL}}">{{.URL}}</a></td><td>{{.Detail}}</td></tr>
{{end}}</table>
{{end}}
{{if .Changed}}
<h2 id="changes">What headgate changes</h2>
{{range .Changed}}
<h3>{{.URL}} <span class="muted">{{.Outcome}}</span></h3>
<table>
<tr><th>action</th><th>tag</th><th>value</th><th>reason</th></tr>
{{range .Changes}}<tr><td class="{{.Action}}">{{.Action}}</td><td><code>{{.Identity}}</code></td><td><code>{{.Value}}</code></td><td>{{.Reason}}</td></tr>
{{end}}</table>
{{end}}
{{end}}
{{if .Skipped}}
<h2 id="skipped">Skipped</h2>
<table>
<tr><th>URL</th><th>reason</th></tr>
{{range .Skipped}}<tr><td class="url">{{.URL}}</td><td>{{.Reason}}</td></tr>
{{end}}</table>
{{end}}
</body>
</html>
`))
