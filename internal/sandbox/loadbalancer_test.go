package sandbox_test

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/aws-sdk-go-v2/service/route53/types"
	"github.com/miekg/dns"

	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// TestLoadBalancerAlias writes the most common alias in EKS, an alias A to the load
// balancer of an Ingress, through the real SDK, and asks the sandbox's DNS server for it:
// NODATA while the sandbox knows no addresses for the load balancer, the addresses set
// through /_sandbox/loadbalancers/ (with ELB's TTL) once it does. An alias that evaluates
// target health counts a load balancer without addresses as unhealthy.
func TestLoadBalancerAlias(t *testing.T) {
	sb := sandboxtest.Start(t)
	ctx := context.Background()
	client := sandboxtest.Route53Client(sb)
	zone, err := client.CreateHostedZone(ctx, &route53.CreateHostedZoneInput{Name: aws.String("example.com"), CallerReference: aws.String("r1")})
	if err != nil {
		t.Fatal(err)
	}
	const (
		alb   = "k8s-shop-ingress-0123456789-987654321.us-west-2.elb.amazonaws.com"
		albZ  = "Z1H1FL5HABSF5" // ALB, us-west-2
		nlb   = "k8s-default-tcp-0123456789-0123456789abcdef.elb.us-west-2.amazonaws.com"
		nlbZ  = "Z18D5FSROUN65G" // NLB, us-west-2
		green = "192.0.2.20"
	)
	lbAlias := func(name string, typ types.RRType, zoneID, target string, eval bool) *types.ResourceRecordSet {
		return &types.ResourceRecordSet{Name: aws.String(name), Type: typ,
			AliasTarget: &types.AliasTarget{HostedZoneId: aws.String(zoneID), DNSName: aws.String(target), EvaluateTargetHealth: eval}}
	}
	blue := lbAlias("svc.example.com", types.RRTypeA, nlbZ, nlb, true)
	blue.SetIdentifier, blue.Weight = aws.String("blue"), aws.Int64(1)
	_, err = client.ChangeResourceRecordSets(ctx, &route53.ChangeResourceRecordSetsInput{
		HostedZoneId: zone.HostedZone.Id,
		ChangeBatch: &types.ChangeBatch{Changes: []types.Change{
			{Action: types.ChangeActionCreate, ResourceRecordSet: lbAlias("www.example.com", types.RRTypeA, albZ, "dualstack."+alb, false)},
			{Action: types.ChangeActionCreate, ResourceRecordSet: lbAlias("www.example.com", types.RRTypeAaaa, albZ, "dualstack."+alb, false)},
			{Action: types.ChangeActionCreate, ResourceRecordSet: blue},
			{Action: types.ChangeActionCreate, ResourceRecordSet: &types.ResourceRecordSet{
				Name: aws.String("svc.example.com"), Type: types.RRTypeA, SetIdentifier: aws.String("green"), Weight: aws.Int64(1),
				TTL: aws.Int64(60), ResourceRecords: []types.ResourceRecord{{Value: aws.String(green)}}}},
		}},
	})
	if err != nil {
		t.Fatalf("aliases to load balancers: %v", err)
	}

	ask := func(qname string, qtype uint16) *dns.Msg {
		t.Helper()
		m := new(dns.Msg)
		m.SetQuestion(qname, qtype)
		r, _, err := (&dns.Client{Timeout: 5 * time.Second}).Exchange(m, sb.DNSAddr())
		if err != nil {
			t.Fatalf("query %s %s: %v", qname, dns.TypeToString[qtype], err)
		}
		return r
	}
	answers := func(r *dns.Msg) []string {
		var out []string
		for _, rr := range r.Answer {
			out = append(out, rr.String())
		}
		slices.Sort(out)
		return out
	}

	if r := ask("www.example.com.", dns.TypeA); r.Rcode != dns.RcodeSuccess || len(r.Answer) != 0 || len(r.Ns) != 1 {
		t.Fatalf("alias to a load balancer without addresses: rcode %s, answer %v, authority %v; want NODATA", dns.RcodeToString[r.Rcode], r.Answer, r.Ns)
	}
	for range 20 { // the blue load balancer has no addresses: unhealthy, never chosen
		if got := answers(ask("svc.example.com.", dns.TypeA)); len(got) != 1 || !strings.HasSuffix(got[0], "\t"+green) {
			t.Fatalf("weighted answer %v, want only green %s", got, green)
		}
	}

	if code, body := call(t, http.MethodPut, sb, "/_sandbox/loadbalancers/"+alb, `{"addresses": ["192.0.2.10", "2001:db8::10"]}`); code != http.StatusOK || !strings.Contains(body, `"zoneId":"`+albZ+`"`) {
		t.Fatalf("PUT load balancer: %d %s", code, body)
	}
	if got, want := answers(ask("www.example.com.", dns.TypeA)), []string{"www.example.com.\t60\tIN\tA\t192.0.2.10"}; !slices.Equal(got, want) {
		t.Fatalf("A answer %v, want %v", got, want)
	}
	if got, want := answers(ask("www.example.com.", dns.TypeAAAA)), []string{"www.example.com.\t60\tIN\tAAAA\t2001:db8::10"}; !slices.Equal(got, want) {
		t.Fatalf("AAAA answer %v, want %v", got, want)
	}

	if code, body := call(t, http.MethodDelete, sb, "/_sandbox/loadbalancers/"+alb, ""); code != http.StatusNoContent {
		t.Fatalf("DELETE load balancer: %d %s", code, body)
	}
	if r := ask("www.example.com.", dns.TypeA); len(r.Answer) != 0 {
		t.Fatalf("answer %v after the load balancer's addresses were removed", r.Answer)
	}
	for _, tc := range []struct{ path, body, want string }{
		{"/_sandbox/loadbalancers/www.example.com", `{"addresses": ["192.0.2.1"]}`, "not an Elastic Load Balancing DNS name"},
		{"/_sandbox/loadbalancers/" + alb, `{"addresses": ["192.0.2.300"]}`, alb},
		{"/_sandbox/loadbalancers/" + alb, `{}`, `body must be {\"addresses\"`},
	} {
		if code, body := call(t, http.MethodPut, sb, tc.path, tc.body); code != http.StatusBadRequest || !strings.Contains(body, tc.want) {
			t.Errorf("PUT %s %s: %d %s, want 400 naming %q", tc.path, tc.body, code, body, tc.want)
		}
	}
}

func call(t *testing.T, method string, sb *sandbox.Sandbox, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, sb.APIURL()+path, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
