package route53

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

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
		{"alias A loses a zero TTL", withProps(endpoint.Endpoint{Name: aliasA.Name, Type: "A", Targets: aliasA.Targets, TTL: endpoint.TTLZero}, endpoint.PropAlias, "true"), withProps(aliasA, endpoint.PropAlias, "true")},
		{"zero TTL kept on a plain record", &endpoint.Endpoint{Name: a.Name, Type: "A", Targets: a.Targets, TTL: endpoint.TTLZero}, &endpoint.Endpoint{Name: a.Name, Type: "A", Targets: a.Targets, TTL: endpoint.TTLZero}},
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

// TestAdjustedLoadBalancerAliasRoundTrip: what a Service or Ingress with `alias: "true"`
// yields for an ELB hostname (a CNAME marked alias) is adjusted, written and read back
// unchanged, so that the planner, which compares the adjusted desired record with the
// one read, finds nothing to do on the next sync.
func TestAdjustedLoadBalancerAliasRoundTrip(t *testing.T) {
	r := aliasResolver{known: knownZones}
	p := &Provider{}
	for _, tc := range []struct {
		name   string
		in     *endpoint.Endpoint
		zoneID string
		eval   bool
	}{
		{"alb", &endpoint.Endpoint{Name: "web.example.com", Type: "CNAME", TTL: 60, Targets: endpoint.Targets{"k8s-default-web-0123456789.us-east-2.elb.amazonaws.com"},
			ProviderSpecific: props(endpoint.PropAlias, "true")}, "Z3AADJGX6KTTL2", true},
		{"nlb weighted, evaluate false", &endpoint.Endpoint{Name: "tcp.example.com", Type: "CNAME", SetIdentifier: "blue", Policy: endpoint.WeightedPolicy(5),
			Targets:          endpoint.Targets{"k8s-default-tcp-0123456789.elb.ca-central-1.amazonaws.com"},
			ProviderSpecific: props(endpoint.PropAlias, "true", endpoint.PropEvaluateTargetHealth, "false")}, "Z2EPGBW3API2WT", false},
		{"govcloud evaluate true", &endpoint.Endpoint{Name: "gov.example.com", Type: "CNAME", Targets: endpoint.Targets{"web-1.us-gov-west-1.elb.amazonaws.com"},
			ProviderSpecific: props(endpoint.PropAlias, "true", endpoint.PropEvaluateTargetHealth, "true")}, "Z33AYJ8TM3BH4J", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := p.AdjustEndpoints([]*endpoint.Endpoint{tc.in})[0]
			rs, err := toRecordSet(want, zoneExample, r)
			if err != nil {
				t.Fatal(err)
			}
			if a := rs.AliasTarget; rs.Type != "A" || rs.TTL != nil || a == nil || aws.ToString(a.HostedZoneId) != tc.zoneID || a.EvaluateTargetHealth != tc.eval {
				t.Fatalf("written: %s", dumpRS(*rs))
			}
			got := toEndpoint(*rs, zoneExample, r)
			if !want.SameRecord(got) || !got.SameRecord(want) {
				t.Fatalf("read back %v %v, desired %v %v: not the same record", got, got.ProviderSpecific, want, want.ProviderSpecific)
			}
			if _, ok := got.Prop(endpoint.PropAliasZoneID); ok {
				t.Fatalf("read back with a zone id: %v", got.ProviderSpecific)
			}
		})
	}
}

