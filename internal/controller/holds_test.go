package controller

import (
	"context"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/plan"
	"github.com/crossfade-io/crossfade/internal/provider/cache"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// probeCounts counts a prober's results.
type probeCounts struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *probeCounts) observe(r string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[r]++
}

func (c *probeCounts) get(r string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[r]
}

// TestHoldProber: blue publishes a weighted member through a zone cache. A cutover then
// takes hold of the name; the cached listing does not show it, but a probe of the
// sandbox's name server does: the zone is invalidated, once, and the next sync (which
// lists the zone) confirms the hold in the member's ownership record. Probes that agree
// with the listing invalidate nothing; a release is noticed alike. A simple record alone
// is never probed; a server that does not answer is counted as an error and changes
// nothing.
func TestHoldProber(t *testing.T) {
	e := newEnv(t)
	reg, err := registry.New(registry.Config{OwnerID: "blue"})
	if err != nil {
		t.Fatal(err)
	}
	zones := cache.New(e.p, cache.Config{})
	s := &Syncer{Provider: zones, Registry: reg, Policy: plan.Sync}
	member := &endpoint.Endpoint{Name: "app.example.com", Type: "A", Targets: endpoint.Targets{"192.0.2.1"}, TTL: 60,
		SetIdentifier: "blue", Policy: endpoint.WeightedPolicy(100), Labels: endpoint.Labels{endpoint.ResourceLabel: "service/default/app"}}
	simple := &endpoint.Endpoint{Name: "www.example.com", Type: "A", Targets: endpoint.Targets{"192.0.2.2"}, TTL: 60,
		Labels: endpoint.Labels{endpoint.ResourceLabel: "service/default/www"}}
	var counts probeCounts
	var invalidated []string
	pr := NewHoldProber(HoldProbeConfig{Servers: []string{e.sb.DNSAddr()}, Observe: counts.observe,
		Invalidate: func(id string) { invalidated = append(invalidated, id); zones.Invalidate(id) }})
	sync := func(desired ...*endpoint.Endpoint) *Report {
		t.Helper()
		rep, err := s.Sync(context.Background(), desired)
		if err != nil || rep.Err() != nil {
			t.Fatalf("sync: %v %v", err, rep.Err())
		}
		pr.Track(rep)
		return rep
	}
	ctx := context.Background()

	sync(simple)
	if n := pr.Watched(); n != 0 {
		t.Fatalf("a zone with a simple record only: %d names probed, want none", n)
	}
	if got := pr.ProbeOnce(ctx); len(got) != 0 || counts.get(ProbeSame)+counts.get(ProbeError) != 0 {
		t.Fatalf("probed a zone with no weighted record: %v %v", got, counts.n)
	}

	sync(simple, member)
	if n := pr.Watched(); n != 1 {
		t.Fatalf("names probed %d, want app.example.com", n)
	}
	if got := pr.ProbeOnce(ctx); len(got) != 0 || counts.get(ProbeSame) != 1 {
		t.Fatalf("no hold, none known: invalidated %v, counts %v", got, counts.n)
	}

	// A cutover takes hold, behind the cache's back.
	hold := registry.Authority{Name: "app.example.com", Cutover: "shop", Types: []string{"A"}, Runner: registry.Runner{Token: "t0k3n", Host: "ci"}}.Record()
	if err := e.p.Apply(ctx, e.zone, plan.Batch{{Action: plan.Create, Endpoint: hold}}); err != nil {
		t.Fatal(err)
	}
	if rep := sync(simple, member); len(rep.Zones[0].Plan.Batches) != 0 {
		t.Fatalf("the cached zone already shows the hold: %v", rep.Zones[0].Plan.Batches)
	}
	if got := pr.ProbeOnce(ctx); !slices.Equal(got, []string{e.zone.ID}) || counts.get(ProbeChanged) != 1 {
		t.Fatalf("hold appeared: invalidated %v, counts %v; want the zone invalidated", got, counts.n)
	}
	select {
	case <-pr.Changed():
	default:
		t.Error("the prober did not say a reconcile is due")
	}
	if got := pr.ProbeOnce(ctx); len(got) != 0 {
		t.Errorf("the same answer invalidated the zone again before a listing: %v", got)
	}
	sync(simple, member)
	txt := ownership(t, e, "a-app.example.com")
	if !strings.Contains(txt, endpoint.ConfirmsHoldLabel+"=t0k3n") {
		t.Fatalf("ownership record after the listing %q, want the hold confirmed", txt)
	}
	if got := pr.ProbeOnce(ctx); len(got) != 0 {
		t.Errorf("probe agreeing with the listing invalidated %v", got)
	}

	// The cutover lets go: noticed alike, and the confirmation is dropped.
	if err := e.p.Apply(ctx, e.zone, plan.Batch{{Action: plan.Delete, Endpoint: hold}}); err != nil {
		t.Fatal(err)
	}
	if got := pr.ProbeOnce(ctx); len(got) != 1 {
		t.Fatalf("hold released: invalidated %v, want the zone", got)
	}
	sync(simple, member)
	if txt := ownership(t, e, "a-app.example.com"); strings.Contains(txt, endpoint.ConfirmsHoldLabel) {
		t.Errorf("ownership record after the release %q, want no confirmation", txt)
	}

	// A name server that does not answer: counted, nothing invalidated.
	ln, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dead := NewHoldProber(HoldProbeConfig{Servers: []string{ln.LocalAddr().String()}, Timeout: 50e6, Observe: counts.observe,
		Invalidate: func(id string) { t.Errorf("a failed probe invalidated zone %s", id) }})
	dead.Track(sync(simple, member))
	before := counts.get(ProbeError)
	if got := dead.ProbeOnce(ctx); len(got) != 0 || counts.get(ProbeError) != before+1 {
		t.Errorf("failed probe: invalidated %v, errors %d, want one more", got, counts.get(ProbeError)-before)
	}
	if len(invalidated) != 2 {
		t.Errorf("invalidations %v, want two (the hold taken, the hold released)", invalidated)
	}
}

// ownership returns the payload of the TXT record named name, "" when there is none.
func ownership(t *testing.T, e *env, name string) string {
	t.Helper()
	recs, err := e.p.Records(context.Background(), e.zone)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Name == name && r.Type == endpoint.TypeTXT {
			return strings.Join(r.Targets, " ")
		}
	}
	return ""
}
