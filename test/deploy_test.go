package test

// The deployment files, checked statically: deploy/Dockerfile, and every
// manifest under deploy/kubernetes decoded strictly into typed structs that
// reject unknown fields, then each layout (sidecar, ingress, staging,
// monitoring) checked for consistency with the headgate.toml it ships.
//
// No Docker engine or cluster is needed. When kubectl is on PATH, each
// layout is also built with `kubectl kustomize` and its output goes through
// the same checks.
//
// YAML is read with go.yaml.in/yaml/v3 (yamlParse), which refuses
// duplicate keys; yamlStrict refuses on top what Kubernetes' YAML 1.1
// reader takes otherwise (plain yes/no, 0644) and anchors, aliases and
// tags, each with the file and line.

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/headgate/headgate/rules"
)

// ---- the tests ------------------------------------------------------------

const deployConfigPath = "/etc/headgate/headgate.toml"

// k8sLayout is a kustomization a user applies, and what its config must say.
type k8sLayout struct {
	dir     string
	mode    rules.Mode
	serving bool // runs headgate serve
}

var k8sLayouts = []k8sLayout{
	{"sidecar", rules.ModeProduction, true},
	{"ingress", rules.ModeProduction, true},
	{"staging", rules.ModeStaging, true},
	{"indexnow", rules.ModeProduction, true},
	{"monitoring", "", false},
}

