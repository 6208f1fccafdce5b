package test

// The Grafana dashboard and the alert rules the Helm chart loads
// (deploy/helm/headgate/files/), SPEC §20.1 and issue 37: every PromQL
// expression names only metrics headgate exports, the rules file is what
// Prometheus reads, and it says the same as the plain PrometheusRule of
// deploy/kubernetes/monitoring.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

type promRuleGroup struct {
	Name  string `yaml:"name"`
	Rules []struct {
		Alert       string            `yaml:"alert"`
		Record      string            `yaml:"record"`
		Expr        string            `yaml:"expr"`
		For         string            `yaml:"for"`
		Labels      map[string]string `yaml:"labels"`
		Annotations map[string]string `yaml:"annotations"`
	} `yaml:"rules"`
}

var metricNameRE = regexp.MustCompile(`\bheadgate_[a-z_]+`)

// checkMetricNames reports every headgate_* name in expr that the code
// does not export (a histogram's _bucket, _sum and _count series count
// as its own).
func checkMetricNames(t *testing.T, where, expr string, known map[string]bool) int {
	t.Helper()
	n := 0
	for _, name := range metricNameRE.FindAllString(expr, -1) {
		n++
		base := name
		for _, suf := range []string{"_bucket", "_sum", "_count"} {
			if b, ok := strings.CutSuffix(name, suf); ok && known[b] {
				base = b
			}
		}
		if !known[base] {
			t.Errorf("%s: %s is no metric headgate exports (have %v)", where, name, deploySortedKeys(known))
		}
	}
	return n
}

func helmFiles(t *testing.T) string {
	t.Helper()
	return filepath.Join(deployRoot(t), "helm", "headgate", "files")
}

func TestDeployGrafanaDashboard(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(helmFiles(t), "grafana-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(src, &d); err != nil {
		t.Fatalf("grafana-dashboard.json: %v", err)
	}
	if d["uid"] == "" || d["title"] == "" {
		t.Error("the dashboard needs a uid and a title")
	}
	if _, ok := d["__inputs"]; ok {
		t.Error("__inputs: the Grafana sidecar does not resolve them; use the datasource variable")
	}
	known := deployMetricNames(t, deployRoot(t))
	exprs, ids := 0, map[float64]bool{}
	used := map[string]bool{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if id, ok := v["id"].(float64); ok && v["gridPos"] != nil {
				if ids[id] {
					t.Errorf("%s: panel id %v twice", path, id)
				}
				ids[id] = true
			}
			if ds, ok := v["datasource"].(map[string]any); ok && ds["uid"] != "${datasource}" {
				t.Errorf("%s: datasource %v, want the ${datasource} variable", path, ds)
			}
			for k, c := range v {
				if s, ok := c.(string); ok && (k == "expr" || k == "query" || k == "definition") {
					exprs += checkMetricNames(t, path+"."+k, s, known)
					for _, n := range metricNameRE.FindAllString(s, -1) {
						used[strings.TrimSuffix(n, "_bucket")] = true
					}
					continue
				}
				title, _ := v["title"].(string)
				walk(path+"/"+title+"."+k, c)
			}
		case []any:
			for _, c := range v {
				walk(path, c)
			}
		}
	}
	walk("dashboard", d)
	if exprs < 20 {
		t.Errorf("only %d metric references in the dashboard", exprs)
	}
	// Over these metrics and the proxy's (issue 37): crawlers,
	// verification, violations, referrals, changes, outcomes, latency;
	// and the experiments' pages by group (SPEC §21).
	for _, m := range []string{"headgate_bot_requests_total", "headgate_bot_response_bytes_total", "headgate_bot_robots_violations_total",
		"headgate_referrals_total", "headgate_upstream_changes_total", "headgate_requests_total", "headgate_rewrite_duration_seconds",
		"headgate_upstream_errors_total", "headgate_redirects_total", "headgate_experiment_pages"} {
		if !used[m] {
			t.Errorf("the dashboard shows nothing of %s", m)
		}
	}
}

func readRulesFile(t *testing.T, path string) []promRuleGroup {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []promRuleGroup `yaml:"groups"`
	}
	dec := yaml.NewDecoder(strings.NewReader(string(src)))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(f.Groups) == 0 {
		t.Fatalf("%s: no groups", path)
	}
	return f.Groups
}

