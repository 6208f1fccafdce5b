package audit

import (
	"bufio"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"

	"github.com/headgate/headgate/rewrite"
)

// sorted returns a copy of the report in the stable order of Run.
func (r *Report) sorted() *Report {
	c := &Report{
		Findings:     append([]Finding(nil), r.Findings...),
		Pages:        append([]Page(nil), r.Pages...),
		Skipped:      append([]Skip(nil), r.Skipped...),
		Fixed:        append([]Finding(nil), r.Fixed...),
		NotRechecked: append([]Finding(nil), r.NotRechecked...),
		Robots:       r.Robots,
		Baseline:     r.Baseline,
		Experiment:   r.Experiment,
	}
	c.sort()
	sortFindings(c.Fixed)
	sortFindings(c.NotRechecked)
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
			gs = append(gs, group{c.Check, fs})
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
			mark := ""
			if f.Status == StatusNew {
				mark = " [new]"
			}
			if g := r.Experiment.groupOf(f.URL); g != "" {
				mark += " [" + g + "]"
			}
			fmt.Fprintf(bw, "  %s%s\n      %s\n", f.URL, mark, f.Detail)
		}
		fmt.Fprintln(bw)
	}
	if r.Baseline && len(r.Fixed) > 0 {
		fmt.Fprintf(bw, "fixed since the baseline (%d)\n", len(r.Fixed))
		for _, f := range r.Fixed {
			fmt.Fprintf(bw, "  %s %s\n      %s\n", f.Check, f.URL, f.Detail)
		}
		fmt.Fprintln(bw)
	}
	if r.Baseline && len(r.NotRechecked) > 0 {
		fmt.Fprintf(bw, "not rechecked: the baseline's findings on pages this run did not crawl (%d)\n", len(r.NotRechecked))
		for _, f := range r.NotRechecked {
			fmt.Fprintf(bw, "  %s %s\n", f.Check, f.URL)
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
	if r.Experiment != nil {
		r.Experiment.writeText(bw)
	}
	errs, warns := r.counts()
	fmt.Fprintf(bw, "%s, %s on %s", plural(errs, "error"), plural(warns, "warning"), plural(len(r.Pages), "page"))
	if r.Baseline {
		fmt.Fprintf(bw, "; against the baseline %d new, %d fixed", r.newCount(), len(r.Fixed))
		if len(r.NotRechecked) > 0 {
			fmt.Fprintf(bw, ", %d not rechecked", len(r.NotRechecked))
		}
	}
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
	URL          string       `json:"url"`
	Status       int          `json:"status"`
	Location     string       `json:"location,omitempty"`
	Redirects    []string     `json:"redirects,omitempty"`
	Canonical    string       `json:"canonical,omitempty"`
	BodyHash     string       `json:"body_hash,omitempty"`
	Outcome      string       `json:"outcome,omitempty"`
	Changes      []jsonChange `json:"changes,omitempty"`
	UpstreamHead string       `json:"upstream_head,omitempty"`
	ServedHead   string       `json:"served_head,omitempty"`
	Group        string       `json:"group,omitempty"` // with -experiment: the page's group
}

type jsonReport struct {
	Version  int       `json:"version"`
	Findings []Finding `json:"findings"`
	Fixed    []Finding `json:"fixed,omitempty"`
	// NotRechecked: the baseline's findings on pages this run did not crawl.
	NotRechecked []Finding   `json:"not_rechecked,omitempty"`
	Pages        []jsonPage  `json:"pages"`
	Skipped      []Skip      `json:"skipped"`
	Robots       *RobotsInfo `json:"robots,omitempty"`
	// Experiment: with -experiment, the findings per group (audit/experiment.go).
	Experiment *ExperimentSummary `json:"experiment,omitempty"`
}

// newCount is the number of findings a baseline did not have.
func (r *Report) newCount() int {
	n := 0
	for _, f := range r.Findings {
		if f.Status == StatusNew {
			n++
		}
	}
	return n
}

// WriteJSON writes {"findings": […], "pages": […], "skipped": […]}, in a
// stable order: findings by check, URL and detail; pages by URL.
func (r *Report) WriteJSON(w io.Writer) error {
	r = r.sorted()
	out := jsonReport{Version: ReportVersion, Findings: r.Findings, Pages: []jsonPage{}, Skipped: r.Skipped, Robots: r.Robots, Experiment: r.Experiment}
	if r.Baseline {
		out.Fixed, out.NotRechecked = r.Fixed, r.NotRechecked
		if out.Fixed == nil {
			out.Fixed = []Finding{}
		}
	}
	if out.Findings == nil {
		out.Findings = []Finding{}
	}
	if out.Skipped == nil {
		out.Skipped = []Skip{}
	}
	for _, p := range r.Pages {
		jp := jsonPage{URL: p.URL, Status: p.Status, Location: p.Location, Redirects: p.Redirects, Canonical: p.Canonical,
			BodyHash: p.BodyHash, Outcome: p.Outcome, UpstreamHead: p.UpstreamHead, ServedHead: p.ServedHead, Group: r.Experiment.groupOf(p.URL)}
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
	URL                      string
	Outcome                  string
	Changes                  []rewrite.Change
	UpstreamHead, ServedHead string
}

type htmlGroup struct {
	Check    Check
	Doc      CheckDoc
	Findings []Finding
}

type htmlData struct {
	Errors, Warnings, Pages, Skips int
	Baseline                       bool
	New, Known                     int
	Summary                        []htmlSummary
	Groups                         []htmlGroup
	Fixed                          []Finding
	NotRechecked                   []Finding
	Changed                        []htmlPage
	Skipped                        []Skip
	Robots                         *RobotsInfo
	CSP                            string
	Experiment                     *ExperimentSummary
	ExperimentRows                 []experimentRow
}

// WriteHTML writes one self-contained HTML file: a summary with the count
// per check, the findings grouped by check with each check's why and fix
// (the text of docs/audit.md), against a baseline the fixed findings, the
// tags headgate writes, replaces, corrects and drops per page with the
// upstream's head beside the served one (in-process mode), and what was
// skipped. It loads nothing; one inline script, allowed by its hash in the
// page's Content-Security-Policy, filters the findings by severity, check
// and status (the URL fragment holds the filter: #severity=error&check=…).
// With scripts off every finding shows.
func (r *Report) WriteHTML(w io.Writer) error {
	r = r.sorted()
	d := htmlData{Pages: len(r.Pages), Skips: len(r.Skipped), Skipped: r.Skipped, Baseline: r.Baseline, Fixed: r.Fixed, NotRechecked: r.NotRechecked, Robots: r.Robots, CSP: reportCSP}
	d.Errors, d.Warnings = r.counts()
	if d.Experiment = r.Experiment; d.Experiment != nil {
		d.ExperimentRows = d.Experiment.rows()
	}
	for _, g := range r.groups() {
		doc, _ := Doc(g.Check.ID)
		d.Groups = append(d.Groups, htmlGroup{g.Check, doc, g.Findings})
		d.Summary = append(d.Summary, htmlSummary{g.Check.ID, g.Check.Severity, g.Check.Finds, len(g.Findings)})
	}
	for _, f := range r.Findings {
		switch f.Status {
		case StatusNew:
			d.New++
		case StatusKnown:
			d.Known++
		}
	}
	for _, p := range r.Pages {
		if len(p.Changes) > 0 {
			d.Changed = append(d.Changed, htmlPage{p.URL, p.Outcome, p.Changes, headLines(p.UpstreamHead), headLines(p.ServedHead)})
		}
	}
	t, err := htmlReport.Clone()
	if err != nil {
		return err
	}
	return t.Funcs(template.FuncMap{"groupOf": r.Experiment.groupOf}).Execute(w, d)
}

// headLines puts each tag of a head on a line of its own, for reading;
// a control character (but a line break or tab) is shown as \u0001, not
// as a raw byte a browser draws as a box.
func headLines(h string) string {
	h = strings.ReplaceAll(h, "><", ">\n<")
	if strings.IndexFunc(h, isControl) < 0 {
		return h
	}
	var b strings.Builder
	for _, r := range h {
		if isControl(r) {
			fmt.Fprintf(&b, `\u%04X`, r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isControl(r rune) bool {
	return r < 0x20 && r != '\n' && r != '\r' && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0
}

// reportScript filters the findings. It reads and writes the filter in
// the URL fragment, so that a filtered report can be linked.
const reportScript = `(function () {
  var form = document.getElementById("filters");
  var sev = document.getElementById("f-severity"), chk = document.getElementById("f-check"), st = document.getElementById("f-status");
  form.hidden = false;
  function read() {
    var q = new URLSearchParams(location.hash.slice(1));
    sev.value = q.get("severity") || "";
    chk.value = q.get("check") || "";
    if (st) st.value = q.get("status") || "";
    if (sev.selectedIndex < 0) sev.value = "";
    if (chk.selectedIndex < 0) chk.value = "";
    if (st && st.selectedIndex < 0) st.value = "";
  }
  function apply() {
    var s = sev.value, c = chk.value, t = st ? st.value : "", shown = 0;
    document.querySelectorAll("[data-check]").forEach(function (e) {
      e.hidden = !((!s || e.dataset.severity === s) && (!c || e.dataset.check === c) && (!t || !e.dataset.status || e.dataset.status === t));
    });
    document.querySelectorAll("section.group").forEach(function (g) {
      if (!g.hidden && !g.querySelector("tr.finding:not([hidden])")) g.hidden = true;
    });
    shown = document.querySelectorAll("section.group:not([hidden]) tr.finding:not([hidden])").length;
    document.getElementById("shown").textContent = shown + " shown";
  }
  function change() {
    var q = new URLSearchParams();
    if (sev.value) q.set("severity", sev.value);
    if (chk.value) q.set("check", chk.value);
    if (st && st.value) q.set("status", st.value);
    history.replaceState(null, "", "#" + q.toString());
    apply();
  }
  [sev, chk, st].forEach(function (e) { if (e) e.addEventListener("change", change); });
  window.addEventListener("hashchange", function () { read(); apply(); });
  read();
  apply();
})();`

var reportCSP = func() string {
	sum := sha256.Sum256([]byte(reportScript))
	return "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}()

var htmlReport = template.Must(template.New("report").Funcs(template.FuncMap{"plural": plural, "md": inlineMarkdown, "groupOf": (*ExperimentSummary)(nil).groupOf}).Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{.CSP}}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>headgate audit: {{plural .Errors "error"}}, {{plural .Warnings "warning"}}</title>
<style>
[hidden]{display:none!important}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:76rem;padding:0 1rem;color:#1d1d1f;background:#fff}
h1{font-size:1.6rem;margin-bottom:.3rem}h2{font-size:1.2rem;margin-top:2.2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
h3{font-size:1rem;margin:1.2rem 0 .3rem;word-break:break-all}h4{margin:.4rem 0;font-size:.9rem}
table{border-collapse:collapse;width:100%;margin:.5rem 0}th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #eee;vertical-align:top}
th{background:#f6f6f6;font-weight:600}td.url{word-break:break-all;width:40%}
.sev,.st{display:inline-block;border-radius:.25rem;padding:0 .4rem;font-size:.8rem;font-weight:600;color:#fff}
.error{background:#c62828}.warning{background:#b26a00}.st.new{background:#6a1b9a}.st.known{background:#78909c}
.totals span{margin-right:1.2rem}.muted{color:#666}code{font:13px ui-monospace,SFMono-Regular,Menlo,monospace}
.doc{background:#f8f9fb;border-left:3px solid #90a4ae;padding:.4rem .8rem;margin:.5rem 0}.doc p{margin:.3rem 0}
.wrote{color:#1b5e20}.replaced{color:#0d47a1}.corrected{color:#4a148c}.dropped{color:#b71c1c}
form#filters{background:#f6f6f6;padding:.5rem .8rem;border-radius:.3rem;margin:1rem 0}form#filters label{margin-right:1rem}
.heads{display:grid;grid-template-columns:1fr 1fr;gap:.8rem}.heads pre{background:#fafafa;border:1px solid #e0e0e0;padding:.5rem;overflow:auto;max-height:24rem;white-space:pre-wrap;word-break:break-all;font:12px/1.4 ui-monospace,Menlo,monospace;margin:0}
</style>
</head>
<body>
<h1>headgate audit</h1>
<p class="totals" id="totals"><span>{{plural .Errors "error"}}</span><span>{{plural .Warnings "warning"}}</span><span>{{plural .Pages "page"}}</span><span>{{.Skips}} skipped</span>{{if .Baseline}}<span>{{.New}} new</span><span>{{.Known}} known</span><span>{{len .Fixed}} fixed</span>{{if .NotRechecked}}<span>{{len .NotRechecked}} not rechecked</span>{{end}}{{end}}</p>
{{if .Robots}}<p class="muted">robots.txt: {{.Robots.URL}} answered {{if .Robots.Status}}{{.Robots.Status}}{{else}}nothing{{end}}{{if .Robots.ContentType}} ({{.Robots.ContentType}}){{end}}, {{.Robots.Lines}} lines, {{.Robots.Rules}} rules for *, {{.Robots.GoogleRules}} for Googlebot.</p>{{end}}
{{if .Summary}}
<form id="filters" hidden>
<label>severity <select id="f-severity"><option value="">all</option><option value="error">error</option><option value="warning">warning</option></select></label>
<label>check <select id="f-check"><option value="">all</option>{{range .Summary}}<option value="{{.ID}}">{{.ID}}</option>{{end}}</select></label>
{{if .Baseline}}<label>status <select id="f-status"><option value="">all</option><option value="new">new</option><option value="known">known</option></select></label>{{end}}
<span id="shown" class="muted"></span>
</form>
<h2 id="summary">Summary</h2>
<table>
<tr><th>check</th><th>severity</th><th>finds</th><th>count</th></tr>
{{range .Summary}}<tr data-check="{{.ID}}" data-severity="{{.Severity}}"><td><a href="#{{.ID}}"><code>{{.ID}}</code></a></td><td><span class="sev {{.Severity}}">{{.Severity}}</span></td><td>{{.Finds}}</td><td>{{.Count}}</td></tr>
{{end}}</table>
{{else}}
<p>No findings.</p>
{{end}}
{{with .Experiment}}<h2 id="experiment">Experiment <code>{{.Name}}</code> ({{.Match}}): findings per group</h2>
<table id="experiment-groups">
<tr><th></th>{{range .Groups}}<th>{{.Group}}</th>{{end}}</tr>
<tr><td>pages (200)</td>{{range .Groups}}<td>{{.Pages}}</td>{{end}}</tr>
<tr><td>errors</td>{{range .Groups}}<td>{{.Errors}}</td>{{end}}</tr>
<tr><td>warnings</td>{{range .Groups}}<td>{{.Warnings}}</td>{{end}}</tr>
{{range $.ExperimentRows}}<tr><td><a href="#{{.Check}}"><code>{{.Check}}</code></a></td><td>{{.Control}}</td><td>{{.Variant}}</td></tr>
{{end}}</table>
{{end}}
{{range .Groups}}
<section class="group" data-check="{{.Check.ID}}" data-severity="{{.Check.Severity}}">
<h2 id="{{.Check.ID}}"><code>{{.Check.ID}}</code> <span class="sev {{.Check.Severity}}">{{.Check.Severity}}</span> <span class="muted">{{len .Findings}}</span></h2>
{{if .Doc.Why}}<div class="doc"><p class="finds"><b>Finds</b> {{md .Doc.Finds}}</p><p class="why"><b>Why it matters:</b> {{md .Doc.Why}}</p><p class="fix"><b>How to fix it:</b> {{md .Doc.Fix}}</p>{{if .Doc.Example}}<pre><code>{{.Doc.Example}}</code></pre>{{end}}{{if .Doc.Sources}}<p class="muted">Sources: {{range $i, $s := .Doc.Sources}}{{if $i}}; {{end}}<a href="{{$s.URL}}">{{$s.Title}}</a>{{end}}</p>{{end}}</div>
{{else if .Check.Finds}}<p class="muted">{{.Check.Finds}}</p>{{end}}
<table>
<tr><th>page</th><th>detail</th></tr>
{{range .Findings}}<tr class="finding" data-check="{{.Check}}" data-severity="{{.Severity}}"{{if .Status}} data-status="{{.Status}}"{{end}}><td class="url"><a href="{{.URL}}">{{.URL}}</a>{{if .Status}} <span class="st {{.Status}}">{{.Status}}</span>{{end}}{{with groupOf .URL}} <span class="st group">{{.}}</span>{{end}}</td><td>{{.Detail}}</td></tr>
{{end}}</table>
</section>
{{end}}
{{if .Baseline}}
<h2 id="fixed">Fixed since the baseline</h2>
{{if .Fixed}}<table>
<tr><th>check</th><th>page</th><th>detail</th></tr>
{{range .Fixed}}<tr><td><code>{{.Check}}</code></td><td class="url">{{.URL}}</td><td>{{.Detail}}</td></tr>
{{end}}</table>{{else}}<p>None.</p>{{end}}
{{if .NotRechecked}}<h2 id="not-rechecked">Not rechecked</h2>
<p>The baseline's findings on pages this run did not crawl: neither fixed nor known.</p>
<table>
<tr><th>check</th><th>page</th><th>detail</th></tr>
{{range .NotRechecked}}<tr><td><code>{{.Check}}</code></td><td class="url">{{.URL}}</td><td>{{.Detail}}</td></tr>
{{end}}</table>{{end}}
{{end}}
{{if .Changed}}
<h2 id="changes">What headgate changes</h2>
{{range .Changed}}
<h3>{{.URL}} <span class="muted">{{.Outcome}}</span></h3>
<table>
<tr><th>action</th><th>tag</th><th>value</th><th>reason</th></tr>
{{range .Changes}}<tr><td class="{{.Action}}">{{.Action}}</td><td><code>{{.Identity}}</code></td><td><code>{{.Value}}</code></td><td>{{.Reason}}</td></tr>
{{end}}</table>
{{if or .UpstreamHead .ServedHead}}<div class="heads"><div><h4>the upstream's head</h4><pre class="upstream-head">{{.UpstreamHead}}</pre></div><div><h4>the head headgate serves</h4><pre class="served-head">{{.ServedHead}}</pre></div></div>{{end}}
{{end}}
{{end}}
{{if .Skipped}}
<h2 id="skipped">Skipped</h2>
<table>
<tr><th>URL</th><th>reason</th></tr>
{{range .Skipped}}<tr><td class="url">{{.URL}}</td><td>{{.Reason}}</td></tr>
{{end}}</table>
{{end}}
{{if .Summary}}<script>` + reportScript + `</script>{{end}}
</body>
</html>
`))
