package objectstatus

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/yaml"

	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/kubetest"
)

// TestStatusOnAPIServer: every status Project makes from the engine's journals is one
// the real kube-apiserver stores through the status subresource under the CRD's schema
// (phase enum, reasons, lengths), whole (nothing pruned); kstatus on the object read
// back agrees with the table; and an edit of spec.paused on a completed cutover reads
// InProgress until the status is projected again for the new generation.
func TestStatusOnAPIServer(t *testing.T) {
	js := engineJournals(t)
	kc := kubetest.Start(t)
	kc.InstallCRDs(t, filepath.Join("..", "..", "..", "deploy", "crds", "cutovers.crossfade.io.yaml"))
	dyn, err := dynamic.NewForConfig(kc.Config())
	if err != nil {
		t.Fatalf("dynamic client for %s: %v", kc.URL, err)
	}
	cutovers := dyn.Resource(v1alpha1.GroupVersionResource).Namespace("default")
	plan, err := os.ReadFile(filepath.Join("..", "spec", "testdata", "minimal.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	want := map[string]status.Status{
		scCompleted: status.CurrentStatus, scResumedCompleted: status.CurrentStatus,
		scProgressing: status.InProgressStatus, scPausedByCommand: status.InProgressStatus,
		scDriftPaused: status.FailedStatus, scGateFailed: status.FailedStatus,
		scAborted: status.FailedStatus, scDriftAborted: status.FailedStatus,
	}
	names := make([]string, 0, len(js.byName))
	for name := range js.byName {
		names = append(names, name)
	}
	sort.Strings(names)
	nonName := regexp.MustCompile(`[^a-z0-9]+`)
	// write projects entries onto the object as read and writes the status; it returns
	// the object as stored.
	write := func(t *testing.T, u *unstructured.Unstructured, entries []journal.Entry) (*v1alpha1.Cutover, *unstructured.Unstructured) {
		t.Helper()
		c := &v1alpha1.Cutover{}
		if err := runtimeFrom(u, c); err != nil {
			t.Fatalf("cutover %s as read: %v", u.GetName(), err)
		}
		Project(c, entries, js.plan, t0, nil)
		st, err := toMap(c.Status)
		if err != nil {
			t.Fatal(err)
		}
		u = u.DeepCopy()
		u.Object["status"] = st
		stored, err := cutovers.UpdateStatus(ctx, u, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("write the status of cutover %s (%s): %v", u.GetName(), c.Status.Phase, err)
		}
		return c, stored
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			u := planObject(t, plan, strings.Trim(nonName.ReplaceAllString(name, "-"), "-"))
			created, err := cutovers.Create(ctx, u, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create cutover %s: %v", u.GetName(), err)
			}
			c, stored := write(t, created, js.byName[name])
			wantStatus, _ := toMap(c.Status)
			if got := stored.Object["status"]; !reflect.DeepEqual(got, wantStatus) {
				t.Errorf("status as stored differs from the one written (the schema pruned or changed it):\nstored  %v\nwritten %v", got, wantStatus)
			}
			res, err := status.Compute(stored)
			if err != nil || res.Status != want[name] {
				t.Errorf("kstatus of the stored cutover: %v (%v), want %s", res, err, want[name])
			}
			if name != scCompleted {
				return
			}
			// spec.paused, the one field a started cutover may change, bumps the
			// generation: until the status is projected again, it describes the last.
			patched, err := cutovers.Patch(ctx, stored.GetName(), types.MergePatchType, []byte(`{"spec":{"paused":true}}`), metav1.PatchOptions{})
			if err != nil {
				t.Fatalf("set spec.paused on completed cutover %s: %v", stored.GetName(), err)
			}
			if res, err := status.Compute(patched); err != nil || res.Status != status.InProgressStatus {
				t.Errorf("kstatus after the spec edit, before a new status: %v (%v), want InProgress", res, err)
			}
			_, stored = write(t, patched, js.byName[name])
			if res, err := status.Compute(stored); err != nil || res.Status != status.CurrentStatus || stored.GetGeneration() != 2 {
				t.Errorf("kstatus once projected for generation %d: %v (%v), want Current", stored.GetGeneration(), res, err)
			}
		})
	}
	// A Failed status (an invalid spec) is stored too.
	t.Run("failed", func(t *testing.T) {
		created, err := cutovers.Create(ctx, planObject(t, plan, "failed"), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c := &v1alpha1.Cutover{}
		if err := runtimeFrom(created, c); err != nil {
			t.Fatal(err)
		}
		Project(c, nil, nil, t0, errors.New("spec.steps: invalid"))
		st, _ := toMap(c.Status)
		created.Object["status"] = st
		if _, err := cutovers.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Errorf("write a Failed status: %v", err)
		}
	})
}

// planObject is the plan file doc as a Cutover named name in namespace default.
func planObject(t *testing.T, doc []byte, name string) *unstructured.Unstructured {
	t.Helper()
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		t.Fatal(err)
	}
	u.SetName(name)
	u.SetNamespace("default")
	return u
}

// runtimeFrom decodes u into c.
func runtimeFrom(u *unstructured.Unstructured, c *v1alpha1.Cutover) error {
	b, err := u.MarshalJSON()
	if err != nil {
		return err
	}
	return json.Unmarshal(b, c)
}

// toMap is v as a decoded JSON object, numbers as int64 where whole (as a dynamic
// client decodes them).
func toMap(v any) (map[string]any, error) {
	b, err := json.Marshal(map[string]any{"status": v})
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(append(b[:len(b)-1], []byte(`,"kind":"X","apiVersion":"v1"}`)...)); err != nil {
		return nil, err
	}
	st, _ := u.Object["status"].(map[string]any)
	return st, nil
}