// TestDeployManifestsStrict decodes every YAML file under deploy/kubernetes
// into its kind's struct, rejecting unknown fields and unknown kinds.
func TestDeployManifestsStrict(t *testing.T) {
	root := deployRoot(t)
	n := 0
	err := filepath.WalkDir(filepath.Join(root, "kubernetes"), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		switch filepath.Ext(path) {
		case ".yaml":
		case ".yml", ".json":
			t.Errorf("%s: name manifests *.yaml", path)
			return nil
		default:
			return nil
		}
		n++
		docs, err := yamlParseFile(path)
		if err != nil {
			t.Error(err)
			return nil
		}
		for i, doc := range docs {
			if _, err := k8sDecodeObject(fmt.Sprintf("%s: document %d", deployRel(root, path), i+1), doc); err != nil {
				t.Error(err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no manifests under deploy/kubernetes")
	}
}

// TestDeployLayouts renders each layout from its kustomization (resources,
// patches, namespace, labels) and checks it for consistency.
func TestDeployLayouts(t *testing.T) {
	root := deployRoot(t)
	df := readDeployDockerfile(t, root)
	configs := map[string]*rules.Config{}
	sources := map[string]string{}
	for _, l := range k8sLayouts {
		t.Run(l.dir, func(t *testing.T) {
			docs, err := k8sRender(filepath.Join(root, "kubernetes", l.dir))
			if err != nil {
				t.Fatal(err)
			}
			objs := k8sDecodeAll(t, l.dir, docs)
			if l.serving {
				configs[l.dir], sources[l.dir] = checkK8sServing(t, objs, l.mode, df)
			}
		})
	}
	checkK8sMonitoring(t, root)
	// Staging audits what production will serve: the same rules, the same
	// base URL (a leaked staging page names the production original).
	prod, stg := configs["ingress"], configs["staging"]
	if prod != nil && stg != nil {
		if prod.Site.BaseURL != stg.Site.BaseURL {
			t.Errorf("staging base_url %q differs from production's %q: staging canonicals must name production", stg.Site.BaseURL, prod.Site.BaseURL)
		}
		if a, b := deployRulesText(sources["ingress"]), deployRulesText(sources["staging"]); a != b {
			t.Errorf("the staging config's rules differ from the ingress config's: staging must audit the rules production serves")
		}
	}
}

// TestDeployKubectlKustomize builds every layout with kubectl, when it is
// installed, and puts the output through the same checks.
func TestDeployKubectlKustomize(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl not on PATH: the layouts are checked from their sources only")
	}
	root := deployRoot(t)
	df := readDeployDockerfile(t, root)
	for _, l := range append(k8sLayouts, k8sLayout{"base", rules.ModeProduction, false}) {
		t.Run(l.dir, func(t *testing.T) {
			cmd := exec.Command(kubectl, "kustomize", filepath.Join(root, "kubernetes", l.dir))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("kubectl kustomize %s: %v\n%s", l.dir, err, stderr.String())
			}
			docs, err := yamlParse("kubectl kustomize "+l.dir, out)
			if err != nil {
				t.Fatal(err)
			}
			objs := k8sDecodeAll(t, l.dir, docs)
			if l.serving {
				checkK8sServing(t, objs, l.mode, df)
			}
		})
	}
}

// TestDeployDockerfile checks deploy/Dockerfile statically: there is no
// Docker engine where the tests run.
// ---- layout checks ----------------------------------------------------------

type k8sObjects struct {
	configMaps   []*k8sConfigMap
	services     []*k8sService
	deployments  []*k8sDeployment
	cronJobs     []*k8sCronJob
	pdbs         []*k8sPDB
	hpas         []*k8sHPA
	ingresses    []*k8sIngress
	pvcs         []*k8sPVC
	monitors     []*k8sServiceMonitor
	promRules    []*k8sPrometheusRule
	namespaceSet map[string]bool
}

func k8sDecodeAll(t *testing.T, name string, docs []any) *k8sObjects {
	t.Helper()
	o := &k8sObjects{namespaceSet: map[string]bool{}}
	for i, doc := range docs {
		v, err := k8sDecodeObject(fmt.Sprintf("%s: object %d", name, i+1), doc)
		if err != nil {
			t.Fatal(err)
		}
		switch v := v.(type) {
		case *k8sConfigMap:
			o.configMaps = append(o.configMaps, v)
			o.namespaceSet[v.Metadata.Namespace] = true
		case *k8sService:
			o.services = append(o.services, v)
			o.namespaceSet[v.Metadata.Namespace] = true
		case *k8sDeployment:
			o.deployments = append(o.deployments, v)
			o.namespaceSet[v.Metadata.Namespace] = true
		case *k8sCronJob:
			o.cronJobs = append(o.cronJobs, v)
			o.namespaceSet[v.Metadata.Namespace] = true
		case *k8sPDB:
			o.pdbs = append(o.pdbs, v)
		case *k8sHPA:
			o.hpas = append(o.hpas, v)
		case *k8sIngress:
			o.ingresses = append(o.ingresses, v)
		case *k8sPVC:
			o.pvcs = append(o.pvcs, v)
		case *k8sServiceMonitor:
			o.monitors = append(o.monitors, v)
		case *k8sPrometheusRule:
			o.promRules = append(o.promRules, v)
		case *k8sKustomization:
			t.Fatalf("%s: a Kustomization among the rendered objects", name)
		}
	}
	return o
}

// k8sWorkload is one pod template that runs headgate, with where it came from.
type k8sWorkload struct {
	name string
	pod  *k8sPodTemplate
	c    *k8sContainer
}

// checkK8sServing checks a layout that runs `headgate serve` and returns
// its config and the config's text.
func checkK8sServing(t *testing.T, o *k8sObjects, mode rules.Mode, df *deployDockerfile) (*rules.Config, string) {
	t.Helper()
	if len(o.namespaceSet) > 1 {
		t.Errorf("objects in several namespaces: %v", o.namespaceSet)
	}
	if len(o.configMaps) != 1 {
		t.Fatalf("%d ConfigMaps, want the one with headgate.toml", len(o.configMaps))
	}
	cm := o.configMaps[0]
	src, ok := cm.Data["headgate.toml"]
	if !ok {
		t.Fatalf("ConfigMap %s has no headgate.toml", cm.Metadata.Name)
	}
	base, err := rules.Parse("headgate.toml", []byte(src), nil)
	if err != nil {
		t.Fatalf("ConfigMap %s: headgate.toml does not pass check:\n%v", cm.Metadata.Name, err)
	}
	if base.Site.Mode != mode {
		t.Errorf("headgate.toml: site.mode = %q, want %q", base.Site.Mode, mode)
	}

	var servers, jobs []k8sWorkload
	for _, d := range o.deployments {
		for i := range d.Spec.Template.Spec.Containers {
			c := &d.Spec.Template.Spec.Containers[i]
			if k8sIsHeadgate(c) {
				servers = append(servers, k8sWorkload{"Deployment " + d.Metadata.Name, &d.Spec.Template, c})
			}
		}
		if !k8sSelects(d.Spec.Selector.MatchLabels, d.Spec.Template.Metadata.Labels) {
			t.Errorf("Deployment %s: the selector %v does not select its own pods %v", d.Metadata.Name, d.Spec.Selector.MatchLabels, d.Spec.Template.Metadata.Labels)
		}
	}
	for _, cj := range o.cronJobs {
		tpl := &cj.Spec.JobTemplate.Spec.Template
		for i := range tpl.Spec.Containers {
			if c := &tpl.Spec.Containers[i]; k8sIsHeadgate(c) {
				jobs = append(jobs, k8sWorkload{"CronJob " + cj.Metadata.Name, tpl, c})
			}
		}
		if cj.Spec.ConcurrencyPolicy != "Forbid" {
			t.Errorf("CronJob %s: concurrencyPolicy %q, want Forbid (two sitemap builds must not race)", cj.Metadata.Name, cj.Spec.ConcurrencyPolicy)
		}
		if rp := tpl.Spec.RestartPolicy; rp != "Never" && rp != "OnFailure" {
			t.Errorf("CronJob %s: restartPolicy %q", cj.Metadata.Name, rp)
		}
	}
	if len(servers) == 0 {
		t.Fatal("no Deployment runs headgate")
	}

	var cfg *rules.Config
	for _, w := range append(servers, jobs...) {
		c := checkK8sWorkload(t, w, cm, src, df)
		if c != nil && slices.ContainsFunc(servers, func(s k8sWorkload) bool { return s.c == w.c }) {
			cfg = c
			checkK8sServer(t, w, c, len(o.monitors) > 0)
		}
		if c != nil && slices.ContainsFunc(jobs, func(s k8sWorkload) bool { return s.c == w.c }) {
			if len(w.c.Args) > 0 && w.c.Args[0] == "indexnow" {
				checkK8sIndexNowJob(t, w, c, o)
			} else {
				checkK8sSitemapJob(t, w, c, o)
			}
		}
	}
	if cfg == nil {
		return nil, src
	}

	// Services: the public one reaches headgate's listener; the admin port
	// is only on a headless Service (for a ServiceMonitor), never public.
	listen, admin := addrPort(t, "server.listen", cfg.Server.Listen), addrPort(t, "server.admin_listen", cfg.Server.AdminListen)
	public := map[string]*k8sService{}
	for _, s := range o.services {
		w := k8sSelectedWorkload(servers, s.Spec.Selector)
		if w == nil {
			t.Errorf("Service %s: selector %v selects no pod that runs headgate", s.Metadata.Name, s.Spec.Selector)
			continue
		}
		for _, p := range s.Spec.Ports {
			target, ok := k8sContainerPort(w.c, p.TargetPort)
			switch {
			case !ok:
				t.Errorf("Service %s port %s: targetPort %s is no port of container %s", s.Metadata.Name, p.Name, p.TargetPort, w.c.Name)
			case target == listen:
				public[s.Metadata.Name] = s
			case target == admin:
				if s.Spec.ClusterIP != "None" {
					t.Errorf("Service %s exposes the admin port %d on a cluster IP: keep it on a headless Service for Prometheus only", s.Metadata.Name, admin)
				}
			default:
				t.Errorf("Service %s port %s: targetPort %s (%d) is neither server.listen (%d) nor server.admin_listen (%d)", s.Metadata.Name, p.Name, p.TargetPort, target, listen, admin)
			}
		}
	}
	if len(public) == 0 {
		t.Errorf("no Service targets server.listen (%d)", listen)
	}

	// Ingress: to the public Service's port, for the site's host.
	baseHost := deployHostOf(cfg.Site.BaseURL)
	for _, in := range o.ingresses {
		for _, r := range in.Spec.Rules {
			if mode == rules.ModeProduction && r.Host != baseHost {
				t.Errorf("Ingress %s: host %q, but site.base_url names %q", in.Metadata.Name, r.Host, baseHost)
			}
			if mode == rules.ModeStaging && r.Host == baseHost {
				t.Errorf("Ingress %s: the staging copy answers for the production host %q", in.Metadata.Name, r.Host)
			}
			if r.HTTP == nil {
				t.Errorf("Ingress %s: rule without http", in.Metadata.Name)
				continue
			}
			for _, p := range r.HTTP.Paths {
				b := p.Backend.Service
				if b == nil {
					t.Errorf("Ingress %s %s: no service backend", in.Metadata.Name, p.Path)
					continue
				}
				s := public[b.Name]
				if s == nil {
					t.Errorf("Ingress %s %s: backend %s is not a Service of headgate's public port", in.Metadata.Name, p.Path, b.Name)
					continue
				}
				if !slices.ContainsFunc(s.Spec.Ports, func(sp k8sServicePort) bool {
					return b.Port.Name != "" && sp.Name == b.Port.Name || b.Port.Number != 0 && sp.Port == b.Port.Number
				}) {
					t.Errorf("Ingress %s %s: Service %s has no port %s%d", in.Metadata.Name, p.Path, b.Name, b.Port.Name, b.Port.Number)
				}
			}
		}
		for _, tls := range in.Spec.TLS {
			for _, h := range tls.Hosts {
				if !slices.ContainsFunc(in.Spec.Rules, func(r k8sIngressRule) bool {
					return r.Host == h
				}) {
					t.Errorf("Ingress %s: TLS host %q has no rule", in.Metadata.Name, h)
				}
			}
		}
	}

	// Autoscaler and disruption budget: on the headgate Deployment.
	for _, h := range o.hpas {
		d := k8sFindDeployment(o, h.Spec.ScaleTargetRef.Name)
		if h.Spec.ScaleTargetRef.Kind != "Deployment" || d == nil {
			t.Errorf("HorizontalPodAutoscaler %s: target %s %s is not a Deployment here", h.Metadata.Name, h.Spec.ScaleTargetRef.Kind, h.Spec.ScaleTargetRef.Name)
			continue
		}
		if d.Spec.Replicas != nil {
			t.Errorf("Deployment %s sets replicas and has an autoscaler: every kubectl apply would reset the count", d.Metadata.Name)
		}
		if h.Spec.MinReplicas == nil || *h.Spec.MinReplicas > h.Spec.MaxReplicas {
			t.Errorf("HorizontalPodAutoscaler %s: minReplicas %v, maxReplicas %d", h.Metadata.Name, h.Spec.MinReplicas, h.Spec.MaxReplicas)
		}
		cpu := false
		for _, m := range h.Spec.Metrics {
			if m.Type == "Resource" && m.Resource != nil && m.Resource.Name == "cpu" && m.Resource.Target.Type == "Utilization" && m.Resource.Target.AverageUtilization != nil {
				cpu = true
			}
		}
		if !cpu {
			t.Errorf("HorizontalPodAutoscaler %s: no CPU utilization target", h.Metadata.Name)
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			if c.Resources == nil || c.Resources.Requests["cpu"] == "" {
				t.Errorf("Deployment %s container %s: no CPU request, so no CPU utilization to scale on", d.Metadata.Name, c.Name)
			}
		}
	}
	for _, p := range o.pdbs {
		if k8sSelectedWorkload(servers, p.Spec.Selector.MatchLabels) == nil {
			t.Errorf("PodDisruptionBudget %s: selector %v selects no headgate pod", p.Metadata.Name, p.Spec.Selector.MatchLabels)
		}
		if (p.Spec.MinAvailable == nil) == (p.Spec.MaxUnavailable == nil) {
			t.Errorf("PodDisruptionBudget %s: set exactly one of minAvailable and maxUnavailable", p.Metadata.Name)
		}
		if p.Spec.MinAvailable != nil && !p.Spec.MinAvailable.IsStr {
			for _, h := range o.hpas {
				if h.Spec.MinReplicas != nil && p.Spec.MinAvailable.Int >= *h.Spec.MinReplicas {
					t.Errorf("PodDisruptionBudget %s: minAvailable %d leaves no pod to evict at %d replicas: node drains would block", p.Metadata.Name, p.Spec.MinAvailable.Int, *h.Spec.MinReplicas)
				}
			}
		}
	}
	for _, p := range o.pvcs {
		used := false
		for _, w := range jobs {
			for _, v := range w.pod.Spec.Volumes {
				used = used || v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == p.Metadata.Name
			}
		}
		if !used {
			t.Errorf("PersistentVolumeClaim %s: no headgate job mounts it", p.Metadata.Name)
		}
	}
	return cfg, src
}

// checkK8sWorkload checks what every headgate container needs: the config
// mounted where -config says, security settings, resources. It returns the
// config as the container sees it (its HEADGATE_* environment applied).
func checkK8sWorkload(t *testing.T, w k8sWorkload, cm *k8sConfigMap, src string, df *deployDockerfile) *rules.Config {
	t.Helper()
	where := fmt.Sprintf("%s container %s", w.name, w.c.Name)
	c := w.c
	if len(c.Command) > 0 && !slices.Equal(c.Command, []string{df.entrypointBinary()}) {
		t.Errorf("%s: command %v replaces the image's ENTRYPOINT %s", where, c.Command, df.entrypointBinary())
	}
	if len(c.Args) > 0 {
		flags, ok := deploySubcommandFlags(t)[c.Args[0]]
		if !ok {
			t.Errorf("%s: args %v: no subcommand %q in cmd/headgate", where, c.Args, c.Args[0])
		}
		for _, a := range c.Args[1:] {
			if name, isFlag := strings.CutPrefix(a, "-"); isFlag && !flags[strings.TrimLeft(name, "-")] {
				t.Errorf("%s: args %v: headgate %s has no flag %s", where, c.Args, c.Args[0], a)
			}
		}
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	cfgPath := df.env["HEADGATE_CONFIG"]
	if v, ok := env["HEADGATE_CONFIG"]; ok {
		cfgPath = v
	}
	if i := slices.Index(c.Args, "-config"); i >= 0 && i+1 < len(c.Args) {
		cfgPath = c.Args[i+1]
	}
	if cfgPath != deployConfigPath {
		t.Errorf("%s: config %q, want %q", where, cfgPath, deployConfigPath)
	}
	if v, ok := env["HEADGATE_CONFIG"]; ok && v != cfgPath {
		t.Errorf("%s: HEADGATE_CONFIG=%q but -config %q", where, v, cfgPath)
	}
	mounted := false
	for _, m := range c.VolumeMounts {
		if m.MountPath != filepath.Dir(cfgPath) {
			continue
		}
		mounted = true
		if m.SubPath != "" {
			t.Errorf("%s: the config is mounted with subPath %q: such files never see ConfigMap updates", where, m.SubPath)
		}
		if !m.ReadOnly {
			t.Errorf("%s: mount the config read-only", where)
		}
		var vol string
		for _, v := range w.pod.Spec.Volumes {
			if v.Name == m.Name && v.ConfigMap != nil {
				vol = v.ConfigMap.Name
			}
		}
		if vol != cm.Metadata.Name {
			t.Errorf("%s: %s is volume %s, not the ConfigMap %s", where, m.MountPath, m.Name, cm.Metadata.Name)
		}
		if _, ok := cm.Data[filepath.Base(cfgPath)]; !ok {
			t.Errorf("%s: ConfigMap %s has no key %s", where, cm.Metadata.Name, filepath.Base(cfgPath))
		}
	}
	if !mounted {
		t.Errorf("%s: nothing is mounted at %s, the directory of %s", where, filepath.Dir(cfgPath), cfgPath)
	}

	// Security: non-root, read-only root, no capabilities.
	pod, sc := w.pod.Spec.SecurityContext, c.SecurityContext
	if sc == nil {
		sc = &k8sSecurityContext{}
	}
	if pod == nil {
		pod = &k8sSecurityContext{}
	}
	if !(k8sTrue(sc.RunAsNonRoot) || sc.RunAsNonRoot == nil && k8sTrue(pod.RunAsNonRoot)) {
		t.Errorf("%s: runAsNonRoot is not true", where)
	}
	for _, u := range []*int{sc.RunAsUser, pod.RunAsUser} {
		if u != nil && *u == 0 {
			t.Errorf("%s: runAsUser 0", where)
		}
	}
	if !k8sTrue(sc.ReadOnlyRootFilesystem) {
		t.Errorf("%s: readOnlyRootFilesystem is not true", where)
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("%s: allowPrivilegeEscalation is not false", where)
	}
	if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
		t.Errorf("%s: capabilities do not drop ALL", where)
	}
	if c.Resources == nil || c.Resources.Requests["memory"] == "" || c.Resources.Requests["cpu"] == "" || c.Resources.Limits["memory"] == "" {
		t.Errorf("%s: want cpu and memory requests and a memory limit", where)
	} else if req, lim := k8sQuantity(t, c.Resources.Requests["memory"]), k8sQuantity(t, c.Resources.Limits["memory"]); req > lim {
		t.Errorf("%s: memory request %s above the limit %s", where, c.Resources.Requests["memory"], c.Resources.Limits["memory"])
	} else if gm, ok := env["GOMEMLIMIT"]; ok && k8sQuantity(t, gm) >= lim {
		t.Errorf("%s: GOMEMLIMIT %s is not below the memory limit %s", where, gm, c.Resources.Limits["memory"])
	}

	// The config as this container loads it.
	cfg, err := rules.Parse(cfgPath, []byte(src), func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	})
	if err != nil {
		t.Errorf("%s: the config with the container's environment does not pass check:\n%v", where, err)
		return nil
	}
	return cfg
}

