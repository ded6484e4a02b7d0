package route53

import (
	"testing"

	"github.com/crossfade-io/crossfade/internal/endpoint"
)

func TestAdjustEndpoints(t *testing.T) {
	withProps := func(e endpoint.Endpoint, kv ...string) *endpoint.Endpoint {
		for i := 0; i+1 < len(kv); i += 2 {
			e.SetProp(kv[i], kv[i+1])
		}
		return &e
	}
	cname := endpoint.Endpoint{Name: "app.example.com", Type: "CNAME", Targets: endpoint.Targets{"lb.example.com"}, TTL: 60}
	a := endpoint.Endpoint{Name: "app.example.com", Type: "A", Targets: endpoint.Targets{"192.0.2.1"}, TTL: 60}
	aliasA := endpoint.Endpoint{Name: "app.example.com", Type: "A", Targets: endpoint.Targets{"lb.example.com"}}
	tests := []struct {
		name string
		in   *endpoint.Endpoint
		want *endpoint.Endpoint
	}{
		{"alias CNAME becomes alias A without TTL", withProps(cname, endpoint.PropAlias, "true"), withProps(aliasA, endpoint.PropAlias, "true")},
		{"alias=1 parses as true", withProps(cname, endpoint.PropAlias, "1"), withProps(aliasA, endpoint.PropAlias, "1")},
		{"plain CNAME unchanged", &cname, &cname},
		{"alias=false CNAME stays a CNAME without the property", withProps(cname, endpoint.PropAlias, "false"), &cname},
		{"alias A loses its TTL", withProps(endpoint.Endpoint{Name: aliasA.Name, Type: "A", Targets: aliasA.Targets, TTL: 30}, endpoint.PropAlias, "true"), withProps(aliasA, endpoint.PropAlias, "true")},
		{"non-alias A loses alias-only properties", withProps(a, endpoint.PropEvaluateTargetHealth, "false", endpoint.PropAliasZoneID, "Z1"), &a},
		{"weighted alias keeps its policy", withProps(endpoint.Endpoint{Name: cname.Name, Type: "CNAME", Targets: cname.Targets, SetIdentifier: "blue", Policy: endpoint.WeightedPolicy(3)}, endpoint.PropAlias, "true"),
			withProps(endpoint.Endpoint{Name: cname.Name, Type: "A", Targets: cname.Targets, SetIdentifier: "blue", Policy: endpoint.WeightedPolicy(3)}, endpoint.PropAlias, "true")},
	}
	p := &Provider{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.in.Clone()
			got := p.AdjustEndpoints([]*endpoint.Endpoint{tt.in})
			if len(got) != 1 {
				t.Fatalf("got %d endpoints", len(got))
			}
			g := got[0]
			if g.Key() != tt.want.Key() || g.TTL != tt.want.TTL || !g.SameRecord(tt.want) || len(g.ProviderSpecific) != len(tt.want.ProviderSpecific) {
				t.Errorf("got %v ttl %d props %v, want %v ttl %d props %v", g, g.TTL, g.ProviderSpecific, tt.want, tt.want.TTL, tt.want.ProviderSpecific)
			}
			if tt.in.Type != before.Type || tt.in.TTL != before.TTL || len(tt.in.ProviderSpecific) != len(before.ProviderSpecific) {
				t.Errorf("input modified: %v", tt.in)
			}
		})
	}
}
