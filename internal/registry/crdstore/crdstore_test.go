package crdstore_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/handover"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/registry/crdstore"
	"github.com/crossfade-io/crossfade/internal/registry/crdstore/crdstoretest"
	"github.com/crossfade-io/crossfade/internal/sandbox"
)

// TestObjectName: the object names external-dns v0.23's recordObjectName gives, the
// hashes computed apart (printf 'name/TYPE/set' | sha256sum) and v0.23's own test value.
func TestObjectName(t *testing.T) {
	for _, tc := range []struct {
		key  endpoint.Key
		want string
	}{
		{endpoint.Key{Name: "...", Type: "A"}, "record-6fbee3c6"}, // v0.23's crd_test.go
		{endpoint.Key{Name: "app.example.com", Type: "A"}, "app-example-com-ae3e8df6"},
		{endpoint.Key{Name: "App.Example.com.", Type: "a"}, "app-example-com-ae3e8df6"},
		{endpoint.Key{Name: "app.example.com", Type: "A", SetIdentifier: "blue"}, "app-example-com-2079150f"},
		{endpoint.Key{Name: "app.example.com", Type: "AAAA"}, "app-example-com-f7e73b1f"},
		{endpoint.Key{Name: "*.example.com", Type: "CNAME"}, "example-com-16cc6a1d"},
	} {
		if got := crdstore.ObjectName(tc.key); got != tc.want {
			t.Errorf("ObjectName(%s) = %q, want %q", tc.key, got, tc.want)
		}
	}
}

// world is a kube-apiserver with the DNSRecord CRD and, per subtest, a sandbox zone
// example.com.
type world struct {
	kube *crdstoretest.Kube
	kc   *kubetest.Cluster
	dyn  dynamic.Interface
	z    *crdstoretest.Zone
	dns  *route53.Provider
	zone provider.Zone
	// sbURL is the sandbox's Route 53 API.
	sbURL string
	sb    *sandbox.Sandbox
}

func newWorld(t *testing.T) *world {
	t.Helper()
	k := crdstoretest.StartKube(t)
	return &world{kube: k, kc: k.Cluster, dyn: k.Dyn}
}

// fresh gives each subtest its own namespace and zone.
func (w *world) fresh(t *testing.T, ns string) {
	t.Helper()
	w.kube.Namespace(t, ns)
	w.z = crdstoretest.NewZone(t)
	w.dns, w.sbURL, w.sb, w.zone = w.z.DNS, w.z.Sandbox.APIURL(), w.z.Sandbox, w.z.Zone
}

// registry is owner's CRD registry over the zone, in namespace ns.
func (w *world) registry(t *testing.T, ns, owner string) (*crdstore.Provider, *controller.Syncer) {
	t.Helper()
	return w.z.CRD(t, w.kube, ns, owner)
}