// checkK8sServer checks a `headgate serve` container against its config.
func checkK8sServer(t *testing.T, w k8sWorkload, cfg *rules.Config, monitored bool) {
	t.Helper()
	where := fmt.Sprintf("%s container %s", w.name, w.c.Name)
	c := w.c
	if len(c.Args) > 0 && c.Args[0] != "serve" && !strings.HasPrefix(c.Args[0], "-") {
		t.Errorf("%s: args %v, want serve", where, c.Args)
	}
	listen, admin := addrPort(t, "server.listen", cfg.Server.Listen), addrPort(t, "server.admin_listen", cfg.Server.AdminListen)
	if host, _, _ := net.SplitHostPort(cfg.Server.AdminListen); host != "" && host != "0.0.0.0" && host != "::" {
		t.Errorf("server.admin_listen %q: the kubelet's probes and Prometheus reach the pod IP, not %s", cfg.Server.AdminListen, host)
	}
	if p, ok := k8sNamedPort(c, "http"); !ok || p != listen {
		t.Errorf("%s: port http = %d, want server.listen's %d", where, p, listen)
	}
	if p, ok := k8sNamedPort(c, "admin"); !ok || p != admin {
		t.Errorf("%s: port admin = %d, want server.admin_listen's %d", where, p, admin)
	}
	for _, pr := range []struct {
		name string
		p    *k8sProbe
		path string
	}{{"liveness", c.LivenessProbe, "/healthz"}, {"readiness", c.ReadinessProbe, "/readyz"}} {
		if pr.p == nil || pr.p.HTTPGet == nil {
			t.Errorf("%s: no %s probe", where, pr.name)
			continue
		}
		if pr.p.HTTPGet.Path != pr.path {
			t.Errorf("%s: %s probe on %s, want %s", where, pr.name, pr.p.HTTPGet.Path, pr.path)
		}
		if p, ok := k8sContainerPort(c, pr.p.HTTPGet.Port); !ok || p != admin {
			t.Errorf("%s: %s probe on port %s, want the admin port %d", where, pr.name, pr.p.HTTPGet.Port, admin)
		}
	}

	// Shutdown: preStop sleep, then SIGTERM and shutdown_timeout of
	// draining, all within the grace period.
	sleep := 0
	if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Sleep != nil {
		sleep = c.Lifecycle.PreStop.Sleep.Seconds
	} else {
		t.Errorf("%s: no preStop sleep: the endpoint is removed after SIGTERM, and requests still arrive meanwhile", where)
	}
	grace := 30 // the Kubernetes default
	if g := w.pod.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = *g
	}
	if need := time.Duration(sleep)*time.Second + cfg.Server.ShutdownTimeout; time.Duration(grace)*time.Second <= need {
		t.Errorf("%s: terminationGracePeriodSeconds %d is not above preStop %ds + shutdown_timeout %s", where, grace, sleep, cfg.Server.ShutdownTimeout)
	}

	// Annotation-based scraping: the admin port; not beside a
	// ServiceMonitor (the chart's serviceMonitor.enabled), which would
	// scrape every sample twice.
	a := w.pod.Metadata.Annotations
	if monitored {
		if _, ok := a["prometheus.io/scrape"]; ok {
			t.Errorf("%s: prometheus.io annotations beside a ServiceMonitor: every sample would be scraped twice", w.name)
		}
	} else if a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] != strconv.Itoa(admin) || a["prometheus.io/path"] != "/metrics" {
		t.Errorf("%s: prometheus.io annotations %v, want scrape true, port %d, path /metrics", w.name, a, admin)
	}
}

