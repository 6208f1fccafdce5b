package rules

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

const expBase = `[server]
upstream = "builtin:demo"

[site]
base_url = "https://shop.example"

[[rule]]
match = "/*"
title = "Shop"

[[rule]]
match = "/products/:slug"
title = "{slug} | Shop"
description = "Buy {slug}"
`

func loadExp(t testing.TB, extra string) *Config {
	t.Helper()
	c, err := Parse("headgate.toml", []byte(expBase+extra), nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const titleExp = `
[[experiment]]
name = "title-price"
match = "/products/*"
variant_share = 50
[experiment.variant]
title = "{page.title|before_last:\" | \"} – free delivery"
description = "Variant {path}"
`

func TestExperimentResolve(t *testing.T) {
	c := loadExp(t, titleExp)
	e := c.Experiment("title-price")
	if e == nil || e.Share != 50 {
		t.Fatalf("experiment = %+v", e)
	}
	seen := map[string]int{}
	for i := range 200 {
		p := fmt.Sprintf("/products/p%d", i)
		m := c.Resolve(p + "?ref=x")
		name, group := m.Experiment()
		if name != "title-price" || group != e.Group(GroupPath(p), time.Now()) {
			t.Fatalf("%s: Experiment() = %q, %q", p, name, group)
		}
		seen[group]++
		by := m.SetBy("description", "description")
		switch group {
		case GroupVariant:
			if by != "experiment title-price (variant) sets it" {
				t.Errorf("%s: SetBy = %q", p, by)
			}
		case GroupControl:
			if !strings.HasPrefix(by, "rule /products/:slug") {
				t.Errorf("%s: control SetBy = %q", p, by)
			}
		}
	}
	if seen[GroupVariant] == 0 || seen[GroupControl] == 0 {
		t.Errorf("groups = %v", seen)
	}
	if n, g := c.Resolve("/about").Experiment(); n != "" || g != "" {
		t.Errorf("/about: %q %q", n, g)
	}
}

// The variant is the most specific layer: over a page_table row too.
func TestExperimentOverPageTable(t *testing.T) {
	dir := t.TempDir()
	var rows strings.Builder
	rows.WriteString("path,description\n")
	for i := range 50 {
		fmt.Fprintf(&rows, "/products/p%d,Row %d\n", i, i)
	}
	if err := os.WriteFile(dir+"/pages.csv", []byte(rows.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	src := expBase + "\n[[page_table]]\nfile = \"pages.csv\"\n" + titleExp
	c, err := Parse(dir+"/headgate.toml", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	var nv, nc int
	for i := range 50 {
		m := c.Resolve(fmt.Sprintf("/products/p%d", i))
		h := m.Render(Page{Title: "Blue | Shop", HasTitle: true})
		_, g := m.Experiment()
		want := fmt.Sprintf("Row %d", i)
		if g == GroupVariant {
			want = fmt.Sprintf("Variant /products/p%d", i)
			nv++
		} else {
			nc++
		}
		if h.Description == nil || *h.Description != want {
			t.Errorf("p%d (%s): description %q, want %q", i, g, *h.Description, want)
		}
	}
	if nv == 0 || nc == 0 {
		t.Errorf("variant %d, control %d", nv, nc)
	}
}

// Balance over 10,000 paths: 50 % ± 2 %.
func TestExperimentBalance(t *testing.T) {
	for _, share := range []int{50, 10, 90} {
		e := &Experiment{Name: "balance", Share: share}
		n := 0
		for i := range 10000 {
			if e.Group(fmt.Sprintf("/products/item-%d", i), time.Time{}) == GroupVariant {
				n++
			}
		}
		if got := float64(n) / 100; math.Abs(got-float64(share)) > 2 {
			t.Errorf("share %d: %.2f %% in the variant", share, got)
		}
	}
}

// Two experiments' splits are independent: over 10,000 paths the 2×2
// table's chi-square (1 degree of freedom) stays below 10.83 (p = 0.001).
func TestExperimentIndependence(t *testing.T) {
	a, b := &Experiment{Name: "title-a", Share: 50}, &Experiment{Name: "desc-b", Share: 50}
	var tab [2][2]float64
	const n = 10000
	for i := range n {
		p := fmt.Sprintf("/p/%d", i)
		x, y := 0, 0
		if a.Group(p, time.Time{}) == GroupVariant {
			x = 1
		}
		if b.Group(p, time.Time{}) == GroupVariant {
			y = 1
		}
		tab[x][y]++
	}
	chi := 0.0
	for x := range 2 {
		for y := range 2 {
			exp := (tab[x][0] + tab[x][1]) * (tab[0][y] + tab[1][y]) / n
			chi += (tab[x][y] - exp) * (tab[x][y] - exp) / exp
		}
	}
	if chi > 10.83 {
		t.Errorf("chi-square %.2f over %v: the splits are not independent", chi, tab)
	}
}

// Golden buckets, computed outside Go from the documented formula:
// python3 -c 'import hashlib;print(int.from_bytes(hashlib.sha256(b"title-price\0/products/p1").digest()[:8],"big")%10000)'
func TestExperimentBucketPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	paths := []string{"/products/p1", "/products/%C3%A9t%C3%A9", "/", "/products/" + strings.Repeat("x", 300)}
	script := `import hashlib,sys
for p in sys.argv[2:]:
    print(int.from_bytes(hashlib.sha256(sys.argv[1].encode()+b"\0"+p.encode()).digest()[:8],"big")%10000)`
	out, err := exec.Command(py, append([]string{"-c", script, "title-price"}, paths...)...).Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(out))
	for i, p := range paths {
		if got := fmt.Sprint(Bucket("title-price", p)); got != lines[i] {
			t.Errorf("Bucket(%q) = %s, python says %s", p, got, lines[i])
		}
	}
}

// Stable across processes: a child process computes the same groups.
func TestExperimentStableAcrossProcesses(t *testing.T) {
	if os.Getenv("HG_EXP_CHILD") == "1" {
		c := loadExp(t, titleExp)
		for i := range 100 {
			_, g := c.Resolve(fmt.Sprintf("/products/p%d", i)).Experiment()
			fmt.Println(g)
		}
		return
	}
	run := func() string {
		cmd := exec.Command(os.Args[0], "-test.run=^TestExperimentStableAcrossProcesses$", "-test.count=1")
		cmd.Env = append(os.Environ(), "HG_EXP_CHILD=1")
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	first, second := run(), run()
	if first != second || strings.Count(first, "variant") == 0 {
		t.Errorf("two processes disagree:\n%s\n%s", first, second)
	}
	c := loadExp(t, titleExp)
	var here strings.Builder
	for i := range 100 {
		_, g := c.Resolve(fmt.Sprintf("/products/p%d", i)).Experiment()
		fmt.Fprintln(&here, g)
	}
	if !strings.HasPrefix(first, here.String()) {
		t.Errorf("the child disagrees with this process")
	}
}

func TestExperimentWindow(t *testing.T) {
	c := loadExp(t, strings.Replace(titleExp, "variant_share = 50", "variant_share = 99\nstart = 2026-12-10\nend = 2027-01-10T12:00:00Z", 1))
	e := c.Experiments()[0]
	start := time.Date(2026, 12, 10, 0, 0, 0, 0, time.UTC)
	end := time.Date(2027, 1, 10, 12, 0, 0, 0, time.UTC)
	if !e.Start.Equal(start) || !e.End.Equal(end) {
		t.Fatalf("start %v end %v", e.Start, e.End)
	}
	// A path in the variant while the test runs.
	p := ""
	for i := range 100 {
		if q := fmt.Sprintf("/products/p%d", i); Bucket(e.Name, q) < 9900 {
			p = q
			break
		}
	}
	for _, tc := range []struct {
		at   time.Time
		want string
	}{
		{start.Add(-time.Nanosecond), GroupControl},
		{start, GroupVariant},
		{end.Add(-time.Nanosecond), GroupVariant},
		{end, GroupControl},
	} {
		seen := map[string]bool{}
		for _, at := range []time.Time{start.Add(-time.Second), start, end} {
			seen[c.WithClock(func() time.Time { return at }).ETagHash()] = true
		}
		if len(seen) != 3 || !seen[c.Hash] {
			t.Errorf("ETagHash does not change at start and end: %v", seen)
		}
		cc := c.WithClock(func() time.Time { return tc.at })
		m := cc.Resolve(p)
		if _, g := m.Experiment(); g != tc.want {
			t.Errorf("at %v: %s, want %s", tc.at, g, tc.want)
		}
		if h := m.Render(Page{Title: "Blue | Shop", HasTitle: true}); (h.Description != nil && *h.Description == "Variant "+p) != (tc.want == GroupVariant) {
			t.Errorf("at %v: description %v", tc.at, h.Description)
		}
	}
}

func TestExperimentProblems(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"overlap", titleExp + `
[[experiment]]
name = "desc"
match = "/products/:slug{[a-z]+}"
variant_share = 20
[experiment.variant]
description = "x"
`, "HG210 headgate.toml:26: experiment[1].match: \"/products/:slug{[a-z]+}\" and experiment title-price's \"/products/*\" (headgate.toml:16) can match the same page"},
		{"unknown field", strings.Replace(titleExp, "description = ", "descripton = ", 1), "HG211 headgate.toml:22: experiment[0].variant.descripton: unknown variant field (did you mean description?)"},
		{"share 0", strings.Replace(titleExp, "variant_share = 50", "variant_share = 0", 1), "HG211 headgate.toml:19: experiment[0].variant_share: 0 is outside 1–99"},
		{"share 100", strings.Replace(titleExp, "variant_share = 50", "variant_share = 100", 1), "HG211 headgate.toml:19: experiment[0].variant_share: 100 is outside 1–99"},
		{"end before start", strings.Replace(titleExp, "variant_share = 50", "variant_share = 50\nstart = 2027-01-10\nend = 2026-12-10", 1), "HG211 headgate.toml:21: experiment[0].end: 2026-12-10 is before start"},
		{"bad name", strings.Replace(titleExp, `"title-price"`, `"Title Price"`, 1), "HG211 headgate.toml:17: experiment[0].name: \"Title Price\" is not an experiment name"},
		{"deny", strings.Replace(titleExp, "[experiment.variant]", "[experiment.variant]\ndeny = true", 1), "HG211 headgate.toml:21: experiment[0].variant.deny: is not a variant field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("headgate.toml", []byte(expBase+tc.src), nil)
			var ps Problems
			if !errors.As(err, &ps) || !strings.Contains(ps.Error(), tc.want) {
				t.Errorf("got %v\nwant %s", err, tc.want)
			}
		})
	}
	// Apart: different literals, a literal the regex refuses, lengths.
	for _, m := range []string{"/blog/*", "/products/:id{[0-9]+}/reviews", "/products"} {
		src := strings.Replace(titleExp, `"/products/*"`, `"/products/:slug{[a-z]+}"`, 1) + "\n[[experiment]]\nname = \"b\"\nmatch = \"" + m + "\"\nvariant_share = 5\n[experiment.variant]\ntitle = \"x\"\n"
		if _, err := Parse("headgate.toml", []byte(expBase+src), nil); err != nil {
			t.Errorf("%s: %v", m, err)
		}
	}
}

func BenchmarkExperimentAssign(b *testing.B) {
	e := &Experiment{Name: "title-price", Share: 50}
	p := GroupPath("/products/blue-widget-2000")
	b.ReportAllocs()
	for b.Loop() {
		_ = e.Group(p, time.Time{})
	}
}

// Resolve with and without an experiment covering the page, and on a
// page whose canonical is a template of its parameters (the group is that
// of the canonical's path, groupPath).
func BenchmarkExperimentResolve(b *testing.B) {
	for _, tc := range []struct{ name, extra, target string }{
		{"experiment=false", "", "/products/blue-widget-2000"},
		{"experiment=true", titleExp, "/products/blue-widget-2000"},
		{"canonical-template", titleExp + "\n[[rule]]\nmatch = \"/products/:slug/print\"\ncanonical = \"{base_url}/products/{slug}\"\n", "/products/blue-widget-2000/print"},
	} {
		c := loadExp(b, tc.extra)
		b.Run(tc.name, func(b *testing.B) {
			m := c.PooledMatch()
			b.ReportAllocs()
			for b.Loop() {
				c.ResolveInto(m, tc.target)
			}
		})
	}
}

// §21: a page's group is a function of its canonical path, so that a page
// whose canonical names another page of the test (a print view of a note)
// is in that page's group, and a variant that changes the canonical does
// not move the page. The repro of the conformance check.
func TestExperimentGroupFromCanonical(t *testing.T) {
	src := `[server]
upstream = "builtin:demo"

[site]
base_url = "https://notes.example"

[[rule]]
match = "/notes/:id/print"
canonical = "{base_url}/notes/{id}"

[[rule]]
match = "/notes/:id/raw"
canonical = "https://elsewhere.example/notes/{id}"

[[rule]]
match = "/notes/:id/self"
canonical = "self"

[[rule]]
match = "/notes/:id/upper"
canonical = "HTTPS://Notes.Example/notes/{id}"

[[experiment]]
name = "notes"
match = "/notes/*"
variant_share = 50
[experiment.variant]
title = "Variant"
canonical = "/variant{path}"
`
	c, err := Parse("headgate.toml", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	e := c.Experiment("notes")
	found := 0
	for i := range 40 {
		id := fmt.Sprint(i)
		page := "/notes/" + id
		want := e.Group(GroupPath(page), time.Now())
		if e.Group(GroupPath(page+"/print"), time.Now()) == want {
			continue // the request path would give the same group: no proof
		}
		found++
		for target, wantPath := range map[string]string{
			page:                page,
			page + "/print":     page,
			page + "/print?x=1": page,
			page + "/raw":       page + "/raw", // a canonical on another origin: the request path
			page + "/self":      page + "/self",
			page + "/upper":     page, // scheme and host in another case: still base_url
		} {
			m := c.Resolve(target)
			if p := m.ExperimentPath(); p != wantPath {
				t.Errorf("%s: ExperimentPath = %q, want %q", target, p, wantPath)
			}
			if _, g := m.Experiment(); g != e.Group(GroupPath(wantPath), time.Now()) {
				t.Errorf("%s: group %s, want that of %s", target, g, wantPath)
			}
		}
	}
	if found == 0 {
		t.Fatal("no id whose print view hashes to the other group")
	}
}

// §21: "end = 2027-01-10 # after it every page is control again": a
// date-only end day still runs the test, to its last instant (UTC); a
// date-time end is the instant the test stops. A one-day test is no
// "end before start".
func TestExperimentEndInclusive(t *testing.T) {
	c := loadExp(t, strings.Replace(titleExp, "variant_share = 50", "variant_share = 99\nstart = 2026-12-06\nend = 2026-12-06", 1))
	e := c.Experiments()[0]
	day := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	p := ""
	for i := range 100 {
		if q := fmt.Sprintf("/products/p%d", i); Bucket(e.Name, GroupPath(q)) < 9900 {
			p = q
			break
		}
	}
	for _, tc := range []struct {
		at   time.Time
		want string
	}{
		{day.Add(-time.Nanosecond), GroupControl},
		{day, GroupVariant},
		{day.Add(17 * time.Hour), GroupVariant},
		{day.Add(24*time.Hour - time.Nanosecond), GroupVariant},
		{day.Add(24 * time.Hour), GroupControl},
	} {
		if g := e.Group(GroupPath(p), tc.at); g != tc.want {
			t.Errorf("at %v: %s, want %s", tc.at, g, tc.want)
		}
	}
	if got := e.EndText(); got != "2026-12-06 (inclusive, UTC)" {
		t.Errorf("EndText = %q", got)
	}
	for _, src := range []string{"start = 2026-12-07\nend = 2026-12-06", "start = 2026-12-07T00:00:00Z\nend = \"2026-12-06\""} {
		_, err := Parse("headgate.toml", []byte(expBase+strings.Replace(titleExp, "variant_share = 50", "variant_share = 50\n"+src, 1)), nil)
		if err == nil || !strings.Contains(err.Error(), "HG211") || !strings.Contains(err.Error(), "end: 2026-12-06 is before start") {
			t.Errorf("%q: %v", src, err)
		}
	}
}

// A page_table row's canonical is a layer below the variant too: a row
// that names another page of the test (or an absolute URL on base_url)
// groups the page with it; "self" and another origin keep the request
// path.
func TestExperimentGroupFromPageTableCanonical(t *testing.T) {
	dir := t.TempDir()
	rows := "path,canonical\n/products/a,/products/main\n/products/b,https://shop.example/products/main?x=1\n/products/c,self\n/products/d,https://other.example/products/main\n"
	if err := os.WriteFile(dir+"/pages.csv", []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Parse(dir+"/headgate.toml", []byte(expBase+"\n[[page_table]]\nfile = \"pages.csv\"\n"+titleExp), nil)
	if err != nil {
		t.Fatal(err)
	}
	for target, want := range map[string]string{
		"/products/a": "/products/main",
		"/products/b": "/products/main",
		"/products/c": "/products/c",
		"/products/d": "/products/d",
		"/products/e": "/products/e",
	} {
		if got := c.Resolve(target).ExperimentPath(); got != want {
			t.Errorf("%s: ExperimentPath = %q, want %q", target, got, want)
		}
	}
}

// A canonical cut off by inherit = false is not the page's: the request
// path groups it.
func TestExperimentGroupCanonicalInheritCut(t *testing.T) {
	c := loadExp(t, titleExp+"\n[[rule]]\nmatch = \"/products/*\"\ncanonical = \"/products/main\"\n\n[[rule]]\nmatch = \"/products/:slug/print\"\ninherit = false\ntitle = \"Print\"\n")
	if got := c.Resolve("/products/x/print").ExperimentPath(); got != "/products/x/print" {
		t.Errorf("inherit = false: ExperimentPath = %q", got)
	}
	if got := c.Resolve("/products/x/other").ExperimentPath(); got != "/products/main" {
		t.Errorf("inherited: ExperimentPath = %q", got)
	}
}

// A canonical template's value is spelled as the head writes it: a
// parameter with a lower-case escape groups the page as the upper-case
// spelling a crawler requests.
func TestExperimentGroupCanonicalSpelling(t *testing.T) {
	c := loadExp(t, titleExp+"\n[[rule]]\nmatch = \"/products/:slug/print\"\ncanonical = \"/products/{slug}\"\n")
	if got := c.Resolve("/products/caf%c3%a9/print").ExperimentPath(); got != "/products/caf%C3%A9" {
		t.Errorf("ExperimentPath = %q", got)
	}
}

func TestOnBase(t *testing.T) {
	for _, tc := range []struct {
		s, base string
		want    bool
	}{
		{"https://notes.example/a", "https://notes.example", true},
		{"HTTPS://Notes.Example/a", "https://notes.example", true},
		{"https://notes.example.org/a", "https://notes.example", true}, // the caller checks the byte after
		{"https://notes.exampl", "https://notes.example", false},
		{"https://notes.example/Blog/a", "https://notes.example/blog", false}, // a path is compared exactly
		{"https://NOTES.example/blog/a", "https://notes.example/blog", true},
		{"http://notes.example/a", "https://notes.example", false},
	} {
		if got := onBase(tc.s, tc.base); got != tc.want {
			t.Errorf("onBase(%q, %q) = %v, want %v", tc.s, tc.base, got, tc.want)
		}
	}
}