// v023 creates a DNSRecord as external-dns v0.23's registry/crd writes it for an endpoint
// it created (ensureDNSRecord, then setStatus Programmed), built here from its source's
// field names rather than crossfade's types; ready false leaves it Accepted.
func (w *world) v023(t *testing.T, ns, name, owner string, ep map[string]any, ready bool) {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "externaldns.k8s.io/v1alpha1", "kind": "DNSRecord",
		"metadata": map[string]any{"name": name, "namespace": ns, "labels": map[string]any{"externaldns.k8s.io/owner": owner}},
		"spec":     map[string]any{"endpoint": ep},
	}}
	c := w.dyn.Resource(crdstore.Resource).Namespace(ns)
	got, err := c.Create(t.Context(), u, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	status, reason, msg := "False", "Accepted", "Endpoint accepted by external-dns; not yet programmed"
	if ready {
		status, reason, msg = "True", "Programmed", "Endpoint applied to the DNS provider"
	}
	got.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": status, "reason": reason,
		"message": msg, "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}}}
	if _, err := c.UpdateStatus(t.Context(), got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// endpointSpec is spec.endpoint as v0.23 writes it for a record it created from a source.
func endpointSpec(name, typ, setID string, targets []any, ttl int64, owner, resource string, props ...any) map[string]any {
	ep := map[string]any{"dnsName": name, "recordType": typ, "targets": targets,
		"labels": map[string]any{"owner": owner, "resource": resource}}
	if setID != "" {
		ep["setIdentifier"] = setID
	}
	if ttl != 0 {
		ep["recordTTL"] = ttl
	}
	if len(props) > 0 {
		ep["providerSpecific"] = props
	}
	return ep
}

func prop(name, value string) map[string]any { return map[string]any{"name": name, "value": value} }

// seed writes records straight to the zone, as external-dns did before it stopped.
func (w *world) seed(t *testing.T, recs ...*endpoint.Endpoint) {
	t.Helper()
	var b changes.Batch
	for _, r := range recs {
		b = append(b, changes.Change{Action: changes.Create, Endpoint: r})
	}
	if err := w.dns.Apply(t.Context(), w.zone, b); err != nil {
		t.Fatal(err)
	}
}

// zoneRecords lists the zone's records (not the apex NS and SOA) as "name TYPE set targets".
func (w *world) zoneRecords(t *testing.T) []string {
	t.Helper()
	return crdstoretest.RecordLines(t, w.dns, w.zone)
}

// object reads DNSRecord name in ns; nil when there is none.
func (w *world) object(t *testing.T, ns, name string) *unstructured.Unstructured {
	t.Helper()
	return w.kube.Object(t, ns, name)
}

// readyReason is the object's Ready condition as "Status/Reason".
func readyReason(u *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m := c.(map[string]any)
		if m["type"] == "Ready" {
			return m["status"].(string) + "/" + m["reason"].(string)
		}
	}
	return ""
}

func a(name, setID string, targets ...string) *endpoint.Endpoint {
	return &endpoint.Endpoint{Name: name, Type: "A", Targets: endpoint.NewTargets(targets...), TTL: 300, SetIdentifier: setID,
		Labels: endpoint.Labels{endpoint.ResourceLabel: "service/default/app"}}
}

// alias is an alias record of type typ to app.example.com, in the same zone.
func alias(name, typ string) *endpoint.Endpoint {
	e := &endpoint.Endpoint{Name: name, Type: typ, Targets: endpoint.Targets{"app.example.com"}}
	e.SetProp(endpoint.PropAlias, "true")
	e.SetProp(endpoint.PropEvaluateTargetHealth, "true")
	return e
}

func labelled(e *endpoint.Endpoint, resource string) *endpoint.Endpoint {
	e.Labels = endpoint.Labels{endpoint.ResourceLabel: resource}
	return e
}

func weighted(e *endpoint.Endpoint, w int64) *endpoint.Endpoint {
	e.Policy = endpoint.WeightedPolicy(w)
	return e
}

func sync(t *testing.T, s *controller.Syncer, desired ...*endpoint.Endpoint) *controller.Report {
	t.Helper()
	rep, err := s.Sync(context.Background(), desired)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func summary(rep *controller.Report) changes.Summary {
	var s changes.Summary
	for _, z := range rep.Zones {
		if z.Changes != nil {
			s.Create += z.Changes.Summary.Create
			s.Update += z.Changes.Summary.Update
			s.Delete += z.Changes.Summary.Delete
			s.Replace += z.Changes.Summary.Replace
		}
	}
	return s
}

func applied(rep *controller.Report) int {
	n := 0
	for _, z := range rep.Zones {
		n += z.Applied
	}
	return n
}

// TestCRDRegistry runs the CRD registry on a real kube-apiserver with v0.23's DNSRecord
// CRD over a sandbox zone through the real AWS SDK.
func TestCRDRegistry(t *testing.T) {
	w := newWorld(t)

	t.Run("adopts a zone v0.23 wrote with 0 changes", func(t *testing.T) {
		const ns = "adopt"
		w.fresh(t, ns)
		w.seed(t, a("app.example.com", "", "10.0.0.1"),
			weighted(a("w.example.com", "blue", "10.0.0.2"), 10), weighted(a("w.example.com", "green", "10.0.0.3"), 20),
			&endpoint.Endpoint{Name: "app.example.com", Type: "AAAA", Targets: endpoint.Targets{"2001:db8::1"}, TTL: 300})
		w.v023(t, ns, "app-example-com-ae3e8df6", "blue",
			endpointSpec("app.example.com", "A", "", []any{"10.0.0.1"}, 300, "blue", "service/default/app"), true)
		w.v023(t, ns, "app-example-com-f7e73b1f", "blue",
			endpointSpec("app.example.com", "AAAA", "", []any{"2001:db8::1"}, 300, "blue", "service/default/app"), true)
		w.v023(t, ns, crdstore.ObjectName(endpoint.Key{Name: "w.example.com", Type: "A", SetIdentifier: "blue"}), "blue",
			endpointSpec("w.example.com", "A", "blue", []any{"10.0.0.2"}, 300, "blue", "service/default/app", prop("aws/weight", "10")), true)
		w.v023(t, ns, crdstore.ObjectName(endpoint.Key{Name: "w.example.com", Type: "A", SetIdentifier: "green"}), "green",
			endpointSpec("w.example.com", "A", "green", []any{"10.0.0.3"}, 300, "green", "service/default/app", prop("aws/weight", "20")), true)
		// A dual-stack alias, A and AAAA, as v0.23 writes one (recordType A or AAAA,
		// alias=true): its DNSRecords are keyed on the record's own type.
		w.seed(t, alias("lb.example.com", "A"), alias("lb.example.com", "AAAA"))
		for _, typ := range []string{"A", "AAAA"} {
			w.v023(t, ns, crdstore.ObjectName(endpoint.Key{Name: "lb.example.com", Type: typ}), "blue",
				endpointSpec("lb.example.com", typ, "", []any{"app.example.com"}, 0, "blue", "service/default/lb",
					prop("alias", "true"), prop("aws/evaluate-target-health", "true")), true)
		}
		before := w.zoneRecords(t)
		if !slices.Contains(before, "lb.example.com A app.example.com") || !slices.Contains(before, "lb.example.com AAAA app.example.com") {
			t.Fatalf("zone %v lacks the dual-stack alias", before)
		}
		_, s := w.registry(t, ns, "blue")
		rep := sync(t, s, a("app.example.com", "", "10.0.0.1"), weighted(a("w.example.com", "blue", "10.0.0.2"), 10),
			&endpoint.Endpoint{Name: "app.example.com", Type: "AAAA", Targets: endpoint.Targets{"2001:db8::1"}, TTL: 300,
				Labels: endpoint.Labels{endpoint.ResourceLabel: "service/default/app"}},
			labelled(alias("lb.example.com", "A"), "service/default/lb"), labelled(alias("lb.example.com", "AAAA"), "service/default/lb"))
		if err := rep.Err(); err != nil {
			t.Fatal(err)
		}
		if got := summary(rep); got != (changes.Summary{}) || applied(rep) != 0 || len(rep.Conflicts()) != 0 {
			t.Fatalf("adopting: %+v, %d batches, conflicts %v; want 0 changes", got, applied(rep), rep.Conflicts())
		}
		if after := w.zoneRecords(t); !slices.Equal(before, after) {
			t.Fatalf("zone changed:\n%v\n%v", before, after)
		}
	})

	t.Run("creates, updates and deletes records with their DNSRecords", func(t *testing.T) {
		const ns = "lifecycle"
		w.fresh(t, ns)
		_, s := w.registry(t, ns, "blue")
		const obj = "app-example-com-ae3e8df6"

		// keep stays: deleting all of an owner's records is a mass deletion the guard holds.
		keep := a("keep.example.com", "", "10.0.0.100")
		if rep := sync(t, s, keep, a("app.example.com", "", "10.0.0.1")); rep.Err() != nil || summary(rep).Create != 2 {
			t.Fatalf("create: %+v %v", summary(rep), rep.Err())
		}
		if got, want := w.zoneRecords(t), []string{"app.example.com A 10.0.0.1", "keep.example.com A 10.0.0.100"}; !slices.Equal(got, want) {
			t.Fatalf("zone after create = %v, want %v (no TXT record)", got, want)
		}
		u := w.object(t, ns, obj)
		if u == nil {
			t.Fatalf("no DNSRecord %s after create", obj)
		}
		if got := u.GetLabels()["externaldns.k8s.io/owner"]; got != "blue" {
			t.Errorf("owner label = %q, want blue", got)
		}
		ep, _, _ := unstructured.NestedMap(u.Object, "spec", "endpoint")
		labels, _, _ := unstructured.NestedStringMap(ep, "labels")
		if ep["dnsName"] != "app.example.com" || ep["recordType"] != "A" || ep["recordTTL"] != int64(300) ||
			labels["owner"] != "blue" || labels["resource"] != "service/default/app" {
			t.Errorf("spec.endpoint = %v", ep)
		}
		if got := readyReason(u); got != "True/Programmed" {
			t.Errorf("Ready = %s, want True/Programmed", got)
		}

		if rep := sync(t, s, keep, a("app.example.com", "", "10.0.0.9")); rep.Err() != nil || summary(rep).Update != 1 {
			t.Fatalf("update: %+v %v", summary(rep), rep.Err())
		}
		if got, want := w.zoneRecords(t), []string{"app.example.com A 10.0.0.9", "keep.example.com A 10.0.0.100"}; !slices.Equal(got, want) {
			t.Fatalf("zone after update = %v, want %v", got, want)
		}
		u = w.object(t, ns, obj)
		if targets, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "endpoint", "targets"); !slices.Equal(targets, []string{"10.0.0.9"}) || readyReason(u) != "True/Programmed" {
			t.Errorf("after update: targets %v, Ready %s", targets, readyReason(u))
		}
		if rep := sync(t, s, keep, a("app.example.com", "", "10.0.0.9")); summary(rep) != (changes.Summary{}) || applied(rep) != 0 {
			t.Errorf("second sync: %+v, want 0 changes", summary(rep))
		}

		if rep := sync(t, s, keep); rep.Err() != nil || summary(rep).Delete != 1 {
			t.Fatalf("delete: %+v %v", summary(rep), rep.Err())
		}
		if got, want := w.zoneRecords(t), []string{"keep.example.com A 10.0.0.100"}; !slices.Equal(got, want) {
			t.Errorf("zone after delete = %v, want %v", got, want)
		}
		if u := w.object(t, ns, obj); u != nil {
			t.Errorf("DNSRecord %s still there after its record was deleted", obj)
		}
	})

	t.Run("never touches another owner's record, nor one no DNSRecord owns", func(t *testing.T) {
		const ns = "others"
		w.fresh(t, ns)
		// txt.example.com is blue's by a TXT record only: under this registry only DNSRecords
		// say who owns what, as for external-dns v0.23.
		w.seed(t, a("green.example.com", "", "10.0.0.1"), a("pending.example.com", "", "10.0.0.2"), a("nobody.example.com", "", "10.0.0.3"),
			a("txt.example.com", "", "10.0.0.4"), &endpoint.Endpoint{Name: "a-txt.example.com", Type: "TXT", TTL: 300,
				Targets: endpoint.Targets{registry.Payload(endpoint.Labels{endpoint.OwnerLabel: "blue", endpoint.ResourceLabel: "service/default/app"})}})
		w.v023(t, ns, crdstore.ObjectName(endpoint.Key{Name: "green.example.com", Type: "A"}), "green",
			endpointSpec("green.example.com", "A", "", []any{"10.0.0.1"}, 300, "green", "service/default/app"), true)
		// Another owner's write not yet confirmed is still theirs.
		w.v023(t, ns, crdstore.ObjectName(endpoint.Key{Name: "pending.example.com", Type: "A"}), "green",
			endpointSpec("pending.example.com", "A", "", []any{"10.0.0.7"}, 300, "green", "service/default/app"), false)
		before := w.zoneRecords(t)
		_, s := w.registry(t, ns, "blue")
		rep := sync(t, s, a("green.example.com", "", "10.9.9.9"), a("pending.example.com", "", "10.9.9.9"), a("nobody.example.com", "", "10.9.9.9"),
			a("txt.example.com", "", "10.9.9.9"))
		if got := summary(rep); got != (changes.Summary{}) || applied(rep) != 0 || len(rep.Conflicts()) != 4 || rep.Err() != nil {
			t.Fatalf("%+v, %d batches, conflicts %v, err %v; want 4 conflicts and nothing written", got, applied(rep), rep.Conflicts(), rep.Err())
		}
		if rep := sync(t, s); applied(rep) != 0 {
			t.Fatalf("an empty sync wrote %d batches", applied(rep))
		}
		if after := w.zoneRecords(t); !slices.Equal(before, after) {
			t.Fatalf("zone changed:\n%v\n%v", before, after)
		}
		if u := w.object(t, ns, crdstore.ObjectName(endpoint.Key{Name: "green.example.com", Type: "A"})); u == nil || u.GetLabels()["externaldns.k8s.io/owner"] != "green" {
			t.Errorf("green's DNSRecord changed: %v", u)
		}
	})

	t.Run("compare-and-swap on the DNSRecord's resourceVersion", func(t *testing.T) {
		const ns = "cas"
		w.fresh(t, ns)
		p, s := w.registry(t, ns, "blue")
		if rep := sync(t, s, a("app.example.com", "", "10.0.0.1"), a("gone.example.com", "", "10.0.0.2")); rep.Err() != nil {
			t.Fatal(rep.Err())
		}
		reg, _ := registry.New(registry.Config{OwnerID: "blue"})
		// plan reads the zone, then lets change run (another writer), then applies.
		plan := func(change func(), desired ...*endpoint.Endpoint) error {
			cur, err := p.Records(t.Context(), w.zone)
			if err != nil {
				t.Fatal(err)
			}
			set := changes.Calculate(changes.Input{Desired: desired, Current: cur, Registry: reg, Zone: w.zone.Name})
			if len(set.Batches) != 1 {
				t.Fatalf("planned %d batches, want 1", len(set.Batches))
			}
			change()
			return p.Apply(t.Context(), w.zone, set.Batches[0])
		}
		handOver := func(name string) func() {
			return func() {
				c := w.dyn.Resource(crdstore.Resource).Namespace(ns)
				u := w.object(t, ns, name)
				u.SetLabels(map[string]string{"externaldns.k8s.io/owner": "green"})
				if _, err := c.Update(t.Context(), u, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
		}
		before := w.zoneRecords(t)
		// An update planned before the DNSRecord was handed to green.
		err := plan(handOver("app-example-com-ae3e8df6"), a("app.example.com", "", "10.9.9.9"), a("gone.example.com", "", "10.0.0.2"))
		if err == nil || !strings.Contains(err.Error(), "changed since the zone was read") {
			t.Fatalf("update after a handover: err = %v, want a compare-and-swap failure", err)
		}
		// A delete planned before the DNSRecord was handed to green.
		gone := crdstore.ObjectName(endpoint.Key{Name: "gone.example.com", Type: "A"})
		err = plan(handOver(gone), a("app.example.com", "", "10.0.0.1"))
		if err == nil || !strings.Contains(err.Error(), "changed since the zone was read") {
			t.Fatalf("delete after a handover: err = %v, want a compare-and-swap failure", err)
		}
		// A create planned before another owner created the record's DNSRecord.
		fresh := crdstore.ObjectName(endpoint.Key{Name: "new.example.com", Type: "A"})
		err = plan(func() {
			w.v023(t, ns, fresh, "green", endpointSpec("new.example.com", "A", "", []any{"10.0.0.5"}, 300, "green", "service/default/new"), false)
		}, a("new.example.com", "", "10.9.9.9"))
		if err == nil || !strings.Contains(err.Error(), `created by owner "green"`) {
			t.Fatalf("create after another owner's: err = %v, want a compare-and-swap failure", err)
		}
		if after := w.zoneRecords(t); !slices.Equal(before, after) {
			t.Fatalf("zone changed although every write lost its compare-and-swap:\n%v\n%v", before, after)
		}
		for _, name := range []string{"app-example-com-ae3e8df6", gone, fresh} {
			if u := w.object(t, ns, name); u == nil || u.GetLabels()["externaldns.k8s.io/owner"] != "green" {
				t.Errorf("DNSRecord %s: %v, want green's, unchanged", name, u)
			}
		}
	})

	t.Run("a DNSRecord of this owner whose record is gone is taken over", func(t *testing.T) {
		const ns = "stale"
		w.fresh(t, ns)
		// Left behind by a delete whose DNSRecord could not be deleted.
		w.v023(t, ns, "app-example-com-ae3e8df6", "blue",
			endpointSpec("app.example.com", "A", "", []any{"10.0.0.1"}, 300, "blue", "service/default/app"), true)
		_, s := w.registry(t, ns, "blue")
		if rep := sync(t, s, a("app.example.com", "", "10.0.0.2")); rep.Err() != nil || summary(rep).Create != 1 {
			t.Fatalf("create over a stale DNSRecord: %+v %v", summary(rep), rep.Err())
		}
		u := w.object(t, ns, "app-example-com-ae3e8df6")
		if targets, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "endpoint", "targets"); !slices.Equal(targets, []string{"10.0.0.2"}) || readyReason(u) != "True/Programmed" {
			t.Errorf("DNSRecord: targets %v, Ready %s; want 10.0.0.2, True/Programmed", targets, readyReason(u))
		}
	})

	t.Run("a write the zone refused is not ownership", func(t *testing.T) {
		const ns = "refused"
		w.fresh(t, ns)
		p, s := w.registry(t, ns, "blue")
		reg, _ := registry.New(registry.Config{OwnerID: "blue"})
		cur, err := p.Records(t.Context(), w.zone)
		if err != nil {
			t.Fatal(err)
		}
		set := changes.Calculate(changes.Input{Desired: []*endpoint.Endpoint{a("app.example.com", "", "10.0.0.1")}, Current: cur, Registry: reg})
		// Someone else creates the record after the zone was read: Route 53 refuses the
		// CREATE.
		w.seed(t, a("app.example.com", "", "10.6.6.6"))
		if err := p.Apply(t.Context(), w.zone, set.Batches[0]); err == nil {
			t.Fatal("the zone took a CREATE of a record that exists")
		}
		u := w.object(t, ns, "app-example-com-ae3e8df6")
		if u == nil || readyReason(u) != "False/Failed" {
			t.Fatalf("DNSRecord after the refusal: %v, want Ready False/Failed", u)
		}
		// The DNSRecord names 10.0.0.1, the zone holds someone's 10.6.6.6: not blue's.
		rep := sync(t, s, a("app.example.com", "", "10.0.0.1"))
		if applied(rep) != 0 || len(rep.Conflicts()) != 1 {
			t.Fatalf("%d batches, conflicts %v: want the record left alone as not blue's", applied(rep), rep.Conflicts())
		}
		if rep := sync(t, s); applied(rep) != 0 {
			t.Fatalf("an empty sync deleted a record blue never wrote")
		}
		if got, want := w.zoneRecords(t), []string{"app.example.com A 10.6.6.6"}; !slices.Equal(got, want) {
			t.Fatalf("zone = %v, want %v", got, want)
		}
	})
}

// TestHandoverWithinCRDRegistry: `crossfade handover`'s code (internal/handover) over the
// CRD registry hands blue's records over to green by rewriting their DNSRecords' owner,
// each in one update; green's controller then adopts them with 0 changes, blue's no longer
// touches them, and another owner's record stays as it was.
func TestHandoverWithinCRDRegistry(t *testing.T) {
	const ns = "handover"
	w := newWorld(t)
	w.fresh(t, ns)
	w.seed(t, a("other.example.com", "", "10.0.0.9"))
	w.v023(t, ns, crdstore.ObjectName(endpoint.Key{Name: "other.example.com", Type: "A"}), "someone",
		endpointSpec("other.example.com", "A", "", []any{"10.0.0.9"}, 300, "someone", "service/default/other"), true)
	_, blue := w.registry(t, ns, "blue")
	want := []*endpoint.Endpoint{a("app.example.com", "", "10.0.0.1"), weighted(a("w.example.com", "blue", "10.0.0.2"), 10)}
	if rep := sync(t, blue, want...); rep.Err() != nil || summary(rep).Create != 2 {
		t.Fatalf("blue's sync: %+v %v", summary(rep), rep.Err())
	}
	before := w.zoneRecords(t)

	reg, err := registry.New(registry.Config{OwnerID: "green"})
	if err != nil {
		t.Fatal(err)
	}
	dns, err := crdstore.New(w.dns, crdstore.Config{REST: w.kc.Config(), Namespace: ns, Registry: reg, OnlyDNSRecords: true})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := handover.Run(t.Context(), dns, handover.Config{Zone: "example.com", From: "blue", To: "green"}, &out); err != nil {
		t.Fatalf("handover: %v\n%s", err, out.String())
	}
	for _, k := range []endpoint.Key{{Name: "app.example.com", Type: "A"}, {Name: "w.example.com", Type: "A", SetIdentifier: "blue"}} {
		u := w.object(t, ns, crdstore.ObjectName(k))
		labels, _, _ := unstructured.NestedStringMap(u.Object, "spec", "endpoint", "labels")
		if u.GetLabels()["externaldns.k8s.io/owner"] != "green" || labels["owner"] != "green" || readyReason(u) != "True/Programmed" {
			t.Errorf("DNSRecord of %s after the handover: owner label %q, spec owner %q, Ready %s; want green's, Programmed",
				k, u.GetLabels()["externaldns.k8s.io/owner"], labels["owner"], readyReason(u))
		}
	}
	if u := w.object(t, ns, crdstore.ObjectName(endpoint.Key{Name: "other.example.com", Type: "A"})); u.GetLabels()["externaldns.k8s.io/owner"] != "someone" {
		t.Errorf("another owner's DNSRecord was handed over: %v", u.GetLabels())
	}
	if after := w.zoneRecords(t); !slices.Equal(before, after) {
		t.Fatalf("the handover changed the zone:\n%v\n%v", before, after)
	}
	_, green := w.registry(t, ns, "green")
	if rep := sync(t, green, want...); summary(rep) != (changes.Summary{}) || applied(rep) != 0 || len(rep.Conflicts()) != 0 {
		t.Errorf("green after the handover: %+v, conflicts %v; want 0 changes", summary(rep), rep.Conflicts())
	}
	if rep := sync(t, blue, a("app.example.com", "", "10.6.6.6")); applied(rep) != 0 || len(rep.Conflicts()) != 1 {
		t.Errorf("blue after the handover: %d batches, conflicts %v; want its old record refused as green's", applied(rep), rep.Conflicts())
	}
}

// TestMoveBetweenRegistries: blue's zone moves from TXT ownership to DNSRecords and back,
// each record owned throughout (the new form written before the old one goes), and after
// each move blue's publisher on the new registry makes 0 changes. Green's TXT-owned record
// and a record whose DNSRecord is someone else's stay as they were.
func TestMoveBetweenRegistries(t *testing.T) {
	const ns = "move"
	w := newWorld(t)
	w.fresh(t, ns)
	txtReg, err := registry.New(registry.Config{OwnerID: "blue"})
	if err != nil {
		t.Fatal(err)
	}
	want := []*endpoint.Endpoint{a("app.example.com", "", "10.0.0.1"), weighted(a("w.example.com", "blue", "10.0.0.2"), 10),
		a("taken.example.com", "", "10.0.0.3")}
	txtSync := &controller.Syncer{Provider: w.dns, Registry: txtReg, Policy: changes.Sync}
	if rep := sync(t, txtSync, want...); rep.Err() != nil || summary(rep).Create != 3 {
		t.Fatalf("blue's TXT sync: %+v %v", summary(rep), rep.Err())
	}
	greenReg, _ := registry.New(registry.Config{OwnerID: "green"})
	if rep := sync(t, &controller.Syncer{Provider: w.dns, Registry: greenReg, Policy: changes.Sync}, a("green.example.com", "", "10.0.0.4")); rep.Err() != nil {
		t.Fatal(rep.Err())
	}
	taken := crdstore.ObjectName(endpoint.Key{Name: "taken.example.com", Type: "A"})
	w.v023(t, ns, taken, "someone", endpointSpec("taken.example.com", "A", "", []any{"10.0.0.3"}, 300, "someone", "service/x/y"), true)
	p, crdSync := w.registry(t, ns, "blue")

	moved, err := p.FromTXT(t.Context(), w.zone, txtReg, "blue")
	if err != nil {
		t.Fatal(err)
	}
	if len(moved.Records) != 2 || len(moved.Refused) != 1 || moved.Refused[0].Key.Name != "taken.example.com" {
		t.Fatalf("FromTXT: moved %v, refused %v; want app and w moved, taken refused", moved.Records, moved.Refused)
	}
	got := w.zoneRecords(t)
	for _, txt := range []string{"a-app.example.com TXT", "a-w.example.com TXT blue"} {
		if slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, txt+" ") }) {
			t.Errorf("%s still in the zone after FromTXT: %v", txt, got)
		}
	}
	for _, txt := range []string{"a-taken.example.com TXT", "a-green.example.com TXT"} {
		if !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, txt+" ") }) {
			t.Errorf("%s gone after FromTXT: %v", txt, got)
		}
	}
	if rep := sync(t, crdSync, want[:2]...); summary(rep) != (changes.Summary{}) || applied(rep) != 0 || len(rep.Conflicts()) != 0 {
		t.Errorf("blue on the CRD registry after FromTXT: %+v, conflicts %v; want 0 changes", summary(rep), rep.Conflicts())
	}

	back, err := p.ToTXT(t.Context(), w.zone, txtReg, "blue")
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Records) != 2 || len(back.Refused) != 0 {
		t.Fatalf("ToTXT: moved %v, refused %v; want app and w", back.Records, back.Refused)
	}
	for _, k := range []endpoint.Key{{Name: "app.example.com", Type: "A"}, {Name: "w.example.com", Type: "A", SetIdentifier: "blue"}} {
		if u := w.object(t, ns, crdstore.ObjectName(k)); u != nil {
			t.Errorf("DNSRecord of %s still there after ToTXT", k)
		}
	}
	if u := w.object(t, ns, taken); u == nil || u.GetLabels()["externaldns.k8s.io/owner"] != "someone" {
		t.Errorf("someone's DNSRecord changed: %v", u)
	}
	if rep := sync(t, txtSync, want...); summary(rep) != (changes.Summary{}) || applied(rep) != 0 || len(rep.Conflicts()) != 0 {
		t.Errorf("blue on the TXT registry after ToTXT: %+v, conflicts %v; want 0 changes", summary(rep), rep.Conflicts())
	}
}

