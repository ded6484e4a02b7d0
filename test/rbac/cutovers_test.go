package rbac_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
	"github.com/crossfade-io/crossfade/internal/cutover/journal/statusstore"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// cutoverName is the Cutover every world with --cutovers applies, moving
// app.<domain> from blue to green.
const cutoverName = "app"

// cutoverCases proves the rules cutovers.enabled adds sufficient and minimal: the
// controller run with the rendered --cutovers (in the world's namespace only, so that
// worlds sharing the API server never run each other's Cutovers) and the rendered rules
// publishes the world's records, runs a Cutover to Completed, takes and answers a
// release command, and lets the deleted Cutover go (its finalizer removed), without a
// refusal; without any one grant of the rules cutovers.enabled adds (the others are
// proven by "minimal"), it meets a refusal of exactly that grant.
func cutoverCases(t *testing.T, s *shared, helm string) []testCase {
	t.Helper()
	sources := []string{controller.SourceService, controller.SourceIngress}
	rel := renderWith(t, helm, releaseNamespace, sources, "--set", "cutovers.enabled=true")
	if !slices.Contains(rel.cutoverArgs, "--cutovers") {
		t.Fatalf("cutovers.enabled rendered no --cutovers: cutover args %q", rel.cutoverArgs)
	}
	if rel.role != nil {
		t.Fatalf("cutovers.enabled rendered the leader-election Role %v beside the ClusterRole's Leases", rel.role.Rules)
	}
	checkRules(t, rel)
	base := renderWith(t, helm, releaseNamespace, sources)
	cases := []testCase{{"sufficient", func(t *testing.T) time.Duration {
		return sufficientCase(t, s, rel, sources, "cut-ok")
	}}}
	for i, a := range grants(rel, false) {
		if !cutoverGrant(a, base) {
			continue
		}
		cases = append(cases, testCase{a.String(), func(t *testing.T) time.Duration {
			return minimalCase(t, s, rel, sources, a, fmt.Sprintf("cut-%02d", i))
		}})
	}
	return cases
}

// cutoverGrant reports whether a is granted with cutovers.enabled only: base (the same
// values without it) has no ClusterRole rule granting it, nor a Role (the
// leader-election Lease, which the ClusterRole's Leases replace).
func cutoverGrant(a atom, base *release) bool {
	for _, b := range grants(base, true) {
		if b.role == a.role && b.group == a.group && b.resource == a.resource && b.url == a.url && b.verb == a.verb {
			return false
		}
	}
	return true
}

// TestCutoverGrants: the rules cutovers.enabled adds are the ones the Cutover
// reconciler's calls need (no apiserver: helm only), so that the minimal cases above
// cover each. The sufficient and minimal cases prove the list right on the API server.
func TestCutoverGrants(t *testing.T) {
	helm := kubetest.Helm(t)
	sources := []string{controller.SourceService}
	rel := renderWith(t, helm, releaseNamespace, sources, "--set", "cutovers.enabled=true", "--set", "rbac.create=true")
	base := renderWith(t, helm, releaseNamespace, sources)
	var got []string
	for _, a := range grants(rel, false) {
		if cutoverGrant(a, base) {
			got = append(got, a.String())
		}
	}
	want := []string{"ClusterRole/crossfade.io/cutovers/get", "ClusterRole/crossfade.io/cutovers/list",
		"ClusterRole/crossfade.io/cutovers/watch", "ClusterRole/crossfade.io/cutovers/patch",
		"ClusterRole/crossfade.io/cutovers/status/update",
		"ClusterRole/coordination.k8s.io/leases/get", "ClusterRole/coordination.k8s.io/leases/create",
		"ClusterRole/coordination.k8s.io/leases/update"}
	if !slices.Equal(got, want) {
		t.Errorf("grants cutovers.enabled adds:\n got %q\nwant %q", got, want)
	}
	if rel.role != nil {
		t.Errorf("cutovers.enabled with two replicas rendered the leader-election Role %v: the ClusterRole's Leases grant it already", rel.role.Rules)
	}
}

