// Package crd tests the Cutover CRD (deploy/crds/cutovers.crossfade.io.yaml) on a real
// kube-apiserver and etcd (internal/kubetest): what it accepts, what it refuses and with
// which message, how it prints, and that every plan file in the repository is an object
// it stores whole.
package crd

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/kubetest"
)

// namespace is where the tests' Cutovers live.
const namespace = "default"

// immutable is the start of the message the API server refuses a started cutover's
// spec edit with.
const immutable = "spec is immutable once the cutover has started"

// repoRoot is the repository's root, from this file's place in it.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller information")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// env is a real API server with the Cutover CRD installed.
type env struct {
	kc  *kubetest.Cluster
	dyn dynamic.Interface
}

func start(t *testing.T) *env {
	t.Helper()
	if testing.Short() {
		t.Skip("starts kube-apiserver and etcd")
	}
	kc := kubetest.Start(t)
	kc.InstallCRDs(t, filepath.Join(repoRoot(t), "deploy", "crds", "cutovers.crossfade.io.yaml"))
	dyn, err := dynamic.NewForConfig(kc.Config())
	if err != nil {
		t.Fatalf("dynamic client for %s: %v", kc.URL, err)
	}
	return &env{kc: kc, dyn: dyn}
}

func (e *env) cutovers() dynamic.ResourceInterface {
	return e.dyn.Resource(v1alpha1.GroupVersionResource).Namespace(namespace)
}

// object reads a plan file (YAML) as the object `kubectl apply -f` would send.
func object(t *testing.T, doc []byte) *unstructured.Unstructured {
	t.Helper()
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		t.Fatalf("plan to JSON: %v", err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		t.Fatalf("plan as an object: %v", err)
	}
	u.SetNamespace(namespace)
	return u
}

