package gate

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"

	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// purpleLB is a third load balancer of the sandbox, beside blueLB and greenLB.
const purpleLB = "k8s-shop-purple-0123456789-333333333.us-west-2.elb.amazonaws.com"

// TestDNSGateAliasNoAddressOfType: an AAAA alias to a load balancer with IPv4 addresses
// only (the common ALB) is answered NODATA by Route 53 (and the sandbox) for its share.
// Those empty answers are the member's when it is the only such one; when no member's
// target has an AAAA address the record carries no traffic: not applicable, neither a
// failure nor a pass on its own; two such members beside one with addresses cannot be
// told apart (an error); a target that does not resolve stays an error.
func TestDNSGateAliasNoAddressOfType(t *testing.T) {
	z := startZone(t)
	d := z.dnsGate(t)
	check := func(w map[string]int64, recs ...Record) Result {
		return d.Check(context.Background(), Step{Weights: w, Records: recs})
	}
	const aaaa = "app.example.com/AAAA"
	w := map[string]int64{"blue": 1, "green": 3}
	targets := map[string]string{"blue": blueLB, "green": greenLB}

	// Both load balancers IPv4 only: the A record is judged, the AAAA one is not applicable.
	z.setLB(t, blueLB, "192.0.2.10")
	z.setLB(t, greenLB, "192.0.2.20")
	a := z.setAliasesOf(t, "app.example.com", "A", w, targets)
	v6 := z.setAliasesOf(t, "app.example.com", "AAAA", w, targets)
	r := check(w, a, v6)
	if !r.Pass || r.Pending || r.Err != "" || r.Values["judged"] != 1 || r.Values[aaaa+".notApplicable"] != 1 || r.Values["empty"] != 0 {
		t.Fatalf("IPv4-only load balancers, A and AAAA: pass=%v pending=%v err=%q values=%v: %s", r.Pass, r.Pending, r.Err, r.Values, r.Detail)
	}
	if !strings.Contains(r.Detail, aaaa+": no member's target answers AAAA: this record carries no traffic, nothing to shift") {
		t.Errorf("the detail does not say the AAAA record carries no traffic: %s", r.Detail)
	}
	// The A record is still judged: at weights other than written it fails, measured.
	if r := check(map[string]int64{"blue": 3, "green": 1}, a, v6); r.Pass || r.Err != "" || !strings.Contains(r.Detail, "app.example.com/A: share off") {
		t.Errorf("A at other weights than written, AAAA not applicable: pass=%v err=%q: %s", r.Pass, r.Err, r.Detail)
	}
	// The AAAA record alone judges nothing: pending, never a plain pass.
	if r := check(w, v6); !r.Pass || !r.Pending || r.Err != "" || !strings.HasPrefix(r.Detail, aaaa+": no member's target answers AAAA") {
		t.Errorf("AAAA alone, not applicable: pass=%v pending=%v err=%q: %s", r.Pass, r.Pending, r.Err, r.Detail)
	}

	// Green dual-stack: blue's share of the AAAA answers is its NODATA, judged.
	z.setLB(t, greenLB, "192.0.2.20", "2001:db8::20")
	r = check(w, a, v6)
	if !r.Pass || r.Pending || r.Err != "" || r.Values["judged"] != 2 || r.Values[aaaa+".empty"] != 0 || r.Values[aaaa+".blue.count"] == 0 {
		t.Fatalf("blue IPv4-only, green dual-stack: pass=%v pending=%v err=%q values=%v: %s", r.Pass, r.Pending, r.Err, r.Values, r.Detail)
	}
	if r := check(map[string]int64{"blue": 3, "green": 1}, v6); r.Pass || r.Err != "" || !strings.Contains(r.Detail, aaaa+": share off") {
		t.Errorf("blue's NODATA at other weights than written: pass=%v err=%q: %s", r.Pass, r.Err, r.Detail)
	}

	for _, tc := range []struct {
		name string
		prep func() (map[string]int64, Record)
		err  string
	}{
		{"two members whose targets have no AAAA, beside one with", func() (map[string]int64, Record) {
			z.setLB(t, purpleLB, "192.0.2.30", "2001:db8::30")
			z.setLB(t, greenLB, "192.0.2.20")
			w := map[string]int64{"blue": 1, "green": 1, "purple": 1}
			return w, z.setAliasesOf(t, "three.example.com", "AAAA", w, map[string]string{"blue": blueLB, "green": greenLB, "purple": purpleLB})
		}, "members blue and green are aliases whose targets have no AAAA address"},
		// Not "not applicable": only targets resolved and answering NODATA make that.
		{"a target that does not resolve", func() (map[string]int64, Record) {
			rec := z.setAliasesOf(t, "app.example.com", "AAAA", w, targets)
			rec.Members["green"] = []string{"gone.example.com"} // NXDOMAIN at the zone's server
			return w, rec
		}, "member green is an alias to gone.example.com, which could not be resolved"},
	} {
		w, rec := tc.prep()
		r := check(w, rec)
		if r.Pass || !strings.Contains(r.Err, tc.err) {
			t.Errorf("%s: pass=%v err=%q, want an error containing %q: %s", tc.name, r.Pass, r.Err, tc.err, r.Detail)
		}
	}
}