// TestAdjustEndpointsLoadBalancer: what external-dns v0.21's AWS provider makes of a CNAME
// to an AWS load balancer, crossfade makes too — an alias A and an alias AAAA with the
// same target and properties, whether or not the source said `alias` — so that a zone
// either wrote is the zone the other wants. Only a CNAME to a load balancer gets the AAAA.
func TestAdjustEndpointsLoadBalancer(t *testing.T) {
	const (
		alb = "k8s-default-web-0123456789-1234567890.us-east-1.elb.amazonaws.com"
		nlb = "k8s-default-tcp-0123456789-0123456789abcdef.elb.eu-west-1.amazonaws.com"
	)
	rec := func(typ, target string, kv ...string) *endpoint.Endpoint {
		e := &endpoint.Endpoint{Name: "app.example.com", Type: typ, Targets: endpoint.Targets{target}, TTL: 60}
		for i := 0; i+1 < len(kv); i += 2 {
			e.SetProp(kv[i], kv[i+1])
		}
		return e
	}
	weighted := func(e *endpoint.Endpoint) *endpoint.Endpoint {
		e.SetIdentifier, e.Policy = "blue", endpoint.WeightedPolicy(100)
		return e
	}
	tests := []struct {
		name        string
		preferCNAME bool
		in          []*endpoint.Endpoint
		want        []string
	}{
		{"CNAME to an ALB, no alias annotation: alias A and AAAA", false,
			[]*endpoint.Endpoint{rec("CNAME", alb)},
			[]string{"app.example.com A " + alb + " ttl=0 map[alias:true]", "app.example.com AAAA " + alb + " ttl=0 map[alias:true]"}},
		{"dualstack. prefix is a load balancer too", false,
			[]*endpoint.Endpoint{rec("CNAME", "dualstack."+alb)},
			[]string{"app.example.com A dualstack." + alb + " ttl=0 map[alias:true]", "app.example.com AAAA dualstack." + alb + " ttl=0 map[alias:true]"}},
		{"alias stated, weighted NLB, target health off: both carry it all", false,
			[]*endpoint.Endpoint{weighted(rec("CNAME", nlb, endpoint.PropAlias, "true", endpoint.PropEvaluateTargetHealth, "false"))},
			[]string{"app.example.com A [blue] " + nlb + " ttl=0 map[alias:true aws/evaluate-target-health:false]",
				"app.example.com AAAA [blue] " + nlb + " ttl=0 map[alias:true aws/evaluate-target-health:false]"}},
		{"--aws-prefer-cname keeps an unmarked CNAME", true,
			[]*endpoint.Endpoint{rec("CNAME", alb)},
			[]string{"app.example.com CNAME " + alb + " ttl=60 map[]"}},
		{"--aws-prefer-cname does not override alias: true", true,
			[]*endpoint.Endpoint{rec("CNAME", alb, endpoint.PropAlias, "true")},
			[]string{"app.example.com A " + alb + " ttl=0 map[alias:true]", "app.example.com AAAA " + alb + " ttl=0 map[alias:true]"}},
		{"alias: false keeps the CNAME, without the property", false,
			[]*endpoint.Endpoint{rec("CNAME", alb, endpoint.PropAlias, "false")},
			[]string{"app.example.com CNAME " + alb + " ttl=60 map[]"}},
		{"alias to a name in a zone: no AAAA", false,
			[]*endpoint.Endpoint{rec("CNAME", "origin.example.com", endpoint.PropAlias, "true")},
			[]string{"app.example.com A origin.example.com ttl=0 map[alias:true]"}},
		{"an unmarked CNAME elsewhere stays", false,
			[]*endpoint.Endpoint{rec("CNAME", "origin.example.net")},
			[]string{"app.example.com CNAME origin.example.net ttl=60 map[]"}},
		{"a look-alike of a load balancer name is not one", false,
			[]*endpoint.Endpoint{rec("CNAME", alb+".example.net")},
			[]string{"app.example.com CNAME " + alb + ".example.net ttl=60 map[]"}},
		{"two load balancers: a CNAME, which an alias cannot hold", false,
			[]*endpoint.Endpoint{{Name: "app.example.com", Type: "CNAME", Targets: endpoint.Targets{alb, nlb}}},
			[]string{"app.example.com CNAME " + alb + "," + nlb + " ttl=0 map[]"}},
		{"an alias A stated as A gets no AAAA (external-dns adds it to CNAMEs only)", false,
			[]*endpoint.Endpoint{rec("A", alb, endpoint.PropAlias, "true")},
			[]string{"app.example.com A " + alb + " ttl=0 map[alias:true]"}},
		{"alias A (external-dns v0.23): the alias A alone, to a load balancer too", false,
			[]*endpoint.Endpoint{rec("CNAME", alb, endpoint.PropAlias, endpoint.AliasOnlyA)},
			[]string{"app.example.com A " + alb + " ttl=0 map[alias:true]"}},
		{"alias AAAA: the alias AAAA alone, with its properties", false,
			[]*endpoint.Endpoint{weighted(rec("CNAME", nlb, endpoint.PropAlias, endpoint.AliasOnlyAAAA, endpoint.PropEvaluateTargetHealth, "false"))},
			[]string{"app.example.com AAAA [blue] " + nlb + " ttl=0 map[alias:true aws/evaluate-target-health:false]"}},
		{"alias AAAA to a name in a zone", false,
			[]*endpoint.Endpoint{rec("CNAME", "origin.example.com", endpoint.PropAlias, endpoint.AliasOnlyAAAA)},
			[]string{"app.example.com AAAA origin.example.com ttl=0 map[alias:true]"}},
		{"alias AAAA wins over --aws-prefer-cname, as alias: true does", true,
			[]*endpoint.Endpoint{rec("CNAME", alb, endpoint.PropAlias, endpoint.AliasOnlyAAAA)},
			[]string{"app.example.com AAAA " + alb + " ttl=0 map[alias:true]"}},
		{"alias A on an A record is no alias, as in external-dns v0.23", false,
			[]*endpoint.Endpoint{rec("A", "192.0.2.1", endpoint.PropAlias, endpoint.AliasOnlyA)},
			[]string{"app.example.com A 192.0.2.1 ttl=60 map[]"}},
		{"an AAAA the source states is not doubled", false,
			[]*endpoint.Endpoint{rec("CNAME", alb), rec("AAAA", "2001:db8::1")},
			[]string{"app.example.com A " + alb + " ttl=0 map[alias:true]", "app.example.com AAAA 2001:db8::1 ttl=60 map[]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Provider{cfg: Config{PreferCNAME: tt.preferCNAME}}
			before := make([]string, len(tt.in))
			for i, e := range tt.in {
				before[i] = fmt.Sprintf("%v ttl=%d %v", e, e.TTL, e.ProviderSpecific)
			}
			var got []string
			for _, e := range p.AdjustEndpoints(tt.in) {
				got = append(got, fmt.Sprintf("%v ttl=%d %v", e, e.TTL, e.ProviderSpecific))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
			for i, e := range tt.in {
				if now := fmt.Sprintf("%v ttl=%d %v", e, e.TTL, e.ProviderSpecific); now != before[i] {
					t.Errorf("input modified: %s, was %s", now, before[i])
				}
			}
		})
	}
}
