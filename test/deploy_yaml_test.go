package test

// Reading the manifests: go.yaml.in/yaml/v3, with what the API server
// reads otherwise refused.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// ---- YAML: go.yaml.in/yaml/v3, with what the API server reads otherwise refused ----

// yamlParseFile parses every document of a YAML file.
func yamlParseFile(path string) ([]any, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return yamlParse(path, src)
}

// yamlParse decodes every document of src with go.yaml.in/yaml/v3 into
// plain trees (map[string]any, []any, string, int64, float64, bool, nil)
// for the kustomize merge; k8sDecodeObject then decodes each object
// strictly into its typed struct. yaml.v3 refuses duplicate keys itself.
// Refused on top, with the file and line: what Kubernetes' own YAML reader
// (YAML 1.1) reads differently from YAML 1.2 — plain yes/no/on/off/y/n,
// octal-looking numbers such as 0644 — and anchors, aliases and explicit
// tags, which these manifests have no use for and which hide what a field
// holds. Empty documents (a lone comment between two ---) are skipped.
func yamlParse(name string, src []byte) ([]any, error) {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var docs []any
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if len(n.Content) == 0 {
			continue
		}
		if err := yamlStrict(name, &n); err != nil {
			return nil, err
		}
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n.Line, err)
		}
		if v == nil {
			continue
		}
		docs = append(docs, yamlNormalize(v))
	}
}

// yaml11Plain are the plain scalars YAML 1.1 (Kubernetes' reader) takes for
// booleans where YAML 1.2 reads strings.
var yaml11Plain = map[string]bool{"y": true, "n": true, "yes": true, "no": true, "on": true, "off": true}

var yamlOctal = regexp.MustCompile(`^[-+]?0[0-9_]+$`)

func yamlStrict(name string, n *yaml.Node) error {
	switch {
	case n.Anchor != "":
		return fmt.Errorf("%s:%d: anchor &%s: write the value out", name, n.Line, n.Anchor)
	case n.Kind == yaml.AliasNode:
		return fmt.Errorf("%s:%d: alias *%s: write the value out", name, n.Line, n.Value)
	case n.Kind == yaml.ScalarNode && n.Style&(yaml.TaggedStyle) != 0:
		return fmt.Errorf("%s:%d: explicit tag %s", name, n.Line, n.Tag)
	case n.Kind == yaml.ScalarNode && n.Style == 0 && yaml11Plain[strings.ToLower(n.Value)]:
		return fmt.Errorf("%s:%d: %q is a boolean to Kubernetes (YAML 1.1) and a string to YAML 1.2: quote it, or write true/false", name, n.Line, n.Value)
	case n.Kind == yaml.ScalarNode && n.Style == 0 && yamlOctal.MatchString(n.Value):
		return fmt.Errorf("%s:%d: %s is octal to Kubernetes (YAML 1.1): quote it, or write it in decimal", name, n.Line, n.Value)
	}
	for _, c := range n.Content {
		if err := yamlStrict(name, c); err != nil {
			return err
		}
	}
	return nil
}

// yamlNormalize makes every integer an int64, as k8sDecodeObject expects.
func yamlNormalize(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = yamlNormalize(x)
		}
	case []any:
		for i, x := range v {
			v[i] = yamlNormalize(x)
		}
	case int:
		return int64(v)
	case uint64:
		return int64(v)
	}
	return v
}

// TestDeployYAMLStrict pins what the manifest reader accepts and refuses.
func TestDeployYAMLStrict(t *testing.T) {
	tests := []struct {
		name, in string
		want     any // nil: an error
	}{
		{"mapping", "a: 1\nb: x\n", map[string]any{"a": int64(1), "b": "x"}},
		{"compact sequence", "a:\n- x\n- p: 1\n  q: true\n", map[string]any{"a": []any{"x", map[string]any{"p": int64(1), "q": true}}}},
		{"flow sequence", `a: ["serve", -config, 2]`, map[string]any{"a": []any{"serve", "-config", int64(2)}}},
		{"literal", "a: |\n  x = 1\n\n  y\nb: |-\n  z\n", map[string]any{"a": "x = 1\n\ny\n", "b": "z"}},
		{"quoted yes", "a: \"yes\"\n", map[string]any{"a": "yes"}},
		{"empty", "a:\nb: {}\nc: []\n", map[string]any{"a": nil, "b": map[string]any{}, "c": []any{}}},
		{"yes", "a: yes\n", nil},
		{"Off", "a: Off\n", nil},
		{"octal", "a: 0644\n", nil},
		{"anchor", "a: &x 1\nb: *x\n", nil},
		{"tag", "a: !!str 1\n", nil},
		{"duplicate", "a: 1\na: 2\n", nil},
		{"bad indentation", "a:\n  b: 1\n   c: 2\n", nil},
		{"unterminated", "a: \"x\n", nil},
		{"tab", "a:\n\tb: 1\n", nil},
		{"colon in plain", "a: b: c\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := yamlParse(tt.name, []byte(tt.in))
			if tt.want == nil {
				if err == nil {
					t.Fatalf("accepted: %#v", docs)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(docs) != 1 || !reflect.DeepEqual(docs[0], tt.want) {
				t.Fatalf("got %#v, want %#v", docs, tt.want)
			}
		})
	}
	docs, err := yamlParse("multi", []byte("---\na: 1\n---\n# only a comment\n---\nb: 2\n"))
	if err != nil || len(docs) != 2 {
		t.Fatalf("documents: %v, %v", docs, err)
	}
}
