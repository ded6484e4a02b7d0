package cache

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
)

// zoneList is a provider whose zone list the test sets; its zones hold nothing and take
// every batch. Pure cache bookkeeping is under test, so no sandbox is needed.
type zoneList struct {
	provider.BaseProvider
	zones []provider.Zone
}

func (z *zoneList) Zones(context.Context) ([]provider.Zone, error) { return z.zones, nil }
func (z *zoneList) Records(context.Context, provider.Zone) ([]*endpoint.Endpoint, error) {
	return nil, nil
}
func (z *zoneList) Apply(context.Context, provider.Zone, changes.Batch) error { return nil }
func (z *zoneList) Limits() changes.Limits                                    { return changes.Route53Limits }

// TestZonesThatGoLeaveNothing: over months, zones come and go (deleted, or another team's
// zone that matched the filters for a while); the cache keeps nothing of a zone that left
// the list, its write counter included, and a listing that was on its way when a zone's
// counter was forgotten is not kept.
func TestZonesThatGoLeaveNothing(t *testing.T) {
	now := time.Unix(0, 0)
	inner := &zoneList{}
	p := New(inner, Config{Now: func() time.Time { return now }})
	ctx := context.Background()
	keep := provider.Zone{ID: "ZKEEP", Name: "example.com"}
	for i := range 100 {
		z := provider.Zone{ID: fmt.Sprintf("Z%d", i), Name: fmt.Sprintf("z%d.example", i)}
		inner.zones = []provider.Zone{keep, z}
		now = now.Add(DefaultResync)
		if _, err := p.Zones(ctx); err != nil {
			t.Fatal(err)
		}
		for _, z := range inner.zones {
			if _, err := p.Records(ctx, z); err != nil {
				t.Fatal(err)
			}
			if err := p.Apply(ctx, z, changes.Batch{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	inner.zones = []provider.Zone{keep}
	now = now.Add(DefaultResync)
	epoch := p.epoch
	if _, err := p.Zones(ctx); err != nil {
		t.Fatal(err)
	}
	if len(p.entries) != 1 || len(p.gen) != 1 || p.gen[keep.ID] == 0 {
		t.Errorf("after 100 zones came and went: %d entries, %d write counters (%v); want only %s's", len(p.entries), len(p.gen), p.gen, keep.ID)
	}
	if p.epoch == epoch {
		t.Error("a write counter was forgotten without moving the epoch: a listing on its way could match a restarted counter")
	}
}
