// Command kubestrict decodes every object of the YAML streams it reads
// (files named as arguments, or standard input) strictly into the
// Kubernetes API types of k8s.io/api, as the API server's strict field
// validation does: an unknown field, a duplicate field or a value of the
// wrong type is an error. test/helm_test.go puts the chart's rendered
// manifests through it; test/run builds it beside helm.
//
// Kinds that k8s.io/api does not define (the Prometheus Operator's
// ServiceMonitor and PrometheusRule) are listed as skipped: the test's own
// typed structs check those.
//
// It lives in deploy/helm/tools, whose go.mod already has k8s.io/api
// through helm, so that neither enters headgate's go.mod.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "kubestrict:", err)
		os.Exit(1)
	}
}

func run(args []string, stdin io.Reader, stdout io.Writer) error {
	dec := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	var problems []error
	decoded, skipped := 0, map[string]int{}
	check := func(name string, r io.Reader) error {
		yr := utilyaml.NewYAMLReader(bufio.NewReader(r))
		for i := 1; ; i++ {
			doc, err := yr.Read()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("%s: document %d: %w", name, i, err)
			}
			js, err := yaml.YAMLToJSON(doc)
			if err != nil {
				problems = append(problems, fmt.Errorf("%s: document %d: %w", name, i, err))
				continue
			}
			if s := string(bytes.TrimSpace(js)); s == "null" || s == "{}" {
				continue // a document of comments only
			}
			var meta struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Metadata   struct {
					Name string `json:"name"`
				} `json:"metadata"`
			}
			if err := json.Unmarshal(js, &meta); err != nil {
				problems = append(problems, fmt.Errorf("%s: document %d: %w", name, i, err))
				continue
			}
			where := fmt.Sprintf("%s: document %d (%s %s)", name, i, meta.Kind, meta.Metadata.Name)
			if strings.HasPrefix(meta.APIVersion, "monitoring.coreos.com/") {
				skipped[meta.APIVersion+" "+meta.Kind]++
				continue
			}
			if _, _, err := dec.Decode(doc, nil, nil); err != nil {
				problems = append(problems, fmt.Errorf("%s: %w", where, err))
				continue
			}
			decoded++
		}
	}
	if len(args) == 0 {
		if err := check("stdin", stdin); err != nil {
			return err
		}
	}
	for _, a := range args {
		f, err := os.Open(a)
		if err != nil {
			return err
		}
		err = check(a, f)
		f.Close()
		if err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "%d objects decoded strictly", decoded)
	for k, n := range skipped {
		fmt.Fprintf(stdout, "; skipped %d %s (not in k8s.io/api)", n, k)
	}
	fmt.Fprintln(stdout)
	return errors.Join(problems...)
}
