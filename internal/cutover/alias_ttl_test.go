package cutover

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/plan"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/provider/route53/route53test"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// Load balancers of the sandbox that blue's and green's members are aliases to.
const (
	blueLB  = "k8s-shop-blue-0123456789-111111111.us-east-1.elb.amazonaws.com"
	greenLB = "k8s-shop-green-0123456789-222222222.us-east-1.elb.amazonaws.com"
)

// newAliasEnv is newEnv with blue's and green's members of app.example.com published as
// aliases to their load balancers, as external-dns and crossfade publish an Ingress's, each
// load balancer answering its own address in the sandbox.
func newAliasEnv(t *testing.T, blueWeight, greenWeight int64) *env {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a sandbox")
	}
	sb := sandboxtest.Start(t)
	if _, _, err := sb.Store().CreateZone("example.com", "ref", "", false); err != nil {
		t.Fatal(err)
	}
	dns := route53test.New(t, sb)
	for _, m := range []struct {
		owner, lb, ip string
		w             int64
	}{{"blue", blueLB, "127.0.0.11", blueWeight}, {"green", greenLB, "127.0.0.12", greenWeight}} {
		if _, err := sb.Store().SetLoadBalancer(m.lb, []netip.Addr{netip.MustParseAddr(m.ip)}); err != nil {
			t.Fatal(err)
		}
		reg, err := registry.New(registry.Config{OwnerID: m.owner})
		if err != nil {
			t.Fatal(err)
		}
		e := &endpoint.Endpoint{Name: "app.example.com", Type: "A", Targets: endpoint.Targets{m.lb}, SetIdentifier: m.owner,
			Policy: endpoint.WeightedPolicy(m.w), Labels: endpoint.Labels{endpoint.ResourceLabel: "ingress/default/app"}}
		e.SetProp(endpoint.PropAlias, "true")
		e.SetProp(endpoint.PropEvaluateTargetHealth, "false")
		rep, err := (&controller.Syncer{Provider: dns, Registry: reg, Policy: plan.Sync}).Sync(context.Background(), []*endpoint.Endpoint{e})
		if err != nil || rep.Err() != nil {
			t.Fatalf("publish %s: %v", m.owner, errors.Join(err, rep.Err()))
		}
	}
	reg, _ := registry.New(registry.Config{OwnerID: "cutover"})
	return &env{sb: sb, dns: dns, reg: reg, dir: t.TempDir()}
}

// TestAliasMembersPlan: a plan whose members are aliases to load balancers knows their
// TTL is their target's, 60 s (ELB's): steps hold at least 60 s and the plan says why; a
// spec.ttl.lower below it is refused, naming the alias and its TTL, since no write to the
// zone can lower it; and the DNS gate judges the aliases by their load balancers' answers.
func TestAliasMembersPlan(t *testing.T) {
	e := newAliasEnv(t, 100, 0)
	tol := 0.1
	dnsGate := spec.Gate{Name: "answers", DNS: &spec.DNSGate{Samples: 100, Tolerance: &tol}}

	p := testPlan(t, dnsGate)
	for i := range p.Steps {
		p.Steps[i].Pause = 0 // the hold is the TTL's alone
	}
	pv, err := Plan(context.Background(), e.config(p))
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	var out strings.Builder
	if err := pv.WriteSummary(&out); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	if pv.TTL != 60 {
		t.Errorf("preview TTL %ds, want 60 (the load balancers' TTL, which their aliases' answers carry)", pv.TTL)
	}
	for i, s := range pv.Steps {
		if s.Hold != time.Minute {
			t.Errorf("step %d holds %s, want 1m0s", i+1, s.Hold)
		}
	}
	if !strings.Contains(out.String(), "note: app.example.com A [blue] is an alias to "+blueLB+": its answers carry its target's TTL, 60s (Elastic Load Balancing") {
		t.Errorf("the plan does not say where the aliases' TTL comes from:\n%s", out.String())
	}
	if len(pv.Gates) != 1 || !pv.Gates[0].Pass || pv.Gates[0].Err != "" {
		t.Errorf("DNS gate at the current weights: %+v, want a pass on the aliases' answers", pv.Gates)
	}

	for _, tc := range []struct {
		lower int64
		pause time.Duration
		want  string // "" for a plan accepted
	}{
		{5, time.Minute, "spec.ttl.lower: app.example.com A [blue] is an alias to " + blueLB + ": Route 53 answers it with its target's TTL, 60s"},
		// A pause under the aliases' TTL is refused whatever spec.ttl.lower says.
		{5, 5 * time.Second, "spec.steps[0].pause 5s is shorter than the TTL the alias targets answer with (60s)"},
		{59, time.Minute, "set it to 60 or more"},
		{60, time.Minute, ""},
	} {
		p := testPlan(t)
		p.LowerTTL = tc.lower
		for i := range p.Steps {
			p.Steps[i].Pause = tc.pause
		}
		pv, err := Plan(context.Background(), e.config(p))
		var nr *NotReadyError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("ttl.lower %d: %v, want the plan accepted", tc.lower, err)
		case tc.want != "" && (!errors.As(err, &nr) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("ttl.lower %d: %v, want refused naming %q", tc.lower, err, tc.want)
		case tc.want == "":
			for i, s := range pv.Steps {
				if s.Hold < time.Minute {
					t.Errorf("ttl.lower %d: step %d holds %s, shorter than the aliases' 60s", tc.lower, i+1, s.Hold)
				}
			}
		}
	}
}

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
