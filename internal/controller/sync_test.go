package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/provider/route53/route53test"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// env is a sandbox with one zone and a Route 53 provider on it through the real SDK.
type env struct {
	sb   *sandbox.Sandbox
	p    *route53.Provider
	zone provider.Zone
}

func newEnv(t *testing.T) *env {
	t.Helper()
	sb := sandboxtest.Start(t)
	z, _, err := sb.Store().CreateZone("example.com", "ref", "", false)
	if err != nil {
		t.Fatal(err)
	}
	p := route53test.New(t, sb)
	return &env{sb: sb, p: p, zone: provider.Zone{ID: z.ID, Name: "example.com"}}
}

func (e *env) syncer(t *testing.T, owner string, policy changes.Policy) *Syncer {
	t.Helper()
	reg, err := registry.New(registry.Config{OwnerID: owner})
	if err != nil {
		t.Fatal(err)
	}
	return &Syncer{Provider: e.p, Registry: reg, Policy: policy}
}

func (e *env) sync(t *testing.T, owner string, policy changes.Policy, desired ...*endpoint.Endpoint) *Report {
	t.Helper()
	return mustSync(t, e.syncer(t, owner, policy), owner, desired)
}

// mustSync syncs desired with s, as owner, failing the test on any error.
func mustSync(t *testing.T, s *Syncer, owner string, desired []*endpoint.Endpoint) *Report {
	t.Helper()
	rep, err := s.Sync(context.Background(), desired)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Err(); err != nil {
		t.Fatalf("sync as %s: %v", owner, err)
	}
	return rep
}

// state renders the zone's A and TXT record sets, sorted.
func (e *env) state(t *testing.T) []string {
	t.Helper()
	recs, err := e.p.Records(context.Background(), e.zone)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		if r.Type == "A" || r.Type == "TXT" {
			out = append(out, fmt.Sprintf("%s %s %s", r.Key(), r.Policy, strings.Join(r.Targets, ",")))
		}
	}
	slices.Sort(out)
	return out
}

// calls returns one operation's successful calls, from the sandbox's metrics.
func (e *env) calls(t *testing.T, op string) int {
	t.Helper()
	return sandboxtest.APICalls(t, e.sb)[op+" ok"]
}

func svc(name, ip, setID string, weight int64) *endpoint.Endpoint {
	e := &endpoint.Endpoint{Name: name, Type: "A", Targets: endpoint.NewTargets(ip), TTL: 60,
		Labels: endpoint.Labels{endpoint.ResourceLabel: "service/default/app"}}
	if setID != "" {
		e.SetIdentifier, e.Policy = setID, endpoint.WeightedPolicy(weight)
	}
	return e
}

func TestSyncSimpleToWeightedInOneCall(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sandbox")
	}
	e := newEnv(t)
	e.sync(t, "blue", changes.Sync, svc("app.example.com", "192.0.2.1", "", 0))
	before := e.calls(t, "ChangeResourceRecordSets")
	rep := e.sync(t, "blue", changes.UpsertOnly, svc("app.example.com", "192.0.2.1", "blue", 1))
	if got := e.calls(t, "ChangeResourceRecordSets") - before; got != 1 {
		t.Errorf("transition took %d ChangeResourceRecordSets calls, want 1", got)
	}
	if s := rep.Zones[0].Changes.Summary; s.Replace != 1 || s.Create != 1 {
		t.Errorf("summary %+v", s)
	}
	want := []string{
		`a-app.example.com TXT [blue] weighted(1) "heritage=external-dns,external-dns/owner=blue,external-dns/resource=service/default/app"`,
		"app.example.com A [blue] weighted(1) 192.0.2.1",
	}
	if got := e.state(t); !slices.Equal(got, want) {
		t.Errorf("zone:\n got %q\nwant %q", got, want)
	}
}

func TestSyncNeverTouchesUnowned(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sandbox")
	}
	e := newEnv(t)
	// A record written by hand: no ownership TXT.
	if err := e.p.Apply(context.Background(), e.zone, changes.Batch{{Action: changes.Create, Endpoint: svc("app.example.com", "192.0.2.9", "", 0)}}); err != nil {
		t.Fatal(err)
	}
	before := e.state(t)
	rep := e.sync(t, "blue", changes.Sync, svc("app.example.com", "192.0.2.1", "blue", 1))
	if got := e.state(t); !slices.Equal(got, before) {
		t.Errorf("zone changed:\n got %q\nwant %q", got, before)
	}
	c := rep.Conflicts()
	if len(c) != 1 || !strings.Contains(c[0].String(), "no owner") || !strings.Contains(c[0].Advice, "a-app.example.com") {
		t.Errorf("conflicts: %v", c)
	}
}

