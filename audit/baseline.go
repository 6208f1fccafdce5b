package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ReportVersion is the "version" of the JSON report. A baseline must carry
// the same: a report of another version may name checks or URLs
// differently, and every finding would come out new or fixed.
const ReportVersion = 2

// maxBaselineBytes bounds a baseline file.
const maxBaselineBytes = 256 << 20

// Baseline is the findings of an earlier run (its JSON report).
type Baseline struct {
	Findings []Finding
	// Pages are the URLs the earlier run crawled: a finding on one that
	// this run did not crawl is not rechecked, rather than fixed.
	Pages map[string]bool
}

// ReadBaseline reads a JSON report written by WriteJSON. A file that is not
// JSON, is no audit report, or is of another ReportVersion is an error
// that says so.
func ReadBaseline(r io.Reader) (*Baseline, error) {
	lr := &io.LimitedReader{R: r, N: maxBaselineBytes + 1}
	var doc struct {
		Version  *int             `json:"version"`
		Findings *json.RawMessage `json:"findings"`
		Pages    []struct {
			URL string `json:"url"`
		} `json:"pages"`
	}
	if err := json.NewDecoder(lr).Decode(&doc); err != nil {
		if lr.N <= 0 {
			return nil, fmt.Errorf("baseline: longer than %d MiB", maxBaselineBytes>>20)
		}
		var se *json.SyntaxError
		if errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("baseline: not JSON (%v): pass the -format json report of an earlier run", err)
		}
		return nil, fmt.Errorf("baseline: not an audit JSON report (%v)", err)
	}
	switch {
	case doc.Version == nil && doc.Findings == nil:
		return nil, errors.New("baseline: JSON, but no audit report: it has neither \"version\" nor \"findings\"")
	case doc.Version == nil:
		return nil, fmt.Errorf("baseline: a report without \"version\", from a headgate before report version %d: audit the old release again to write a baseline", ReportVersion)
	case *doc.Version != ReportVersion:
		return nil, fmt.Errorf("baseline: report version %d, this headgate reads version %d: audit the old release again with this headgate to write a baseline", *doc.Version, ReportVersion)
	case doc.Findings == nil:
		return nil, errors.New("baseline: the report has no \"findings\"")
	}
	b := Baseline{Pages: make(map[string]bool, len(doc.Pages))}
	for _, p := range doc.Pages {
		b.Pages[p.URL] = true
	}
	if err := json.Unmarshal(*doc.Findings, &b.Findings); err != nil {
		return nil, fmt.Errorf("baseline: \"findings\" is not a list of findings (%v)", err)
	}
	return &b, nil
}

type findingKey struct{ check, url string }

// ApplyBaseline marks every finding new or known, matched by (check, URL),
// and lists in Fixed the baseline's findings this run no longer has. From
// then on Fails counts the new findings only.
func (r *Report) ApplyBaseline(b *Baseline) {
	old := map[findingKey]bool{}
	for _, f := range b.Findings {
		old[findingKey{f.Check, f.URL}] = true
	}
	now := map[findingKey]bool{}
	for i := range r.Findings {
		f := &r.Findings[i]
		k := findingKey{f.Check, f.URL}
		now[k] = true
		if old[k] {
			f.Status = StatusKnown
		} else {
			f.Status = StatusNew
		}
	}
	crawled := make(map[string]bool, len(r.Pages))
	for _, p := range r.Pages {
		crawled[p.URL] = true
	}
	r.Fixed, r.NotRechecked = nil, nil
	listed := map[findingKey]bool{}
	for _, f := range b.Findings {
		k := findingKey{f.Check, f.URL}
		if now[k] || listed[k] {
			continue
		}
		listed[k] = true
		f.Status = ""
		if b.Pages[f.URL] && !crawled[f.URL] {
			r.NotRechecked = append(r.NotRechecked, f)
			continue
		}
		r.Fixed = append(r.Fixed, f)
	}
	r.Baseline = true
}