func TestDeployAlertRules(t *testing.T) {
	path := filepath.Join(helmFiles(t), "alerts.yaml")
	groups := readRulesFile(t, path)
	known := deployMetricNames(t, deployRoot(t))
	alerts := map[string]string{}
	for _, g := range groups {
		for _, r := range g.Rules {
			if r.Alert == "" || r.Expr == "" || r.Labels["severity"] == "" || r.Annotations["summary"] == "" {
				t.Errorf("group %s: rule %q needs alert, expr, a severity label and a summary", g.Name, r.Alert)
			}
			if _, dup := alerts[r.Alert]; dup {
				t.Errorf("alert %s twice", r.Alert)
			}
			alerts[r.Alert] = r.Expr
			checkMetricNames(t, "alert "+r.Alert, r.Expr, known)
		}
	}
	// SPEC §20.1: a spoofed-crawler surge, as a rate and as a share;
	// §20.2: critical upstream changes.
	for name, parts := range map[string][]string{
		"HeadgateSpoofedCrawlerSurge":    {`headgate_bot_requests_total{verified="no"}`, "/", "sum by (namespace) (rate(headgate_bot_requests_total[10m]))"},
		"HeadgateUpstreamCriticalChange": {`increase(headgate_upstream_changes_total{severity="critical"}`},
		"HeadgateUpstreamErrors":         {`outcome="upstream_error"`},
		"HeadgateRewriteSkipsRising":     {`skipped_too_large`},
	} {
		expr, ok := alerts[name]
		if !ok {
			t.Errorf("no alert %s", name)
		}
		for _, p := range parts {
			if !strings.Contains(expr, p) {
				t.Errorf("alert %s: expr does not contain %q:\n%s", name, p, expr)
			}
		}
	}

	// The plain manifest carries the same rules (and the IndexNow
	// CronJob's, which the chart names per release).
	docs, err := yamlParseFile(filepath.Join(deployRoot(t), "kubernetes", "monitoring", "prometheusrule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	plain := k8sDecodeAll(t, "monitoring", docs)
	inPlain := map[string]string{}
	for _, pr := range plain.promRules {
		for _, g := range pr.Spec.Groups {
			for _, r := range g.Rules {
				inPlain[r.Alert] = r.Expr
			}
		}
	}
	for name, expr := range alerts {
		if got, ok := inPlain[name]; !ok || got != expr {
			t.Errorf("alert %s: deploy/kubernetes/monitoring/prometheusrule.yaml has %q, files/alerts.yaml %q", name, got, expr)
		}
	}
	for name := range inPlain {
		if _, ok := alerts[name]; !ok && !strings.Contains(name, "IndexNow") {
			t.Errorf("alert %s is in the plain PrometheusRule only", name)
		}
	}

	// promtool, when Debian's prometheus package is installed, reads the
	// file as Prometheus will.
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Log("promtool not installed (Debian: apt-get install prometheus): the rules were checked by this test's decoder only")
		return
	}
	out, err := exec.Command(promtool, "check", "rules", path).CombinedOutput()
	if err != nil {
		t.Errorf("promtool check rules %s: %v\n%s", path, err, out)
	}
	// And evaluates the two §20 alerts over made-up series: a spoofer
	// at 3/s beside 2/s of real Googlebot fires after its 15 minutes, a
	// quiet one does not; one critical change fires at once.
	ann := func(alert, signal string) string {
		for _, g := range groups {
			for _, r := range g.Rules {
				if r.Alert == alert {
					m := map[string]string{}
					for k, v := range r.Annotations {
						m[k] = strings.ReplaceAll(v, "{{ $labels.signal }}", signal)
					}
					b, _ := json.Marshal(m) // JSON is YAML
					return string(b)
				}
			}
		}
		t.Fatalf("no alert %s", alert)
		return ""
	}
	unit := `rule_files: [` + strconv.Quote(path) + `]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'headgate_bot_requests_total{namespace="shop",bot="googlebot",category="search",verified="no",code_class="2xx"}'
        values: '0+180x40'
      - series: 'headgate_bot_requests_total{namespace="shop",bot="googlebot",category="search",verified="ip",code_class="2xx"}'
        values: '0+120x40'
      - series: 'headgate_bot_requests_total{namespace="blog",bot="googlebot",category="search",verified="no",code_class="2xx"}'
        values: '0+6x40'
      - series: 'headgate_upstream_changes_total{namespace="shop",signal="robots",severity="critical"}'
        values: '0 0 0 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1'
    alert_rule_test:
      - eval_time: 10m
        alertname: HeadgateSpoofedCrawlerSurge
        exp_alerts: []
      - eval_time: 30m
        alertname: HeadgateSpoofedCrawlerSurge
        exp_alerts:
          - exp_labels: {severity: warning, namespace: shop}
            exp_annotations: ` + ann("HeadgateSpoofedCrawlerSurge", "") + `
      - eval_time: 5m
        alertname: HeadgateUpstreamCriticalChange
        exp_alerts:
          - exp_labels: {severity: critical, namespace: shop, signal: robots}
            exp_annotations: ` + ann("HeadgateUpstreamCriticalChange", "robots") + `
      - eval_time: 30m
        alertname: HeadgateUpstreamCriticalChange
        exp_alerts: []
`
	ut := filepath.Join(t.TempDir(), "alerts_test.yaml")
	if err := os.WriteFile(ut, []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "test", "rules", ut).CombinedOutput(); err != nil {
		t.Errorf("promtool test rules: %v\n%s", err, out)
	}
}