// planFiles are the repository's plan files, by name: the spec package's test plans
// (the annotated reference plans among them) and the demo's two plans, with the
// addresses the demo fills in at run time.
func planFiles(t *testing.T) map[string][]byte {
	t.Helper()
	root := repoRoot(t)
	files, err := filepath.Glob(filepath.Join(root, "internal", "cutover", "spec", "testdata", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no plan files under internal/cutover/spec/testdata: %v", err)
	}
	files = append(files, filepath.Join(root, "internal", "demo", "cutover.yaml"), filepath.Join(root, "internal", "demo", "cutover-alb.yaml"))
	fill := strings.NewReplacer(
		"{{PAUSE}}", "5s", "{{PORT}}", "8080", "{{DNS}}", "127.0.0.1:5353",
		"{{BLUE}}", "http://127.0.0.1:8081/", "{{GREEN}}", "http://127.0.0.1:8082/",
		"{{RULE}}", "arn:aws:elasticloadbalancing:us-east-1:123456789012:listener-rule/app/demo/50dc6c495c0c9188/f2f7dc8efc522ab2/9683b2d02a6cabee",
		"{{LISTENER}}", "arn:aws:elasticloadbalancing:us-east-1:123456789012:listener/app/demo/50dc6c495c0c9188/f2f7dc8efc522ab2",
	)
	plans := map[string][]byte{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		plans[rel] = []byte(fill.Replace(string(data)))
	}
	return plans
}

// TestPlanFilesCreate: every plan file in the repository is a Cutover the API server
// accepts and stores whole: read back, its spec is the one the file decodes into (the
// schema pruned nothing), and it passes the plan's own validation.
func TestPlanFilesCreate(t *testing.T) {
	e := start(t)
	for name, doc := range planFiles(t) {
		t.Run(name, func(t *testing.T) {
			if _, err := spec.Parse(doc, name); err != nil {
				t.Fatalf("not a valid plan file: %v", err)
			}
			var want spec.Cutover
			if err := yaml.UnmarshalStrict(doc, &want, yaml.DisallowUnknownFields); err != nil {
				t.Fatalf("decode: %v", err)
			}
			created, err := e.cutovers().Create(t.Context(), object(t, doc), metav1.CreateOptions{FieldValidation: "Strict"})
			if err != nil {
				t.Fatalf("create Cutover %s: %v", want.Metadata.Name, err)
			}
			got := typed(t, created)
			if !reflect.DeepEqual(got.Spec, want.Spec) {
				a, _ := json.Marshal(got.Spec)
				b, _ := json.Marshal(want.Spec)
				t.Errorf("stored spec differs from the file's:\n got %s\nwant %s", a, b)
			}
			back := spec.Cutover{APIVersion: got.APIVersion, Kind: got.Kind, Metadata: spec.Metadata{Name: got.Name}, Spec: got.Spec}
			if errs, _ := spec.ValidateCutover(&back); len(errs) > 0 {
				t.Errorf("stored object fails the plan's validation: %v", errs.ToAggregate())
			}
		})
	}
}

// typed converts an object the API returned into a Cutover, strictly: a field the Go
// types lack is an error.
func typed(t *testing.T, u *unstructured.Unstructured) *v1alpha1.Cutover {
	t.Helper()
	js, err := u.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var c v1alpha1.Cutover
	if err := yaml.UnmarshalStrict(js, &c, yaml.DisallowUnknownFields); err != nil {
		t.Fatalf("Cutover %s as a v1alpha1.Cutover: %v\n%s", u.GetName(), err, js)
	}
	return &c
}

// minimalPlan is the smallest Route 53 plan, named name.
func minimalPlan(name string) []byte {
	return []byte(`apiVersion: crossfade.io/v1alpha1
kind: Cutover
metadata:
  name: ` + name + `
spec:
  zone: example.com
  records:
    - name: shop.example.com
  from: eks-blue
  to: eks-green
  steps: [0, 10, {percent: 50, pause: 1m}, 100]
  pause: 5m
  gates:
    - dns: {tolerance: 0.1}
`)
}

// setStatus writes status through the status subresource, as the controller will.
func (e *env) setStatus(t *testing.T, name string, status v1alpha1.CutoverStatus) {
	t.Helper()
	u, err := e.cutovers().Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := k8sruntime.DefaultUnstructuredConverter.ToUnstructured(&status)
	if err != nil {
		t.Fatal(err)
	}
	u.Object["status"] = st
	if _, err := e.cutovers().UpdateStatus(t.Context(), u, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update status of Cutover %s: %v", name, err)
	}
}

// edit applies change to the stored object and updates it.
func (e *env) edit(t *testing.T, name string, change func(obj map[string]any)) error {
	t.Helper()
	u, err := e.cutovers().Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	change(u.Object)
	_, err = e.cutovers().Update(t.Context(), u, metav1.UpdateOptions{})
	return err
}

// set returns a change setting the field at path (below the object) to v.
func set(v any, path ...string) func(map[string]any) {
	return func(obj map[string]any) {
		if err := unstructured.SetNestedField(obj, v, path...); err != nil {
			panic(fmt.Sprintf("set %v: %v", path, err))
		}
	}
}

// del returns a change removing the field at path.
func del(path ...string) func(map[string]any) {
	return func(obj map[string]any) { unstructured.RemoveNestedField(obj, path...) }
}

// editStep returns a change setting key of spec.steps[i], a step written as a mapping:
// a field inside the list the schema keeps as written.
func editStep(i int, key string, v any) func(map[string]any) {
	return func(obj map[string]any) {
		steps, _, _ := unstructured.NestedSlice(obj, "spec", "steps")
		m, ok := steps[i].(map[string]any)
		if !ok { // an earlier edit that should have been refused replaced the list
			m = map[string]any{"percent": int64(50)}
			steps[i] = m
		}
		m[key] = v
		if err := unstructured.SetNestedSlice(obj, steps, "spec", "steps"); err != nil {
			panic(fmt.Sprintf("set spec.steps[%d].%s: %v", i, key, err))
		}
	}
}

// TestSpecImmutableOnceStarted: before the run starts the spec can change; once
// status.phase is past Pending, an edit of any field of spec but paused is refused with
// a message that says how to change course, and spec.paused (and metadata) still change.
func TestSpecImmutableOnceStarted(t *testing.T) {
	e := start(t)
	edits := []struct {
		name   string
		change func(map[string]any)
	}{
		{"steps", set([]any{int64(0), int64(50), int64(100)}, "spec", "steps")},
		{"a step's mapping", editStep(2, "pause", "2m")},
		{"zone", set("example.org", "spec", "zone")},
		{"zoneID added", set("Z0123456789ABCDEFGHIJ", "spec", "zoneID")},
		{"records", set([]any{map[string]any{"name": "api.example.com"}}, "spec", "records")},
		{"from", set("eks-red", "spec", "from")},
		{"to", set("eks-red", "spec", "to")},
		{"pause", set("10m", "spec", "pause")},
		{"gates removed", del("spec", "gates")},
		{"onDrift added", set("rollback", "spec", "onDrift")},
		{"rollback added", set(map[string]any{"mode": "gradual", "steps": []any{int64(10)}}, "spec", "rollback")},
		{"timeouts added", set(map[string]any{"total": "1h"}, "spec", "timeouts")},
		{"ttl added", set(map[string]any{"lower": int64(60)}, "spec", "ttl")},
		{"retire added", set(map[string]any{"metrics": "http://blue/metrics", "counter": "c", "window": "1m"}, "spec", "retire")},
		{"select added", set(map[string]any{"allWeighted": true}, "spec", "select")},
		{"alb added", set(map[string]any{"listenerRules": []any{"arn:x"}, "from": "a", "to": "b"}, "spec", "alb")},
		{"cloudMap added", set(map[string]any{"namespace": "ns", "service": "svc"}, "spec", "cloudMap")},
	}
	// Not started (no status, then Pending): every edit is accepted.
	if _, err := e.cutovers().Create(t.Context(), object(t, minimalPlan("shop")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := e.edit(t, "shop", set([]any{int64(0), int64(20), int64(100)}, "spec", "steps")); err != nil {
		t.Fatalf("edit of spec.steps with no status: %v", err)
	}
	e.setStatus(t, "shop", v1alpha1.CutoverStatus{Phase: v1alpha1.PhasePending})
	if err := e.edit(t, "shop", set([]any{int64(0), int64(10), map[string]any{"percent": int64(50), "pause": "1m"}, int64(100)}, "spec", "steps")); err != nil {
		t.Fatalf("edit of spec.steps while Pending: %v", err)
	}

	// Started.
	e.setStatus(t, "shop", v1alpha1.CutoverStatus{Phase: v1alpha1.PhaseProgressing, Progress: "2/4",
		Weights: map[string]int64{"eks-blue": 90, "eks-green": 10}})
	for _, tc := range edits {
		t.Run("refused/"+tc.name, func(t *testing.T) {
			err := e.edit(t, "shop", tc.change)
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), immutable) {
				t.Fatalf("edit of %s on a started Cutover: err = %v, want Invalid: %s…", tc.name, err, immutable)
			}
			for _, want := range []string{"spec.paused", "kubectl crossfade abort", "new Cutover"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("refusal %q does not say how to change course (%q)", err, want)
				}
			}
		})
	}
	t.Run("refused/paused together with steps", func(t *testing.T) {
		err := e.edit(t, "shop", func(obj map[string]any) {
			set(true, "spec", "paused")(obj)
			set([]any{int64(0), int64(100)}, "spec", "steps")(obj)
		})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), immutable) {
			t.Fatalf("err = %v, want Invalid: %s…", err, immutable)
		}
	})
	for _, tc := range []struct {
		name   string
		change func(map[string]any)
	}{
		{"paused set", set(true, "spec", "paused")},
		{"paused cleared", set(false, "spec", "paused")},
		{"paused removed", del("spec", "paused")},
		{"a label", set("shop", "metadata", "labels", "team")},
	} {
		t.Run("accepted/"+tc.name, func(t *testing.T) {
			if err := e.edit(t, "shop", tc.change); err != nil {
				t.Fatalf("edit of %s on a started Cutover: %v", tc.name, err)
			}
		})
	}
	// Every phase past Pending freezes the spec.
	for _, phase := range []v1alpha1.Phase{v1alpha1.PhasePaused, v1alpha1.PhaseCompleted, v1alpha1.PhaseRolledBack, v1alpha1.PhaseFailed} {
		t.Run("refused in "+string(phase), func(t *testing.T) {
			e.setStatus(t, "shop", v1alpha1.CutoverStatus{Phase: phase})
			if err := e.edit(t, "shop", set("15m", "spec", "pause")); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), immutable) {
				t.Fatalf("edit of spec.pause in phase %s: err = %v, want Invalid: %s…", phase, err, immutable)
			}
		})
	}
}

