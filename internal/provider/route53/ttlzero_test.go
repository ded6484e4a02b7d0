package route53

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/aws-sdk-go-v2/service/route53/types"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// TestTTLZeroRoundTrip: record sets that another tool created with TTL 0 (legal in Route
// 53) are read as endpoint.TTLZero and written back with TTL 0, so that a DELETE of the
// record read matches it, and an UPSERT of one weighted member keeps the TTL its group
// shares. Written back with the default 300, Route 53 refuses both batches.
func TestTTLZeroRoundTrip(t *testing.T) {
	sb := startSandbox(t)
	z := createZone(t, sb, "example.com", false)
	p := newTestProvider(t, sb, Config{})
	api := sdkClient(sb)

	set := func(name, setID string, weight int64, value string) types.ResourceRecordSet {
		rs := types.ResourceRecordSet{Name: aws.String(name), Type: types.RRTypeA, TTL: aws.Int64(0),
			ResourceRecords: []types.ResourceRecord{{Value: aws.String(value)}}}
		if setID != "" {
			rs.SetIdentifier, rs.Weight = aws.String(setID), aws.Int64(weight)
		}
		return rs
	}
	var sent []types.Change
	for _, rs := range []types.ResourceRecordSet{
		set("now.example.com.", "", 0, "192.0.2.1"),
		set("app.example.com.", "blue", 1, "192.0.2.10"),
		set("app.example.com.", "green", 0, "192.0.2.20"),
	} {
		sent = append(sent, types.Change{Action: types.ChangeActionCreate, ResourceRecordSet: &rs})
	}
	if _, err := api.ChangeResourceRecordSets(context.Background(), &route53.ChangeResourceRecordSetsInput{
		HostedZoneId: aws.String(z.ID), ChangeBatch: &types.ChangeBatch{Changes: sent},
	}); err != nil {
		t.Fatalf("create TTL 0 sets through the SDK: %v", err)
	}

	read := byKey(records(t, p, z))
	simple := read[endpoint.Key{Name: "now.example.com", Type: "A"}]
	green := read[endpoint.Key{Name: "app.example.com", Type: "A", SetIdentifier: "green"}]
	if simple == nil || green == nil {
		t.Fatalf("records read: %v", managed(records(t, p, z)))
	}
	for _, e := range []*endpoint.Endpoint{simple, green} {
		if e.TTL != endpoint.TTLZero || !e.TTL.IsConfigured() {
			t.Fatalf("%s read with TTL %d, want endpoint.TTLZero", e.Key(), e.TTL)
		}
	}

	// The compare-and-swap a planner sends for one weighted member: DELETE exactly what was
	// read, CREATE the new weight with the TTL read.
	moved := green.Clone()
	moved.Policy = endpoint.WeightedPolicy(1)
	apply(t, p, z, changes.Batch{
		{Action: changes.Delete, Endpoint: simple},
		{Action: changes.Delete, Endpoint: green},
		{Action: changes.Create, Endpoint: moved},
	})

	sets := rawSets(t, api, z)
	if _, ok := sets["now.example.com A"]; ok {
		t.Error("now.example.com A still in the zone after its DELETE was accepted")
	}
	g, ok := sets["app.example.com A [green]"]
	if !ok || aws.ToInt64(g.Weight) != 1 || g.TTL == nil || *g.TTL != 0 {
		t.Fatalf("green member after the swap: %+v", g)
	}
}
