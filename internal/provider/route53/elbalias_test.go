package route53

import (
	"context"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/aws-sdk-go-v2/service/route53/types"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/source"
)

// sdkClient is a plain Route 53 client for sb: tests use it to write and read record sets
// behind the provider's back, as another tool (the console, Terraform) would.
func sdkClient(sb *sandbox.Sandbox) *route53.Client {
	return route53.New(route53.Options{
		BaseEndpoint: aws.String(sb.APIURL()),
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
}

// rawSets lists every record set of zone as Route 53 returns it, by "name type [set-id]".
func rawSets(t *testing.T, api *route53.Client, zone provider.Zone) map[string]types.ResourceRecordSet {
	t.Helper()
	out := map[string]types.ResourceRecordSet{}
	pages := route53.NewListResourceRecordSetsPaginator(api, &route53.ListResourceRecordSetsInput{HostedZoneId: aws.String(zone.ID)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, rs := range page.ResourceRecordSets {
			k := endpoint.Key{Name: UnescapeName(aws.ToString(rs.Name)), Type: string(rs.Type), SetIdentifier: aws.ToString(rs.SetIdentifier)}
			out[k.String()] = rs
		}
	}
	return out
}

// TestSyncAliasToLoadBalancer follows `alias: "true"` on objects whose load balancer is an
// AWS ELB through the whole path a sync takes: the Service and Ingress sources, the
// provider's AdjustEndpoints, the planner and registry, Apply against the sandbox. Route 53
// must get an alias A naming the load balancer's canonical hosted zone for its region and
// type, and the next sync must find nothing to do.
func TestSyncAliasToLoadBalancer(t *testing.T) {
	sb := startSandbox(t)
	z := createZone(t, sb, "example.com", false)
	p := newTestProvider(t, sb, Config{})
	const (
		alb = "k8s-default-web-0123456789-1234567890.us-east-1.elb.amazonaws.com"
		nlb = "k8s-default-tcp-0123456789-0123456789abcdef.elb.eu-west-1.amazonaws.com"
		ing = "dualstack.k8s-shop-ingress-0123456789-987654321.ap-southeast-2.elb.amazonaws.com"
	)
	lbService := func(name string, ann map[string]string, hostname string) *corev1.Service {
		return &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Annotations: ann},
			Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIP: "10.0.0.1"},
			Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{
				Ingress: []corev1.LoadBalancerIngress{{Hostname: hostname}}}},
		}
	}
	snap := &source.Snapshot{
		Services: []*corev1.Service{
			lbService("web", map[string]string{
				source.PrefixAlpha + "hostname": "web.example.com",
				source.PrefixAlpha + "alias":    "true",
			}, alb),
			lbService("tcp", map[string]string{
				source.PrefixAlpha + "hostname":                   "tcp.example.com",
				source.PrefixAlpha + "alias":                      "true",
				source.PrefixAlpha + "aws-evaluate-target-health": "false",
				source.PrefixAlpha + "set-identifier":             "blue",
				source.PrefixAlpha + "aws-weight":                 "100",
			}, nlb),
		},
		Ingresses: []*networkingv1.Ingress{{
			ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "shop", Annotations: map[string]string{source.PrefixStable + "alias": "true"}},
			Spec:       networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "shop.example.com"}}},
			Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{
				Ingress: []networkingv1.IngressLoadBalancerIngress{{Hostname: ing}}}},
		}},
	}
	src, err := source.New(source.Config{})
	if err != nil {
		t.Fatal(err)
	}
	res := src.Endpoints(snap)
	if len(res.Invalid) > 0 || len(res.Pending) > 0 || len(res.Endpoints) != 3 {
		t.Fatalf("source: %d endpoints %v, invalid %v, pending %v", len(res.Endpoints), res.Endpoints, res.Invalid, res.Pending)
	}
	for _, e := range res.Endpoints {
		// What the sources hand on: a CNAME to the load balancer, marked alias;
		// AdjustEndpoints makes it an alias A.
		if e.Type != endpoint.TypeCNAME || !isAlias(e) {
			t.Fatalf("source endpoint %v %v: want a CNAME marked alias", e, e.ProviderSpecific)
		}
	}
	reg, err := registry.New(registry.Config{OwnerID: "blue"})
	if err != nil {
		t.Fatal(err)
	}
	s := &controller.Syncer{Provider: p, Registry: reg, Guard: controller.DeleteGuard{Allow: true}}

	rep, err := s.Sync(context.Background(), res.Endpoints)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Err(); err != nil {
		t.Fatalf("first sync: %v", err)
	}
	if conflicts := rep.Conflicts(); len(conflicts) > 0 {
		t.Fatalf("conflicts: %v", conflicts)
	}

	sets := rawSets(t, sdkClient(sb), z)
	for _, want := range []struct {
		key, dnsName, zoneID string
		eval                 bool
	}{
		{"web.example.com A", alb, "Z35SXDOTRQ7X7K", true},         // ALB, us-east-1
		{"tcp.example.com A [blue]", nlb, "Z2IFOLAFXWLO4F", false}, // NLB, eu-west-1
		{"shop.example.com A", ing, "Z1GM3OXH4ZPM65", true},        // ALB, ap-southeast-2
	} {
		rs, ok := sets[want.key]
		if !ok {
			t.Errorf("%s: not in the zone; zone holds %v", want.key, mapKeys(sets))
			continue
		}
		a := rs.AliasTarget
		if a == nil || rs.TTL != nil || len(rs.ResourceRecords) > 0 {
			t.Errorf("%s: want an alias without TTL or values, got %+v", want.key, rs)
			continue
		}
		if got := trimZoneID(aws.ToString(a.HostedZoneId)); got != want.zoneID || UnescapeName(aws.ToString(a.DNSName)) != want.dnsName || a.EvaluateTargetHealth != want.eval {
			t.Errorf("%s: AliasTarget{%s %s %v}, want {%s %s %v}", want.key, got, aws.ToString(a.DNSName), a.EvaluateTargetHealth, want.zoneID, want.dnsName, want.eval)
		}
	}
	// Owned as external-dns owns an alias A: under the cname- TXT.
	for _, k := range []string{"cname-web.example.com TXT", "cname-tcp.example.com TXT [blue]", "cname-shop.example.com TXT"} {
		if _, ok := sets[k]; !ok {
			t.Errorf("ownership record %s missing; zone holds %v", k, mapKeys(sets))
		}
	}

	// The records read back compare equal to the desired ones: nothing to do.
	rep, err = s.Sync(context.Background(), res.Endpoints)
	if err != nil || rep.Err() != nil {
		t.Fatalf("second sync: %v, %v", err, rep.Err())
	}
	for _, zr := range rep.Zones {
		if n := len(zr.Changes.Batches); n != 0 || zr.Changes.Summary != (changes.Summary{}) {
			t.Fatalf("second sync planned %d batches (%+v): %v", n, zr.Changes.Summary, zr.Changes.Batches)
		}
	}

	// The objects are gone: the aliases are deleted as read, and Route 53 takes the
	// DELETEs only if they name the zone id and EvaluateTargetHealth the sets hold.
	rep, err = s.Sync(context.Background(), nil)
	if err != nil || rep.Err() != nil || len(rep.Conflicts()) > 0 {
		t.Fatalf("sync without objects: %v, %v, %v", err, rep.Err(), rep.Conflicts())
	}
	if left := managed(records(t, p, z)); len(left) != 0 {
		t.Fatalf("left after the objects went: %v", left)
	}
}

func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
