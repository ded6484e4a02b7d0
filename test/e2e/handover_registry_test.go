package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/registry/crdstore"
	"github.com/crossfade-io/crossfade/internal/registry/crdstore/crdstoretest"
	"github.com/crossfade-io/crossfade/internal/sandbox"
)

// The test in this file runs `crossfade handover` as a separate process between the TXT
// registry and the CRD registry (external-dns v0.23's DNSRecords, on a real
// kube-apiserver with the CRD of deploy/crds) and between owners within the CRD
// registry, over a sandbox zone; the publishers before and after are crossfade's own
// syncers (controller.Syncer, what `crossfade controller` and `sync` run) on each registry.

// hrWorld is a kube-apiserver with the DNSRecord CRD and namespace hrNamespace, and a
// sandbox holding example.com.
type hrWorld struct {
	kube *crdstoretest.Kube
	z    *crdstoretest.Zone
	kc   *kubetest.Cluster
	dyn  dynamic.Interface
	sb   *sandbox.Sandbox
	dns  *route53.Provider
	zone provider.Zone
}

const hrNamespace = "dns"

func newHRWorld(t *testing.T) *hrWorld {
	t.Helper()
	k := crdstoretest.StartKube(t)
	k.Namespace(t, hrNamespace)
	z := crdstoretest.NewZone(t)
	return &hrWorld{kube: k, kc: k.Cluster, dyn: k.Dyn, z: z, sb: z.Sandbox, dns: z.DNS, zone: z.Zone}
}

// txt is owner's publisher on the TXT registry.
func (w *hrWorld) txt(t *testing.T, owner string) *controller.Syncer {
	t.Helper()
	return w.z.TXT(t, owner)
}

// crd is owner's publisher on the CRD registry of hrNamespace, as `crossfade controller
// --registry crd` builds it.
func (w *hrWorld) crd(t *testing.T, owner string) *controller.Syncer {
	t.Helper()
	_, s := w.z.CRD(t, w.kube, hrNamespace, owner)
	return s
}

// handover runs `crossfade handover` against the world.
func (w *hrWorld) handover(t *testing.T, args ...string) runResult {
	t.Helper()
	return runCrossfade(t, append([]string{"handover", "--zone", "example.com", "--aws-endpoint", w.sb.APIURL(),
		"--kubeconfig", w.kc.Kubeconfig, "--crd-registry-namespace", hrNamespace, "--log-level", "warn"}, args...)...)
}

// records lists the zone's records (not the apex NS and SOA) as "name TYPE set targets".
func (w *hrWorld) records(t *testing.T) []string {
	t.Helper()
	return w.z.Records(t)
}

// objects lists hrNamespace's DNSRecords as "name owner resourceVersion".
func (w *hrWorld) objects(t *testing.T) []string {
	t.Helper()
	return w.kube.Objects(t, hrNamespace)
}

// object reads DNSRecord name; nil when there is none.
func (w *hrWorld) object(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	return w.kube.Object(t, hrNamespace, name)
}

func hrA(name, setID, target string) *endpoint.Endpoint {
	return &endpoint.Endpoint{Name: name, Type: "A", Targets: endpoint.NewTargets(target), TTL: 300, SetIdentifier: setID,
		Labels: endpoint.Labels{endpoint.ResourceLabel: "service/default/" + strings.Split(name, ".")[0]}}
}

// hrSync runs s once and returns its planned changes, the batches it wrote and its conflicts.
func hrSync(t *testing.T, s *controller.Syncer, desired ...*endpoint.Endpoint) (changes.Summary, int, []changes.Conflict) {
	t.Helper()
	rep, err := s.Sync(context.Background(), desired)
	if err != nil {
		t.Fatal(err)
	}
	var sum changes.Summary
	n := 0
	for _, z := range rep.Zones {
		if z.Changes != nil {
			sum.Create += z.Changes.Summary.Create
			sum.Update += z.Changes.Summary.Update
			sum.Delete += z.Changes.Summary.Delete
			sum.Replace += z.Changes.Summary.Replace
		}
		n += z.Applied
	}
	return sum, n, rep.Conflicts()
}

// hasPrefix says whether one of list starts with p.
func hasPrefix(list []string, p string) bool {
	return slices.ContainsFunc(list, func(s string) bool { return strings.HasPrefix(s, p) })
}

