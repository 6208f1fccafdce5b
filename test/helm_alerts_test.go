package test

// The chart's IndexNow alert names the CronJob of the release it renders:
// kube-state-metrics labels kube_cronjob_status_last_successful_time with
// the CronJob's name, which is <fullname>-indexnow, not always
// headgate-indexnow (deploy/kubernetes/monitoring's, for the kustomize
// layout's fixed name).

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestHelmIndexNowAlertFollowsRelease(t *testing.T) {
	helm := helmBinary(t)
	chart := helmChart(t)
	plain := plainAlertExprs(t)
	values := []string{"-f", helmTestdata("all-enabled.yaml"), "-f", helmValues(t, map[string]any{"config": map[string]any{"inline": helmLayoutConfig(t, "indexnow")}})}
	for _, release := range []string{"headgate", "shop", "seo-edge"} {
		t.Run(release, func(t *testing.T) {
			out, err := helmRun(helm, append([]string{"template", release, chart, "--namespace", "seo"}, values...)...)
			if err != nil {
				t.Fatal(err)
			}
			docs, err := yamlParse("helm template", []byte(out))
			if err != nil {
				t.Fatal(err)
			}
			o := k8sDecodeAll(t, "helm "+release, docs)
			if len(o.cronJobs) != 1 || len(o.promRules) != 1 {
				t.Fatalf("%d CronJobs, %d PrometheusRules; want one of each", len(o.cronJobs), len(o.promRules))
			}
			name := o.cronJobs[0].Metadata.Name
			var expr, desc string
			n := 0
			for _, g := range o.promRules[0].Spec.Groups {
				for _, r := range g.Rules {
					if strings.Contains(r.Expr, "kube_cronjob_") {
						n++
						expr, desc = r.Expr, r.Annotations["description"]
						if r.Alert != "HeadgateIndexNowFailing" || r.Labels["severity"] == "" || r.Annotations["summary"] == "" {
							t.Errorf("rule %q on the CronJob: want HeadgateIndexNowFailing with a severity and a summary", r.Alert)
						}
					}
				}
			}
			if n != 1 {
				t.Fatalf("%d rules on the IndexNow CronJob, want 1", n)
			}
			if want := `cronjob="` + name + `"`; !strings.Contains(expr, want) || !strings.Contains(desc, name) {
				t.Errorf("the alert does not select this release's CronJob %s (want %s):\n%s\n%s", name, want, expr, desc)
			}
			// promtool, when installed, reads the rendered groups as
			// Prometheus will.
			if promtool, err := exec.LookPath("promtool"); err == nil {
				var spec any
				for _, d := range docs {
					if m, ok := d.(map[string]any); ok && m["kind"] == "PrometheusRule" {
						spec = m["spec"]
					}
				}
				if spec == nil {
					t.Fatal("no PrometheusRule spec among the rendered documents")
				}
				b, err := yaml.Marshal(spec) // {groups: …}, as rendered
				if err != nil {
					t.Fatal(err)
				}
				f := filepath.Join(t.TempDir(), "rules.yaml")
				if err := os.WriteFile(f, b, 0o644); err != nil {
					t.Fatal(err)
				}
				if out, err := exec.Command(promtool, "check", "rules", f).CombinedOutput(); err != nil {
					t.Errorf("promtool check rules (the chart's PrometheusRule): %v\n%s", err, out)
				}
			}
			// The same rule as the plain manifest's, but for the name: the
			// chart knows its CronJob's; the plain manifest matches any
			// kustomize namePrefix or nameSuffix around headgate-indexnow.
			if got := strings.ReplaceAll(expr, `cronjob="`+name+`"`, `cronjob=~"(.+-)?headgate-indexnow(-.+)?"`); got != plain["HeadgateIndexNowFailing"] {
				t.Errorf("the chart's rule differs from deploy/kubernetes/monitoring's beyond the name:\n%s\n%s", got, plain["HeadgateIndexNowFailing"])
			}
		})
	}

	// Without the CronJob, no alert on it.
	out, err := helmRun(helm, "template", "shop", chart, "--set", "prometheusRule.enabled=true")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "kube_cronjob_") {
		t.Error("an IndexNow alert without indexnow.enabled")
	}
}

// plainAlertExprs are deploy/kubernetes/monitoring/prometheusrule.yaml's
// expressions by alert.
func plainAlertExprs(t *testing.T) map[string]string {
	t.Helper()
	docs, err := yamlParseFile(deployRoot(t) + "/kubernetes/monitoring/prometheusrule.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, pr := range k8sDecodeAll(t, "monitoring", docs).promRules {
		for _, g := range pr.Spec.Groups {
			for _, r := range g.Rules {
				m[r.Alert] = r.Expr
			}
		}
	}
	return m
}
