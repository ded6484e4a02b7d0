package controller

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsr53 "github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/aws-sdk-go-v2/service/route53/types"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/provider/route53/route53test"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// racingProvider runs once, between a sync's listing of a zone and its first write, what
// another writer does to the zone meanwhile.
type racingProvider struct {
	provider.Provider
	once  sync.Once
	other func()
}

func (r *racingProvider) Records(ctx context.Context, z provider.Zone) ([]*endpoint.Endpoint, error) {
	recs, err := r.Provider.Records(ctx, z)
	r.once.Do(r.other)
	return recs, err
}

// TestRefusedNamesDoNotBlockTheZone: a zone of 500 names, 3 of them poisoned three ways:
// a change that cannot be built (an alias whose target no zone holds), a change Route 53
// refuses without naming it (an alias to a missing target), and a stale change (another
// writer changed the record after the sync listed it, so the compare-and-swap's DELETE does
// not match). The 497 land in the same sync, the 3 are reported by record, object and
// reason, the other writer's value stands, and the next sync refuses only the 3 again.
func TestRefusedNamesDoNotBlockTheZone(t *testing.T) {
	e := newEnv(t)
	res := func(n string) endpoint.Labels { return endpoint.Labels{endpoint.ResourceLabel: "service/default/" + n} }
	stale := &endpoint.Endpoint{Name: "stale.example.com", Type: "A", Targets: endpoint.NewTargets("192.0.2.1"), Labels: res("stale")}
	e.sync(t, "blue", changes.Sync, stale)

	var desired []*endpoint.Endpoint
	for i := range 497 {
		n := fmt.Sprintf("n%03d", i)
		desired = append(desired, &endpoint.Endpoint{Name: n + ".example.com", Type: "A", Targets: endpoint.NewTargets(fmt.Sprintf("198.51.100.%d", i%250+1)), Labels: res(n)})
	}
	unbuildable := &endpoint.Endpoint{Name: "nowhere.example.com", Type: "A", Targets: endpoint.NewTargets("lb.nowhere.test"), Labels: res("nowhere")}
	unbuildable.SetProp(endpoint.PropAlias, "true")
	missing := &endpoint.Endpoint{Name: "dangling.example.com", Type: "A", Targets: endpoint.NewTargets("missing.example.com"), Labels: res("dangling")}
	missing.SetProp(endpoint.PropAlias, "true")
	moved := stale.Clone()
	moved.Targets = endpoint.NewTargets("192.0.2.2")
	desired = append(desired, unbuildable, missing, moved)

	other := func() {
		// Another writer moves the record after the sync listed it.
		_, err := route53test.Client(e.sb).ChangeResourceRecordSets(context.Background(), &awsr53.ChangeResourceRecordSetsInput{
			HostedZoneId: aws.String(e.zone.ID),
			ChangeBatch: &types.ChangeBatch{Changes: []types.Change{{Action: types.ChangeActionUpsert, ResourceRecordSet: &types.ResourceRecordSet{
				Name: aws.String("stale.example.com."), Type: types.RRTypeA, TTL: aws.Int64(300),
				ResourceRecords: []types.ResourceRecord{{Value: aws.String("192.0.2.99")}},
			}}}},
		})
		if err != nil {
			t.Errorf("other writer: %v", err)
		}
	}
	s := e.syncer(t, "blue", changes.Sync)
	s.Provider = &racingProvider{Provider: e.p, other: other}
	before := sandboxtest.APICalls(t, e.sb)
	rep, err := s.Sync(context.Background(), desired)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Err(); err != nil {
		t.Fatalf("a refusal is not a zone error: %v", err)
	}
	after := sandboxtest.APICalls(t, e.sb)
	sent := changeCalls(after) - changeCalls(before)
	z := rep.Zones[0]
	t.Logf("500 names, 3 poisoned: %d planned batches, %d ChangeResourceRecordSets calls (%d accepted)", len(z.Changes.Batches), sent, z.Applied)

	state := e.state(t)
	for _, d := range desired[:497] {
		if !containsPrefix(state, d.Name+" A simple "+d.Targets[0]) {
			t.Errorf("%s did not land", d.Name)
		}
	}
	for _, gone := range []string{"nowhere.example.com A", "dangling.example.com A"} {
		if containsPrefix(state, gone) {
			t.Errorf("%s was written", gone)
		}
	}
	if !containsPrefix(state, "stale.example.com A simple 192.0.2.99") {
		t.Errorf("the other writer's value of stale.example.com was overwritten: %q", state)
	}
	wantRefused := map[string]string{
		"nowhere.example.com A":  "service/default/nowhere",
		"dangling.example.com A": "service/default/dangling",
		"stale.example.com A":    "service/default/stale",
	}
	if len(z.Refused) != len(wantRefused) {
		t.Fatalf("refused: got %d, want 3: %v", len(z.Refused), z.Refused)
	}
	for _, c := range z.Refused {
		obj, ok := wantRefused[c.Key.String()]
		if !ok || !strings.Contains(c.Reason, obj) {
			t.Errorf("refusal %q: want one of %v, naming its object", c, wantRefused)
		}
	}
	for _, want := range []string{"no single known hosted zone holds it", "target was not found", "values provided do not match"} {
		if !strings.Contains(fmt.Sprint(z.Refused), want) {
			t.Errorf("no refusal says %q: %v", want, z.Refused)
		}
	}
	// Near the floor: the planned batches, plus about two calls per bad name (the rest
	// again, the bad name alone), not a halving down to each one (35 calls here).
	if max := len(z.Changes.Batches) + 2*3; sent > max {
		t.Errorf("%d calls to write 500 names with 3 bad ones; want at most %d", sent, max)
	}

	// The next sync refuses the two that are still bad and, the record being blue's,
	// converges the stale one from what it now reads.
	rep = e.sync(t, "blue", changes.Sync, desired...)
	if got := rep.Zones[0].Refused; len(got) != 2 || rep.Zones[0].Applied != 1 {
		t.Errorf("second sync: refused %v, applied %d; want 2 refused and the stale name written", got, rep.Zones[0].Applied)
	}
	if !containsPrefix(e.state(t), "stale.example.com A simple 192.0.2.2") {
		t.Errorf("second sync did not converge stale.example.com")
	}
}

