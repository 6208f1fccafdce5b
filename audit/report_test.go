package audit

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/headgate/headgate/rewrite"
)

// sampleReport is out of order on purpose, with text that must be escaped.
func sampleReport() *Report {
	return &Report{
		Findings: []Finding{
			{TitleDuplicate, Warning, "https://s.example/b", `title "Same" is also the title of https://s.example/a`, ""},
			{CanonicalMissing, Warning, "https://s.example/z", "no canonical", ""},
			{JSONLDInvalid, Error, "https://s.example/x", `ld+json block 1 is not JSON: </script><script>alert("x")</script>`, ""},
			{TitleDuplicate, Warning, "https://s.example/a", `title "Same" is also the title of https://s.example/b`, ""},
			{CanonicalMissing, Warning, "https://s.example/a", "no canonical", ""},
		},
		Pages: []Page{
			{URL: "https://s.example/z", Status: 200, Outcome: "passthrough"},
			{URL: "https://s.example/a", Status: 200, Canonical: "https://s.example/a", Outcome: "rewritten", Changes: []rewrite.Change{
				{Action: rewrite.Wrote, Identity: "description", Value: "A <b>bold</b> page"},
				{Action: rewrite.Dropped, Identity: "canonical", Reason: "scheme", Value: "javascript:alert(1)"},
			}},
			{URL: "https://s.example/m", Status: 301, Location: "https://s.example/a"},
		},
		Skipped: []Skip{
			{URL: "mailto:a@s.example", Reason: "mailto: link, not followed"},
			{URL: "", Reason: "max pages (1) reached"},
		},
	}
}

func TestWriteJSON(t *testing.T) {
	var a, b bytes.Buffer
	r := sampleReport()
	if err := r.WriteJSON(&a); err != nil {
		t.Fatal(err)
	}
	// Same findings in another order: same bytes.
	r2 := sampleReport()
	slices.Reverse(r2.Findings)
	slices.Reverse(r2.Pages)
	if err := r2.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Errorf("order depends on the input:\n%s\n%s", a.String(), b.String())
	}
	var back struct {
		Findings []Finding `json:"findings"`
		Pages    []struct {
			URL      string `json:"url"`
			Status   int    `json:"status"`
			Location string `json:"location"`
			Changes  []struct {
				Action, Identity, Reason, Value string
			} `json:"changes"`
		} `json:"pages"`
		Skipped []Skip `json:"skipped"`
	}
	if err := json.Unmarshal(a.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, f := range back.Findings {
		order = append(order, f.Check+" "+f.URL)
	}
	wantOrder := []string{
		"canonical-missing https://s.example/a", "canonical-missing https://s.example/z",
		"jsonld-invalid https://s.example/x",
		"title-duplicate https://s.example/a", "title-duplicate https://s.example/b",
	}
	if !slices.Equal(order, wantOrder) {
		t.Errorf("findings order %q", order)
	}
	if back.Findings[2].Severity != Error || !strings.Contains(back.Findings[2].Detail, "</script>") {
		t.Errorf("finding round trip: %+v", back.Findings[2])
	}
	if len(back.Pages) != 3 || back.Pages[0].URL != "https://s.example/a" || len(back.Pages[0].Changes) != 2 ||
		back.Pages[0].Changes[1].Action != "dropped" || back.Pages[0].Changes[1].Reason != "scheme" || back.Pages[1].Location != "https://s.example/a" {
		t.Errorf("pages round trip: %+v", back.Pages)
	}
	for _, key := range []string{`"check"`, `"severity"`, `"url"`, `"detail"`, `"action"`, `"identity"`, `"reason"`} {
		if !strings.Contains(a.String(), key) {
			t.Errorf("JSON lacks key %s", key)
		}
	}
	if len(back.Skipped) != 2 || back.Skipped[0].URL != "" {
		t.Errorf("skipped %+v", back.Skipped)
	}

	// An empty report has empty arrays, not null.
	var e bytes.Buffer
	(&Report{}).WriteJSON(&e)
	if !strings.Contains(e.String(), `"findings": []`) || !strings.Contains(e.String(), `"pages": []`) || !strings.Contains(e.String(), `"skipped": []`) {
		t.Errorf("empty report: %s", e.String())
	}
}

