package audit

import (
	"fmt"
	"io"
	"net/url"
	"sort"

	"github.com/headgate/headgate/rules"
)

// ExperimentSummary is the audit's view of one split test (SPEC §21,
// `headgate audit -experiment NAME`): the findings and pages of each
// group, so that a variant that breaks something (a title now too long, a
// description gone) shows as a difference between the groups.
type ExperimentSummary struct {
	Name   string         `json:"name"`
	Match  string         `json:"match"`
	Groups []GroupSummary `json:"groups"` // control, then variant
	// ByURL is every crawled page under match with its group; the JSON
	// report has it as each page's "group".
	ByURL map[string]string `json:"-"`
}

// groupOf is the group of the page at u; "" outside the experiment or
// when s is nil (no -experiment).
func (s *ExperimentSummary) groupOf(u string) string {
	if s == nil {
		return ""
	}
	return s.ByURL[u]
}

// GroupSummary counts one group's pages and findings.
type GroupSummary struct {
	Group    string         `json:"group"` // "control" or "variant"
	Pages    int            `json:"pages"`
	Errors   int            `json:"errors"`
	Warnings int            `json:"warnings"`
	Checks   map[string]int `json:"checks"` // check ID → findings
}

// ApplyExperiment marks every page and finding under experiment name's
// match with its group, as cfg's Resolve decides it for the page (the
// decision the proxy makes, at the time cfg's clock says), and sums them
// per group. It returns an error when cfg has no such experiment. Pages
// and findings off the base URL's origin or outside match keep no group.
func (r *Report) ApplyExperiment(cfg *rules.Config, name string) error {
	e := cfg.Experiment(name)
	if e == nil {
		return fmt.Errorf("no experiment %q in the config", name)
	}
	base, _ := url.Parse(cfg.Site.BaseURL)
	groupOf := func(raw string) string {
		u, err := url.Parse(raw)
		if err != nil || base == nil || u.Host != base.Host || u.Scheme != base.Scheme {
			return ""
		}
		target := u.EscapedPath()
		if u.RawQuery != "" {
			target += "?" + u.RawQuery
		}
		if n, g := cfg.Resolve(target).Experiment(); n == name {
			return g
		}
		return ""
	}
	s := &ExperimentSummary{Name: name, Match: e.Match, ByURL: map[string]string{}, Groups: []GroupSummary{
		{Group: rules.GroupControl, Checks: map[string]int{}},
		{Group: rules.GroupVariant, Checks: map[string]int{}},
	}}
	idx := func(g string) *GroupSummary {
		if g == rules.GroupVariant {
			return &s.Groups[1]
		}
		return &s.Groups[0]
	}
	for _, p := range r.Pages {
		g := groupOf(p.URL)
		if g == "" {
			continue
		}
		s.ByURL[p.URL] = g
		if p.Status == 200 {
			idx(g).Pages++
		}
	}
	for _, f := range r.Findings {
		grp, ok := s.ByURL[f.URL]
		if !ok {
			if grp = groupOf(f.URL); grp == "" {
				continue
			}
			s.ByURL[f.URL] = grp
		}
		g := idx(grp)
		g.Checks[f.Check]++
		if f.Severity == Error {
			g.Errors++
		} else {
			g.Warnings++
		}
	}
	r.Experiment = s
	return nil
}

// experimentRow is one line of the per-group table: a check and its
// findings in each group.
type experimentRow struct {
	Check            string
	Control, Variant int
}

// rows lists the checks with findings in either group, by check ID.
func (s *ExperimentSummary) rows() []experimentRow {
	seen := map[string]bool{}
	for _, g := range s.Groups {
		for c := range g.Checks {
			seen[c] = true
		}
	}
	var out []experimentRow
	for c := range seen {
		out = append(out, experimentRow{c, s.Groups[0].Checks[c], s.Groups[1].Checks[c]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Check < out[j].Check })
	return out
}

// writeText writes the per-group section of the text report.
func (s *ExperimentSummary) writeText(w io.Writer) {
	fmt.Fprintf(w, "experiment %s (%s): findings per group\n", s.Name, s.Match)
	fmt.Fprintf(w, "  %-32s %9s %9s\n", "", "control", "variant")
	fmt.Fprintf(w, "  %-32s %9d %9d\n", "pages (200)", s.Groups[0].Pages, s.Groups[1].Pages)
	fmt.Fprintf(w, "  %-32s %9d %9d\n", "errors", s.Groups[0].Errors, s.Groups[1].Errors)
	fmt.Fprintf(w, "  %-32s %9d %9d\n", "warnings", s.Groups[0].Warnings, s.Groups[1].Warnings)
	for _, r := range s.rows() {
		fmt.Fprintf(w, "  %-32s %9d %9d\n", r.Check, r.Control, r.Variant)
	}
	fmt.Fprintln(w)
}