func TestSyncTwoOwnersEitherOrder(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sandbox")
	}
	for _, order := range [][]string{{"blue", "green"}, {"green", "blue"}} {
		t.Run(strings.Join(order, "-then-"), func(t *testing.T) {
			e := newEnv(t)
			ip := map[string]string{"blue": "192.0.2.1", "green": "192.0.2.2"}
			for _, o := range order {
				e.sync(t, o, changes.Sync, svc("app.example.com", ip[o], o, 1))
			}
			// Sync both again: a steady state deletes nothing and changes nothing.
			before := e.calls(t, "ChangeResourceRecordSets")
			for _, o := range order {
				rep := e.sync(t, o, changes.Sync, svc("app.example.com", ip[o], o, 1))
				if len(rep.Conflicts()) != 0 {
					t.Errorf("%s: conflicts %v", o, rep.Conflicts())
				}
			}
			if n := e.calls(t, "ChangeResourceRecordSets") - before; n != 0 {
				t.Errorf("steady state made %d change calls", n)
			}
			got := e.state(t)
			if len(got) != 4 || !strings.HasPrefix(got[2], "app.example.com A [blue] weighted(1) 192.0.2.1") || !strings.HasPrefix(got[3], "app.example.com A [green] weighted(1) 192.0.2.2") {
				t.Errorf("zone: %q", got)
			}
			// Green's cluster claiming blue's set identifier is a conflict, not an overwrite.
			// Its own member, its only record, goes on purpose: the deletion guard is told so.
			green := e.syncer(t, "green", changes.Sync)
			green.Guard.Allow = true
			rep, _ := green.Sync(context.Background(), []*endpoint.Endpoint{svc("app.example.com", "192.0.2.7", "blue", 1)})
			if c := rep.Conflicts(); len(c) != 1 || !strings.Contains(c[0].Reason, "owner blue") {
				t.Errorf("conflicts: %v", c)
			}
			// (Green's own member went: its source no longer asks for it.)
			if after := e.state(t); !slices.Equal(after, []string{got[0], got[2]}) {
				t.Errorf("blue's member changed: %q", after)
			}
		})
	}
}

func TestSyncPolicies(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sandbox")
	}
	e := newEnv(t)
	e.sync(t, "blue", changes.Sync, svc("app.example.com", "192.0.2.1", "blue", 1))
	e.sync(t, "green", changes.Sync, svc("app.example.com", "192.0.2.2", "green", 1))
	full := e.state(t)
	// The source disappears: upsert-only keeps the record.
	e.sync(t, "blue", changes.UpsertOnly)
	if got := e.state(t); !slices.Equal(got, full) {
		t.Errorf("upsert-only deleted: %q", got)
	}
	// sync deletes blue's member and TXT, and nothing of green's: all of blue's records,
	// which the deletion guard holds unless allowed (TestSyncDeleteGuard).
	blue := e.syncer(t, "blue", changes.Sync)
	blue.Guard.Allow = true
	rep, err := blue.Sync(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Err(); err != nil {
		t.Fatal(err)
	}
	got := e.state(t)
	if len(got) != 2 || !strings.Contains(got[0], "[green]") || !strings.Contains(got[1], "[green]") {
		t.Errorf("after sync: %q", got)
	}
}

// TestFirstSyncCallFloor counts the API calls of a first sync of 10,000 records: the
// floor is the list pages plus as few change batches as Route 53's limits allow.
func TestFirstSyncCallFloor(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sandbox")
	}
	e := newEnv(t)
	var desired []*endpoint.Endpoint
	for i := range 10_000 {
		d := svc(fmt.Sprintf("svc%05d.example.com", i), fmt.Sprintf("10.0.%d.%d", i/250, i%250+1), "", 0)
		d.Labels = endpoint.Labels{endpoint.ResourceLabel: fmt.Sprintf("service/default/svc%05d", i)}
		desired = append(desired, d)
	}
	rep := e.sync(t, "blue", changes.Sync, desired...)
	var records, chars int
	for _, b := range rep.Zones[0].Changes.Batches {
		r, c := changes.Route53Limits.BatchCost(b)
		records, chars = records+r, chars+c
	}
	floor := max((records+999)/1000, (chars+31999)/32000)
	changes := e.calls(t, "ChangeResourceRecordSets")
	lists := e.calls(t, "ListResourceRecordSets")
	t.Logf("10,000 records: %d changes (%d value chars): %d ChangeResourceRecordSets calls (floor %d), %d ListResourceRecordSets calls, %d ListHostedZones calls",
		records, chars, changes, floor, lists, e.calls(t, "ListHostedZones"))
	// Whole names per batch can waste at most one name's worth per batch.
	if changes > floor+1 {
		t.Errorf("%d change calls, floor %d", changes, floor)
	}
	if lists != 1 {
		t.Errorf("%d list calls on an empty zone, want 1", lists)
	}
}

// TestSyncAliasCNAME: a CNAME marked alias (what the alias annotation on a hostname
// target yields) is written as an alias A, owned under the cname- TXT as external-dns
// owns it, and a second sync finds nothing to change.
func TestSyncAliasCNAME(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sandbox")
	}
	e := newEnv(t)
	e.sync(t, "lb", changes.Sync, svc("lb.example.com", "192.0.2.7", "", 0))
	alias := &endpoint.Endpoint{Name: "app.example.com", Type: "CNAME", Targets: endpoint.NewTargets("lb.example.com"), TTL: 60,
		Labels: endpoint.Labels{endpoint.ResourceLabel: "service/default/app"}}
	alias.SetProp(endpoint.PropAlias, "true")
	e.sync(t, "blue", changes.Sync, alias)
	want := []string{
		"app.example.com A simple lb.example.com",
		`cname-app.example.com TXT simple "heritage=external-dns,external-dns/owner=blue,external-dns/resource=service/default/app"`,
	}
	got := e.state(t)
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("zone lacks %q:\n%q", w, got)
		}
	}
	rep := e.sync(t, "blue", changes.Sync, alias)
	if b := rep.Zones[0].Changes.Batches; len(b) != 0 {
		t.Errorf("second sync sends %v, want nothing", b)
	}
}
