package route53

import (
	"context"
	"testing"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
)

// zonesOnly is a DNS that manages fixed zones; findZone is pure selection, so only
// Zones is answered.
type zonesOnly []provider.Zone

func (z zonesOnly) Zones(context.Context) ([]provider.Zone, error) { return z, nil }
func (zonesOnly) Records(context.Context, provider.Zone) ([]*endpoint.Endpoint, error) {
	panic("not used")
}
func (zonesOnly) ApplyChange(context.Context, provider.Zone, changes.Batch, string) (string, error) {
	panic("not used")
}
func (zonesOnly) InSync(context.Context, string) (bool, error) { panic("not used") }
func (zonesOnly) DryRun(context.Context, provider.Zone, changes.Batch) ([]byte, error) {
	panic("not used")
}

// TestFindZoneNotFoundNamesZoneOnce pins the error of a plan whose zone the provider does
// not manage: the zone's name and id are told apart, never run together.
func TestFindZoneNotFoundNamesZoneOnce(t *testing.T) {
	dns := zonesOnly{{ID: "ZOTHER", Name: "other.com."}, {ID: "ZTHIRD", Name: "third.com."}}
	tests := []struct {
		name, zone, zoneID, want string
	}{
		{"name and id", "example.com", "Z0123", "zone example.com (Z0123): not found among the 2 zones the provider manages"},
		{"name only", "example.com", "", "zone example.com: not found among the 2 zones the provider manages"},
		{"id only", "", "Z0123", "zone Z0123: not found among the 2 zones the provider manages"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := findZone(context.Background(), dns, &spec.Plan{Zone: tt.zone, ZoneID: tt.zoneID})
			if err == nil || err.Error() != tt.want {
				t.Errorf("findZone error:\n got %v\nwant %s", err, tt.want)
			}
		})
	}
}
