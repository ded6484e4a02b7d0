package route53

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// zoneOf is a zone as read with n names, each with an owned blue (at 100) and green (at
// 0) member and its authority record missing: what a first step writes.
func zoneOf(n int) *live {
	me := registry.Runner{Token: "t1", Host: "h", PID: 1}
	l := &live{zone: provider.Zone{Name: "example.com", ID: "Z1"}}
	for i := range n {
		name := fmt.Sprintf("app%d.example.com", i)
		r := spec.Record{Name: name, Type: "A"}
		for _, m := range []struct {
			id, ip string
			w      int64
		}{{"blue", "127.0.0.10", 100}, {"green", "127.0.0.20", 0}} {
			ep := &endpoint.Endpoint{Name: name, Type: "A", SetIdentifier: m.id, Targets: endpoint.Targets{m.ip}, TTL: 60,
				Policy: endpoint.WeightedPolicy(m.w), Labels: endpoint.Labels{endpoint.OwnerLabel: m.id}}
			txt := &endpoint.Endpoint{Name: "a-" + name, Type: "TXT", SetIdentifier: m.id, TTL: 300,
				Targets: endpoint.Targets{`"heritage=external-dns,external-dns/owner=` + m.id + `"`}, Policy: endpoint.WeightedPolicy(m.w)}
			l.members = append(l.members, member{record: r, setID: m.id, ep: ep, txt: []*endpoint.Endpoint{txt}})
		}
		l.authority = append(l.authority, registry.Authority{Name: name, Cutover: "app", Types: []string{"A"}, Runner: me}.Record())
		l.current = append(l.current, nil)
		l.authorityOf = append(l.authorityOf, name)
	}
	l.measure()
	return l
}

// TestSplitKeepsEachNameWhole: a zone whose batch exceeds the limits is split between
// names into as few batches as hold them, each within the limits, each name's members,
// ownership records and authority record in one batch; a zone within them is one batch,
// exactly the batch of the lever of one zone.
func TestSplitKeepsEachNameWhole(t *testing.T) {
	c := lever.Change{Weights: map[string]int64{"blue": 0, "green": 100}}
	// Each name's first step: its authority record, and a DELETE and a CREATE of each
	// member and of its ownership record: 9 values.
	for _, tc := range []struct {
		name         string
		names, limit int
		want         int
	}{
		{"within the limits", 6, 1000, 1},
		{"two names a batch", 6, 20, 3},
		{"one name a batch", 3, 9, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := zoneOf(tc.names)
			lim := changes.Limits{MaxRecords: tc.limit}
			d := &fleetLever{p: &spec.Plan{Name: "app", From: "blue", To: "green"}, limits: lim}
			units, err := d.split(compose([]*live{l}), c)
			if err != nil {
				t.Fatal(err)
			}
			if len(units) != tc.want {
				t.Fatalf("%d batches, want %d", len(units), tc.want)
			}
			if tc.want == 1 && render(units[0].l.batch(c.Weights, c.TTLs)) != render(l.batch(c.Weights, c.TTLs)) {
				t.Errorf("a zone within the limits: the batch differs from the single zone's")
			}
			seen := map[string]int{}
			for i, u := range units {
				b := u.l.batch(c.Weights, c.TTLs)
				if n, chars := lim.BatchCost(b); !lim.Fits(n, chars) {
					t.Errorf("batch %d: %d values, over the limit %d", i, n, tc.limit)
				}
				names := map[string]bool{}
				for _, ch := range b {
					name := strings.TrimPrefix(ch.Endpoint.Name, "a-")
					if registry.IsAuthorityName(ch.Endpoint.Name) {
						a, _ := registry.ParseAuthority(ch.Endpoint)
						name = a.Name
					}
					names[name] = true
				}
				for name := range names {
					seen[name]++
				}
				// Per name: the authority CREATE, and DELETE+CREATE of 2 members and 2 TXT.
				if got := len(b); got != 9*len(names) {
					t.Errorf("batch %d: %d changes for %d names, want 9 a name:\n%s", i, got, len(names), render(b))
				}
				for name := range names {
					if !slices.ContainsFunc(b, func(ch changes.Change) bool {
						a, ok := registry.ParseAuthority(ch.Endpoint)
						return ok && a.Name == name && ch.Action == changes.Create
					}) {
						t.Errorf("batch %d: no authority record for %s: its batch must be a compare-and-swap with a change of its own", i, name)
					}
				}
			}
			if len(seen) != tc.names {
				t.Errorf("names written: %v, want all %d", seen, tc.names)
			}
			for name, n := range seen {
				if n != 1 {
					t.Errorf("%s in %d batches, want one", name, n)
				}
			}
		})
	}
	// A name too big for any batch is refused, naming it.
	d := &fleetLever{p: &spec.Plan{Name: "app"}, limits: changes.Limits{MaxRecords: 8}}
	if _, err := d.split(compose([]*live{zoneOf(2)}), c); err == nil || !strings.Contains(err.Error(), "zone example.com: the 9 changes of app0.example.com") {
		t.Errorf("a name over the limits: %v", err)
	}
}
