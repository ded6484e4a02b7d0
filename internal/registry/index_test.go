package registry

import (
	"maps"
	"testing"

	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// indexZone is a zone with every form of ownership Read knows: the type-prefixed and the
// legacy form, a weighted member's, an alias A's under both forms, a TXT record that is
// not an ownership record, and another heritage's.
func indexZone() []*endpoint.Endpoint {
	p := func(owner string) endpoint.Targets {
		return endpoint.Targets{Payload(endpoint.Labels{"owner": owner, "resource": "service/default/app", "crossfade-wants-ttl": "60"})}
	}
	return []*endpoint.Endpoint{
		{Name: "new.example.com", Type: "A", Targets: endpoint.Targets{"192.0.2.1"}, Labels: endpoint.Labels{"stale": "x"}},
		{Name: "a-new.example.com", Type: "TXT", Targets: p("blue")},
		{Name: "legacy.example.com", Type: "A", Targets: endpoint.Targets{"192.0.2.2"}},
		{Name: "legacy.example.com", Type: "TXT", Targets: p("green")},
		{Name: "legacy.example.com", Type: "AAAA", Targets: endpoint.Targets{"2001:db8::1"}},
		{Name: "w.example.com", Type: "A", SetIdentifier: "blue", Policy: endpoint.WeightedPolicy(1), Targets: endpoint.Targets{"192.0.2.3"}},
		{Name: "w.example.com", Type: "A", SetIdentifier: "green", Policy: endpoint.WeightedPolicy(1), Targets: endpoint.Targets{"192.0.2.4"}},
		{Name: "a-w.example.com", Type: "TXT", SetIdentifier: "green", Policy: endpoint.WeightedPolicy(1), Targets: p("green")},
		{Name: "alias.example.com", Type: "A", Targets: endpoint.Targets{"lb.example.net"}, ProviderSpecific: map[string]string{"alias": "true"}},
		{Name: "cname-alias.example.com", Type: "TXT", Targets: p("blue")},
		{Name: "a-alias.example.com", Type: "TXT", Targets: p("blue")},
		{Name: "spf.example.com", Type: "TXT", Targets: endpoint.Targets{`"v=spf1 -all"`}},
		{Name: "a-other.example.com", Type: "TXT", Targets: endpoint.Targets{`"heritage=other,external-dns/owner=blue"`}},
		{Name: "other.example.com", Type: "A", Targets: endpoint.Targets{"192.0.2.5"}},
	}
}

func cloneZone(in []*endpoint.Endpoint) []*endpoint.Endpoint {
	out := make([]*endpoint.Endpoint, len(in))
	for i, e := range in {
		out[i] = e.Clone()
	}
	return out
}

// TestIndexReadsAsRead wants Index to see the zone exactly as Read does (the same
// records, owners, labels, legacy-only and other-form ownership records) under every
// affix configuration, without a map of labels per owned record.
func TestIndexReadsAsRead(t *testing.T) {
	for _, cfg := range []Config{
		{OwnerID: "blue"},
		{OwnerID: "blue", Prefix: "txt."},
		{OwnerID: "blue", Prefix: "%{record_type}-"},
		{OwnerID: "blue", Suffix: "-txt"},
	} {
		reg, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		zone := indexZone()
		if cfg.Prefix != "" || cfg.Suffix != "" {
			// Rename the zone's ownership records as this configuration writes them.
			for _, e := range zone {
				if e.Type == "TXT" && ownershipName(e.Name) {
					name, typ, _ := newNameMapper("", "", "").recordName(e.Name)
					if typ == "" {
						e.Name = reg.mapper.legacyName(name)
					} else {
						e.Name = reg.mapper.txtName(name, typ)
					}
				}
			}
		}
		read, index := reg.Read(cloneZone(zone)), reg.Index(cloneZone(zone))
		if len(read.Records) != len(index.Records) {
			t.Fatalf("%+v: Read has %d records, Index %d", cfg, len(read.Records), len(index.Records))
		}
		owned := 0
		for i, r := range read.Records {
			x := index.Records[i]
			if r.Key() != x.Key() {
				t.Fatalf("%+v: record %d is %s after Read, %s after Index", cfg, i, r.Key(), x.Key())
			}
			if !maps.Equal(r.Labels, x.AllLabels()) || r.Owner() != x.Owner() || r.Resource() != x.Resource() {
				t.Errorf("%+v: %s labelled %v by Read, %v by Index", cfg, r.Key(), r.Labels, x.AllLabels())
			}
			if x.Owner() != "" {
				owned++
				if x.Labels != nil {
					t.Errorf("%+v: Index built labels for %s: %v", cfg, x.Key(), x.Labels)
				}
			}
		}
		if owned < 4 {
			t.Errorf("%+v: only %d owned records: the zone does not test what it should", cfg, owned)
		}
		if !maps.Equal(read.LegacyOnly, index.LegacyOnly) {
			t.Errorf("%+v: LegacyOnly %v after Read, %v after Index", cfg, read.LegacyOnly, index.LegacyOnly)
		}
		if len(read.Other) != len(index.Other) {
			t.Errorf("%+v: Other %v after Read, %v after Index", cfg, read.Other, index.Other)
		}
		for k, o := range read.Other {
			if x := index.Other[k]; x == nil || x.Key() != o.Key() {
				t.Errorf("%+v: Other[%s] = %v after Read, %v after Index", cfg, k, o, x)
			}
		}
	}
}

// ownershipName is true for the test zone's ownership record names.
func ownershipName(name string) bool {
	switch name {
	case "a-new.example.com", "legacy.example.com", "a-w.example.com", "cname-alias.example.com", "a-alias.example.com":
		return true
	}
	return false
}

// TestLastOwnershipRecordWins: where two ownership records speak for one record (names
// that differ in case only), the one listed last owns it, as the index's map says, even
// where the one listed first sits where the next record looks first (Zone.unique).
func TestLastOwnershipRecordWins(t *testing.T) {
	reg, err := New(Config{OwnerID: "blue"})
	if err != nil {
		t.Fatal(err)
	}
	p := func(owner string) endpoint.Targets {
		return endpoint.Targets{Payload(endpoint.Labels{"owner": owner})}
	}
	zone := func() []*endpoint.Endpoint {
		return []*endpoint.Endpoint{
			{Name: "a-app.example.com", Type: "TXT", Targets: p("green")},
			{Name: "A-APP.example.com", Type: "TXT", Targets: p("blue")},
			{Name: "app.example.com", Type: "A", Targets: endpoint.Targets{"192.0.2.1"}},
			{Name: "a-b.example.com", Type: "TXT", Targets: p("green")},
			{Name: "b.example.com", Type: "A", Targets: endpoint.Targets{"192.0.2.2"}},
		}
	}
	for name, read := range map[string]func([]*endpoint.Endpoint) Zone{"Read": reg.Read, "Index": reg.Index} {
		z := read(zone())
		got := map[string]string{}
		for _, r := range z.Records {
			got[r.Name] = r.Owner()
		}
		if got["app.example.com"] != "blue" || got["b.example.com"] != "green" {
			t.Errorf("%s: owners %v, want app.example.com blue (the last of its two ownership records) and b.example.com green", name, got)
		}
	}
}

// TestOwnershipInOrder reads zones whose ownership records come in the order of the
// records they speak for (searched without a map) with the records in every order, so
// that each lookup either finds the entry after the last one found or searches.
func TestOwnershipInOrder(t *testing.T) {
	reg, err := New(Config{OwnerID: "blue"})
	if err != nil {
		t.Fatal(err)
	}
	p := func(owner string) endpoint.Targets {
		return endpoint.Targets{Payload(endpoint.Labels{"owner": owner})}
	}
	txt := []*endpoint.Endpoint{
		{Name: "a-a.example.com", Type: "TXT", Targets: p("a")},
		{Name: "b.example.com", Type: "TXT", Targets: p("b-legacy")},
		{Name: "a-c.example.com", Type: "TXT", Targets: p("c")},
		{Name: "a-d.example.com", Type: "TXT", SetIdentifier: "x", Targets: p("dx")},
		{Name: "a-d.example.com", Type: "TXT", SetIdentifier: "y", Targets: p("dy")},
	}
	recs := []*endpoint.Endpoint{
		{Name: "a.example.com", Type: "A", Targets: endpoint.Targets{"192.0.2.1"}},
		{Name: "b.example.com", Type: "A", Targets: endpoint.Targets{"192.0.2.2"}},
		{Name: "bb.example.com", Type: "A", Targets: endpoint.Targets{"192.0.2.3"}},
		{Name: "c.example.com", Type: "A", Targets: endpoint.Targets{"192.0.2.4"}},
		{Name: "c.example.com", Type: "AAAA", Targets: endpoint.Targets{"2001:db8::1"}},
		{Name: "d.example.com", Type: "A", SetIdentifier: "x", Targets: endpoint.Targets{"192.0.2.5"}},
		{Name: "d.example.com", Type: "A", SetIdentifier: "y", Targets: endpoint.Targets{"192.0.2.6"}},
		{Name: "d.example.com", Type: "A", SetIdentifier: "z", Targets: endpoint.Targets{"192.0.2.7"}},
	}
	want := map[string]string{
		"a.example.com A": "a", "b.example.com A": "b-legacy", "bb.example.com A": "", "c.example.com A": "c",
		"c.example.com AAAA": "", "d.example.com A [x]": "dx", "d.example.com A [y]": "dy", "d.example.com A [z]": "",
	}
	for _, order := range [][]int{{0, 1, 2, 3, 4, 5, 6, 7}, {7, 6, 5, 4, 3, 2, 1, 0}, {3, 0, 6, 1, 7, 2, 5, 4}} {
		zone := cloneZone(txt)
		for _, i := range order {
			zone = append(zone, recs[i].Clone())
		}
		z := reg.Index(zone)
		if z.owners != nil {
			t.Fatalf("order %v: the ownership records are in order, yet indexed in a map", order)
		}
		for _, r := range z.Records {
			if got := r.Owner(); got != want[r.Key().String()] {
				t.Errorf("order %v: %s owned by %q, want %q", order, r.Key(), got, want[r.Key().String()])
			}
		}
		if !z.LegacyOnly[endpoint.Key{Name: "b.example.com", Type: "A"}] || len(z.LegacyOnly) != 1 {
			t.Errorf("order %v: LegacyOnly = %v, want b.example.com A", order, z.LegacyOnly)
		}
		if got := z.TXT(endpoint.Key{Name: "a-d.example.com", Type: "TXT", SetIdentifier: "y"}); got == nil || got.SetIdentifier != "y" {
			t.Errorf("order %v: TXT lookup of a-d.example.com [y] = %v", order, got)
		}
	}
}
