package test

// Rendering a layout from its kustomization sources (resources, patches,
// namespace, labels), as kubectl kustomize would.

import (
	"fmt"
	"os"
	"path/filepath"
)

// ---- rendering a kustomization from its sources -----------------------------

// k8sRender builds dir as kustomize would for the features these
// manifests use: resources (files and directories, recursively), patches
// (strategic merge on kind and name: maps merge, lists and scalars are
// replaced, as for the lists patched here, which have no merge key),
// namespace and labels. Anything else in a kustomization is an unknown
// field and fails the strict decode.
func k8sRender(dir string) ([]any, error) {
	path := filepath.Join(dir, "kustomization.yaml")
	docs, err := yamlParseFile(path)
	if err != nil {
		return nil, err
	}
	if len(docs) != 1 {
		return nil, fmt.Errorf("%s: %d documents", path, len(docs))
	}
	v, err := k8sDecodeObject(path, docs[0])
	if err != nil {
		return nil, err
	}
	k, ok := v.(*k8sKustomization)
	if !ok {
		return nil, fmt.Errorf("%s: not a Kustomization", path)
	}
	var objs []any
	for _, r := range k.Resources {
		p := filepath.Join(dir, r)
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("%s: resource %s: %w", path, r, err)
		}
		var more []any
		if fi.IsDir() {
			more, err = k8sRender(p)
		} else {
			more, err = yamlParseFile(p)
		}
		if err != nil {
			return nil, err
		}
		for _, m := range more {
			if k8sKind(m) == "Kustomization" {
				return nil, fmt.Errorf("%s: resource %s is a Kustomization: name its directory", path, r)
			}
		}
		objs = append(objs, more...)
	}
	for _, pt := range k.Patches {
		p := filepath.Join(dir, pt.Path)
		patches, err := yamlParseFile(p)
		if err != nil {
			return nil, fmt.Errorf("%s: patch: %w", path, err)
		}
		for _, patch := range patches {
			n := 0
			for i, o := range objs {
				if k8sKind(o) == k8sKind(patch) && k8sName(o) == k8sName(patch) {
					objs[i] = k8sMergePatch(o, patch)
					n++
				}
			}
			if n != 1 {
				return nil, fmt.Errorf("%s: patch %s: %s %s matches %d objects, want 1", path, pt.Path, k8sKind(patch), k8sName(patch), n)
			}
		}
	}
	for _, o := range objs {
		meta := o.(map[string]any)["metadata"].(map[string]any)
		if k.Namespace != "" {
			meta["namespace"] = k.Namespace
		}
		for _, l := range k.Labels {
			labels, _ := meta["labels"].(map[string]any)
			if labels == nil {
				labels = map[string]any{}
				meta["labels"] = labels
			}
			for lk, lv := range l.Pairs {
				labels[lk] = lv
			}
		}
	}
	return objs, nil
}

func k8sKind(o any) string {
	m, _ := o.(map[string]any)
	k, _ := m["kind"].(string)
	return k
}

func k8sName(o any) string {
	m, _ := o.(map[string]any)
	meta, _ := m["metadata"].(map[string]any)
	n, _ := meta["name"].(string)
	return n
}

func k8sMergePatch(dst, patch any) any {
	d, ok1 := dst.(map[string]any)
	p, ok2 := patch.(map[string]any)
	if !ok1 || !ok2 {
		return patch
	}
	out := make(map[string]any, len(d))
	for k, v := range d {
		out[k] = v
	}
	for k, v := range p {
		if old, ok := out[k]; ok {
			out[k] = k8sMergePatch(old, v)
		} else {
			out[k] = v
		}
	}
	return out
}
