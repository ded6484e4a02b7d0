package provider

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
)

func TestRejectedError(t *testing.T) {
	err := &RejectedError{Zone: Zone{ID: "Z1", Name: "example.com"}, Code: "InvalidChangeBatch", Messages: []string{"[a]", "[b]"}}
	if got := err.Error(); got != "change batch rejected: InvalidChangeBatch: [a]; [b]" {
		t.Fatalf("Error() = %q", got)
	}
	if got := err.Zone.String(); got != "example.com (Z1)" {
		t.Fatalf("Zone.String() = %q", got)
	}
}

func TestHolding(t *testing.T) {
	zones := []Zone{
		{ID: "Zcom", Name: "example.com"},
		{ID: "Zpub", Name: "shop.example.com"},
		{ID: "Zpriv", Name: "shop.example.com", Private: true},
		{ID: "Zorg", Name: "example.org"},
	}
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"www.example.com", []string{"Zcom"}},
		{"example.com", []string{"Zcom"}},
		{"api.shop.example.com", []string{"Zpub", "Zpriv"}},
		{"shop.example.com", []string{"Zpub", "Zpriv"}},
		{"myshop.example.com", []string{"Zcom"}}, // a label boundary, not a string suffix
		{"example.net", nil},
	} {
		var got []string
		for _, z := range Holding(zones, tc.name) {
			got = append(got, z.ID)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Holding(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestBaseProvider: the defaults a back end gets by embedding BaseProvider. AdjustEndpoints
// hands desired back as it is, the very endpoints and unmodified; DryRun renders nothing
// and fails with ErrNoDryRun naming the zone, whatever the batch, so a dry run through a
// provider that cannot render cannot pass for "nothing to change".
func TestBaseProvider(t *testing.T) {
	zone := Zone{ID: "Z1", Name: "example.com"}
	alias := &endpoint.Endpoint{Name: "lb.example.com", Type: "CNAME", Targets: endpoint.NewTargets("lb-1.eu-west-1.elb.amazonaws.com"), TTL: 60}
	alias.SetProp(endpoint.PropAlias, "true")
	www := &endpoint.Endpoint{Name: "www.example.com", Type: "A", Targets: endpoint.NewTargets("192.0.2.1"), TTL: 300}
	for _, tc := range []struct {
		name    string
		desired []*endpoint.Endpoint
		batch   changes.Batch
	}{
		{name: "nothing"},
		{name: "an A record", desired: []*endpoint.Endpoint{www}, batch: changes.Batch{{Action: changes.Create, Endpoint: www}}},
		{name: "an alias CNAME stays a CNAME", desired: []*endpoint.Endpoint{alias, www},
			batch: changes.Batch{{Action: changes.Delete, Endpoint: www}, {Action: changes.Create, Endpoint: alias}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p BaseProvider
			before := make([]string, len(tc.desired))
			for i, d := range tc.desired {
				before[i] = d.String()
			}
			got := p.AdjustEndpoints(tc.desired)
			if len(got) != len(tc.desired) {
				t.Fatalf("AdjustEndpoints returned %d endpoints, want the %d given", len(got), len(tc.desired))
			}
			for i := range got {
				if got[i] != tc.desired[i] || got[i].String() != before[i] {
					t.Errorf("AdjustEndpoints[%d] = %v, want %s unchanged", i, got[i], before[i])
				}
			}
			doc, err := p.DryRun(context.Background(), zone, tc.batch)
			if !errors.Is(err, ErrNoDryRun) || !strings.Contains(err.Error(), zone.String()) {
				t.Errorf("DryRun error %v, want ErrNoDryRun naming %s", err, zone)
			}
			if doc != nil {
				t.Errorf("DryRun rendered %q, want nothing", doc)
			}
		})
	}
}