// checkK8sSitemapJob checks a `headgate sitemap -o DIR` container.
func checkK8sSitemapJob(t *testing.T, w k8sWorkload, cfg *rules.Config, o *k8sObjects) {
	t.Helper()
	where := fmt.Sprintf("%s container %s", w.name, w.c.Name)
	if len(w.c.Args) == 0 || w.c.Args[0] != "sitemap" {
		t.Errorf("%s: args %v, want sitemap …", where, w.c.Args)
		return
	}
	if !slices.ContainsFunc(cfg.Rules, func(r *rules.Rule) bool { return r.Sitemap }) {
		t.Errorf("%s: the config has no sitemap = true rule: headgate sitemap has nothing to write", where)
	}
	i := slices.Index(w.c.Args, "-o")
	if i < 0 || i+1 >= len(w.c.Args) {
		t.Errorf("%s: no -o DIR", where)
		return
	}
	dir := w.c.Args[i+1]
	for _, m := range w.c.VolumeMounts {
		if m.MountPath != dir {
			continue
		}
		if m.ReadOnly {
			t.Errorf("%s: -o %s is mounted read-only", where, dir)
		}
		for _, v := range w.pod.Spec.Volumes {
			if v.Name == m.Name && v.PersistentVolumeClaim != nil {
				if !slices.ContainsFunc(o.pvcs, func(p *k8sPVC) bool { return p.Metadata.Name == v.PersistentVolumeClaim.ClaimName }) {
					t.Errorf("%s: claim %s is not in the layout", where, v.PersistentVolumeClaim.ClaimName)
				}
			}
		}
		return
	}
	t.Errorf("%s: -o %s is no volume mount (the root filesystem is read-only)", where, dir)
}