// TestTwinZones: a DNSRecord names no zone. Where a public and a private zone share a
// name, an unpinned DNSRecord owns only the record holding its targets, and a pinned one
// (aws/hosted-zone-id) only the record of its zone: the twin's record of the same name,
// someone else's, is never taken for it.
func TestTwinZones(t *testing.T) {
	w := newWorld(t)
	for _, pinned := range []bool{false, true} {
		t.Run(fmt.Sprintf("pinned=%t", pinned), func(t *testing.T) {
			ns := fmt.Sprintf("twin-%t", pinned)
			w.fresh(t, ns)
			public := w.zone
			if _, _, err := w.sb.Store().CreateZone("example.com", "private", "", true); err != nil {
				t.Fatal(err)
			}
			zones, err := w.dns.Zones(t.Context())
			if err != nil || len(zones) != 2 {
				t.Fatalf("zones %v %v, want the public and the private example.com", zones, err)
			}
			private := zones[slices.IndexFunc(zones, func(z provider.Zone) bool { return z.ID != public.ID })]
			w.seed(t, a("app.example.com", "", "10.0.0.1"))
			w.zone = private
			w.seed(t, a("app.example.com", "", "10.6.6.6")) // someone else's, in the private zone
			w.zone = public
			var props []any
			if pinned {
				props = []any{prop("aws/hosted-zone-id", "/hostedzone/"+public.ID)}
			}
			// A pinned record's DNSRecord names the public zone's targets or not: the pin decides.
			targets := []any{"10.0.0.1"}
			if pinned {
				targets = []any{"10.0.0.6"}
			}
			w.v023(t, ns, "app-example-com-ae3e8df6", "blue", endpointSpec("app.example.com", "A", "", targets, 300, "blue", "service/default/app", props...), true)
			_, s := w.registry(t, ns, "blue")
			rep := sync(t, s, a("app.example.com", "", "10.0.0.1"))
			var conflicts []string
			for _, z := range rep.Zones {
				if z.Changes == nil {
					t.Fatalf("zone %s not planned: %v", z.Zone, z.Err)
				}
				for _, c := range z.Changes.Conflicts {
					conflicts = append(conflicts, z.Zone.ID+" "+c.Key.String())
				}
			}
			if applied(rep) != 0 || !slices.Equal(conflicts, []string{private.ID + " app.example.com A"}) {
				t.Fatalf("%d batches, conflicts %v: want the public record blue's as it is and the private one refused", applied(rep), conflicts)
			}
			w.zone = private
			if got := w.zoneRecords(t); !slices.Equal(got, []string{"app.example.com A 10.6.6.6"}) {
				t.Errorf("private zone = %v", got)
			}
		})
	}
}