// TestDNSGateAliasTargetsResolvedAgain: a load balancer whose addresses change between the
// gate's resolution of its name and the queries (it scaled; a system resolver's cached
// answer was older than Route 53's) does not fail the check: the answers that match no
// member make the gate resolve the targets once more and attribute them again.
func TestDNSGateAliasTargetsResolvedAgain(t *testing.T) {
	z := startZone(t)
	d := z.dnsGate(t)
	z.setLB(t, blueLB, "192.0.2.10", "192.0.2.11")
	z.setLB(t, greenLB, "192.0.2.20")
	w := map[string]int64{"blue": 1, "green": 3}
	rec := z.setAliases(t, "app.example.com", w, map[string]string{"blue": blueLB, "green": greenLB})
	var once sync.Once
	d.afterResolve = func() {
		once.Do(func() { z.setLB(t, blueLB, "192.0.2.12", "192.0.2.13") }) // none of the old ones
	}
	r := d.Check(context.Background(), Step{Weights: w, Records: []Record{rec}})
	if !r.Pass || r.Err != "" || r.Values["other"] != 0 || r.Values["app.example.com/A.reresolved"] != 1 {
		t.Fatalf("load balancer scaled after its name was resolved: pass=%v err=%q values=%v: %s", r.Pass, r.Err, r.Values, r.Detail)
	}
	if !strings.Contains(r.Detail, "blue: alias to dualstack."+blueLB+" = 192.0.2.12 192.0.2.13") {
		t.Errorf("the detail does not show the addresses resolved again: %s", r.Detail)
	}

	// Answers the second resolution does not explain either still match no member.
	d.afterResolve = nil
	rec.Members["green"] = []string{"dualstack." + purpleLB}
	z.setLB(t, purpleLB, "192.0.2.30")
	r = d.Check(context.Background(), Step{Weights: w, Records: []Record{rec}})
	if r.Pass || r.Err != "" || r.Values["other"] == 0 || !strings.Contains(r.Detail, "answers matched no member (e.g. 192.0.2.20)") {
		t.Errorf("answers of a load balancer no member names: pass=%v err=%q values=%v: %s", r.Pass, r.Err, r.Values, r.Detail)
	}
}

// TestLookupSystemNoData: the system resolver's "no such host" is NODATA (empty, no error)
// only when the name has an address of the other family; a name that does not exist is an
// error, never a target answering nothing of the type. The resolver asks the sandbox here.
func TestLookupSystemNoData(t *testing.T) {
	z := startZone(t)
	z.setLB(t, blueLB, "192.0.2.10")
	addr := z.sb.DNSAddr()
	d := &DNS{name: "dns-1", system: &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var dl net.Dialer
		return dl.DialContext(ctx, network, addr)
	}}}
	ctx := context.Background()
	if got, err := d.lookupSystem(ctx, blueLB, dns.TypeA); err != nil || strings.Join(got, " ") != "192.0.2.10" {
		t.Errorf("A %s: %v, %v; want 192.0.2.10", blueLB, got, err)
	}
	if got, err := d.lookupSystem(ctx, blueLB, dns.TypeAAAA); err != nil || len(got) != 0 {
		t.Errorf("AAAA %s (IPv4 only): %v, %v; want empty, no error", blueLB, got, err)
	}
	if got, err := d.lookupSystem(ctx, "gone.example.com", dns.TypeAAAA); err == nil {
		t.Errorf("AAAA gone.example.com (NXDOMAIN): %v, no error; want an error", got)
	}
}

// TestDNSGateErrNamesGateOnce: a check that cannot measure says so without its own gate's
// name: Result.Gate carries it, and the engine, the report and verify put it in front.
func TestDNSGateErrNamesGateOnce(t *testing.T) {
	d, err := NewDNS("dns-1", spec.DNSGate{Servers: []string{"127.0.0.1:9"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []Step{
		{Weights: map[string]int64{"blue": 1}},
		{Records: []Record{{Name: "app.example.com"}}},
		{Weights: map[string]int64{"blue": 1}, Records: []Record{{Name: "app.example.com", Type: "MX"}}},
	} {
		r := d.Check(context.Background(), s)
		if r.Err == "" || strings.Contains(r.Err, "dns-1") {
			t.Errorf("Err %q: want an error that does not repeat the gate's name", r.Err)
		}
	}
}
