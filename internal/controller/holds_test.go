package controller

import (
	"context"
	"errors"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
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
	s := &Syncer{Provider: zones, Registry: reg, Policy: changes.Sync}
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
	if err := e.p.Apply(ctx, e.zone, changes.Batch{{Action: changes.Create, Endpoint: hold}}); err != nil {
		t.Fatal(err)
	}
	if rep := sync(simple, member); len(rep.Zones[0].Changes.Batches) != 0 {
		t.Fatalf("the cached zone already shows the hold: %v", rep.Zones[0].Changes.Batches)
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
	if err := e.p.Apply(ctx, e.zone, changes.Batch{{Action: changes.Delete, Endpoint: hold}}); err != nil {
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

// TestAWSEndpoint: only AWS's own Route 53 API URLs let a prober without
// --hold-probe-servers ask the zones' NS: a sandbox or an emulator, by address or by name,
// gets nothing probed.
func TestAWSEndpoint(t *testing.T) {
	for _, tt := range []struct {
		endpoint string
		want     bool
	}{
		{"", true},
		{"https://route53.amazonaws.com", true},
		{"https://route53-fips.amazonaws.com", true},
		{"route53.amazonaws.com", true},
		{"https://route53.amazonaws.com.cn", true},
		{"https://route53.global.api.aws", true},
		{"http://127.0.0.1:4566", false},
		{"http://127.3.2.1", false},
		{"127.0.0.1:10080", false},
		{"http://localhost:8080/", false},
		{"http://[::1]:4566", false},
		{"http://sandbox:10080", false},
		{"http://10.0.0.5:4566", false},
		{"http://amazonaws.com.example.net", false},
		{"://bad", false},
	} {
		if got := AWSEndpoint(tt.endpoint); got != tt.want {
			t.Errorf("AWSEndpoint(%q) = %v, want %v", tt.endpoint, got, tt.want)
		}
	}
}

// probeReport is a sync's report of zones, each publishing weighted sets at names, with
// AWS's name servers in its apex NS record, as the sandbox lists them.
func probeReport(zones map[string][]string) *Report {
	rep := &Report{}
	for _, id := range slices.Sorted(maps.Keys(zones)) {
		w := map[string]string{}
		for _, n := range zones[id] {
			w[n] = ""
		}
		rep.Zones = append(rep.Zones, ZoneReport{Zone: provider.Zone{ID: id, Name: strings.ToLower(id) + ".example.com"}, Changes: &changes.Set{},
			Weighted: w, NameServers: []string{"ns-370.awsdns-50.com.", "ns-1234.awsdns-10.org."}})
	}
	return rep
}

// TestHoldProberStaysOnTheMachine: against a Route 53 API on this machine (the sandbox)
// and without servers to ask, a prober neither resolves the zone's name servers (real
// AWS names) nor asks them: it probes nothing. Against AWS's API it would (here its
// resolver is a stand-in that answers nothing, so nothing leaves the machine either).
func TestHoldProberStaysOnTheMachine(t *testing.T) {
	for _, tt := range []struct {
		endpoint string
		servers  []string
		resolves bool
	}{
		{"http://127.0.0.1:4566", nil, false},
		{"http://localhost:4566", nil, false},
		{"", nil, true},
		{"https://route53.amazonaws.com", nil, true},
	} {
		var counts probeCounts
		pr := NewHoldProber(HoldProbeConfig{APIEndpoint: tt.endpoint, Servers: tt.servers, Observe: counts.observe})
		var looked []string
		pr.lookup = func(_ context.Context, host string) ([]string, error) {
			looked = append(looked, host)
			return nil, errors.New("no resolver in tests")
		}
		pr.Track(probeReport(map[string][]string{"Z1": {"app.example.com"}}))
		pr.ProbeOnce(context.Background())
		if got := len(looked) > 0; got != tt.resolves {
			t.Errorf("API %q: name servers resolved %v (%v), want %v", tt.endpoint, got, looked, tt.resolves)
		}
		if !tt.resolves && len(counts.n) != 0 {
			t.Errorf("API %q: probes counted %v, want none", tt.endpoint, counts.n)
		}
	}
}

// TestHoldProbeStopsAtSilentServers: when no server answers for a zone's first name, the
// zone's round stops there, counted as one error: its other names would each wait as
// long for the same silence.
func TestHoldProbeStopsAtSilentServers(t *testing.T) {
	ln, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var counts probeCounts
	pr := NewHoldProber(HoldProbeConfig{Servers: []string{ln.LocalAddr().String()}, Timeout: 50 * time.Millisecond, Observe: counts.observe})
	pr.Track(probeReport(map[string][]string{"Z1": {"a.example.com", "b.example.com", "c.example.com"}}))
	if got := pr.ProbeOnce(context.Background()); len(got) != 0 {
		t.Errorf("invalidated %v, want nothing", got)
	}
	if n := counts.get(ProbeError); n != 1 {
		t.Errorf("errors counted %d, want 1 for the zone", n)
	}
	// Every query sent is queued at the silent server: one, not one per name.
	queries := 0
	buf := make([]byte, 512)
	for {
		if err := ln.SetReadDeadline(time.Now().Add(100 * time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := ln.ReadFrom(buf); err != nil {
			break
		}
		queries++
	}
	if queries != 1 {
		t.Errorf("queries sent %d, want 1", queries)
	}
}

// TestHoldProbeRoundIsBounded: a round that runs out of time (here its budget is spent
// waiting on a silent server whose timeout is an hour) ends there, counting no error (the
// servers were not judged), and the next round starts with the zone it had no time for,
// so that a slow zone does not keep the others from being probed.
func TestHoldProbeRoundIsBounded(t *testing.T) {
	ln, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var counts probeCounts
	pr := NewHoldProber(HoldProbeConfig{Servers: []string{ln.LocalAddr().String()}, Timeout: time.Hour, Observe: counts.observe})
	pr.budget = 20 * time.Millisecond
	pr.Track(probeReport(map[string][]string{"ZA": {"a.example.com"}, "ZB": {"b.example.com"}}))
	pr.ProbeOnce(context.Background())
	if pr.resume != "ZB" || len(counts.n) != 0 {
		t.Errorf("after the first round: starts next with %q, counts %v; want ZB, nothing counted", pr.resume, counts.n)
	}
	pr.ProbeOnce(context.Background())
	if pr.resume != "ZA" || len(counts.n) != 0 {
		t.Errorf("after the second round: starts next with %q, counts %v; want ZA, nothing counted", pr.resume, counts.n)
	}
}