func changeCalls(m map[string]int) int {
	n := 0
	for k, v := range m {
		if strings.HasPrefix(k, "ChangeResourceRecordSets ") {
			n += v
		}
	}
	return n
}

func containsPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

// TestNamedUnits: the units a refusal's messages name, by Route 53's quoting, and no
// unit whose name only ends like a named one.
func TestNamedUnits(t *testing.T) {
	unit := func(name string) changes.Unit {
		return changes.Unit{Name: name, Changes: []changes.Change{{Action: changes.Create, Endpoint: &endpoint.Endpoint{Name: name, Type: "A"}}}}
	}
	units := []changes.Unit{unit("www.example.com"), unit("b.example.com"), unit("*.example.com"), unit("x.example.com")}
	tests := []struct {
		msg  string
		want []string
	}{
		{"Tried to create resource record set [name='www.example.com.', type='A'] but it already exists", []string{"www.example.com"}},
		{"RRSet with DNS name b.example.com., type A cannot be created", []string{"b.example.com"}},
		{"RRSet with DNS name ab.example.com., type A cannot be created", nil},
		{"Tried to delete resource record set [name='\\052.example.com.', type='A'] but it was not found", []string{"*.example.com"}},
		{"Tried to create an alias that targets missing.example.com., type A in zone Z1, but that target was not found", nil},
		{"RRSet with DNS name x.example.com., type A cannot be created", []string{"x.example.com"}},
	}
	for _, tt := range tests {
		hit, rest := named(units, []string{tt.msg})
		var got []string
		for _, u := range hit {
			got = append(got, u.Name)
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) || len(hit)+len(rest) != len(units) {
			t.Errorf("%q: named %v, want %v", tt.msg, got, tt.want)
		}
	}
	if got := unitAt([]changes.Unit{{Changes: make([]changes.Change, 2)}, {Changes: make([]changes.Change, 3)}}, 2); got != 1 {
		t.Errorf("unitAt(2) = %d, want 1", got)
	}
}
