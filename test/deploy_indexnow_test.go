package test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/headgate/headgate/indexnow"
	"github.com/headgate/headgate/rules"
)

// checkK8sIndexNowJob checks a `headgate indexnow -state FILE` container:
// the config has a key and a sitemap, the state's directory is a writable
// claim of the layout, and the Job's deadline leaves room for a run whose
// receiver hangs.
func checkK8sIndexNowJob(t *testing.T, w k8sWorkload, cfg *rules.Config, o *k8sObjects) {
	t.Helper()
	where := fmt.Sprintf("%s container %s", w.name, w.c.Name)
	if cfg.IndexNow == nil {
		t.Errorf("%s: the config has no [indexnow] table: headgate indexnow refuses to run", where)
	}
	if !slices.ContainsFunc(cfg.Rules, func(r *rules.Rule) bool { return r.Sitemap }) {
		t.Errorf("%s: the config has no sitemap = true rule: there are no URLs to submit", where)
	}
	i := slices.Index(w.c.Args, "-state")
	if i < 0 || i+1 >= len(w.c.Args) {
		t.Errorf("%s: no -state FILE", where)
		return
	}
	dir := filepath.Dir(w.c.Args[i+1])
	mounted := false
	for _, m := range w.c.VolumeMounts {
		if m.MountPath != dir {
			continue
		}
		mounted = true
		if m.ReadOnly {
			t.Errorf("%s: the state directory %s is mounted read-only", where, dir)
		}
		claim := ""
		for _, v := range w.pod.Spec.Volumes {
			if v.Name == m.Name && v.PersistentVolumeClaim != nil {
				claim = v.PersistentVolumeClaim.ClaimName
			}
		}
		if claim == "" {
			t.Errorf("%s: the state directory %s is no PersistentVolumeClaim: the state would be lost after each run, and every run would be a first run", where, dir)
		} else if !slices.ContainsFunc(o.pvcs, func(p *k8sPVC) bool { return p.Metadata.Name == claim }) {
			t.Errorf("%s: claim %s is not in the layout", where, claim)
		}
	}
	if !mounted {
		t.Errorf("%s: the state directory %s is no volume mount (the root filesystem is read-only)", where, dir)
	}
	for _, cj := range o.cronJobs {
		if "CronJob "+cj.Metadata.Name != w.name {
			continue
		}
		var defaults indexnow.Options
		worst := defaults.WorstCase()
		if d := cj.Spec.JobTemplate.Spec.ActiveDeadlineSeconds; d == nil || time.Duration(*d)*time.Second < 2*worst {
			t.Errorf("%s: activeDeadlineSeconds should leave room for a run with a hanging receiver (%v) and a sitemap build", w.name, worst)
		}
	}
}

// The indexnow layout is the ingress layout plus the job: the same rules.
func TestDeployIndexNowLayout(t *testing.T) {
	root := deployRoot(t)
	docs, err := k8sRender(filepath.Join(root, "kubernetes", "indexnow"))
	if err != nil {
		t.Fatal(err)
	}
	objs := k8sDecodeAll(t, "indexnow", docs)
	jobs := 0
	for _, cj := range objs.cronJobs {
		for _, c := range cj.Spec.JobTemplate.Spec.Template.Spec.Containers {
			if len(c.Args) > 0 && c.Args[0] == "indexnow" {
				jobs++
			}
		}
	}
	if jobs != 1 {
		t.Errorf("%d containers run headgate indexnow, want 1", jobs)
	}

	// The alert on failed runs names this CronJob (kube-state-metrics'
	// cronjob label is its name): renaming one without the other silences it.
	mon, err := os.ReadFile(filepath.Join(root, "kubernetes", "monitoring", "prometheusrule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The plain manifest's selector is a regular expression that also
	// takes a kustomize namePrefix or nameSuffix: it must match the name,
	// and the name with a prefix.
	sel := regexp.MustCompile(`cronjob=~?"([^"]*)"`).FindAllStringSubmatch(string(mon), -1)
	for _, cj := range objs.cronJobs {
		for _, name := range []string{cj.Metadata.Name, "prod-" + cj.Metadata.Name} {
			matched := false
			for _, m := range sel {
				if regexp.MustCompile("^(?:" + m[1] + ")$").MatchString(name) {
					matched = true
				}
			}
			if !matched {
				t.Errorf("CronJob %s: no alert in monitoring/prometheusrule.yaml selects cronjob %q (selectors %v)", cj.Metadata.Name, name, sel)
			}
		}
	}
	ing, err := k8sRender(filepath.Join(root, "kubernetes", "ingress"))
	if err != nil {
		t.Fatal(err)
	}
	a, b := k8sDecodeAll(t, "ingress", ing).configMaps, objs.configMaps
	if len(a) == 1 && len(b) == 1 && deployRulesText(a[0].Data["headgate.toml"]) != deployRulesText(b[0].Data["headgate.toml"]) {
		t.Errorf("the indexnow layout's rules differ from the ingress layout's")
	}
}