// TestPrinterColumns: the CRD declares Phase, Step, Weights and Age, and a Table get (as
// kubectl get asks) shows the status in them.
func TestPrinterColumns(t *testing.T) {
	e := start(t)
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	crd, err := e.dyn.Resource(crdGVR).Get(t.Context(), "cutovers.crossfade.io", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	if len(versions) != 1 {
		t.Fatalf("CRD versions = %v, want v1alpha1 only", versions)
	}
	cols, _, _ := unstructured.NestedSlice(versions[0].(map[string]any), "additionalPrinterColumns")
	var got []string
	for _, c := range cols {
		m := c.(map[string]any)
		got = append(got, fmt.Sprintf("%s=%s", m["name"], m["jsonPath"]))
	}
	want := []string{"Phase=.status.phase", "Step=.status.progress", "Weights=.status.weights", "Age=.metadata.creationTimestamp"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("additionalPrinterColumns = %v, want %v", got, want)
	}

	if _, err := e.cutovers().Create(t.Context(), object(t, minimalPlan("shop")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.setStatus(t, "shop", v1alpha1.CutoverStatus{Phase: v1alpha1.PhaseProgressing, Progress: "2/4",
		Weights: map[string]int64{"eks-blue": 90, "eks-green": 10}})
	table := e.table(t, "shop")
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	if want := []string{"Name", "Phase", "Step", "Weights", "Age"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("Table columns = %v, want %v", names, want)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("Table rows = %d, want 1", len(table.Rows))
	}
	cells := table.Rows[0].Cells
	wantCells := []any{"shop", "Progressing", "2/4", `{"eks-blue":90,"eks-green":10}`}
	if !reflect.DeepEqual(cells[:4], wantCells) {
		t.Errorf("Table cells = %#v, want %#v and an age", cells, wantCells)
	}
	if age, _ := cells[4].(string); age == "" {
		t.Errorf("Table Age cell = %#v, want an age", cells[4])
	}
}

// table gets the Cutover name as a meta.k8s.io Table, as kubectl get does.
func (e *env) table(t *testing.T, name string) *metav1.Table {
	t.Helper()
	client, err := rest.HTTPClientFor(e.kc.Config())
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("%s/apis/%s/namespaces/%s/%s/%s", e.kc.URL, v1alpha1.GroupVersion, namespace, v1alpha1.Resource, name)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s as a Table: %d %v: %s", url, resp.StatusCode, err, body)
	}
	var table metav1.Table
	if err := json.Unmarshal(body, &table); err != nil {
		t.Fatalf("Table: %v: %s", err, body)
	}
	return &table
}

// TestInvalidRefused: what the schema can check without the plan's decoder is refused at
// create, naming the field.
func TestInvalidRefused(t *testing.T) {
	e := start(t)
	for i, tc := range []struct {
		name   string
		change func(map[string]any)
		field  string // the path the refusal names
	}{
		{"onDrift not an enum value", set("stop", "spec", "onDrift"), "spec.onDrift"},
		{"negative weight", set([]any{map[string]any{"weights": map[string]any{"from": int64(-1), "to": int64(1)}}}, "spec", "steps"), "spec.steps[0].weights.from"},
		{"weight above an ALB's", set([]any{map[string]any{"weights": map[string]any{"from": int64(1), "to": int64(1000)}}}, "spec", "steps"), "spec.steps[0].weights.to"},
		{"percent above 100", set([]any{map[string]any{"percent": int64(101)}}, "spec", "steps"), "spec.steps[0].percent"},
		{"no steps", set([]any{}, "spec", "steps"), "spec.steps"},
		{"steps missing", del("spec", "steps"), "spec.steps"},
		{"record type", set([]any{map[string]any{"name": "shop.example.com", "type": "MX"}}, "spec", "records"), "spec.records[0].type"},
		{"bare-number duration", set("5", "spec", "pause"), "spec.pause"},
		{"negative duration", set("-1m", "spec", "pause"), "spec.pause"},
		{"tolerance above 1", set([]any{map[string]any{"dns": map[string]any{"tolerance": 1.5}}}, "spec", "gates"), "spec.gates[0].dns.tolerance"},
		{"gate of two kinds", set([]any{map[string]any{"dns": map[string]any{}, "targetHealth": map[string]any{}}}, "spec", "gates"), "spec.gates[0]"},
		{"gate of no kind", set([]any{map[string]any{"name": "x"}}, "spec", "gates"), "spec.gates[0]"},
		{"noData pass", set([]any{map[string]any{"prometheus": map[string]any{"url": "http://p", "query": "up", "max": 1.0, "noData": "pass"}}}, "spec", "gates"), "spec.gates[0].prometheus.noData"},
		{"rollback step above 100", set(map[string]any{"mode": "gradual", "steps": []any{int64(150)}}, "spec", "rollback"), "spec.rollback.steps[0]"},
		{"ttl 0", set(map[string]any{"lower": int64(0)}, "spec", "ttl"), "spec.ttl.lower"},
		{"paused not a boolean", set("yes", "spec", "paused"), "spec.paused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := object(t, minimalPlan(fmt.Sprintf("bad-%d", i)))
			tc.change(obj.Object)
			_, err := e.cutovers().Create(t.Context(), obj, metav1.CreateOptions{})
			if !apierrors.IsInvalid(err) {
				t.Fatalf("create with %s: err = %v, want Invalid", tc.name, err)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("refusal %q does not name %s", err, tc.field)
			}
		})
	}
	// An unknown field (a misspelt one) is refused under strict field validation, which
	// kubectl asks for by default.
	obj := object(t, minimalPlan("typo"))
	_ = unstructured.SetNestedField(obj.Object, "5m", "spec", "pase")
	_, err := e.cutovers().Create(t.Context(), obj, metav1.CreateOptions{FieldValidation: "Strict"})
	if err == nil || !strings.Contains(err.Error(), `unknown field "spec.pase"`) {
		t.Errorf("create with spec.pase: err = %v, want unknown field \"spec.pase\"", err)
	}
}