func TestWriteHTML(t *testing.T) {
	var b bytes.Buffer
	if err := sampleReport().WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var h2s, scripts []string
	var texts strings.Builder
	for n := range doc.Descendants() {
		if n.Type == html.TextNode {
			texts.WriteString(n.Data)
			continue
		}
		if n.Type != html.ElementNode {
			continue
		}
		for _, a := range n.Attr {
			v := strings.ToLower(strings.TrimSpace(a.Val))
			external := strings.HasPrefix(v, "http") || strings.HasPrefix(v, "//") || strings.HasPrefix(v, "data:")
			switch {
			case a.Key == "src":
				t.Errorf("<%s src=%q>: the report loads nothing", n.Data, a.Val)
			case n.Data == "link" && a.Key == "href", a.Key == "srcset", a.Key == "poster", a.Key == "background":
				t.Errorf("<%s %s=%q>: an external resource", n.Data, a.Key, a.Val)
			case a.Key == "style" && strings.Contains(v, "url("):
				t.Errorf("inline style loads %q", a.Val)
			case n.Data == "a" && a.Key == "href" && external && !strings.HasPrefix(v, "https://s.example/") && !isSource(a.Val):
				t.Errorf("<a href=%q> leads off the audited site", a.Val)
			}
		}
		switch n.Data {
		case "script":
			if n.FirstChild == nil || n.FirstChild.Data != reportScript || n.Attr != nil {
				scripts = append(scripts, n.Data)
			}
		case "iframe", "object", "embed", "img":
			scripts = append(scripts, n.Data)
		case "style":
			if css := n.FirstChild; css != nil && (strings.Contains(css.Data, "url(") || strings.Contains(css.Data, "@import")) {
				t.Errorf("CSS loads something: %s", css.Data)
			}
		case "h2":
			for _, a := range n.Attr {
				if a.Key == "id" {
					h2s = append(h2s, a.Val)
				}
			}
		}
	}
	if len(scripts) > 0 {
		t.Errorf("elements %q in the report (a detail was not escaped?)", scripts)
	}
	// With scripts off the report reads whole: the filters are hidden
	// until the script shows them, and no finding is hidden.
	out := b.String()
	if !strings.Contains(out, `<form id="filters" hidden>`) || strings.Count(out, `<tr class="finding"`) != 5 || strings.Contains(out, `<tr class="finding" hidden`) {
		t.Errorf("the report as written hides findings or shows the filters")
	}
	// A summary, then one section per check, in SPEC order.
	want := []string{"summary", CanonicalMissing, JSONLDInvalid, TitleDuplicate, "changes", "skipped"}
	if !slices.Equal(h2s, want) {
		t.Errorf("sections %q, want %q", h2s, want)
	}
	all := texts.String()
	for _, s := range []string{`</script><script>alert("x")</script>`, "A <b>bold</b> page", "javascript:alert(1)", "https://s.example/z", "max pages (1) reached", "Summary"} {
		if !strings.Contains(all, s) {
			t.Errorf("report text lacks %q", s)
		}
	}
}

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	if err := sampleReport().WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	// Every finding sits under its check's header.
	current := ""
	seen := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		switch {
		case line == "":
		case !strings.HasPrefix(line, " "):
			current, _, _ = strings.Cut(line, " ")
			if seen[current] {
				t.Errorf("check %s has two groups", current)
			}
			seen[current] = true
		case strings.HasPrefix(line, "  https://"):
			f := strings.TrimSpace(line)
			ok := false
			for _, x := range sampleReport().Findings {
				if x.URL == f && x.Check == current {
					ok = true
				}
			}
			if !ok && current != "skipped" {
				t.Errorf("%s listed under %s", f, current)
			}
		}
	}
	for _, s := range []string{"canonical-missing (warning, 2)", "jsonld-invalid (error, 1)", "title-duplicate (warning, 2)", "skipped (2)",
		"1 error, 4 warnings on 3 pages; headgate changes the head of 1 page"} {
		if !strings.Contains(out, s) {
			t.Errorf("text lacks %q:\n%s", s, out)
		}
	}
	if strings.Index(out, "canonical-missing") > strings.Index(out, "jsonld-invalid") {
		t.Error("groups are not in SPEC order")
	}
}

func TestFails(t *testing.T) {
	warnOnly := &Report{Findings: []Finding{{CanonicalMissing, Warning, "u", "d", ""}}}
	withError := sampleReport()
	for _, tc := range []struct {
		r     *Report
		level string
		want  bool
	}{
		{&Report{}, "warning", false},
		{warnOnly, "error", false},
		{warnOnly, "warning", true},
		{warnOnly, "never", false},
		{withError, "error", true},
		{withError, "never", false},
		{withError, "bogus", true},
	} {
		if got := tc.r.Fails(tc.level); got != tc.want {
			t.Errorf("Fails(%q) on %d findings = %v", tc.level, len(tc.r.Findings), got)
		}
	}
	if !ValidLevel("warning") || ValidLevel("Warning") {
		t.Error("ValidLevel")
	}
}

// isSource reports whether u is a source a check's documentation cites.
func isSource(u string) bool {
	for _, d := range checkDocs {
		for _, s := range d.Sources {
			if s.URL == u {
				return true
			}
		}
	}
	return false
}