// checkK8sMonitoring checks the ServiceMonitor and alerts against the admin
// Services of the serving layouts and the metric names in the code.
func checkK8sMonitoring(t *testing.T, root string) {
	t.Helper()
	docs, err := k8sRender(filepath.Join(root, "kubernetes", "monitoring"))
	if err != nil {
		t.Fatal(err)
	}
	mon := k8sDecodeAll(t, "monitoring", docs)
	if len(mon.monitors) == 0 || len(mon.promRules) == 0 {
		t.Fatal("monitoring: want a ServiceMonitor and a PrometheusRule")
	}
	for _, dir := range []string{"sidecar", "ingress"} {
		docs, err := k8sRender(filepath.Join(root, "kubernetes", dir))
		if err != nil {
			t.Fatal(err)
		}
		o := k8sDecodeAll(t, dir, docs)
		for _, m := range mon.monitors {
			found := false
			for _, s := range o.services {
				if !k8sSelects(m.Spec.Selector.MatchLabels, s.Metadata.Labels) {
					continue
				}
				found = true
				for _, e := range m.Spec.Endpoints {
					if !slices.ContainsFunc(s.Spec.Ports, func(p k8sServicePort) bool {
						return p.Name == e.Port
					}) {
						t.Errorf("ServiceMonitor %s: Service %s (%s) has no port %q", m.Metadata.Name, s.Metadata.Name, dir, e.Port)
					}
					if e.Path != "/metrics" {
						t.Errorf("ServiceMonitor %s: path %q, want /metrics", m.Metadata.Name, e.Path)
					}
				}
			}
			if !found {
				t.Errorf("ServiceMonitor %s: selects no Service of the %s layout", m.Metadata.Name, dir)
			}
		}
	}

	// Every metric an alert names exists in the code, and so does every
	// outcome or result it matches.
	known := deployMetricNames(t, root)
	outcomes := []string{"rewritten", "shadow", "passthrough", "skipped_too_large", "skipped_encoding", "skipped_charset",
		"denied", "sitemap", "robots", "upstream_error", "bad_request", "canceled"}
	wantAlerts := map[string]string{
		"headgate_requests_total{outcome=~\"skipped_":                                          "rewrite skips",
		"headgate_requests_total{outcome=\"upstream_error":                                     "upstream errors",
		"headgate_sitemap_generations_total{result=\"error":                                    "sitemap failures",
		"headgate_config_reloads_total{result=~\"error|refused":                                "reload failures",
		"kube_cronjob_status_last_successful_time{cronjob=~\"(.+-)?headgate-indexnow(-.+)?\"}": "IndexNow runs",
	}
	seen := map[string]bool{}
	for _, pr := range mon.promRules {
		for _, g := range pr.Spec.Groups {
			for _, r := range g.Rules {
				if r.Alert == "" || r.Expr == "" || r.Labels["severity"] == "" || r.Annotations["summary"] == "" {
					t.Errorf("PrometheusRule %s: rule %q needs alert, expr, a severity label and a summary", pr.Metadata.Name, r.Alert)
				}
				for _, name := range regexp.MustCompile(`headgate_[a-z_]+`).FindAllString(r.Expr, -1) {
					if !known[name] {
						t.Errorf("alert %s: no metric %s in the code (have %v)", r.Alert, name, deploySortedKeys(known))
					}
				}
				for _, m := range regexp.MustCompile(`(outcome|result)=~?"([^"]*)"`).FindAllStringSubmatch(r.Expr, -1) {
					for _, v := range strings.Split(m[2], "|") {
						if strings.Contains(v, ".*") {
							continue
						}
						if m[1] == "outcome" && !slices.Contains(outcomes, v) || m[1] == "result" && !slices.Contains([]string{"ok", "error", "refused"}, v) {
							t.Errorf("alert %s: %s %q is never counted", r.Alert, m[1], v)
						}
					}
				}
				for k := range wantAlerts {
					if strings.Contains(r.Expr, k) {
						seen[k] = true
					}
				}
			}
		}
	}
	for k, what := range wantAlerts {
		if !seen[k] {
			t.Errorf("no alert on %s (%s…)", what, k)
		}
	}
}