// addCutover, when rel's Deployment runs Cutovers, publishes blue's member of
// app.<domain> at weight 100 and green's at 0, each by its owner as `crossfade sync`
// would, and gives the world's controller rel's cutover flags, limited to the world's
// namespace.
func (w *world) addCutover(t *testing.T, rel *release) {
	t.Helper()
	if len(rel.cutoverArgs) == 0 {
		return
	}
	if err := w.publishMembers(t.Context(), 100, 0); err != nil {
		t.Fatal(err)
	}
	w.cutoverArgs = append(slices.Clone(rel.cutoverArgs), "--namespace="+w.ns)
}

// publishMembers syncs blue's member of app.<domain> at weight blue and green's at green,
// each by its owner as `crossfade sync` would; a sync during a cutover's hold also
// confirms the hold, as release wants.
func (w *world) publishMembers(ctx context.Context, blue, green int64) error {
	for _, m := range []struct {
		owner, ip string
		weight    int64
	}{{"blue", "192.0.2.101", blue}, {"green", "192.0.2.102", green}} {
		reg, err := registry.New(registry.Config{OwnerID: m.owner})
		if err != nil {
			return err
		}
		e := &endpoint.Endpoint{Name: "app." + w.domain, Type: "A", Targets: endpoint.Targets{m.ip}, TTL: 1, SetIdentifier: m.owner,
			Policy: endpoint.WeightedPolicy(m.weight), Labels: endpoint.Labels{endpoint.ResourceLabel: "service/default/app"}}
		// This world's zone only: the worlds share the sandbox, and the owners blue and
		// green, whose records elsewhere a sync of this world's must not delete.
		syncer := &controller.Syncer{Provider: w.dns, Registry: reg, Policy: changes.Sync,
			DomainFilter: endpoint.NewDomainFilter([]string{w.domain}, nil)}
		rep, err := syncer.Sync(ctx, []*endpoint.Endpoint{e})
		if err == nil {
			err = rep.Err()
		}
		if err != nil {
			return fmt.Errorf("%s's sync of app.%s at weight %d: %w", m.owner, w.domain, m.weight, err)
		}
	}
	return nil
}

// cutoverStep is one step of the scenario (run's step).
type cutoverStep = struct {
	what string
	cond func() (bool, string, error)
}