func TestBaseline(t *testing.T) {
	old := sampleReport()
	var b bytes.Buffer
	if err := old.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	base, err := ReadBaseline(&b)
	if err != nil {
		t.Fatal(err)
	}
	now := sampleReport()
	now.Findings = append(now.Findings[1:], Finding{LinkBroken, Error, "https://s.example/n", "links to /gone, which answers 404", ""})
	if !now.Fails(Error) {
		t.Fatal("no baseline: the report fails")
	}
	now.ApplyBaseline(base)
	for _, f := range now.Findings {
		want := StatusKnown
		if f.Check == LinkBroken {
			want = StatusNew
		}
		if f.Status != want {
			t.Errorf("%s %s: status %q, want %q", f.Check, f.URL, f.Status, want)
		}
	}
	if len(now.Fixed) != 1 || now.Fixed[0].Check != TitleDuplicate || now.Fixed[0].URL != "https://s.example/b" {
		t.Errorf("fixed = %+v", now.Fixed)
	}
	if !now.Fails(Error) || now.Fails("never") {
		t.Error("the new error must fail -fail-on error")
	}
	now.Findings = now.Findings[:len(now.Findings)-1]
	now.ApplyBaseline(base)
	if now.Fails(Error) || now.Fails(Warning) {
		t.Error("known findings only: nothing fails")
	}
	var out bytes.Buffer
	now.WriteJSON(&out)
	if !strings.Contains(out.String(), `"fixed": [`) || !strings.Contains(out.String(), `"status": "known"`) || !strings.Contains(out.String(), `"version": 2`) {
		t.Errorf("JSON with a baseline:\n%s", out.String())
	}
	out.Reset()
	now.WriteText(&out)
	if !strings.Contains(out.String(), "fixed since the baseline (1)") {
		t.Errorf("text with a baseline:\n%s", out.String())
	}
	for name, in := range map[string]string{"not JSON": "nope", "no version": `{"findings":[]}`, "version 1": `{"version":1,"findings":[]}`,
		"an array": `[]`, "findings not a list": `{"version":2,"findings":{}}`, "empty": ``} {
		if _, err := ReadBaseline(strings.NewReader(in)); err == nil || !strings.HasPrefix(err.Error(), "baseline: ") {
			t.Errorf("%s: err %v", name, err)
		}
	}
}

// A head's control characters reach the HTML report as visible escapes,
// never as raw bytes.
func TestHeadLinesPrintable(t *testing.T) {
	got := headLines("<title>a\x01b\x7f\u0085</title><meta name=\"x\" content=\"tab\there\">")
	want := "<title>a\\u0001b\\u007F\\u0085</title>\n<meta name=\"x\" content=\"tab\there\">"
	if got != want {
		t.Errorf("headLines = %q, want %q", got, want)
	}
}

// A baseline finding on a page the baseline crawled and this run did not
// (-max-pages cut the crawl) is not rechecked, not fixed.
func TestBaselineNotRechecked(t *testing.T) {
	old := sampleReport()
	old.Pages = append(old.Pages, Page{URL: "https://s.example/p3", Status: 200})
	old.Findings = append(old.Findings, Finding{TitleLength, Warning, "https://s.example/p3", "the title is 4 characters long", ""})
	var b bytes.Buffer
	if err := old.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	base, err := ReadBaseline(&b)
	if err != nil {
		t.Fatal(err)
	}
	now := sampleReport() // /p3 not crawled, and so not found
	now.ApplyBaseline(base)
	if len(now.NotRechecked) != 1 || now.NotRechecked[0].URL != "https://s.example/p3" {
		t.Errorf("not rechecked = %+v", now.NotRechecked)
	}
	for _, f := range now.Fixed {
		if f.URL == "https://s.example/p3" {
			t.Errorf("a finding on a page not crawled is fixed: %+v", f)
		}
	}
	var out bytes.Buffer
	now.WriteJSON(&out)
	if !strings.Contains(out.String(), `"not_rechecked": [`) {
		t.Errorf("JSON:\n%s", out.String())
	}
	out.Reset()
	now.WriteText(&out)
	if !strings.Contains(out.String(), "1 not rechecked") {
		t.Errorf("text:\n%s", out.String())
	}
	out.Reset()
	if err := now.WriteHTML(&out); err != nil {
		t.Fatal(err)
	}
	h := out.String()
	i := strings.Index(h, `<h2 id="not-rechecked">`)
	if i < 0 || !strings.Contains(h[i:], "https://s.example/p3") || !strings.Contains(h, "<span>1 not rechecked</span>") {
		t.Errorf("HTML has no not-rechecked section naming /p3:\n%s", h)
	}
}
