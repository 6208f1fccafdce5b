package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// HeadgateIndexNowFailing over made-up kube-state-metrics series, as
// Prometheus evaluates it (promtool test rules): a CronJob whose last
// success is over an hour old fires; one that succeeded recently does not;
// and one that never succeeded, which has no last-success series at all,
// fires an hour after its creation (with the first half alone it never
// would). A kustomize namePrefix (prod-headgate-indexnow) is still it;
// another CronJob is not.
func TestIndexNowAlertNeverSucceeded(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (Debian: apt-get install prometheus)")
	}
	docs, err := yamlParseFile(filepath.Join(deployRoot(t), "kubernetes", "monitoring", "prometheusrule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var expr, forDur string
	for _, pr := range k8sDecodeAll(t, "monitoring", docs).promRules {
		for _, g := range pr.Spec.Groups {
			for _, r := range g.Rules {
				if r.Alert == "HeadgateIndexNowFailing" {
					expr, forDur = r.Expr, string(r.For)
				}
			}
		}
	}
	if expr == "" {
		t.Fatal("no HeadgateIndexNowFailing in deploy/kubernetes/monitoring/prometheusrule.yaml")
	}
	dir := t.TempDir()
	rules := "groups:\n  - name: indexnow\n    rules:\n      - alert: HeadgateIndexNowFailing\n        expr: " +
		strconv.Quote(strings.TrimSpace(expr)) + "\n        for: " + forDur + "\n        labels: {severity: warning}\n"
	rf := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(rf, []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	// Times are seconds from promtool's start: every CronJob created at
	// 0; "fresh" succeeds at 7000 s, "stale" last at 1000 s, "never" not.
	unit := `rule_files: [` + strconv.Quote(rf) + `]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'kube_cronjob_created{namespace="fresh",cronjob="headgate-indexnow"}'
        values: '0x150'
      - series: 'kube_cronjob_created{namespace="stale",cronjob="headgate-indexnow"}'
        values: '0x150'
      - series: 'kube_cronjob_created{namespace="never",cronjob="headgate-indexnow"}'
        values: '0x150'
      - series: 'kube_cronjob_status_last_successful_time{namespace="fresh",cronjob="headgate-indexnow"}'
        values: '7000x150'
      - series: 'kube_cronjob_created{namespace="prefixed",cronjob="prod-headgate-indexnow"}'
        values: '0x150'
      - series: 'kube_cronjob_created{namespace="other",cronjob="backup"}'
        values: '0x150'
      - series: 'kube_cronjob_status_last_successful_time{namespace="stale",cronjob="headgate-indexnow"}'
        values: '1000x150'
    alert_rule_test:
      - eval_time: 30m
        alertname: HeadgateIndexNowFailing
        exp_alerts: []
      - eval_time: 2h
        alertname: HeadgateIndexNowFailing
        exp_alerts:
          - exp_labels: {severity: warning, namespace: never}
          - exp_labels: {severity: warning, namespace: prefixed}
          - exp_labels: {severity: warning, namespace: stale}
`
	ut := filepath.Join(dir, "unit.yaml")
	if err := os.WriteFile(ut, []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "test", "rules", ut).CombinedOutput(); err != nil {
		t.Errorf("promtool test rules: %v\n%s", err, out)
	}
}