// deployMetricNames lists the headgate_* metric names registered in the
// code (`Name: "headgate_…"` or a constant `= "headgate_…"`), and the ones
// a SPEC section names for a package not merged yet (documentedMetrics).
func deployMetricNames(t *testing.T, root string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for _, n := range documentedMetrics {
		names[n] = true
	}
	for _, pkg := range []string{"proxy", "sitemap", "indexnow", "insight", "watch"} {
		files, _ := filepath.Glob(filepath.Join(root, "..", pkg, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range regexp.MustCompile(`(?:Name:|=)\s*"(headgate_[a-z_]+)"`).FindAllSubmatch(src, -1) {
				names[string(m[1])] = true
			}
		}
	}
	if len(names) == len(documentedMetrics) {
		t.Fatal("no headgate_* metrics found in proxy/, sitemap/, indexnow/, insight/, watch/")
	}
	return names
}

// documentedMetrics are metric names a SPEC section gives to a package
// that is built in parallel: the dashboard and the alerts may use them
// before it merges. Once the package registers the name, its entry here
// is redundant; remove it then.
var documentedMetrics = []string{}

// ---- small helpers ----------------------------------------------------------

func deployRoot(t *testing.T) string {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "deploy")
}

func deployRel(root, path string) string {
	if r, err := filepath.Rel(filepath.Dir(root), path); err == nil {
		return r
	}
	return path
}

