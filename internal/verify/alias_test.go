package verify

import (
	"context"
	"math"
	"net/netip"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/provider/route53/route53test"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// The load balancers the alias tests' members are aliases to.
const (
	blueLB  = "k8s-shop-blue-0123456789-111111111.us-east-1.elb.amazonaws.com"
	greenLB = "k8s-shop-green-0123456789-222222222.us-east-1.elb.amazonaws.com"
)

// aliasZone starts a sandbox whose zone example.com holds app.example.com as weighted
// aliases of each of types, blue (weight 1) to blueLB at 192.0.2.10 and green (weight 3)
// to greenLB at 192.0.2.20. setLB sets a load balancer's addresses.
func aliasZone(t *testing.T, types ...string) (sb *sandbox.Sandbox, dns *route53.Provider, setLB func(name string, addrs ...string)) {
	t.Helper()
	sb = sandboxtest.Start(t)
	if _, _, err := sb.Store().CreateZone("example.com", "ref", "", false); err != nil {
		t.Fatal(err)
	}
	setLB = func(name string, addrs ...string) {
		var as []netip.Addr
		for _, a := range addrs {
			as = append(as, netip.MustParseAddr(a))
		}
		if _, err := sb.Store().SetLoadBalancer(name, as); err != nil {
			t.Fatal(err)
		}
	}
	setLB(blueLB, "192.0.2.10")
	setLB(greenLB, "192.0.2.20")
	dns = route53test.New(t, sb)
	zones, _ := dns.Zones(context.Background())
	alias := func(id, typ, target string, w int64) *endpoint.Endpoint {
		e := &endpoint.Endpoint{Name: "app.example.com", Type: typ, Targets: endpoint.Targets{target}, SetIdentifier: id, Policy: endpoint.WeightedPolicy(w)}
		e.SetProp(endpoint.PropAlias, "true")
		e.SetProp(endpoint.PropEvaluateTargetHealth, "false")
		return e
	}
	var b changes.Batch
	for _, typ := range types {
		b = append(b, changes.Change{Action: changes.Create, Endpoint: alias("blue", typ, blueLB, 1)},
			changes.Change{Action: changes.Create, Endpoint: alias("green", typ, greenLB, 3)})
	}
	if err := dns.Apply(context.Background(), zones[0], b); err != nil {
		t.Fatal(err)
	}
	return sb, dns, setLB
}

// checkAliasShares fails unless blue and green measured their weights' shares, 1:3.
func checkAliasShares(t *testing.T, res *Result) {
	t.Helper()
	for _, m := range res.Members {
		want := map[string]float64{"blue": 0.25, "green": 0.75}[m.SetID]
		if math.Abs(m.Measured-want) > 0.05 {
			t.Errorf("%s: measured %.3f, want %.2f", m.SetID, m.Measured, want)
		}
	}
}

// TestVerifyAliasMembers: a weighted name whose members are aliases to load balancers (what
// external-dns and crossfade publish for an Ingress) is verified by resolving each alias's
// target and attributing the answers to the member whose load balancer gives them.
func TestVerifyAliasMembers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sandbox")
	}
	sb, dns, _ := aliasZone(t, "A")
	res, err := Run(context.Background(), dns, Config{Name: "app.example.com", Servers: []string{sb.DNSAddr()}, Queries: 1000, Tolerance: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	res.WriteText(&out)
	t.Log("\n" + out.String())
	if !res.Pass || res.Other != 0 || res.Empty != 0 || len(res.Members) != 2 {
		t.Fatalf("result %+v", res)
	}
	checkAliasShares(t, res)
	if !strings.Contains(out.String(), "alias to "+blueLB+" (1 address)") {
		t.Errorf("the report does not say what blue's alias resolved to:\n%s", out.String())
	}
}

// TestVerifyAliasAAAANoAddress: `verify --type AAAA` of aliases to load balancers with IPv4
// addresses only says the record carries no traffic (not applicable, not a mismatch);
// with one load balancer dual-stack, the other's empty (NODATA) answers are its member's
// and the shares are compared.
func TestVerifyAliasAAAANoAddress(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sandbox")
	}
	sb, dns, setLB := aliasZone(t, "A", "AAAA")
	cfg := Config{Name: "app.example.com", Type: "AAAA", Servers: []string{sb.DNSAddr()}, Queries: 1000, Tolerance: 0.05}
	res, err := Run(context.Background(), dns, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	res.WriteText(&out)
	t.Log("\n" + out.String())
	if !res.Pass || !res.NotApplicable || res.Empty != 0 ||
		!strings.Contains(out.String(), "not applicable: app.example.com/AAAA: no member's target answers AAAA: this record carries no traffic, nothing to shift") {
		t.Fatalf("IPv4-only load balancers: result %+v\n%s", res, out.String())
	}

	setLB(greenLB, "192.0.2.20", "2001:db8::20")
	if res, err = Run(context.Background(), dns, cfg); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	res.WriteText(&out)
	t.Log("\n" + out.String())
	if !res.Pass || res.NotApplicable || res.Empty != 0 || res.Other != 0 {
		t.Fatalf("green dual-stack: result %+v\n%s", res, out.String())
	}
	checkAliasShares(t, res)
}
