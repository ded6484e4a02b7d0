package levertest

import (
	"context"
	"fmt"
	"testing"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	lr53 "github.com/crossfade-io/crossfade/internal/cutover/lever/route53"
	"github.com/crossfade-io/crossfade/internal/cutover/levers"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/provider/route53/route53test"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// Zone is a sandbox zone example.com with blue's and green's weighted members of
// app.example.com, each published by its own owner as `crossfade sync` publishes them,
// TTL 1 s: what the Route 53 lever moves.
type Zone struct {
	// SB is the sandbox; DNS its Route 53 provider (the real SDK); Registry the cutover's
	// ownership registry.
	SB       *sandbox.Sandbox
	DNS      *route53.Provider
	Registry *registry.TXT
}

// NewZone starts a sandbox configured by cfg (e.g. a ChangeDelay) with the zone, blue at
// weight blue and green at green; it skips in -short.
func NewZone(t *testing.T, cfg sandbox.Config, blue, green int64) *Zone {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a sandbox")
	}
	sb := sandboxtest.StartWith(t, cfg)
	if _, _, err := sb.Store().CreateZone("example.com", "ref", "", false); err != nil {
		t.Fatalf("levertest: create zone example.com: %v", err)
	}
	reg, err := registry.New(registry.Config{OwnerID: "cutover"})
	if err != nil {
		t.Fatalf("levertest: registry: %v", err)
	}
	z := &Zone{SB: sb, DNS: route53test.New(t, sb), Registry: reg}
	if err := z.PublishBoth(blue, green); err != nil {
		t.Fatalf("levertest: %v", err)
	}
	return z
}

// PublishBoth syncs blue's member of app.example.com at weight blue and green's at green,
// each by its own owner as `crossfade sync` would; it stops at the first that fails,
// naming it.
func (z *Zone) PublishBoth(blue, green int64) error {
	for _, m := range []struct {
		owner, ip string
		w         int64
	}{{"blue", "127.0.0.10", blue}, {"green", "127.0.0.20", green}} {
		rep, err := Publish(z.DNS, m.owner, m.ip, m.w)
		if err == nil {
			err = rep.Err()
		}
		if err != nil {
			return fmt.Errorf("%s's sync of app.example.com at weight %d: %w", m.owner, m.w, err)
		}
	}
	return nil
}

// Publish syncs owner's weighted member of app.example.com as `crossfade sync` would.
func Publish(dns *route53.Provider, owner, ip string, weight int64) (*controller.Report, error) {
	reg, err := registry.New(registry.Config{OwnerID: owner})
	if err != nil {
		return nil, err
	}
	e := &endpoint.Endpoint{Name: "app.example.com", Type: "A", Targets: endpoint.Targets{ip}, TTL: 1,
		SetIdentifier: owner, Policy: endpoint.WeightedPolicy(weight), Labels: endpoint.Labels{endpoint.ResourceLabel: "service/default/app"}}
	return (&controller.Syncer{Provider: dns, Registry: reg, Policy: changes.Sync}).Sync(context.Background(), []*endpoint.Endpoint{e})
}

// Levers is the factory that pulls a plan's Route 53 lever over dns (the zone's provider,
// or a wrapper of it) and the zone's registry.
func (z *Zone) Levers(dns lr53.DNS) lever.Factory {
	return levers.New(levers.Env{DNS: func() (lr53.DNS, error) { return dns, nil }, Registry: z.Registry})
}

// Weights reads the members' weights and their TXT records' weights from the zone.
func (z *Zone) Weights(t *testing.T) (a, txt map[string]int64) {
	t.Helper()
	a, txt = map[string]int64{}, map[string]int64{}
	for _, r := range z.records(t) {
		switch r.Type {
		case "A":
			a[r.SetIdentifier] = r.Policy.Weight
		case "TXT":
			txt[r.SetIdentifier] = r.Policy.Weight
		}
	}
	return a, txt
}

// TTLs reads the members' TTLs, by record set key.
func (z *Zone) TTLs(t *testing.T) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, r := range z.records(t) {
		if r.Type == "A" {
			out[r.Key().String()] = int64(r.TTL)
		}
	}
	return out
}

// SetTTL sets the members' TTL, as a publisher would write it: every weighted set of the
// name deleted, then created with the TTL, in one batch (Route 53 gives them one TTL).
func (z *Zone) SetTTL(t *testing.T, ttl int64) {
	t.Helper()
	var dels, creates changes.Batch
	for _, r := range z.records(t) {
		if r.Type == "A" {
			c := r.Clone()
			c.TTL = endpoint.TTL(ttl)
			dels = append(dels, changes.Change{Action: changes.Delete, Endpoint: r})
			creates = append(creates, changes.Change{Action: changes.Create, Endpoint: c})
		}
	}
	zones, err := z.DNS.Zones(context.Background())
	if err != nil || len(zones) == 0 {
		t.Fatalf("levertest: zones: %v", err)
	}
	if err := z.DNS.Apply(context.Background(), zones[0], append(dels, creates...)); err != nil {
		t.Fatalf("levertest: set TTL %d: %v", ttl, err)
	}
}

// records reads the zone's record sets.
func (z *Zone) records(t *testing.T) []*endpoint.Endpoint {
	t.Helper()
	zones, err := z.DNS.Zones(context.Background())
	if err != nil || len(zones) == 0 {
		t.Fatalf("levertest: zones: %v", err)
	}
	recs, err := z.DNS.Records(context.Background(), zones[0])
	if err != nil {
		t.Fatalf("levertest: records of zone %s: %v", zones[0].Name, err)
	}
	return recs
}