func k8sIsHeadgate(c *k8sContainer) bool {
	return c.Name == "headgate" || strings.Contains(c.Image, "/headgate")
}

func k8sTrue(b *bool) bool { return b != nil && *b }

// k8sSelects reports whether a selector selects labels (an empty selector
// selects nothing here: it is always a mistake in these manifests).
func k8sSelects(sel, labels map[string]string) bool {
	if len(sel) == 0 {
		return false
	}
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func k8sSelectedWorkload(ws []k8sWorkload, sel map[string]string) *k8sWorkload {
	for i := range ws {
		if k8sSelects(sel, ws[i].pod.Metadata.Labels) {
			return &ws[i]
		}
	}
	return nil
}

func k8sFindDeployment(o *k8sObjects, name string) *k8sDeployment {
	for _, d := range o.deployments {
		if d.Metadata.Name == name {
			return d
		}
	}
	return nil
}

func k8sNamedPort(c *k8sContainer, name string) (int, bool) {
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort, true
		}
	}
	return 0, false
}

// k8sContainerPort resolves a port number or name against a container.
func k8sContainerPort(c *k8sContainer, p k8sIntOrString) (int, bool) {
	if p.IsStr {
		return k8sNamedPort(c, p.Str)
	}
	return p.Int, p.Int > 0
}

