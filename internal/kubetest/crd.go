package kubetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
)

// crdResource is where CustomResourceDefinitions live. They are handled as unstructured
// objects so that this package needs no apiextensions client.
var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// crdTimeout bounds the wait for a created CRD to be Established; a failure bound, as
// startTimeout is.
const crdTimeout = time.Minute

// InstallCRDs creates the CustomResourceDefinitions in the YAML (or JSON) files at paths
// (a directory stands for its .yaml, .yml and .json files; a file may hold several
// documents) and returns once every one is Established, so objects of their kinds can
// be created at once. Any other kind of document fails the test.
//
// A create of an object of the new kind within two seconds of its CRD becoming
// Established is held for two seconds by the API server, so that in an HA control plane
// every server serves the kind before one of its objects exists (kubernetes/kubernetes
// #99199). That is the real API's behaviour, kept as it is: a test creating objects right
// after InstallCRDs pays those two seconds once.
func (c *Cluster) InstallCRDs(t testing.TB, paths ...string) {
	t.Helper()
	var crds []*unstructured.Unstructured
	for _, path := range paths {
		files, err := manifestFiles(path)
		if err != nil {
			t.Fatalf("kubetest: CRDs: %v", err)
		}
		for _, file := range files {
			got, err := readCRDs(file)
			if err != nil {
				t.Fatalf("kubetest: %v", err)
			}
			crds = append(crds, got...)
		}
	}
	dyn, err := dynamic.NewForConfig(c.Config())
	if err != nil {
		t.Fatalf("kubetest: dynamic client for %s: %v", c.URL, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), crdTimeout)
	defer cancel()
	client := dyn.Resource(crdResource)
	for _, crd := range crds {
		if _, err := client.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
			t.Fatalf("kubetest: create CRD %s: %v", crd.GetName(), err)
		}
	}
	for _, crd := range crds {
		name := crd.GetName()
		err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
			got, err := client.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return crdEstablished(got)
		})
		if err != nil {
			t.Fatalf("kubetest: CRD %s: not Established: %v", name, err)
		}
	}
}

// manifestFiles is path itself, or the manifests in it if it is a directory, sorted.
func manifestFiles(path string) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		if !e.IsDir() && slices.Contains([]string{".yaml", ".yml", ".json"}, filepath.Ext(e.Name())) {
			files = append(files, filepath.Join(path, e.Name()))
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no .yaml, .yml or .json files", path)
	}
	return files, nil
}

// readCRDs decodes the CRDs in file; empty documents are skipped, anything that is not
// an apiextensions.k8s.io/v1 CustomResourceDefinition is an error naming the document.
func readCRDs(file string) ([]*unstructured.Unstructured, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var crds []*unstructured.Unstructured
	dec := yaml.NewYAMLOrJSONDecoder(f, 4096)
	for doc := 1; ; doc++ {
		var obj map[string]any
		if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", file, doc, err)
		}
		if len(obj) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: obj}
		if gvk := u.GroupVersionKind(); gvk != crdResource.GroupVersion().WithKind("CustomResourceDefinition") {
			return nil, fmt.Errorf("%s: document %d: %s %q is not an apiextensions.k8s.io/v1 CustomResourceDefinition", file, doc, strings.TrimPrefix(gvk.String(), "/"), u.GetName())
		}
		if u.GetName() == "" {
			return nil, fmt.Errorf("%s: document %d: CustomResourceDefinition without metadata.name", file, doc)
		}
		crds = append(crds, u)
	}
	if len(crds) == 0 {
		return nil, fmt.Errorf("%s: no CustomResourceDefinition", file)
	}
	return crds, nil
}

// crdEstablished reports whether crd's Established condition is True. A NamesAccepted
// condition that is False is an error: the names conflict with another CRD's, and it
// would never be Established.
func crdEstablished(crd *unstructured.Unstructured) (bool, error) {
	// A CRD just created may carry "conditions": null, which NestedSlice refuses.
	raw, _, err := unstructured.NestedFieldNoCopy(crd.Object, "status", "conditions")
	if err != nil {
		return false, fmt.Errorf("status.conditions: %w", err)
	}
	conds, ok := raw.([]any)
	if raw != nil && !ok {
		return false, fmt.Errorf("status.conditions: %T, not a list", raw)
	}
	established := false
	for _, c := range conds {
		cond, _ := c.(map[string]any)
		typ, _ := cond["type"].(string)
		status, _ := cond["status"].(string)
		switch {
		case typ == "Established" && status == "True":
			established = true
		case typ == "NamesAccepted" && status == "False":
			return false, fmt.Errorf("names not accepted: %v: %v", cond["reason"], cond["message"])
		}
	}
	return established, nil
}
