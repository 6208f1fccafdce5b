package test

// The Helm chart, deploy/helm/headgate, through the real helm CLI: lint,
// the values schema, and every rendered manifest decoded strictly and put
// through the kustomize layouts' checks (deploy_test.go), then compared
// with the ingress layout it must reproduce.
//
// helm is built from its Go module by test/run (deploy/helm/tools, a module
// of its own, so that helm never enters headgate's go.mod) into .cache/bin,
// with kubestrict, which decodes manifests strictly into k8s.io/api's types.
// Without them the tests skip and say how to build them.

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/headgate/headgate/rules"
)

// helmTool finds a binary that test/run builds from deploy/helm/tools: $env,
// then .cache/bin in the repository, then PATH.
func helmTool(t *testing.T, name, env string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		return p
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if p := filepath.Join(root, ".cache", "bin", name); fileExists(p) {
		return p
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return ""
}

func helmBinary(t *testing.T) string {
	t.Helper()
	h := helmTool(t, "helm", "HEADGATE_HELM")
	if h == "" {
		t.Skip("helm not found ($HEADGATE_HELM, .cache/bin/helm, PATH): test/run builds it with " +
			"`cd deploy/helm/tools && go build -o ../../../.cache/bin/helm helm.sh/helm/v3/cmd/helm`")
	}
	return h
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// The files another part of the repository owns; a copy of the chart gets a
// placeholder of each that is absent, so that the chart's templates for
// them render.
var helmPlaceholders = map[string]string{
	"files/alerts.yaml": `groups:
  - name: headgate
    rules:
      - alert: HeadgateUpstreamErrors
        expr: sum(rate(headgate_requests_total{outcome="upstream_error"}[5m])) > 1
        for: 5m
        labels:
          severity: critical
        annotations:
          summary: placeholder (files/alerts.yaml is not in the chart yet)
`,
	"files/grafana-dashboard.json": `{"title": "headgate (placeholder: files/grafana-dashboard.json is not in the chart yet)", "panels": []}` + "\n",
}

// helmChart copies deploy/helm/headgate into a temporary directory and
// returns the copy's path.
func helmChart(t *testing.T) string {
	t.Helper()
	src := filepath.Join(deployRoot(t), "helm", "headgate")
	dst := filepath.Join(t.TempDir(), "headgate")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	for name, content := range helmPlaceholders {
		p := filepath.Join(dst, name)
		if fileExists(p) {
			continue
		}
		t.Logf("chart copy: %s is absent; using a placeholder", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// helmRun runs helm and returns its standard output, or an error with its
// standard error.
func helmRun(helm string, args ...string) (string, error) {
	cmd := exec.Command(helm, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+os.TempDir()+"/headgate-helm-cache", "HELM_CONFIG_HOME="+os.TempDir()+"/headgate-helm-config")
	out, err := cmd.Output()
	if err != nil {
		return string(out), &helmError{args, err, string(out) + stderr.String()}
	}
	return string(out), nil
}

type helmError struct {
	args   []string
	err    error
	output string
}

func (e *helmError) Error() string {
	return "helm " + strings.Join(e.args, " ") + ": " + e.err.Error() + "\n" + e.output
}

// helmValues writes a values file and returns its path.
func helmValues(t *testing.T, v map[string]any) string {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	// Not t.TempDir: its path has the test's name, and helm splits -f at commas.
	dir, err := os.MkdirTemp("", "headgate-helm-values")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	f, err := os.CreateTemp(dir, "values-*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

// helmLayoutConfig is the headgate.toml of a kustomize layout's ConfigMap.
func helmLayoutConfig(t *testing.T, layout string) string {
	t.Helper()
	p := filepath.Join(deployRoot(t), "kubernetes", layout, "configmap.yaml")
	docs, err := yamlParseFile(p)
	if err != nil {
		t.Fatal(err)
	}
	v, err := k8sDecodeObject(p, docs[0])
	if err != nil {
		t.Fatal(err)
	}
	return v.(*k8sConfigMap).Data["headgate.toml"]
}

func helmTestdata(name string) string {
	return filepath.Join("testdata", "helm", name)
}

// helmTemplate renders the chart as release "headgate" in namespace seo.
func helmTemplate(t *testing.T, helm, chart string, values ...string) (string, []any) {
	t.Helper()
	args := []string{"template", "headgate", chart, "--namespace", "seo"}
	for _, v := range values {
		args = append(args, "-f", v)
	}
	out, err := helmRun(helm, args...)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := yamlParse("helm template", []byte(out))
	if err != nil {
		t.Fatal(err)
	}
	return out, docs
}

// TestHelmLint runs helm lint --strict over the default values and over a
// values file that turns every optional part on.
func TestHelmLint(t *testing.T) {
	helm := helmBinary(t)
	chart := helmChart(t)
	allOn := []string{helmTestdata("all-enabled.yaml"), helmValues(t, map[string]any{"config": map[string]any{"inline": helmLayoutConfig(t, "indexnow")}})}
	for _, tc := range []struct {
		name   string
		values []string
	}{
		{"defaults", nil},
		{"all enabled", allOn},
		{"existing ConfigMaps", []string{helmTestdata("existing.yaml")}},
		{"inline config", []string{helmTestdata("inline.yaml")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"lint", "--strict", chart}
			for _, v := range tc.values {
				args = append(args, "-f", v)
			}
			out, err := helmRun(helm, args...)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out, "0 chart(s) failed") || strings.Contains(out, "[WARNING]") || strings.Contains(out, "[ERROR]") {
				t.Errorf("helm lint --strict:\n%s", out)
			}
		})
	}
}

// TestHelmSchema: values.schema.json refuses bad values before anything
// renders, in lint and in template, and the message names the key.
func TestHelmSchema(t *testing.T) {
	helm := helmBinary(t)
	chart := helmChart(t)
	for _, tc := range []struct {
		name   string
		values map[string]any
		want   string // in helm's message
		// template: a template's fail, not the schema's refusal. helm lint
		// reports those as [INFO] by design (so that charts with required
		// values lint), so only helm template must fail.
		template bool
	}{
		{"replicaCount a string", map[string]any{"replicaCount": "3"}, "replicaCount", false},
		{"unknown key", map[string]any{"replicas": 3}, "replicas", false},
		{"hpa.enabled not a bool", map[string]any{"hpa": map[string]any{"enabled": "true"}}, "enabled", false},
		{"unknown key under hpa", map[string]any{"hpa": map[string]any{"enabled": true, "targetCPU": 70}}, "targetCPU", false},
		{"pullPolicy", map[string]any{"image": map[string]any{"pullPolicy": "Sometimes"}}, "pullPolicy", false},
		{"image tag a number", map[string]any{"image": map[string]any{"tag": 1.2}}, "tag", false},
		{"table file name not a ConfigMap key", map[string]any{"tables": map[string]any{"files": map[string]any{"seo/products.csv": "k\n"}}}, "seo/products.csv", false}, // helm names the key, not always its path
		{"port out of range", map[string]any{"containerPorts": map[string]any{"http": 80800}}, "http", false},
		{"ingress path not absolute", map[string]any{"ingress": map[string]any{"enabled": true, "hosts": []any{
			map[string]any{"host": "www.example.com", "paths": []any{map[string]any{"path": "x", "pathType": "Prefix"}}}}}}, "path", false},
		// Not the schema's: the templates refuse what it cannot say.
		{"two table sources", map[string]any{"tables": map[string]any{"files": map[string]any{"a.csv": "k\n"}, "existingConfigMap": "t"}}, "set one of files, existingConfigMap and volume", true},
		{"no config", map[string]any{"config": map[string]any{"inline": ""}}, "config.inline", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := helmValues(t, tc.values)
			for _, args := range [][]string{
				{"lint", "--strict", chart, "-f", f},
				{"template", "headgate", chart, "-f", f},
			} {
				if tc.template && args[0] == "lint" {
					continue
				}
				_, err := helmRun(helm, args...)
				if err == nil {
					t.Errorf("helm %s accepted %v", args[0], tc.values)
					continue
				}
				if !strings.Contains(err.Error(), tc.want) {
					t.Errorf("helm %s: the message does not name %q:\n%v", args[0], tc.want, err)
				}
			}
		})
	}
}

// TestHelmTemplate renders the chart with several values files; every
// manifest decodes strictly into the deploy tests' typed structs (and into
// k8s.io/api's types when kubestrict is built), and each render passes the
// checks a kustomize layout passes.
func TestHelmTemplate(t *testing.T) {
	helm := helmBinary(t)
	chart := helmChart(t)
	df := readDeployDockerfile(t, deployRoot(t))
	kubestrict := helmTool(t, "kubestrict", "HEADGATE_KUBESTRICT")
	indexnowCfg := helmLayoutConfig(t, "indexnow")

	tests := []struct {
		name   string
		values []string
		// existing: the user's ConfigMap with headgate.toml, which the chart
		// does not render (name and config).
		existing  [2]string
		claims    []string // PersistentVolumeClaims of the user's
		wantKinds map[string]int
		check     func(t *testing.T, o *k8sObjects)
	}{
		{
			name:      "defaults",
			wantKinds: map[string]int{"ConfigMap": 1, "Service": 2, "Deployment": 1},
			check: func(t *testing.T, o *k8sObjects) {
				d := o.deployments[0]
				if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
					t.Errorf("replicas %v, want 2", d.Spec.Replicas)
				}
				if d.Spec.Template.Metadata.Annotations["checksum/config"] == "" {
					t.Error("no checksum/config annotation: a config change on helm upgrade would not roll the pods")
				}
				if img := d.Spec.Template.Spec.Containers[0].Image; !strings.HasSuffix(img, ":"+helmAppVersion(t)) {
					t.Errorf("image %s: the tag is not the chart's appVersion %s", img, helmAppVersion(t))
				}
			},
		},
		{
			name:   "all enabled",
			values: []string{helmTestdata("all-enabled.yaml"), helmValues(t, map[string]any{"config": map[string]any{"inline": indexnowCfg}})},
			wantKinds: map[string]int{"ConfigMap": 3, "Service": 2, "Deployment": 1, "HorizontalPodAutoscaler": 1,
				"PodDisruptionBudget": 1, "ServiceMonitor": 1, "PrometheusRule": 1, "CronJob": 1, "PersistentVolumeClaim": 1, "Ingress": 1},
			check: func(t *testing.T, o *k8sObjects) {
				d := o.deployments[0]
				if d.Spec.Replicas != nil {
					t.Error("replicas set beside the autoscaler")
				}
				if _, ok := d.Spec.Template.Metadata.Annotations["prometheus.io/scrape"]; ok {
					t.Error("prometheus.io annotations beside a ServiceMonitor: every sample would be scraped twice")
				}
				var dash *k8sConfigMap
				for _, cm := range o.configMaps {
					if cm.Metadata.Labels["grafana_dashboard"] != "" {
						dash = cm
					}
				}
				if dash == nil || dash.Metadata.Labels["grafana_dashboard"] != "1" {
					t.Fatal("no ConfigMap labelled grafana_dashboard: \"1\" for the Grafana sidecar")
				}
				if !json.Valid([]byte(dash.Data["headgate.json"])) {
					t.Errorf("ConfigMap %s: headgate.json is not JSON", dash.Metadata.Name)
				}
				if dash.Metadata.Annotations["grafana_folder"] != "SEO" {
					t.Errorf("dashboard annotations %v", dash.Metadata.Annotations)
				}
				if len(o.promRules) != 1 || len(o.promRules[0].Spec.Groups) == 0 {
					t.Error("the PrometheusRule has no groups")
				} else if o.promRules[0].Metadata.Labels["release"] != "kube-prometheus-stack" {
					t.Errorf("PrometheusRule labels %v", o.promRules[0].Metadata.Labels)
				}
				helmCheckMounts(t, d.Spec.Template.Spec.Volumes, d.Spec.Template.Spec.Containers[0], map[string]string{
					"/etc/headgate": "headgate-config", "/var/lib/headgate/tables": "headgate-tables", "/var/lib/headgate/bot-ranges": "pvc:bot-ranges"})
				// The monitor finds the admin Service's port.
				for _, m := range o.monitors {
					if !helmSelectsService(o, m.Spec.Selector.MatchLabels, m.Spec.Endpoints[0].Port) {
						t.Errorf("ServiceMonitor %s selects no Service with port %s", m.Metadata.Name, m.Spec.Endpoints[0].Port)
					}
				}
			},
		},
		{
			name:      "existing ConfigMaps",
			values:    []string{helmTestdata("existing.yaml")},
			existing:  [2]string{"site-headgate", indexnowCfg},
			claims:    []string{"site-indexnow-state"},
			wantKinds: map[string]int{"Service": 2, "Deployment": 1, "CronJob": 1},
			check: func(t *testing.T, o *k8sObjects) {
				d := o.deployments[0]
				if _, ok := d.Spec.Template.Metadata.Annotations["checksum/config"]; ok {
					t.Error("checksum/config with rollOnChange false")
				}
				helmCheckMounts(t, d.Spec.Template.Spec.Volumes, d.Spec.Template.Spec.Containers[0], map[string]string{
					"/etc/headgate": "site-headgate", "/var/lib/headgate/tables": "site-tables", "/var/lib/headgate/bot-ranges": "site-bot-ranges"})
			},
		},
		{
			name:      "inline config",
			values:    []string{helmTestdata("inline.yaml")},
			wantKinds: map[string]int{"ConfigMap": 1, "Service": 2, "Deployment": 1},
			check: func(t *testing.T, o *k8sObjects) {
				d := o.deployments[0]
				if d.Spec.Replicas == nil || *d.Spec.Replicas != 4 {
					t.Errorf("replicas %v, want 4", d.Spec.Replicas)
				}
				if a := d.Spec.Template.Spec.Containers[0].Args; a[len(a)-1] != "text" {
					t.Errorf("args %v, want -log-format text", a)
				}
				if len(d.Spec.Template.Spec.TopologySpreadConstraints) != 0 {
					t.Error("topologySpread.enabled false, but the pods have constraints")
				}
				for _, s := range o.services {
					if s.Spec.ClusterIP != "None" && s.Spec.Type != "LoadBalancer" {
						t.Errorf("Service %s: type %q, want LoadBalancer", s.Metadata.Name, s.Spec.Type)
					}
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, docs := helmTemplate(t, helm, chart, tc.values...)
			t.Run("k8s.io/api", func(t *testing.T) {
				if kubestrict == "" {
					t.Skip("kubestrict not found ($HEADGATE_KUBESTRICT, .cache/bin/kubestrict, PATH): test/run builds it with " +
						"`cd deploy/helm/tools && go build -o ../../../.cache/bin/kubestrict ./kubestrict`")
				}
				cmd := exec.Command(kubestrict)
				cmd.Stdin = strings.NewReader(out)
				res, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("kubestrict: %v\n%s", err, res)
				}
				t.Logf("kubestrict: %s", bytes.TrimSpace(res))
			})
			kinds := map[string]int{}
			for _, d := range docs {
				kinds[k8sKind(d)]++
				if ns := d.(map[string]any)["metadata"].(map[string]any)["namespace"]; ns != nil {
					t.Errorf("%s %s: namespace %v in the chart; helm's --namespace decides", k8sKind(d), k8sName(d), ns)
				}
			}
			if !maps.Equal(kinds, tc.wantKinds) {
				t.Errorf("kinds %v, want %v", kinds, tc.wantKinds)
			}
			o := k8sDecodeAll(t, "helm template "+tc.name, docs)
			for _, s := range o.services {
				if s.Spec.Type != "" && s.Spec.ClusterIP == "None" {
					t.Errorf("headless Service %s has type %s", s.Metadata.Name, s.Spec.Type)
				}
			}
			// The layout checks want the one ConfigMap with headgate.toml.
			serving := *o
			serving.configMaps = nil
			for _, cm := range o.configMaps {
				if _, ok := cm.Data["headgate.toml"]; ok {
					serving.configMaps = append(serving.configMaps, cm)
				}
			}
			if name := tc.existing[0]; name != "" {
				cm := &k8sConfigMap{Data: map[string]string{"headgate.toml": tc.existing[1]}}
				cm.Metadata.Name = name
				serving.configMaps = append(serving.configMaps, cm)
			}
			for _, c := range tc.claims {
				pvc := &k8sPVC{}
				pvc.Metadata.Name = c
				serving.pvcs = append(serving.pvcs, pvc)
			}
			checkK8sServing(t, &serving, rules.ModeProduction, df)
			if tc.check != nil {
				tc.check(t, o)
			}
		})
	}
}

// TestHelmChecksum: the pods roll when the chart's config changes, and only then.
func TestHelmChecksum(t *testing.T) {
	helm := helmBinary(t)
	chart := helmChart(t)
	sum := func(values ...string) string {
		_, docs := helmTemplate(t, helm, chart, values...)
		for _, d := range k8sDecodeAll(t, "checksum", docs).deployments {
			return d.Spec.Template.Metadata.Annotations["checksum/config"]
		}
		t.Fatal("no Deployment")
		return ""
	}
	cfg := helmLayoutConfig(t, "ingress")
	a := sum(helmValues(t, map[string]any{"config": map[string]any{"inline": cfg}}))
	b := sum(helmValues(t, map[string]any{"config": map[string]any{"inline": cfg}, "replicaCount": 5}))
	c := sum(helmValues(t, map[string]any{"config": map[string]any{"inline": cfg + "# changed\n"}}))
	d := sum(helmValues(t, map[string]any{"config": map[string]any{"inline": cfg}, "tables": map[string]any{"files": map[string]any{"a.csv": "k\n"}}}))
	if a == "" || a != b {
		t.Errorf("checksum %q, then %q after a change of replicaCount only", a, b)
	}
	if a == c || a == d {
		t.Errorf("checksum unchanged after a config or table change: %q %q %q", a, c, d)
	}
}

// TestHelmMatchesKustomize renders the chart with the values that describe
// deploy/kubernetes/ingress (and indexnow, the ingress layout plus the
// IndexNow CronJob) and compares the objects with the layout's: the same
// container (args, ports, probes, mounts, security context, resources),
// volumes, pod security context, strategy, Services, autoscaler, budget,
// Ingress, config, CronJob and claim.
func TestHelmMatchesKustomize(t *testing.T) {
	helm := helmBinary(t)
	chart := helmChart(t)
	for _, layout := range []string{"ingress", "indexnow"} {
		t.Run(layout, func(t *testing.T) {
			values := map[string]any{
				"image":   map[string]any{"repository": "ghcr.io/example/headgate", "tag": "0.1.0"},
				"config":  map[string]any{"inline": helmLayoutConfig(t, layout)},
				"hpa":     map[string]any{"enabled": true},
				"pdb":     map[string]any{"enabled": true},
				"ingress": map[string]any{"enabled": true, "tls": []any{map[string]any{"hosts": []any{"www.example.com"}, "secretName": "www-example-com-tls"}}},
			}
			if layout == "indexnow" {
				values["indexnow"] = map[string]any{"enabled": true}
			}
			_, docs := helmTemplate(t, helm, chart, helmValues(t, values))
			got := k8sDecodeAll(t, "helm template", docs)
			ldocs, err := k8sRender(filepath.Join(deployRoot(t), "kubernetes", layout))
			if err != nil {
				t.Fatal(err)
			}
			want := k8sDecodeAll(t, layout, ldocs)
			helmCompareLayout(t, layout, got, want)
		})
	}
}

func helmCompareLayout(t *testing.T, layout string, got, want *k8sObjects) {

	eq := func(what string, g, w any) {
		t.Helper()
		if !reflect.DeepEqual(g, w) {
			gj, _ := json.MarshalIndent(g, "", "  ")
			wj, _ := json.MarshalIndent(w, "", "  ")
			t.Errorf("%s differs:\nchart:\n%s\n%s layout:\n%s", what, gj, layout, wj)
		}
	}
	if len(got.deployments) != 1 || len(want.deployments) != 1 {
		t.Fatalf("%d and %d Deployments", len(got.deployments), len(want.deployments))
	}
	gd, wd := got.deployments[0], want.deployments[0]
	eq("Deployment name", gd.Metadata.Name, wd.Metadata.Name)
	eq("replicas", gd.Spec.Replicas, wd.Spec.Replicas)
	eq("strategy", gd.Spec.Strategy, wd.Spec.Strategy)
	gp, wp := gd.Spec.Template.Spec, wd.Spec.Template.Spec
	gc, wc := gp.Containers, wp.Containers
	for i := range gc {
		gc[i].ImagePullPolicy = "" // the layout leaves it to the default
	}
	eq("containers", gc, wc)
	eq("volumes", gp.Volumes, wp.Volumes)
	eq("pod securityContext", gp.SecurityContext, wp.SecurityContext)
	eq("terminationGracePeriodSeconds", gp.TerminationGracePeriodSeconds, wp.TerminationGracePeriodSeconds)
	eq("topology spread (count)", len(gp.TopologySpreadConstraints), len(wp.TopologySpreadConstraints))
	for i := range min(len(gp.TopologySpreadConstraints), len(wp.TopologySpreadConstraints)) {
		g, w := gp.TopologySpreadConstraints[i], wp.TopologySpreadConstraints[i]
		g.LabelSelector, w.LabelSelector = k8sLabelSelector{}, k8sLabelSelector{}
		eq("topology spread", g, w)
	}
	prom := func(a map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range a {
			if strings.HasPrefix(k, "prometheus.io/") {
				out[k] = v
			}
		}
		return out
	}
	eq("prometheus.io annotations", prom(gd.Spec.Template.Metadata.Annotations), prom(wd.Spec.Template.Metadata.Annotations))

	services := func(o *k8sObjects) map[string]any {
		out := map[string]any{}
		for _, s := range o.services {
			out[s.Metadata.Name] = []any{s.Spec.ClusterIP, s.Spec.Ports}
		}
		return out
	}
	eq("Services (name, clusterIP, ports)", services(got), services(want))
	if len(got.hpas) != 1 || len(got.pdbs) != 1 || len(got.ingresses) != 1 || len(got.configMaps) != 1 {
		t.Fatalf("want one each of HPA, PDB, Ingress, ConfigMap: %d %d %d %d", len(got.hpas), len(got.pdbs), len(got.ingresses), len(got.configMaps))
	}
	eq("HorizontalPodAutoscaler", got.hpas[0].Spec, want.hpas[0].Spec)
	eq("PodDisruptionBudget maxUnavailable", got.pdbs[0].Spec.MaxUnavailable, want.pdbs[0].Spec.MaxUnavailable)
	eq("Ingress", got.ingresses[0].Spec, want.ingresses[0].Spec)
	eq("ConfigMap", [2]any{got.configMaps[0].Metadata.Name, got.configMaps[0].Data}, [2]any{want.configMaps[0].Metadata.Name, want.configMaps[0].Data})

	eq("CronJobs (count)", len(got.cronJobs), len(want.cronJobs))
	if len(got.cronJobs) == 1 && len(want.cronJobs) == 1 {
		g, w := got.cronJobs[0], want.cronJobs[0]
		eq("CronJob name", g.Metadata.Name, w.Metadata.Name)
		for _, cj := range []*k8sCronJob{g, w} {
			cj.Metadata = k8sObjectMeta{}
			cj.Spec.JobTemplate.Spec.Template.Metadata = k8sObjectMeta{}
			for i := range cj.Spec.JobTemplate.Spec.Template.Spec.Containers {
				cj.Spec.JobTemplate.Spec.Template.Spec.Containers[i].ImagePullPolicy = ""
			}
		}
		eq("CronJob (spec, pod, container, volumes)", g.Spec, w.Spec)
	}
	eq("PersistentVolumeClaims (count)", len(got.pvcs), len(want.pvcs))
	if len(got.pvcs) == 1 && len(want.pvcs) == 1 {
		eq("PersistentVolumeClaim", [2]any{got.pvcs[0].Metadata.Name, got.pvcs[0].Spec}, [2]any{want.pvcs[0].Metadata.Name, want.pvcs[0].Spec})
	}
}

// helmCheckMounts checks that each mount path is a read-only mount of the
// named ConfigMap (or "pvc:claim").
func helmCheckMounts(t *testing.T, vols []k8sVolume, c k8sContainer, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	for _, m := range c.VolumeMounts {
		if !m.ReadOnly || m.SubPath != "" {
			t.Errorf("mount %s: readOnly %v, subPath %q", m.MountPath, m.ReadOnly, m.SubPath)
		}
		for _, v := range vols {
			switch {
			case v.Name != m.Name:
			case v.ConfigMap != nil:
				got[m.MountPath] = v.ConfigMap.Name
			case v.PersistentVolumeClaim != nil:
				got[m.MountPath] = "pvc:" + v.PersistentVolumeClaim.ClaimName
			}
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("mounts %v, want %v", got, want)
	}
}

func helmSelectsService(o *k8sObjects, sel map[string]string, port string) bool {
	for _, s := range o.services {
		if !k8sSelects(sel, s.Metadata.Labels) {
			continue
		}
		for _, p := range s.Spec.Ports {
			if p.Name == port {
				return true
			}
		}
	}
	return false
}

func helmAppVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployRoot(t), "helm", "headgate", "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		AppVersion string `yaml:"appVersion"`
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c.AppVersion
}

// TestHelmKubestrict: the k8s.io/api check refuses what the API server's
// strict field validation refuses, so that its silence means something.
func TestHelmKubestrict(t *testing.T) {
	kubestrict := helmTool(t, "kubestrict", "HEADGATE_KUBESTRICT")
	if kubestrict == "" {
		t.Skip("kubestrict not found: test/run builds it from deploy/helm/tools")
	}
	for _, tc := range []struct{ name, in, want string }{
		{"unknown field", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  replica: 2\n", `unknown field "spec.replica"`},
		{"wrong type", "apiVersion: v1\nkind: Service\nmetadata:\n  name: x\nspec:\n  ports:\n    - port: http\n", "ServicePort"},
		{"duplicate field", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  name: z\n", "already set"},
		{"unknown kind", "apiVersion: v1\nkind: Servce\nmetadata:\n  name: x\n", "Servce"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(kubestrict)
			cmd.Stdin = strings.NewReader(tc.in)
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), tc.want) {
				t.Errorf("err %v, output %s; want an error naming %q", err, out, tc.want)
			}
		})
	}
}

// TestHelmNotes renders NOTES.txt (helm template leaves it out, and helm
// install --dry-run wants a cluster) through tpl in a copy of the chart: it
// says how to open the inspector with kubectl port-forward.
func TestHelmNotes(t *testing.T) {
	helm := helmBinary(t)
	chart := helmChart(t)
	src, err := os.ReadFile(filepath.Join(chart, "templates", "NOTES.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(chart, "files", "notes-src.txt"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	render := `text: {{ tpl (.Files.Get "files/notes-src.txt") . | toJson }}` + "\n"
	if err := os.WriteFile(filepath.Join(chart, "templates", "notes-render.yaml"), []byte(render), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		values map[string]any
		want   []string
	}{
		{"defaults", map[string]any{}, []string{
			"kubectl --namespace seo port-forward deployment/headgate 9090:9090",
			"http://127.0.0.1:9090/inspect?path=/",
			"port-forward service/headgate 8080:80",
			"rolls the pods"}},
		{"ingress and reload in place", map[string]any{
			"ingress":        map[string]any{"enabled": true, "tls": []any{map[string]any{"hosts": []any{"www.example.com"}}}},
			"config":         map[string]any{"rollOnChange": false},
			"containerPorts": map[string]any{"admin": 9100},
		}, []string{"port-forward deployment/headgate 9100:9100", "https://www.example.com/", "reloads the mounted config in place"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := helmRun(helm, "template", "headgate", chart, "--namespace", "seo",
				"--show-only", "templates/notes-render.yaml", "-f", helmValues(t, tc.values))
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Text string `yaml:"text"`
			}
			if err := yaml.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(doc.Text, w) {
					t.Errorf("NOTES.txt does not say %q:\n%s", w, doc.Text)
				}
			}
		})
	}
}

// TestHelmOutsideGoMod: helm and the Kubernetes modules it pulls in stay in
// deploy/helm/tools's go.mod, never in headgate's.
func TestHelmOutsideGoMod(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []string{"helm.sh/helm", "k8s.io/api ", "k8s.io/client-go", "k8s.io/apimachinery"} {
			if strings.Contains(string(b), m) {
				t.Errorf("%s names %s: build helm in deploy/helm/tools, its own module", f, strings.TrimSpace(m))
			}
		}
	}
	tools, err := os.ReadFile(filepath.Join(root, "deploy", "helm", "tools", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(tools), "tool helm.sh/helm/v3/cmd/helm") {
		t.Error("deploy/helm/tools/go.mod has no tool helm.sh/helm/v3/cmd/helm")
	}
}