func addrPort(t *testing.T, key, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	n, err2 := strconv.Atoi(p)
	if err != nil || err2 != nil {
		t.Fatalf("%s %q: no port", key, addr)
	}
	return n
}

func deployHostOf(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return p.Hostname()
}

// k8sQuantity parses the Kubernetes and GOMEMLIMIT memory quantities used
// here (Ki, Mi, Gi, KiB, MiB, GiB).
func k8sQuantity(t *testing.T, s string) int64 {
	t.Helper()
	m := regexp.MustCompile(`^([0-9]+)(Ki|Mi|Gi)B?$`).FindStringSubmatch(s)
	if m == nil {
		t.Errorf("memory quantity %q: use Ki, Mi or Gi", s)
		return 0
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n << map[string]int{"Ki": 10, "Mi": 20, "Gi": 30}[m[2]]
}

// deployRulesText is the config text from the first [[rule]] on: what must not
// differ between production and staging.
func deployRulesText(src string) string {
	if i := strings.Index(src, "[[rule]]"); i >= 0 {
		return src[i:]
	}
	return ""
}

func deploySortedKeys(m map[string]bool) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

var deployFlagKinds = map[string]bool{"String": true, "Bool": true, "Int": true, "Int64": true, "Uint": true, "Float64": true, "Duration": true}

// deploySubcommandFlags reads, from the source of cmd/headgate, the flags
// each subcommand defines: func cmdServe defines those of serve, and so on
// (newFlags adds -config to each).
func deploySubcommandFlags(t *testing.T) map[string]map[string]bool {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "cmd", "headgate", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	out := map[string]map[string]bool{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || !strings.HasPrefix(fn.Name.Name, "cmd") || fn.Body == nil {
				continue
			}
			flags := map[string]bool{}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) == 0 {
					return true
				}
				switch fun := call.Fun.(type) {
				case *ast.Ident:
					if fun.Name == "newFlags" {
						flags["config"] = true
					}
				case *ast.SelectorExpr:
					recv, _ := fun.X.(*ast.Ident)
					lit, ok := call.Args[0].(*ast.BasicLit)
					if ok && recv != nil && recv.Name == "fs" && lit.Kind == token.STRING && deployFlagKinds[fun.Sel.Name] {
						if name, err := strconv.Unquote(lit.Value); err == nil {
							flags[name] = true
						}
					}
				}
				return true
			})
			if flags["config"] {
				out[strings.ToLower(strings.TrimPrefix(fn.Name.Name, "cmd"))] = flags
			}
		}
	}
	if len(out["serve"]) == 0 {
		t.Fatal("cmd/headgate: found no flags of serve")
	}
	return out
}
