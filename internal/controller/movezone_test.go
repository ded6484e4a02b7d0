package controller

import (
	"context"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
)

// TestSyncMovingNameKeepsItsAnswer: a name published in example.com moves to
// sub.example.com once that zone exists (records go to the zone with the longest name
// holding them). When the new zone refuses the name, the record in example.com must stay:
// deleting it there would leave the name with no answer. Once the new zone takes it, the
// old record goes.
func TestSyncMovingNameKeepsItsAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sandbox")
	}
	ctx := context.Background()
	e := newEnv(t)
	// www keeps blue publishing in example.com: deleting every record of an owner in a
	// zone is held by the deletion guard, which is not what this test is about.
	app := func() []*endpoint.Endpoint {
		return []*endpoint.Endpoint{svc("app.sub.example.com", "192.0.2.1", "", 0), svc("www.example.com", "192.0.2.9", "", 0)}
	}
	e.sync(t, "blue", changes.Sync, app()...)
	if got := e.state(t); !strings.Contains(strings.Join(got, "\n"), "app.sub.example.com A") {
		t.Fatalf("example.com after the first sync: %v, want app.sub.example.com A", got)
	}

	z, _, err := e.sb.Store().CreateZone("sub.example.com", "sub", "", false)
	if err != nil {
		t.Fatal(err)
	}
	sub := provider.Zone{ID: z.ID, Name: "sub.example.com"}
	// Somebody else's CNAME at the name: Route 53 would refuse an A beside it.
	cname := &endpoint.Endpoint{Name: "app.sub.example.com", Type: endpoint.TypeCNAME, TTL: 300, Targets: endpoint.NewTargets("elsewhere.example.net")}
	if err := e.p.Apply(ctx, sub, changes.Batch{{Action: changes.Create, Endpoint: cname}}); err != nil {
		t.Fatal(err)
	}

	s := e.syncer(t, "blue", changes.Sync)
	rep, err := s.Sync(ctx, app())
	if err != nil {
		t.Fatal(err)
	}
	if got := e.state(t); !strings.Contains(strings.Join(got, "\n"), "app.sub.example.com A") {
		t.Errorf("example.com after sub.example.com refused the name: %v; the A record was deleted, the name has no answer", got)
	}
	kept := rep.Kept()
	if len(kept) == 0 || !strings.Contains(kept[0].String(), "its records move to zone sub.example.com ("+z.ID+"), which refused them") {
		t.Errorf("kept = %v, want the A record kept, saying sub.example.com refused it", kept)
	}
	if len(rep.Zones) != 2 || rep.Zones[0].Zone.Name != "example.com" {
		t.Errorf("report zones %v, want the provider's order (example.com first)", rep.Zones)
	}

	// The CNAME goes; the next sync writes the name into sub.example.com, then deletes it
	// from example.com.
	if err := e.p.Apply(ctx, sub, changes.Batch{{Action: changes.Delete, Endpoint: cname}}); err != nil {
		t.Fatal(err)
	}
	e.sync(t, "blue", changes.Sync, app()...)
	if got := e.state(t); strings.Contains(strings.Join(got, "\n"), "app.sub.example.com") {
		t.Errorf("example.com after the move: %v, want app.sub.example.com gone", got)
	}
	recs, err := e.p.Records(ctx, sub)
	if err != nil {
		t.Fatal(err)
	}
	if !containsKey(recs, "app.sub.example.com", "A") {
		t.Errorf("sub.example.com after the move: %v, want app.sub.example.com A", recs)
	}
}

func containsKey(recs []*endpoint.Endpoint, name, typ string) bool {
	for _, r := range recs {
		if r.Name == name && r.Type == typ {
			return true
		}
	}
	return false
}
