package gate

import (
	"context"
	"net/netip"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

// Load balancers of the sandbox, us-west-2 ALBs, whose canonical zone aliases name.
const (
	blueLB  = "k8s-shop-blue-0123456789-111111111.us-west-2.elb.amazonaws.com"
	greenLB = "k8s-shop-green-0123456789-222222222.us-west-2.elb.amazonaws.com"
	albZone = "Z1H1FL5HABSF5"
)

// setLB gives the sandbox's load balancer name these addresses.
func (z testZone) setLB(t *testing.T, name string, addrs ...string) {
	t.Helper()
	var as []netip.Addr
	for _, a := range addrs {
		as = append(as, netip.MustParseAddr(a))
	}
	if _, err := z.sb.Store().SetLoadBalancer(name, as); err != nil {
		t.Fatal(err)
	}
}

// setAliases writes name's weighted members as aliases to load balancers (id → target),
// as external-dns and crossfade publish an Ingress's, and returns the gate's view of the
// record as the Route 53 lever gives it: each member's value is its alias target.
func (z testZone) setAliases(t *testing.T, name string, weights map[string]int64, targets map[string]string) Record {
	t.Helper()
	return z.setAliasesOf(t, name, "A", weights, targets)
}

// setAliasesOf is setAliases for a record of type typ (A or AAAA).
func (z testZone) setAliasesOf(t *testing.T, name, typ string, weights map[string]int64, targets map[string]string) Record {
	t.Helper()
	rec := Record{Name: name, Type: typ, Members: map[string][]string{}}
	var changes []zones.Change
	for id, target := range targets {
		w := weights[id]
		changes = append(changes, zones.Change{Action: zones.Upsert, Set: zones.RRSet{
			Name: name, Type: typ, SetIdentifier: id, Weight: &w,
			Alias: &zones.AliasTarget{HostedZoneID: albZone, DNSName: "dualstack." + target + ".", EvaluateTargetHealth: false},
		}})
		rec.Members[id] = []string{"dualstack." + target}
	}
	if _, err := z.sb.Store().Apply(z.zoneID, "", changes); err != nil {
		t.Fatalf("apply aliases for %s: %v", name, err)
	}
	return rec
}

// TestDNSGateAliasMembers: members that are aliases to load balancers are judged by their
// targets: each target's name is resolved at the sandbox's server (standing in for ELB's)
// and the answers are attributed to the member whose load balancer answers them. Load
// balancers answering the same addresses, or an alias with weight whose target cannot be
// resolved, cannot be judged: the check fails with Err, never passes.
func TestDNSGateAliasMembers(t *testing.T) {
	z := startZone(t)
	d := z.dnsGate(t)
	check := func(rec Record, w map[string]int64) Result {
		return d.Check(context.Background(), Step{Weights: w, Records: []Record{rec}})
	}

	z.setLB(t, blueLB, "192.0.2.10", "192.0.2.11")
	z.setLB(t, greenLB, "192.0.2.20")
	w := map[string]int64{"blue": 1, "green": 3}
	rec := z.setAliases(t, "app.example.com", w, map[string]string{"blue": blueLB, "green": greenLB})
	r := check(rec, w)
	if !r.Pass || r.Err != "" || r.Values["other"] != 0 || r.Values["app.example.com/A.blue.addresses"] != 2 {
		t.Fatalf("aliases to distinct load balancers: pass=%v err=%q values=%v: %s", r.Pass, r.Err, r.Values, r.Detail)
	}
	if !strings.Contains(r.Detail, "blue: alias to dualstack."+blueLB+" = 192.0.2.10 192.0.2.11") {
		t.Errorf("detail does not say what blue's alias resolved to: %s", r.Detail)
	}
	// The weights written and the answers disagree: a measured failure, not an error.
	if r := check(rec, map[string]int64{"blue": 3, "green": 1}); r.Pass || r.Err != "" || !strings.Contains(r.Detail, "share off by more than 10%") {
		t.Errorf("aliases at other weights than written: pass=%v err=%q: %s", r.Pass, r.Err, r.Detail)
	}

	for _, tc := range []struct {
		name string
		prep func() (Record, map[string]int64)
		err  string
	}{
		{"alias target that does not resolve", func() (Record, map[string]int64) {
			w := map[string]int64{"blue": 100, "green": 1}
			rec := z.setAliases(t, "app.example.com", w, map[string]string{"blue": blueLB, "green": greenLB})
			rec.Members["green"] = []string{"gone.example.com"} // NXDOMAIN at the zone's server
			return rec, w
		}, "member green is an alias to gone.example.com, which could not be resolved"},
		// A load balancer the sandbox does not know: its loopback server refuses the name,
		// and the gate says so rather than asking the system resolver (off the machine).
		{"alias target a loopback server refuses", func() (Record, map[string]int64) {
			w := map[string]int64{"blue": 100, "green": 1}
			rec := z.setAliases(t, "app.example.com", w, map[string]string{"blue": blueLB, "green": greenLB})
			rec.Members["green"] = []string{"dualstack.k8s-unknown-0123456789-333333333.us-west-2.elb.amazonaws.com"}
			return rec, w
		}, "a loopback server is not followed by the system resolver"},
		{"plain members with the same values", func() (Record, map[string]int64) {
			ms := []member{{id: "blue", weight: 100, values: []string{"192.0.2.30"}}, {id: "green", weight: 0, values: []string{"192.0.2.30"}}}
			return z.setWeighted(t, "same.example.com", "A", ms...), weightsOf(ms...)
		}, "members blue and green answer the same values (192.0.2.30)"},
		// Last: it leaves green's load balancer answering one of blue's addresses.
		{"load balancers answering the same address", func() (Record, map[string]int64) {
			z.setLB(t, greenLB, "192.0.2.11", "192.0.2.20")
			w := map[string]int64{"blue": 100, "green": 0}
			return z.setAliases(t, "app.example.com", w, map[string]string{"blue": blueLB, "green": greenLB}), w
		}, "share addresses"},
	} {
		rec, w := tc.prep()
		r := check(rec, w)
		if r.Pass || !strings.Contains(r.Err, tc.err) {
			t.Errorf("%s: pass=%v err=%q, want an error containing %q: %s", tc.name, r.Pass, r.Err, tc.err, r.Detail)
		}
	}
}

// TestMatcherAlias: an answer holding addresses of one alias member's target and of no
// other member's is that member's even when the target resolved to more or other addresses
// a moment before; an answer a plain member's values could also explain, or two aliases
// could, is no member's.
func TestMatcherAlias(t *testing.T) {
	m := &matcher{
		members: map[string][]string{"blue": {"192.0.2.10", "192.0.2.11"}, "green": {"192.0.2.20"}, "plain": {"198.51.100.1"}},
		alias:   map[string]bool{"blue": true, "green": true},
	}
	for _, tc := range []struct {
		vals []string
		want string
	}{
		{[]string{"192.0.2.10", "192.0.2.11"}, "blue"},
		{[]string{"192.0.2.11"}, "blue"},
		{[]string{"192.0.2.11", "192.0.2.12"}, "blue"}, // an address the target gained since it was resolved
		{[]string{"192.0.2.12"}, ""},
		{[]string{"192.0.2.10", "192.0.2.20"}, ""},   // both aliases' addresses
		{[]string{"192.0.2.10", "198.51.100.1"}, ""}, // an alias's and a plain member's
		{[]string{"198.51.100.1"}, "plain"},
		{[]string{"198.51.100.1", "198.51.100.2"}, ""}, // a plain member's answer is its values, no more
	} {
		if got := m.match(tc.vals); got != tc.want {
			t.Errorf("match(%v) = %q, want %q", tc.vals, got, tc.want)
		}
	}
}