// cutoverSteps are the scenario's steps with --cutovers (none without): the Cutover app
// applied runs to Completed, holding the finalizer, and moves app.<domain> to green; once
// the publishers have confirmed the hold, a release command in crossfade.io/command is taken and answered, not refused; the
// Cutover deleted is gone once its finalizer is removed. Each uses a grant: the
// reconciler's list, watch and get, the status writes, the Lease, and the patches that
// take the command and add and remove the finalizer.
func (w *world) cutoverSteps(ctx context.Context) []cutoverStep {
	if w.cutoverArgs == nil {
		return nil
	}
	c, err := statusstore.NewClient(w.kc.Config())
	if err != nil {
		return []cutoverStep{{"a Cutover client", func() (bool, string, error) { return false, "", err }}}
	}
	get := func() (*v1alpha1.Cutover, error) {
		out := &v1alpha1.Cutover{}
		err := c.Cutovers.Get().Namespace(w.ns).Resource(v1alpha1.Resource).Name(cutoverName).Do(ctx).Into(out)
		return out, err
	}
	id := "rbac-" + w.ns
	return []cutoverStep{
		{"the Cutover applied", func() (bool, string, error) {
			doc := `apiVersion: crossfade.io/v1alpha1
kind: Cutover
metadata:
  name: ` + cutoverName + `
  namespace: ` + w.ns + `
spec:
  zone: ` + w.domain + `
  records:
    - name: app.` + w.domain + `
  from: blue
  to: green
  steps: [0, 50, 100]
  pause: 1s
`
			var obj v1alpha1.Cutover
			if err := yaml.UnmarshalStrict([]byte(doc), &obj); err != nil {
				return false, "", err
			}
			return true, "", c.Cutovers.Post().Namespace(w.ns).Resource(v1alpha1.Resource).Body(&obj).Do(ctx).Error()
		}},
		{"the Cutover Completed with its finalizer, app." + w.domain + " at green 100", func() (bool, string, error) {
			obj, err := get()
			if err != nil {
				return false, "", err
			}
			st := obj.Status
			state := fmt.Sprintf("phase %q, weights %v, finalizers %v, conditions %v", st.Phase, st.Weights, obj.Finalizers, st.Conditions)
			if st.Phase == v1alpha1.PhaseFailed || st.Phase == v1alpha1.PhaseRolledBack {
				return false, "", fmt.Errorf("Cutover %s/%s ended %s: %s", w.ns, cutoverName, st.Phase, state)
			}
			if st.Phase != v1alpha1.PhaseCompleted || !slices.Contains(obj.Finalizers, v1alpha1.Finalizer) {
				return false, state, nil
			}
			weights, err := w.weights(ctx, "app."+w.domain)
			return weights["blue"] == 0 && weights["green"] == 100, fmt.Sprintf("%s; zone weights %v", state, weights), err
		}},
		{"the publishers confirm the hold (blue 0, green 100: the zone's weights)", func() (bool, string, error) {
			return true, "", w.publishMembers(ctx, 0, 100)
		}},
		{"a release command sent in " + v1alpha1.CommandAnnotation, func() (bool, string, error) {
			req, err := json.Marshal(v1alpha1.CommandRequest{Command: v1alpha1.RequestRelease, ID: id, By: "test/rbac", At: time.Now().UTC()})
			if err != nil {
				return false, "", err
			}
			patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{v1alpha1.CommandAnnotation: string(req)}}})
			if err != nil {
				return false, "", err
			}
			return true, "", c.Cutovers.Patch(types.MergePatchType).Namespace(w.ns).Resource(v1alpha1.Resource).Name(cutoverName).
				Body(patch).Do(ctx).Error()
		}},
		{"the release command taken and answered in " + v1alpha1.ResultAnnotation, func() (bool, string, error) {
			obj, err := get()
			if err != nil {
				return false, "", err
			}
			ann := obj.Annotations
			state := fmt.Sprintf("annotations %v", ann)
			res, ok := ann[v1alpha1.ResultAnnotation]
			if _, waiting := ann[v1alpha1.CommandAnnotation]; waiting || !ok {
				return false, state, nil
			}
			r, err := v1alpha1.ParseCommandResult(res)
			switch {
			case err != nil:
				return false, "", fmt.Errorf("Cutover %s/%s: %s: %w", w.ns, cutoverName, v1alpha1.ResultAnnotation, err)
			case r.ID != id:
				return false, state, nil
			case r.Refused != "":
				return false, "", fmt.Errorf("Cutover %s/%s: release refused: %s", w.ns, cutoverName, r.Refused)
			}
			return true, state, nil
		}},
		{"the Cutover deleted", func() (bool, string, error) {
			return true, "", c.Cutovers.Delete().Namespace(w.ns).Resource(v1alpha1.Resource).Name(cutoverName).Do(ctx).Error()
		}},
		{"the deleted Cutover gone, its finalizer removed", func() (bool, string, error) {
			obj, err := get()
			if apierrors.IsNotFound(err) {
				return true, "", nil
			}
			if err != nil {
				return false, "", err
			}
			return false, fmt.Sprintf("deletionTimestamp %v, finalizers %v", obj.DeletionTimestamp, obj.Finalizers), nil
		}},
	}
}

// weights reads the weights of name's members in the world's zone, by set identifier.
func (w *world) weights(ctx context.Context, name string) (map[string]int64, error) {
	recs, err := w.dns.Records(ctx, w.zone)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, r := range recs {
		if strings.EqualFold(r.Name, name) && r.Type == "A" {
			out[r.SetIdentifier] = r.Policy.Weight
		}
	}
	return out, nil
}
