package registry

import (
	"slices"
	"testing"

	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// TestIndexEach wants each called once with every record, ownership records included, in
// the order given and before any record is labelled, and the zone IndexEach returns to be
// Index's.
func TestIndexEach(t *testing.T) {
	reg, err := New(Config{OwnerID: "blue"})
	if err != nil {
		t.Fatal(err)
	}
	zone := func() []*endpoint.Endpoint {
		var out []*endpoint.Endpoint
		for _, name := range []string{"b.example.com", "a.example.com", "c.example.com"} {
			e := &endpoint.Endpoint{Name: name, Type: endpoint.TypeA, Targets: endpoint.Targets{"192.0.2.1"}}
			l := e.Clone()
			l.Labels = endpoint.Labels{endpoint.OwnerLabel: "blue", endpoint.ResourceLabel: "service/default/" + name}
			out = append(out, reg.For(l)...)
			out = append(out, e)
		}
		return append(out, &endpoint.Endpoint{Name: "a.example.com", Type: endpoint.TypeTXT, Targets: endpoint.Targets{`"v=spf1 -all"`}})
	}
	records := zone()
	var seen []*endpoint.Endpoint
	got := reg.IndexEach(records, func(e *endpoint.Endpoint) {
		if e.Owner() != "" {
			t.Errorf("each saw %s already labelled (owner %q)", e.Key(), e.Owner())
		}
		seen = append(seen, e)
	})
	if !slices.Equal(seen, records) {
		t.Fatalf("each saw %d records %v, want the %d given in order", len(seen), seen, len(records))
	}
	want := reg.Index(zone())
	if len(got.Records) != len(want.Records) {
		t.Fatalf("IndexEach kept %d records, Index %d", len(got.Records), len(want.Records))
	}
	for i := range got.Records {
		if g, w := got.Records[i], want.Records[i]; g.Key() != w.Key() || g.Owner() != w.Owner() || g.Resource() != w.Resource() {
			t.Errorf("record %d: IndexEach %s owner %q resource %q, Index %s owner %q resource %q", i, g.Key(), g.Owner(), g.Resource(), w.Key(), w.Owner(), w.Resource())
		}
	}
	if got.Records[0].Owner() != "blue" {
		t.Errorf("IndexEach left %s unlabelled", got.Records[0].Key())
	}
}
