package crdstore_test

import (
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/registry/crdstore"
)

// TestConflictAdviceUnderCRDRegistry: a conflict planned through the CRD registry's
// planner registry (Provider.Registry) tells how to take the record over there (a
// handover within the CRD registry, or the DNSRecord to create), never an ownership TXT
// record to write, which this registry does not read.
func TestConflictAdviceUnderCRDRegistry(t *testing.T) {
	const ns = "advice"
	w := newWorld(t)
	w.fresh(t, ns)
	w.seed(t, a("manual.example.com", "", "10.0.0.5"), &endpoint.Endpoint{Name: "cname.example.com", Type: "CNAME", Targets: endpoint.Targets{"x.example.net"}, TTL: 300})
	w.v023(t, ns, crdstore.ObjectName(endpoint.Key{Name: "green.example.com", Type: "A"}), "green",
		endpointSpec("green.example.com", "A", "", []any{"10.0.0.9"}, 300, "green", "service/default/green"), true)
	w.seed(t, a("green.example.com", "", "10.0.0.9"))
	p, _ := w.registry(t, ns, "blue")
	current, err := p.Records(t.Context(), w.zone)
	if err != nil {
		t.Fatal(err)
	}
	set := changes.Calculate(changes.Input{Registry: p.Registry(), Current: current, Desired: []*endpoint.Endpoint{
		a("green.example.com", "", "10.0.0.1"), a("manual.example.com", "", "10.0.0.1"), a("cname.example.com", "", "10.0.0.1")}})
	for _, tc := range []struct {
		name string
		want string
	}{
		{"green.example.com", "hand it over (`crossfade handover --registry crd --crd-registry-namespace advice --from green --to blue`, which rewrites its DNSRecord advice/" +
			crdstore.ObjectName(endpoint.Key{Name: "green.example.com", Type: "A"})},
		{"manual.example.com", "adopt it: create its DNSRecord advice/" + crdstore.ObjectName(endpoint.Key{Name: "manual.example.com", Type: "A"}) +
			" with label externaldns.k8s.io/owner=blue"},
		{"cname.example.com", "to convert it, either adopt it: create its DNSRecord advice/" + crdstore.ObjectName(endpoint.Key{Name: "cname.example.com", Type: "CNAME"})},
	} {
		var got *changes.Conflict
		for i, c := range set.Conflicts {
			if c.Key.Name == tc.name {
				got = &set.Conflicts[i]
			}
		}
		switch {
		case got == nil:
			t.Errorf("%s: no conflict in %v", tc.name, set.Conflicts)
		case !strings.Contains(got.Advice, tc.want) || strings.Contains(got.Advice, "TXT a-"):
			t.Errorf("%s: advice %q, want it to say %q and name no ownership TXT record", tc.name, got.Advice, tc.want)
		}
	}
	// The TXT registry's advice is unchanged.
	reg, err := registry.New(registry.Config{OwnerID: "blue"})
	if err != nil {
		t.Fatal(err)
	}
	set = changes.Calculate(changes.Input{Registry: reg, Current: current, Desired: []*endpoint.Endpoint{a("manual.example.com", "", "10.0.0.1")}})
	if len(set.Conflicts) != 1 || !strings.Contains(set.Conflicts[0].Advice, "its owner writes TXT a-manual.example.com with owner=blue") {
		t.Errorf("TXT registry: conflicts %v, want the TXT advice", set.Conflicts)
	}
}
