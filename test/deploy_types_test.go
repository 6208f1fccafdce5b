package test

// Typed Kubernetes objects, only the fields the manifests use, and the
// strict decoding that refuses every other field.

import (
	"fmt"
	"reflect"
	"strconv"
)

// ---- typed manifests: only the fields the manifests use -----------------

type k8sObjectMeta struct {
	Name        string            `yaml:"name"`
	Namespace   string            `yaml:"namespace"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

type k8sTypeMeta struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
}

type k8sLabelSelector struct {
	MatchLabels map[string]string `yaml:"matchLabels"`
}

// k8sIntOrString is Kubernetes' IntOrString: a port number or a port name.
type k8sIntOrString struct {
	Int   int
	Str   string
	IsStr bool
}

func (v k8sIntOrString) String() string {
	if v.IsStr {
		return v.Str
	}
	return strconv.Itoa(v.Int)
}

type k8sKustomization struct {
	k8sTypeMeta `yaml:",inline"`
	Namespace   string `yaml:"namespace"`
	Labels      []struct {
		Pairs            map[string]string `yaml:"pairs"`
		IncludeSelectors *bool             `yaml:"includeSelectors"`
		IncludeTemplates *bool             `yaml:"includeTemplates"`
	} `yaml:"labels"`
	Resources []string `yaml:"resources"`
	Patches   []struct {
		Path string `yaml:"path"`
	} `yaml:"patches"`
}

type k8sConfigMap struct {
	k8sTypeMeta `yaml:",inline"`
	Metadata    k8sObjectMeta     `yaml:"metadata"`
	Data        map[string]string `yaml:"data"`
}

type k8sService struct {
	k8sTypeMeta `yaml:",inline"`
	Metadata    k8sObjectMeta `yaml:"metadata"`
	Spec        struct {
		Type      string            `yaml:"type"`
		ClusterIP string            `yaml:"clusterIP"`
		Selector  map[string]string `yaml:"selector"`
		Ports     []k8sServicePort  `yaml:"ports"`
	} `yaml:"spec"`
}

type k8sServicePort struct {
	Name       string         `yaml:"name"`
	Port       int            `yaml:"port"`
	TargetPort k8sIntOrString `yaml:"targetPort"`
}

type k8sProbe struct {
	HTTPGet *struct {
		Path string         `yaml:"path"`
		Port k8sIntOrString `yaml:"port"`
	} `yaml:"httpGet"`
	PeriodSeconds    int `yaml:"periodSeconds"`
	FailureThreshold int `yaml:"failureThreshold"`
}

type k8sSecurityContext struct {
	RunAsNonRoot             *bool `yaml:"runAsNonRoot"`
	RunAsUser                *int  `yaml:"runAsUser"`
	RunAsGroup               *int  `yaml:"runAsGroup"`
	FSGroup                  *int  `yaml:"fsGroup"`
	ReadOnlyRootFilesystem   *bool `yaml:"readOnlyRootFilesystem"`
	AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
	Capabilities             *struct {
		Drop []string `yaml:"drop"`
	} `yaml:"capabilities"`
	SeccompProfile *struct {
		Type string `yaml:"type"`
	} `yaml:"seccompProfile"`
}

type k8sContainer struct {
	Name            string   `yaml:"name"`
	Image           string   `yaml:"image"`
	ImagePullPolicy string   `yaml:"imagePullPolicy"`
	Command         []string `yaml:"command"`
	Args            []string `yaml:"args"`
	Env             []struct {
		Name  string `yaml:"name"`
		Value string `yaml:"value"`
	} `yaml:"env"`
	Ports []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	LivenessProbe  *k8sProbe `yaml:"livenessProbe"`
	ReadinessProbe *k8sProbe `yaml:"readinessProbe"`
	Lifecycle      *struct {
		PreStop *struct {
			Sleep *struct {
				Seconds int `yaml:"seconds"`
			} `yaml:"sleep"`
		} `yaml:"preStop"`
	} `yaml:"lifecycle"`
	Resources *struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	} `yaml:"resources"`
	SecurityContext *k8sSecurityContext `yaml:"securityContext"`
	VolumeMounts    []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
		ReadOnly  bool   `yaml:"readOnly"`
		SubPath   string `yaml:"subPath"`
	} `yaml:"volumeMounts"`
}

type k8sPodTemplate struct {
	Metadata k8sObjectMeta `yaml:"metadata"`
	Spec     struct {
		RestartPolicy                 string              `yaml:"restartPolicy"`
		TerminationGracePeriodSeconds *int                `yaml:"terminationGracePeriodSeconds"`
		SecurityContext               *k8sSecurityContext `yaml:"securityContext"`
		TopologySpreadConstraints     []struct {
			MaxSkew           int              `yaml:"maxSkew"`
			TopologyKey       string           `yaml:"topologyKey"`
			WhenUnsatisfiable string           `yaml:"whenUnsatisfiable"`
			LabelSelector     k8sLabelSelector `yaml:"labelSelector"`
		} `yaml:"topologySpreadConstraints"`
		Containers       []k8sContainer `yaml:"containers"`
		Volumes          []k8sVolume    `yaml:"volumes"`
		ImagePullSecrets []struct {
			Name string `yaml:"name"`
		} `yaml:"imagePullSecrets"`
		NodeSelector map[string]string `yaml:"nodeSelector"`
	} `yaml:"spec"`
}

type k8sVolume struct {
	Name      string `yaml:"name"`
	ConfigMap *struct {
		Name string `yaml:"name"`
	} `yaml:"configMap"`
	PersistentVolumeClaim *struct {
		ClaimName string `yaml:"claimName"`
	} `yaml:"persistentVolumeClaim"`
}

type k8sDeployment struct {
	k8sTypeMeta `yaml:",inline"`
	Metadata    k8sObjectMeta `yaml:"metadata"`
	Spec        struct {
		Replicas *int `yaml:"replicas"`
		Strategy *struct {
			Type          string `yaml:"type"`
			RollingUpdate *struct {
				MaxUnavailable k8sIntOrString `yaml:"maxUnavailable"`
				MaxSurge       k8sIntOrString `yaml:"maxSurge"`
			} `yaml:"rollingUpdate"`
		} `yaml:"strategy"`
		Selector k8sLabelSelector `yaml:"selector"`
		Template k8sPodTemplate   `yaml:"template"`
	} `yaml:"spec"`
}

type k8sCronJob struct {
	k8sTypeMeta `yaml:",inline"`
	Metadata    k8sObjectMeta `yaml:"metadata"`
	Spec        struct {
		Schedule                   string `yaml:"schedule"`
		ConcurrencyPolicy          string `yaml:"concurrencyPolicy"`
		SuccessfulJobsHistoryLimit *int   `yaml:"successfulJobsHistoryLimit"`
		FailedJobsHistoryLimit     *int   `yaml:"failedJobsHistoryLimit"`
		JobTemplate                struct {
			Spec struct {
				BackoffLimit          *int           `yaml:"backoffLimit"`
				ActiveDeadlineSeconds *int           `yaml:"activeDeadlineSeconds"`
				Template              k8sPodTemplate `yaml:"template"`
			} `yaml:"spec"`
		} `yaml:"jobTemplate"`
	} `yaml:"spec"`
}

type k8sPDB struct {
	k8sTypeMeta `yaml:",inline"`
	Metadata    k8sObjectMeta `yaml:"metadata"`
	Spec        struct {
		MinAvailable   *k8sIntOrString  `yaml:"minAvailable"`
		MaxUnavailable *k8sIntOrString  `yaml:"maxUnavailable"`
		Selector       k8sLabelSelector `yaml:"selector"`
	} `yaml:"spec"`
}

type k8sHPA struct {
	k8sTypeMeta `yaml:",inline"`
	Metadata    k8sObjectMeta `yaml:"metadata"`
	Spec        struct {
		ScaleTargetRef struct {
			APIVersion string `yaml:"apiVersion"`
			Kind       string `yaml:"kind"`
			Name       string `yaml:"name"`
		} `yaml:"scaleTargetRef"`
		MinReplicas *int `yaml:"minReplicas"`
		MaxReplicas int  `yaml:"maxReplicas"`
		Metrics     []struct {
			Type     string `yaml:"type"`
			Resource *struct {
				Name   string `yaml:"name"`
				Target struct {
					Type               string `yaml:"type"`
					AverageUtilization *int   `yaml:"averageUtilization"`
				} `yaml:"target"`
			} `yaml:"resource"`
		} `yaml:"metrics"`
	} `yaml:"spec"`
}

type k8sIngress struct {
	k8sTypeMeta `yaml:",inline"`
	Metadata    k8sObjectMeta `yaml:"metadata"`
	Spec        struct {
		IngressClassName string `yaml:"ingressClassName"`
		TLS              []struct {
			Hosts      []string `yaml:"hosts"`
			SecretName string   `yaml:"secretName"`
		} `yaml:"tls"`
		Rules []k8sIngressRule `yaml:"rules"`
	} `yaml:"spec"`
}

type k8sIngressRule struct {
	Host string `yaml:"host"`
	HTTP *struct {
		Paths []struct {
			Path     string `yaml:"path"`
			PathType string `yaml:"pathType"`
			Backend  struct {
				Service *struct {
					Name string `yaml:"name"`
					Port struct {
						Name   string `yaml:"name"`
						Number int    `yaml:"number"`
					} `yaml:"port"`
				} `yaml:"service"`
			} `yaml:"backend"`
		} `yaml:"paths"`
	} `yaml:"http"`
}

type k8sPVC struct {
	k8sTypeMeta `yaml:",inline"`
	Metadata    k8sObjectMeta `yaml:"metadata"`
	Spec        struct {
		AccessModes      []string `yaml:"accessModes"`
		StorageClassName *string  `yaml:"storageClassName"`
		Resources        struct {
			Requests map[string]string `yaml:"requests"`
		} `yaml:"resources"`
	} `yaml:"spec"`
}

type k8sServiceMonitor struct {
	k8sTypeMeta `yaml:",inline"`
	Metadata    k8sObjectMeta `yaml:"metadata"`
	Spec        struct {
		Selector  k8sLabelSelector `yaml:"selector"`
		Endpoints []struct {
			Port     string `yaml:"port"`
			Path     string `yaml:"path"`
			Interval string `yaml:"interval"`
		} `yaml:"endpoints"`
	} `yaml:"spec"`
}

type k8sPrometheusRule struct {
	k8sTypeMeta `yaml:",inline"`
	Metadata    k8sObjectMeta `yaml:"metadata"`
	Spec        struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Expr        string            `yaml:"expr"`
				For         string            `yaml:"for"`
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	} `yaml:"spec"`
}

// k8sKinds maps apiVersion and kind to the struct a document decodes into.
var k8sKinds = map[string]func() any{
	"kustomize.config.k8s.io/v1beta1 Kustomization": func() any { return new(k8sKustomization) },
	"v1 ConfigMap":                            func() any { return new(k8sConfigMap) },
	"v1 Service":                              func() any { return new(k8sService) },
	"v1 PersistentVolumeClaim":                func() any { return new(k8sPVC) },
	"apps/v1 Deployment":                      func() any { return new(k8sDeployment) },
	"batch/v1 CronJob":                        func() any { return new(k8sCronJob) },
	"policy/v1 PodDisruptionBudget":           func() any { return new(k8sPDB) },
	"autoscaling/v2 HorizontalPodAutoscaler":  func() any { return new(k8sHPA) },
	"networking.k8s.io/v1 Ingress":            func() any { return new(k8sIngress) },
	"monitoring.coreos.com/v1 ServiceMonitor": func() any { return new(k8sServiceMonitor) },
	"monitoring.coreos.com/v1 PrometheusRule": func() any { return new(k8sPrometheusRule) },
}

// ---- strict decoding ----------------------------------------------------------

// k8sDecodeObject decodes one parsed document into the struct of its kind.
func k8sDecodeObject(where string, doc any) (any, error) {
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: not a mapping", where)
	}
	av, _ := m["apiVersion"].(string)
	kind, _ := m["kind"].(string)
	mk, ok := k8sKinds[av+" "+kind]
	if !ok {
		return nil, fmt.Errorf("%s: unknown apiVersion %q and kind %q", where, av, kind)
	}
	v := mk()
	if err := yamlDecodeInto(where+" ("+kind+")", doc, reflect.ValueOf(v).Elem()); err != nil {
		return nil, err
	}
	return v, nil
}

var k8sIntOrStringType = reflect.TypeOf(k8sIntOrString{})

// yamlDecodeInto stores node in v. Struct fields match their yaml tag exactly;
// an unknown key, a missing value or a value of another type is an error.
func yamlDecodeInto(path string, node any, v reflect.Value) error {
	if v.Type() == k8sIntOrStringType {
		switch n := node.(type) {
		case int64:
			v.Set(reflect.ValueOf(k8sIntOrString{Int: int(n)}))
		case string:
			v.Set(reflect.ValueOf(k8sIntOrString{Str: n, IsStr: true}))
		default:
			return fmt.Errorf("%s: want a number or a name, got %T", path, node)
		}
		return nil
	}
	switch v.Kind() {
	case reflect.Pointer:
		if node == nil {
			return fmt.Errorf("%s: null", path)
		}
		p := reflect.New(v.Type().Elem())
		if err := yamlDecodeInto(path, node, p.Elem()); err != nil {
			return err
		}
		v.Set(p)
	case reflect.Struct:
		m, ok := node.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want a mapping, got %s", path, yamlDescribe(node))
		}
		fields := map[string]reflect.Value{}
		yamlFields(v, fields)
		for k, val := range m {
			f, ok := fields[k]
			if !ok {
				return fmt.Errorf("%s.%s: unknown field", path, k)
			}
			if err := yamlDecodeInto(path+"."+k, val, f); err != nil {
				return err
			}
		}
	case reflect.Map:
		m, ok := node.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want a mapping, got %s", path, yamlDescribe(node))
		}
		out := reflect.MakeMapWithSize(v.Type(), len(m))
		for k, val := range m {
			e := reflect.New(v.Type().Elem()).Elem()
			if err := yamlDecodeInto(path+"."+k, val, e); err != nil {
				return err
			}
			out.SetMapIndex(reflect.ValueOf(k), e)
		}
		v.Set(out)
	case reflect.Slice:
		s, ok := node.([]any)
		if !ok {
			return fmt.Errorf("%s: want a sequence, got %s", path, yamlDescribe(node))
		}
		out := reflect.MakeSlice(v.Type(), len(s), len(s))
		for i, val := range s {
			if err := yamlDecodeInto(fmt.Sprintf("%s[%d]", path, i), val, out.Index(i)); err != nil {
				return err
			}
		}
		v.Set(out)
	case reflect.String:
		s, ok := node.(string)
		if !ok {
			return fmt.Errorf("%s: want a string, got %s (quote it)", path, yamlDescribe(node))
		}
		v.SetString(s)
	case reflect.Int:
		n, ok := node.(int64)
		if !ok {
			return fmt.Errorf("%s: want an integer, got %s", path, yamlDescribe(node))
		}
		v.SetInt(n)
	case reflect.Bool:
		b, ok := node.(bool)
		if !ok {
			return fmt.Errorf("%s: want true or false, got %s", path, yamlDescribe(node))
		}
		v.SetBool(b)
	default:
		return fmt.Errorf("%s: cannot decode into %s", path, v.Type())
	}
	return nil
}

func yamlFields(v reflect.Value, into map[string]reflect.Value) {
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		tag := f.Tag.Get("yaml")
		if tag == ",inline" {
			yamlFields(v.Field(i), into)
			continue
		}
		if tag != "" {
			into[tag] = v.Field(i)
		}
	}
}

func yamlDescribe(node any) string {
	switch n := node.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("the string %q", n)
	case map[string]any:
		return "a mapping"
	case []any:
		return "a sequence"
	}
	return fmt.Sprintf("%T %v", node, node)
}
