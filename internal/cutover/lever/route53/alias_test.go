package route53

import (
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
)

// blueLB is a load balancer an alias member points at.
const blueLB = "k8s-shop-blue-0123456789-111111111.us-east-1.elb.amazonaws.com"

// TestResolveAlias: what each kind of alias target gives its answers, as Route 53 answers an
// alias: ELB, CloudFront and S3 website endpoints 60 s; a record set of the zone its own TTL
// and values (through aliases there); anything else counted at the default TTL; and the hold
// floor (TTL) is the largest over the members, an alias's being its target's.
func TestResolveAlias(t *testing.T) {
	zone := provider.Zone{ID: "Z1", Name: "example.com"}
	alias := func(name, target, zoneID string) *endpoint.Endpoint {
		e := &endpoint.Endpoint{Name: name, Type: "A", Targets: endpoint.Targets{target}}
		e.SetProp(endpoint.PropAlias, "true")
		if zoneID != "" {
			e.SetProp(endpoint.PropAliasZoneID, zoneID)
		}
		return e
	}
	plain := func(name string, ttl int64, ips ...string) *endpoint.Endpoint {
		return &endpoint.Endpoint{Name: name, Type: "A", Targets: ips, TTL: endpoint.NewTTL(ttl)}
	}
	sets := map[spec.Record][]*endpoint.Endpoint{
		{Name: "origin.example.com", Type: "A"}: {plain("origin.example.com", 30, "192.0.2.1"), plain("origin.example.com", 120, "192.0.2.2")},
		{Name: "via.example.com", Type: "A"}:    {alias("via.example.com", "origin.example.com", "")},
		{Name: "lb.example.com", Type: "A"}:     {alias("lb.example.com", "dualstack."+blueLB, "")},
		{Name: "loop.example.com", Type: "A"}:   {alias("loop.example.com", "loop.example.com", "")},
	}
	for _, tc := range []struct {
		name   string
		e      *endpoint.Endpoint
		ttl    int64
		values []string
		why    string
	}{
		{"load balancer", alias("app.example.com", "dualstack."+blueLB, ""), 60, nil, "Elastic Load Balancing"},
		{"load balancer by its zone", alias("app.example.com", "lb.internal.example.net", "Z35SXDOTRQ7X7K"), 60, nil, "Elastic Load Balancing"},
		{"CloudFront", alias("app.example.com", "d111111abcdef8.cloudfront.net", "Z2FDTNDATAQYW2"), 60, nil, "CloudFront"},
		{"S3 website", alias("app.example.com", "s3-website-us-east-1.amazonaws.com", "Z3AQBSTGFYJSTF"), 60, nil, "S3 website"},
		{"a set of the zone", alias("app.example.com", "origin.example.com", ""), 120, []string{"192.0.2.1", "192.0.2.2"}, "the TTL of origin.example.com A in zone example.com"},
		{"through an alias of the zone", alias("app.example.com", "via.example.com", ""), 120, []string{"192.0.2.1", "192.0.2.2"}, "via.example.com"},
		{"to a load balancer through the zone", alias("app.example.com", "lb.example.com", ""), 60, []string{"dualstack." + blueLB}, "lb.example.com"},
		{"a loop", alias("app.example.com", "loop.example.com", ""), defaultTTL, nil, "not known to crossfade"},
		{"another zone", alias("app.example.com", "www.example.org", "Z2"), defaultTTL, nil, "not known to crossfade: counted as 300s"},
	} {
		got := resolveAlias(tc.e, zone, sets, 0)
		if got.ttl != tc.ttl || !strings.Contains(got.why, tc.why) || strings.Join(got.values, " ") != strings.Join(tc.values, " ") {
			t.Errorf("%s: %+v, want TTL %d, values %v, why containing %q", tc.name, got, tc.ttl, tc.values, tc.why)
		}
	}

	rec := spec.Record{Name: "app.example.com", Type: "A"}
	lb := alias("app.example.com", blueLB, "")
	lb.SetIdentifier, lb.Policy = "blue", endpoint.WeightedPolicy(100)
	l := &live{members: []member{
		{record: rec, setID: "blue", ep: lb, target: resolveAlias(lb, zone, sets, 0)},
		{record: rec, setID: "green", ep: set("green", "192.0.2.20", 0, 5, "green")},
	}}
	l.measure()
	if l.TTL() != 60 || l.groupTTL[rec] != 5 {
		t.Errorf("TTL %d, group TTL %d: want 60 (the alias's target's: the hold floor) and 5 (the plain member's, what ttl.lower writes)", l.TTL(), l.groupTTL[rec])
	}
	// The hold after a write paces on the zone as the write leaves it: the alias keeps its
	// target's TTL however low the plain members' goes.
	if next := l.after(l.batch(map[string]int64{"blue": 50, "green": 50}, map[spec.Record]int64{rec: 1})); next.TTL() != 60 || next.groupTTL[rec] != 1 {
		t.Errorf("after a write lowering the plain TTL to 1: TTL %d, group TTL %d, want 60 and 1", next.TTL(), next.groupTTL[rec])
	}
	if got := l.unlowerable(5); len(got) != 1 || !strings.Contains(got[0], "app.example.com A [blue] is an alias to "+blueLB) {
		t.Errorf("unlowerable(5): %q, want blue's alias named", got)
	}
	if got := l.unlowerable(60); len(got) != 0 {
		t.Errorf("unlowerable(60): %q, want none", got)
	}
	if got := l.targets()[rec]; strings.Join(got["blue"], " ") != blueLB || strings.Join(got["green"], " ") != "192.0.2.20" {
		t.Errorf("targets for the DNS gate: %v, want the load balancer's name for blue (resolved by the gate) and green's address", got)
	}
}