// TestHandoverBetweenRegistries: blue's records move from TXT ownership to DNSRecords
// (`--registry txt --to-registry crd`), are handed over to green within the CRD registry
// (`--registry crd`), and move back to TXT ownership as green's (`--registry crd
// --to-registry txt`). After each step the new owner's publisher on the new registry
// makes 0 changes and the old one's is refused; a record of a third owner (TXT-owned,
// and one owned by its DNSRecord) is never touched; a record whose DNSRecord is another
// owner's is refused and the exit status says so; a dry run writes nothing and prints
// the DNSRecords and TXT changes it would write.
func TestHandoverBetweenRegistries(t *testing.T) {
	w := newHRWorld(t)
	blueWant := []*endpoint.Endpoint{hrA("app.example.com", "", "10.0.0.1"), hrA("w.example.com", "blue", "10.0.0.2")}
	blueWant[1].Policy = endpoint.WeightedPolicy(10)
	taken := hrA("taken.example.com", "", "10.0.0.3")
	if sum, _, conflicts := hrSync(t, w.txt(t, "blue"), append(slices.Clone(blueWant), taken)...); sum.Create != 3 || len(conflicts) != 0 {
		t.Fatalf("blue's TXT sync: %+v %v", sum, conflicts)
	}
	// A third owner: one record under TXT ownership, one under a DNSRecord, and the
	// DNSRecord of blue's taken record (written by hand, say, or a stale copy).
	if sum, _, conflicts := hrSync(t, w.txt(t, "other"), hrA("other.example.com", "", "10.0.0.9")); sum.Create != 1 || len(conflicts) != 0 {
		t.Fatalf("other's TXT sync: %+v %v", sum, conflicts)
	}
	if sum, _, conflicts := hrSync(t, w.crd(t, "other"), hrA("other-crd.example.com", "", "10.0.0.8")); sum.Create != 1 || len(conflicts) != 0 {
		t.Fatalf("other's CRD sync: %+v %v", sum, conflicts)
	}
	takenObj := crdstore.ObjectName(taken.Key())
	if _, err := w.dyn.Resource(crdstore.Resource).Namespace(hrNamespace).Create(t.Context(), &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "externaldns.k8s.io/v1alpha1", "kind": "DNSRecord",
		"metadata": map[string]any{"name": takenObj, "labels": map[string]any{crdstore.OwnerLabel: "other"}},
		"spec": map[string]any{"endpoint": map[string]any{"dnsName": "taken.example.com", "recordType": "A", "targets": []any{"10.0.0.3"},
			"recordTTL": int64(300), "labels": map[string]any{"owner": "other"}}},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	appObj := crdstore.ObjectName(blueWant[0].Key())
	otherObjects := func() []string {
		var out []string
		for _, o := range w.objects(t) {
			if strings.Contains(o, " other ") {
				out = append(out, o)
			}
		}
		return out
	}
	otherBefore := otherObjects()
	if len(otherBefore) != 2 {
		t.Fatalf("other's DNSRecords: %v", otherBefore)
	}
	checkOther := func(step string) {
		t.Helper()
		recs := w.records(t)
		for _, want := range []string{"a-other.example.com TXT", "other.example.com A 10.0.0.9", "other-crd.example.com A 10.0.0.8",
			"a-taken.example.com TXT", "taken.example.com A 10.0.0.3"} {
			if !hasPrefix(recs, want) {
				t.Errorf("%s: %q gone from the zone: %v", step, want, recs)
			}
		}
		if got := otherObjects(); !slices.Equal(got, otherBefore) {
			t.Errorf("%s: the third owner's DNSRecords changed:\n%v\nwant\n%v", step, got, otherBefore)
		}
	}

	// 1. TXT -> CRD, blue: a dry run first.
	recsBefore, objsBefore := w.records(t), w.objects(t)
	r := w.handover(t, "--from", "blue", "--to", "blue", "--to-registry", "crd", "--dry-run")
	if r.exit == 0 {
		t.Errorf("dry run txt -> crd exited 0 with taken refused:\n%s", r.out)
	}
	for _, want := range []string{"create DNSRecord dns/" + appObj, `"owner": "blue"`, `"Action": "DELETE"`, `a-app.example.com`,
		"would move app.example.com", "refused", "taken.example.com", "dry run: nothing was written"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("dry run txt -> crd: no %q in:\n%s", want, r.out)
		}
	}
	if got := w.records(t); !slices.Equal(got, recsBefore) {
		t.Errorf("the dry run changed the zone:\n%v\n%v", recsBefore, got)
	}
	if got := w.objects(t); !slices.Equal(got, objsBefore) {
		t.Errorf("the dry run changed the DNSRecords:\n%v\n%v", objsBefore, got)
	}

	r = w.handover(t, "--from", "blue", "--to", "blue", "--to-registry", "crd")
	if r.exit == 0 || !strings.Contains(r.out, "2 records moved, 1 refused") || !strings.Contains(r.out, `owner "other"`) {
		t.Fatalf("txt -> crd: exit %d, want non-zero, 2 moved and taken refused as other's:\n%s", r.exit, r.out)
	}
	recs := w.records(t)
	for _, gone := range []string{"a-app.example.com TXT", "a-w.example.com TXT blue"} {
		if hasPrefix(recs, gone) {
			t.Errorf("txt -> crd: %s still in the zone: %v", gone, recs)
		}
	}
	if u := w.object(t, appObj); u == nil || u.GetLabels()[crdstore.OwnerLabel] != "blue" {
		t.Errorf("txt -> crd: DNSRecord %s: %v, want blue's", appObj, u)
	}
	checkOther("txt -> crd")
	if sum, n, conflicts := hrSync(t, w.crd(t, "blue"), blueWant...); sum != (changes.Summary{}) || n != 0 || len(conflicts) != 0 {
		t.Errorf("blue on the CRD registry after txt -> crd: %+v, %d batches, conflicts %v; want 0 changes", sum, n, conflicts)
	}
	// taken is still blue's under the TXT registry (its move was refused).
	if sum, n, conflicts := hrSync(t, w.txt(t, "blue"), hrA("app.example.com", "", "10.6.6.6"), taken); n != 0 || len(conflicts) != 1 {
		t.Errorf("blue on the TXT registry after txt -> crd: %+v, %d batches, conflicts %v; want app refused (no longer TXT-owned)", sum, n, conflicts)
	}

	// 2. Within the CRD registry, blue -> green: a dry run first.
	recsBefore, objsBefore = w.records(t), w.objects(t)
	r = w.handover(t, "--registry", "crd", "--from", "blue", "--to", "green", "--dry-run")
	if r.exit != 0 {
		t.Errorf("dry run crd blue -> green: exit %d:\n%s", r.exit, r.out)
	}
	for _, want := range []string{"DNSRecord writes in namespace dns", `"action": "UPDATE"`, `"ifResourceVersion"`, `"name": "` + appObj + `"`,
		`"externaldns.k8s.io/owner": "green"`, `"owner": "green"`, "dry run: nothing was sent"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("dry run crd blue -> green: no %q in:\n%s", want, r.out)
		}
	}
	if strings.Contains(r.out, `"changeBatch":`) {
		t.Errorf("dry run crd blue -> green renders a change batch: a handover within the CRD registry writes no TXT record:\n%s", r.out)
	}
	if got := w.records(t); !slices.Equal(got, recsBefore) {
		t.Errorf("the dry run changed the zone:\n%v\n%v", recsBefore, got)
	}
	if got := w.objects(t); !slices.Equal(got, objsBefore) {
		t.Errorf("the dry run changed the DNSRecords:\n%v\n%v", objsBefore, got)
	}
	// --txt-prefix means nothing under the CRD registry (as for the controller): given
	// anyway, from a TXT-era command line, it changes nothing.
	r = w.handover(t, "--registry", "crd", "--from", "blue", "--to", "green", "--txt-prefix", "pfx-")
	if r.exit != 0 || !strings.Contains(r.out, "2 records moved, 0 refused") {
		t.Fatalf("crd blue -> green: exit %d, want 0 and 2 moved:\n%s", r.exit, r.out)
	}
	if got := w.records(t); !slices.Equal(got, recsBefore) {
		t.Errorf("crd blue -> green changed the zone:\n%v\n%v", recsBefore, got)
	}
	if u := w.object(t, appObj); u == nil || u.GetLabels()[crdstore.OwnerLabel] != "green" {
		t.Errorf("crd blue -> green: DNSRecord %s: %v, want green's", appObj, u)
	}
	checkOther("crd blue -> green")
	if sum, n, conflicts := hrSync(t, w.crd(t, "green"), blueWant...); sum != (changes.Summary{}) || n != 0 || len(conflicts) != 0 {
		t.Errorf("green on the CRD registry after the handover: %+v, %d batches, conflicts %v; want 0 changes", sum, n, conflicts)
	}
	if sum, n, conflicts := hrSync(t, w.crd(t, "blue"), hrA("app.example.com", "", "10.6.6.6")); n != 0 || len(conflicts) != 1 {
		t.Errorf("blue on the CRD registry after the handover: %+v, %d batches, conflicts %v; want app refused as green's", sum, n, conflicts)
	}

	// 3. CRD -> TXT, green: a dry run first.
	recsBefore, objsBefore = w.records(t), w.objects(t)
	r = w.handover(t, "--registry", "crd", "--to-registry", "txt", "--from", "green", "--to", "green", "--dry-run")
	if r.exit != 0 {
		t.Errorf("dry run crd -> txt: exit %d:\n%s", r.exit, r.out)
	}
	for _, want := range []string{`"Action": "CREATE"`, `a-app.example.com`, "owner=green", "delete DNSRecord dns/" + appObj + " (if still at resourceVersion",
		"would move app.example.com", "dry run: nothing was written"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("dry run crd -> txt: no %q in:\n%s", want, r.out)
		}
	}
	if got := w.records(t); !slices.Equal(got, recsBefore) {
		t.Errorf("the dry run changed the zone:\n%v\n%v", recsBefore, got)
	}
	if got := w.objects(t); !slices.Equal(got, objsBefore) {
		t.Errorf("the dry run changed the DNSRecords:\n%v\n%v", objsBefore, got)
	}
	r = w.handover(t, "--registry", "crd", "--to-registry", "txt", "--from", "green", "--to", "green")
	if r.exit != 0 || !strings.Contains(r.out, "2 records moved, 0 refused") {
		t.Fatalf("crd -> txt: exit %d, want 0 and 2 moved:\n%s", r.exit, r.out)
	}
	if u := w.object(t, appObj); u != nil {
		t.Errorf("crd -> txt: DNSRecord %s still there: %v", appObj, u.GetLabels())
	}
	recs = w.records(t)
	for _, want := range []string{"a-app.example.com TXT", "a-w.example.com TXT blue"} {
		if !hasPrefix(recs, want) {
			t.Errorf("crd -> txt: no %s in the zone: %v", want, recs)
		}
	}
	checkOther("crd -> txt")
	if sum, n, conflicts := hrSync(t, w.txt(t, "green"), blueWant...); sum != (changes.Summary{}) || n != 0 || len(conflicts) != 0 {
		t.Errorf("green on the TXT registry after crd -> txt: %+v, %d batches, conflicts %v; want 0 changes", sum, n, conflicts)
	}
	if sum, n, conflicts := hrSync(t, w.crd(t, "green"), hrA("app.example.com", "", "10.6.6.6")); n != 0 || len(conflicts) != 1 {
		t.Errorf("green on the CRD registry after crd -> txt: %+v, %d batches, conflicts %v; want app refused (no DNSRecord owns it)", sum, n, conflicts)
	}
}

// TestHandoverRegistryFlags: the flag combinations a move between registries refuses
// before anything is read.
func TestHandoverRegistryFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--from", "blue", "--to", "green", "--to-registry", "crd", "--crd-registry-namespace", "dns"}, "keeps the owner"},
		{[]string{"--from", "blue", "--to", "blue", "--to-registry", "crd", "--crd-registry-namespace", "dns", "--name", "*.example.com"}, "--name"},
		{[]string{"--from", "blue", "--to", "green", "--registry", "crd"}, "--crd-registry-namespace: required"},
		{[]string{"--from", "blue", "--to", "green", "--registry", "dynamodb"}, `want "txt" or "crd"`},
		{[]string{"--from", "blue", "--to", "blue"}, `--from and --to are both "blue"`},
	} {
		r := runCrossfade(t, append([]string{"handover", "--zone", "example.com", "--aws-endpoint", "http://127.0.0.1:1"}, tc.args...)...)
		if r.exit == 0 || !strings.Contains(r.out, tc.want) {
			t.Errorf("handover %v: exit %d, want non-zero naming %q:\n%s", tc.args, r.exit, tc.want, r.out)
		}
	}
}
