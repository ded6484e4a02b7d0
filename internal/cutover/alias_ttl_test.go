package cutover

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/levertest"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/endpoint"
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
		rep, err := (&controller.Syncer{Provider: dns, Registry: reg, Policy: changes.Sync}).Sync(context.Background(), []*endpoint.Endpoint{e})
		if err != nil || rep.Err() != nil {
			t.Fatalf("publish %s: %v", m.owner, errors.Join(err, rep.Err()))
		}
	}
	reg, _ := registry.New(registry.Config{OwnerID: "cutover"})
	return &env{Zone: &levertest.Zone{SB: sb, DNS: dns, Registry: reg}, dir: t.TempDir()}
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
	pauseEach(p, 0) // the hold is the TTL's alone
	pv, err := DryRun(context.Background(), e.config(p))
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	var out strings.Builder
	if err := Text.PreviewSummary(&out, pv); err != nil {
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
		pauseEach(p, tc.pause)
		pv, err := DryRun(context.Background(), e.config(p))
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
