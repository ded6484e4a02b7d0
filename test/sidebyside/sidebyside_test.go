// Package sidebyside runs crossfade beside external-dns v0.21.0, the peer it must be a
// drop-in for (and `crossfade controller` beside v0.23.0 too), on one real kube-apiserver
// (internal/kubetest) and the sandbox's Route 53 API, and proves at the record level that
// each takes over what the other wrote without a change.
//
// external-dns is the real binary (internal/externaldnstest; `make test` builds it).
// crossfade's half is crossfadeSync: today the same path `crossfade sync` and the
// controller take (objects listed with client-go → source → controller.Syncer over the
// Route 53 provider); switching it to a running `crossfade controller` changes that one
// function.
package sidebyside

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awsr53 "github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/aws-sdk-go-v2/service/route53/types"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/externaldnstest"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/provider/route53/route53test"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
	"github.com/crossfade-io/crossfade/internal/source"
)

const (
	// zoneName is the hosted zone both tools publish into.
	zoneName = "shop.example.com"
	// owner is the --txt-owner-id both use: one cluster, handed from one tool to the other.
	owner = "cluster-a"
	// namespace holds the fixtures.
	namespace = "shop"
)

// AWS load balancer names of three regions and both families, as the AWS Load Balancer
// Controller writes them into status.loadBalancer; the sandbox accepts aliases to them.
const (
	alb          = "k8s-shop-web-0123456789-1234567890.us-east-1.elb.amazonaws.com"
	nlb          = "k8s-shop-app-0123456789-0123456789abcdef.elb.eu-west-1.amazonaws.com"
	dualstackALB = "dualstack.k8s-shop-store-0123456789-987654321.ap-southeast-2.elb.amazonaws.com"
	legacyELB    = "a0123456789abcdef0123456789abcde-1234567890.us-west-2.elb.amazonaws.com"
)

// want is what external-dns v0.21.0 writes for the fixtures, as externaldnstest.Render
// shows a listing (less the zone's SOA and NS), grouped by record (compared sorted): every
// alias to an AWS load balancer as an alias A and an alias AAAA, whether or not the object
// says `alias`; each record owned under its own type-prefixed TXT record (`a-`, `aaaa-`,
// `cname-`, and `cname-` for an alias A), which carries the record's set identifier and
// weight; TXT records with TTL 300; no TTL on an alias, whatever the ttl annotation says.
var want = []string{
	`api.shop.example.com. A ttl=60 192.0.2.10 192.0.2.11`,
	`api.shop.example.com. AAAA ttl=60 2001:db8::10`,
	`a-api.shop.example.com. TXT ttl=300 "heritage=external-dns,external-dns/owner=cluster-a,external-dns/resource=service/shop/api"`,
	`aaaa-api.shop.example.com. TXT ttl=300 "heritage=external-dns,external-dns/owner=cluster-a,external-dns/resource=service/shop/api"`,

	`app.shop.example.com. A [blue] weight=100 alias=` + nlb + `. zone=Z2IFOLAFXWLO4F evaluate=true`,
	`app.shop.example.com. AAAA [blue] weight=100 alias=` + nlb + `. zone=Z2IFOLAFXWLO4F evaluate=true`,
	`aaaa-app.shop.example.com. TXT [blue] weight=100 ttl=300 "heritage=external-dns,external-dns/owner=cluster-a,external-dns/resource=service/shop/app-blue"`,
	`cname-app.shop.example.com. TXT [blue] weight=100 ttl=300 "heritage=external-dns,external-dns/owner=cluster-a,external-dns/resource=service/shop/app-blue"`,

	`db.shop.example.com. A [blue] weight=10 ttl=30 192.0.2.20`,
	`a-db.shop.example.com. TXT [blue] weight=10 ttl=300 "heritage=external-dns,external-dns/owner=cluster-a,external-dns/resource=service/shop/db"`,

	`docs.shop.example.com. CNAME ttl=300 docs.example.net`,
	`cname-docs.shop.example.com. TXT ttl=300 "heritage=external-dns,external-dns/owner=cluster-a,external-dns/resource=service/shop/docs"`,

	`ext.shop.example.com. CNAME ttl=300 lb-1234.example.net`,
	`cname-ext.shop.example.com. TXT ttl=300 "heritage=external-dns,external-dns/owner=cluster-a,external-dns/resource=service/shop/ext"`,

	`legacy.shop.example.com. A alias=` + legacyELB + `. zone=Z1H1FL5HABSF5 evaluate=false`,
	`legacy.shop.example.com. AAAA alias=` + legacyELB + `. zone=Z1H1FL5HABSF5 evaluate=false`,
	`aaaa-legacy.shop.example.com. TXT ttl=300 "heritage=external-dns,external-dns/owner=cluster-a,external-dns/resource=service/shop/legacy"`,
	`cname-legacy.shop.example.com. TXT ttl=300 "heritage=external-dns,external-dns/owner=cluster-a,external-dns/resource=service/shop/legacy"`,

	`nodes.shop.example.com. A ttl=300 203.0.113.5`,
	`nodes.shop.example.com. AAAA ttl=300 2001:db8::5`,
	`a-nodes.shop.example.com. TXT ttl=300 "heritage=external-dns,external-dns/owner=cluster-a,external-dns/resource=service/shop/nodes"`,
	`aaaa-nodes.shop.example.com. TXT ttl=300 "heritage=external-dns,external-dns/owner=cluster-a,external-dns/resource=service/shop/nodes"`,

	`secure.shop.example.com. A alias=` + dualstackALB + `. zone=Z1GM3OXH4ZPM65 evaluate=true`,
	`secure.shop.example.com. AAAA alias=` + dualstackALB + `. zone=Z1GM3OXH4ZPM65 evaluate=true`,
	`aaaa-secure.shop.example.com. TXT ttl=300 "heritage=external-dns,external-dns/owner=cluster-a,external-dns/resource=ingress/shop/store"`,
	`cname-secure.shop.example.com. TXT ttl=300 "heritage=external-dns,external-dns/owner=cluster-a,external-dns/resource=ingress/shop/store"`,

	`static.shop.example.com. A ttl=600 192.0.2.30`,
	`a-static.shop.example.com. TXT ttl=300 "heritage=external-dns,external-dns/owner=cluster-a,external-dns/resource=ingress/shop/static"`,

	`store.shop.example.com. A alias=` + dualstackALB + `. zone=Z1GM3OXH4ZPM65 evaluate=true`,
	`store.shop.example.com. AAAA alias=` + dualstackALB + `. zone=Z1GM3OXH4ZPM65 evaluate=true`,
	`aaaa-store.shop.example.com. TXT ttl=300 "heritage=external-dns,external-dns/owner=cluster-a,external-dns/resource=ingress/shop/store"`,
	`cname-store.shop.example.com. TXT ttl=300 "heritage=external-dns,external-dns/owner=cluster-a,external-dns/resource=ingress/shop/store"`,

	`web.shop.example.com. A alias=` + alb + `. zone=Z35SXDOTRQ7X7K evaluate=true`,
	`web.shop.example.com. AAAA alias=` + alb + `. zone=Z35SXDOTRQ7X7K evaluate=true`,
	`aaaa-web.shop.example.com. TXT ttl=300 "heritage=external-dns,external-dns/owner=cluster-a,external-dns/resource=service/shop/web"`,
	`cname-web.shop.example.com. TXT ttl=300 "heritage=external-dns,external-dns/owner=cluster-a,external-dns/resource=service/shop/web"`,

	`www.shop.example.com. A alias=` + alb + `. zone=Z35SXDOTRQ7X7K evaluate=true`,
	`www.shop.example.com. AAAA alias=` + alb + `. zone=Z35SXDOTRQ7X7K evaluate=true`,
	`aaaa-www.shop.example.com. TXT ttl=300 "heritage=external-dns,external-dns/owner=cluster-a,external-dns/resource=service/shop/web"`,
	`cname-www.shop.example.com. TXT ttl=300 "heritage=external-dns,external-dns/owner=cluster-a,external-dns/resource=service/shop/web"`,
}

// TestExternalDNSZoneAdoptedWithoutChurn: external-dns manages a zone from Services (an AWS
// load balancer hostname → alias, IPv4 and IPv6 addresses → A and AAAA, another hostname →
// CNAME, the ttl annotation, a weighted member with set-identifier and aws-weight, `alias`
// with evaluate-target-health false, ExternalName, NodePort over Nodes) and Ingresses (rules
// and TLS hosts, a dual-stack load balancer, an IP); once it has converged it is
// stopped, and crossfade's path over the same objects with the same owner id plans no
// change. Then the reverse: crossfade writes a fresh zone from the same objects — the very
// records external-dns wrote — and external-dns, started over it with the same owner id,
// sends no ChangeResourceRecordSets in two sync loops.
func TestExternalDNSZoneAdoptedWithoutChurn(t *testing.T) {
	kube := kubetest.Start(t)
	cs := kube.Clientset(t)
	createFixtures(t, cs, nil)

	var written []string
	t.Run("external-dns to crossfade", func(t *testing.T) {
		z := newZone(t)
		edns := externaldnstest.Start(t, z.externalDNS(kube))
		z.waitConverged(t, edns, len(want))
		written = z.published(t)
		if !slices.Equal(written, slices.Sorted(slices.Values(want))) {
			t.Errorf("external-dns v0.21.0 wrote other records than this test expects:\n%s", diff(written, want))
		}
		if err := edns.Stop(); err != nil {
			t.Fatal(err)
		}

		if changes := crossfadeSync(t, kube, z, true); len(changes) > 0 {
			t.Errorf("crossfade would change the zone external-dns wrote (%d changes):\n  %s\nzone:\n  %s",
				len(changes), strings.Join(changes, "\n  "), strings.Join(written, "\n  "))
		}
	})

	t.Run("crossfade to external-dns", func(t *testing.T) {
		z := newZone(t)
		if changes := crossfadeSync(t, kube, z, false); len(changes) == 0 {
			t.Fatal("crossfade wrote nothing into the fresh zone")
		}
		if again := crossfadeSync(t, kube, z, true); len(again) > 0 {
			t.Fatalf("crossfade's second sync would change its own zone:\n  %s", strings.Join(again, "\n  "))
		}
		ours := z.published(t)
		// crossfade also writes each alias A's ownership under a-, the form external-dns
		// v0.23 writes (docs/compatibility.md), which v0.21 neither writes nor reads.
		sameAsV021 := slices.DeleteFunc(slices.Clone(ours), func(l string) bool {
			return slices.ContainsFunc([]string{"app", "legacy", "secure", "store", "web", "www"}, func(n string) bool {
				return strings.HasPrefix(l, "a-"+n+"."+zoneName+". TXT ")
			})
		})
		if written != nil && !slices.Equal(sameAsV021, written) {
			t.Errorf("crossfade wrote other records than external-dns did from the same objects:\n%s", diff(sameAsV021, written))
		}

		before := sandboxtest.APICalls(t, z.sb)
		edns := externaldnstest.Start(t, z.externalDNS(kube))
		// The first loop starts at once; two ended loops are one full interval apart.
		edns.WaitLoops(t, 2)
		after := sandboxtest.APICalls(t, z.sb)
		if n := changeCalls(after) - changeCalls(before); n != 0 {
			t.Errorf("external-dns sent %d ChangeResourceRecordSets calls over the zone crossfade wrote; zone now:\n  %s",
				n, strings.Join(z.published(t), "\n  "))
		}
		if now := z.published(t); !slices.Equal(now, ours) {
			t.Errorf("the zone moved under external-dns:\n%s", diff(now, ours))
		}
	})

	// The same zone handed to v0.23.0 (reading the fixtures' legacy prefix, as a cluster
	// mid-upgrade runs it): a zone crossfade wrote, not one crossfade adopted, sends it no
	// change either. (Measured: it sends none with the cname- form alone too; crossfade
	// writes the a- form as well so that a batch v0.23 sends for another reason, a target
	// change as in test/golden's case 34, carries no ownership migration.)
	t.Run("crossfade to external-dns v0.23.0", func(t *testing.T) {
		z := newZone(t)
		if changes := crossfadeSync(t, kube, z, false); len(changes) == 0 {
			t.Fatal("crossfade wrote nothing into the fresh zone")
		}
		ours := z.published(t)
		before := sandboxtest.APICalls(t, z.sb)
		opts := z.externalDNS(kube)
		opts.Release, opts.LegacyAnnotationPrefix = externaldnstest.V023, true
		edns := externaldnstest.Start(t, opts)
		edns.WaitLoops(t, 2)
		after := sandboxtest.APICalls(t, z.sb)
		if n := changeCalls(after) - changeCalls(before); n != 0 {
			t.Errorf("external-dns v0.23.0 sent %d ChangeResourceRecordSets calls over the zone crossfade wrote; zone now:\n%s",
				n, diff(z.published(t), ours))
		}
		if now := z.published(t); !slices.Equal(now, ours) {
			t.Errorf("the zone moved under external-dns v0.23.0:\n%s", diff(now, ours))
		}
	})
}

// knownDifferences are the changes crossfade plans over a zone external-dns v0.21.0 wrote
// from objects where the two differ on purpose, or not yet fixed:
//
//   - `alias: "true"` to a name in the zone (not a load balancer): external-dns writes an
//     alias AAAA beside the alias A, which Route 53 takes only when the target has an AAAA
//     set — otherwise it refuses external-dns's whole batch (external-dns issue 5815).
//     crossfade writes the A only, so over such a zone it deletes the AAAA alias and its
//     aaaa- TXT. Matching it needs the zone's records when the AAAA is decided: see
//     route53.Provider.AdjustEndpoints.
//   - A load balancer status with an IP and a hostname: external-dns publishes the IP as a
//     plain A and the hostname as an alias AAAA (its AAAA twin of the alias A that lost to
//     the IP). crossfade refuses the object as invalid, with a Warning, and keeps the
//     records it finds as they are: no change, but not adopted either.
var knownDifferences = []string{
	"shop.example.com: DELETE same.shop.example.com AAAA origin.shop.example.com ttl=0 {alias=true label:owner=cluster-a label:resource=service/shop/same}",
	`shop.example.com: DELETE aaaa-same.shop.example.com TXT "heritage=external-dns,external-dns/owner=cluster-a,external-dns/resource=service/shop/same" ttl=300 {}`,
}

// TestExternalDNSKnownDifferences keeps knownDifferences true: external-dns writes a zone
// from the objects behind them, and crossfade's dry run over it plans exactly those
// changes and refuses exactly the mixed object. When a difference is fixed, this test
// fails until the list says so.
func TestExternalDNSKnownDifferences(t *testing.T) {
	kube := kubetest.Start(t)
	cs := kube.Clientset(t)
	ctx := t.Context()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const a = "external-dns.alpha.kubernetes.io/"
	createLoadBalancers(t, cs, []loadBalancer{
		{"origin", map[string]string{a + "hostname": "origin.shop.example.com"}, []corev1.LoadBalancerIngress{{IP: "192.0.2.50"}, {IP: "2001:db8::50"}}},
		{"same", map[string]string{a + "hostname": "same.shop.example.com", a + "alias": "true"}, []corev1.LoadBalancerIngress{{Hostname: "origin.shop.example.com"}}},
		{"mixed", map[string]string{a + "hostname": "mixed.shop.example.com"}, []corev1.LoadBalancerIngress{{IP: "192.0.2.70"}, {Hostname: alb}}},
	})

	z := newZone(t)
	edns := externaldnstest.Start(t, z.externalDNS(kube))
	// origin A, AAAA; same alias A, AAAA; mixed A, alias AAAA; and one TXT for each.
	z.waitConverged(t, edns, 12)
	if err := edns.Stop(); err != nil {
		t.Fatal(err)
	}
	r := crossfadeRun(t, kube, z, true)
	if !slices.Equal(r.changes, knownDifferences) {
		t.Errorf("crossfade's changes over the zone external-dns wrote:\n  %s\nwant the known differences:\n  %s\nzone:\n  %s",
			strings.Join(r.changes, "\n  "), strings.Join(knownDifferences, "\n  "), strings.Join(z.published(t), "\n  "))
	}
	if len(r.invalid) != 1 || !strings.HasPrefix(r.invalid[0], "service shop/mixed: ") {
		t.Errorf("invalid objects %q, want service shop/mixed alone", r.invalid)
	}
}

// legacyPrefix is the annotation prefix of external-dns before v0.22.0, which v0.23.0 reads
// only with --enable-legacy-annotation-prefix; newPrefix is v0.23.0's default.
const (
	legacyPrefix = "external-dns.alpha.kubernetes.io/"
	newPrefix    = "external-dns.kubernetes.io/"
)

// createFixtures creates the Services, Nodes and Ingresses both tools publish, with the
// load-balancer status a cloud controller would write (none runs here). prefixOf says
// which annotation prefix each object (by name) is written under; nil means legacyPrefix
// for all, the one v0.21.0 reads.
func createFixtures(t *testing.T, cs kubernetes.Interface, prefixOf func(object string) string) {
	t.Helper()
	ctx := t.Context()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Written under legacyPrefix here, moved to the object's prefix below.
	const a = legacyPrefix
	reprefix := func(name string, ann map[string]string) map[string]string {
		if prefixOf == nil || ann == nil {
			return ann
		}
		out := make(map[string]string, len(ann))
		for k, v := range ann {
			if rest, ok := strings.CutPrefix(k, legacyPrefix); ok {
				k = prefixOf(name) + rest
			}
			out[k] = v
		}
		return out
	}
	services := []loadBalancer{
		// An AWS load balancer hostname and two names, no alias annotation.
		{"web", map[string]string{a + "hostname": "web.shop.example.com,www.shop.example.com"}, []corev1.LoadBalancerIngress{{Hostname: alb}}},
		// Two IPv4 addresses and an IPv6 one, a TTL.
		{"api", map[string]string{a + "hostname": "api.shop.example.com", a + "ttl": "60"},
			[]corev1.LoadBalancerIngress{{IP: "192.0.2.10"}, {IP: "192.0.2.11"}, {IP: "2001:db8::10"}}},
		// A load balancer outside AWS: a CNAME.
		{"ext", map[string]string{a + "hostname": "ext.shop.example.com"}, []corev1.LoadBalancerIngress{{Hostname: "lb-1234.example.net"}}},
		// A weighted member to a load balancer; the TTL means nothing on an alias.
		{"app-blue", map[string]string{a + "hostname": "app.shop.example.com", a + "set-identifier": "blue", a + "aws-weight": "100", a + "ttl": "60"},
			[]corev1.LoadBalancerIngress{{Hostname: nlb}}},
		// A weighted member with an IP.
		{"db", map[string]string{a + "hostname": "db.shop.example.com", a + "set-identifier": "blue", a + "aws-weight": "10", a + "ttl": "30"},
			[]corev1.LoadBalancerIngress{{IP: "192.0.2.20"}}},
		// alias stated, target health not evaluated, a Classic ELB.
		{"legacy", map[string]string{a + "hostname": "legacy.shop.example.com", a + "alias": "true", a + "aws-evaluate-target-health": "false", a + "ttl": "120"},
			[]corev1.LoadBalancerIngress{{Hostname: legacyELB}}},
	}
	for i := range services {
		services[i].ann = reprefix(services[i].name, services[i].ann)
	}
	createLoadBalancers(t, cs, services)

	// An ExternalName Service: a CNAME to its external name.
	if _, err := cs.CoreV1().Services(namespace).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "docs", Namespace: namespace, Annotations: reprefix("docs", map[string]string{a + "hostname": "docs.shop.example.com"})},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "docs.example.net"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create service docs: %v", err)
	}

	// A NodePort Service, published at the ExternalIPs of the schedulable Nodes (its SRV
	// records are not a managed type by default, for either tool).
	for _, n := range []struct {
		name          string
		unschedulable bool
		addrs         []corev1.NodeAddress
	}{
		{"node-1", false, []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: "203.0.113.5"}, {Type: corev1.NodeInternalIP, Address: "10.0.0.5"}}},
		{"node-2", false, []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: "2001:db8::5"}, {Type: corev1.NodeInternalIP, Address: "10.0.0.6"}}},
		{"node-3", true, []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: "203.0.113.7"}}},
	} {
		node, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: n.name}, Spec: corev1.NodeSpec{Unschedulable: n.unschedulable}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create node %s: %v", n.name, err)
		}
		node.Status.Addresses = n.addrs
		if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("node %s status: %v", n.name, err)
		}
	}
	if _, err := cs.CoreV1().Services(namespace).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "nodes", Namespace: namespace, Annotations: reprefix("nodes", map[string]string{a + "hostname": "nodes.shop.example.com"})},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeNodePort,
			Selector: map[string]string{"app": "nodes"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create service nodes: %v", err)
	}

	backend := &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}
	ingresses := []struct {
		name  string
		ann   map[string]string
		hosts []string // rules
		tls   []string
		lb    []networkingv1.IngressLoadBalancerIngress
	}{
		// Rules and TLS hosts, a dual-stack ALB.
		{"store", nil, []string{"store.shop.example.com"}, []string{"secure.shop.example.com"},
			[]networkingv1.IngressLoadBalancerIngress{{Hostname: dualstackALB}}},
		// An IP and a TTL.
		{"static", map[string]string{a + "ttl": "600"}, []string{"static.shop.example.com"}, nil,
			[]networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.30"}}},
	}
	for _, in := range ingresses {
		ing := &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Name: in.name, Namespace: namespace, Annotations: reprefix(in.name, in.ann)},
			Spec:       networkingv1.IngressSpec{DefaultBackend: backend},
		}
		for _, h := range in.hosts {
			ing.Spec.Rules = append(ing.Spec.Rules, networkingv1.IngressRule{Host: h})
		}
		if len(in.tls) > 0 {
			ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: in.tls, SecretName: in.name + "-tls"}}
		}
		created, err := cs.NetworkingV1().Ingresses(namespace).Create(ctx, ing, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create ingress %s: %v", in.name, err)
		}
		created.Status.LoadBalancer.Ingress = in.lb
		if _, err := cs.NetworkingV1().Ingresses(namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("ingress %s status: %v", in.name, err)
		}
	}
}

// loadBalancer is a LoadBalancer Service of namespace and the status a cloud controller
// would give it.
type loadBalancer struct {
	name string
	ann  map[string]string
	lb   []corev1.LoadBalancerIngress
}

// createLoadBalancers creates each Service, then writes its status (a create ignores it).
func createLoadBalancers(t *testing.T, cs kubernetes.Interface, services []loadBalancer) {
	t.Helper()
	ctx := t.Context()
	for _, s := range services {
		svc, err := cs.CoreV1().Services(namespace).Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: namespace, Annotations: s.ann},
			Spec: corev1.ServiceSpec{
				Type:     corev1.ServiceTypeLoadBalancer,
				Selector: map[string]string{"app": s.name},
				Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create service %s: %v", s.name, err)
		}
		svc.Status.LoadBalancer.Ingress = s.lb
		if _, err := cs.CoreV1().Services(namespace).UpdateStatus(ctx, svc, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("service %s status: %v", s.name, err)
		}
	}
}

// zone is one sandbox holding one hosted zone, zoneName: each direction gets a fresh one,
// so the API calls the sandbox counts are that direction's alone.
type zone struct {
	sb *sandbox.Sandbox
	id string
}

func newZone(t *testing.T) zone {
	t.Helper()
	sb := sandboxtest.Start(t)
	out, err := route53test.Client(sb).CreateHostedZone(t.Context(), &awsr53.CreateHostedZoneInput{
		Name: aws.String(zoneName), CallerReference: aws.String(t.Name())})
	if err != nil {
		t.Fatal(err)
	}
	return zone{sb: sb, id: aws.ToString(out.HostedZone.Id)}
}

// externalDNS is how external-dns runs over z: both sources, the zone as domain filter,
// public zones (as crossfadeSync reads them), the shared owner id.
func (z zone) externalDNS(kube *kubetest.Cluster) externaldnstest.Options {
	return externaldnstest.Options{
		Kubeconfig: kube.Kubeconfig, Route53URL: z.sb.APIURL(), OwnerID: owner,
		ZoneType: route53.ZoneTypePublic, DomainFilters: []string{zoneName},
	}
}

// waitConverged waits until external-dns has written every record it wants and a loop of
// its own finds nothing more to do: a loop that ends without a ChangeResourceRecordSets
// call, after the zone holds n sets besides its SOA and NS.
func (z zone) waitConverged(t *testing.T, edns *externaldnstest.Process, n int) {
	t.Helper()
	edns.WaitZone(t, z.id, fmt.Sprintf("the %d records external-dns writes", n), func(sets []types.ResourceRecordSet) bool {
		return len(withoutApex(externaldnstest.Render(sets))) >= n
	})
	// A failure bound, not an expectation: external-dns converges in its first loop or
	// two. One that writes loop after loop never does (v0.23.0 with aws-hosted-zone-id).
	for loops := 0; loops < 20; loops++ {
		before := changeCalls(sandboxtest.APICalls(t, z.sb))
		edns.WaitLoops(t, 1)
		if changeCalls(sandboxtest.APICalls(t, z.sb)) == before {
			return
		}
	}
	t.Fatalf("external-dns wrote in each of 20 loops: it does not converge; zone:\n  %s", strings.Join(z.published(t), "\n  "))
}

// published lists z as Route 53 holds it, less its SOA and NS.
func (z zone) published(t *testing.T) []string {
	t.Helper()
	sets, err := externaldnstest.ListSets(t.Context(), route53test.Client(z.sb), z.id)
	if err != nil {
		t.Fatal(err)
	}
	return withoutApex(externaldnstest.Render(sets))
}

func withoutApex(lines []string) []string {
	return slices.DeleteFunc(lines, func(l string) bool {
		name, rest, _ := strings.Cut(l, " ")
		return name == zoneName+"." && (strings.HasPrefix(rest, "SOA ") || strings.HasPrefix(rest, "NS "))
	})
}

// changeCalls counts ChangeResourceRecordSets calls of any result.
func changeCalls(calls map[string]int) int {
	n := 0
	for k, v := range calls {
		if strings.HasPrefix(k, "ChangeResourceRecordSets ") {
			n += v
		}
	}
	return n
}

// crossfadeSync is crossfade's half: it reads the Services, Nodes and Ingresses from the
// API server with client-go and publishes them into z as `crossfade sync`/`controller` do
// — source, then controller.Syncer with the Route 53 provider, the TXT registry under
// owner, policy sync — planning only when dryRun. It returns the changes planned (dryRun)
// or written, one line each, and fails the test on any conflict, refusal, invalid or
// pending object: none of the fixtures should give one.
func crossfadeSync(t *testing.T, kube *kubetest.Cluster, z zone, dryRun bool) []string {
	t.Helper()
	r := crossfadeRun(t, kube, z, dryRun)
	if len(r.invalid) > 0 {
		t.Fatalf("crossfade sync: invalid objects: %v", r.invalid)
	}
	return r.changes
}

// run is what crossfade's half did: the changes planned or written, and the objects it
// refused as invalid (their records are kept as they stand).
type run struct {
	changes, invalid []string
}

// crossfadeRun is crossfadeSync that hands back the invalid objects instead of failing on
// them.
func crossfadeRun(t *testing.T, kube *kubetest.Cluster, z zone, dryRun bool) run {
	t.Helper()
	ctx := t.Context()
	cs := kube.Clientset(t)
	snap := &source.Snapshot{}
	svcs, err := cs.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range svcs.Items {
		snap.Services = append(snap.Services, &svcs.Items[i])
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range nodes.Items {
		snap.Nodes = append(snap.Nodes, &nodes.Items[i])
	}
	ings, err := cs.NetworkingV1().Ingresses("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range ings.Items {
		snap.Ingresses = append(snap.Ingresses, &ings.Items[i])
	}
	src, err := source.New(source.Config{})
	if err != nil {
		t.Fatal(err)
	}
	res := src.Endpoints(snap)
	if len(res.Pending) > 0 {
		t.Fatalf("source: pending %v", res.Pending)
	}
	var r run
	for _, e := range res.Invalid {
		r.invalid = append(r.invalid, e.Error())
	}

	filter := endpoint.NewDomainFilter([]string{zoneName}, nil)
	p, err := route53.New(ctx, route53.Config{
		Endpoint: z.sb.APIURL(), Region: "us-east-1", ZoneType: route53.ZoneTypePublic, DomainFilter: filter,
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(registry.Config{OwnerID: owner})
	if err != nil {
		t.Fatal(err)
	}
	s := &controller.Syncer{Provider: p, Registry: reg, Policy: changes.Sync, DomainFilter: filter, DryRun: dryRun}
	rep, err := s.SyncKeeping(context.WithoutCancel(ctx), res.Endpoints, controller.Keep{Resources: res.Held})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Err(); err != nil {
		t.Fatalf("crossfade sync: %v", err)
	}
	if c := rep.Conflicts(); len(c) > 0 {
		t.Fatalf("crossfade sync: conflicts or refusals: %v", c)
	}
	if len(rep.Unzoned) > 0 {
		t.Fatalf("crossfade sync: names no zone holds: %v", rep.Unzoned)
	}
	for _, zr := range rep.Zones {
		for _, b := range zr.Changes.Batches {
			for _, c := range b {
				r.changes = append(r.changes, fmt.Sprintf("%s: %s %s ttl=%d %v", zr.Zone.Name, c.Action, c.Endpoint, c.Endpoint.TTL, props(c.Endpoint)))
			}
		}
	}
	return r
}

// props renders e's routing policy, labels and provider-specific properties.
func props(e *endpoint.Endpoint) string {
	var kv []string
	if e.Policy.Kind == endpoint.Weighted {
		kv = append(kv, fmt.Sprintf("weight=%d", e.Policy.Weight))
	}
	for _, k := range slices.Sorted(maps.Keys(e.ProviderSpecific)) {
		kv = append(kv, k+"="+e.ProviderSpecific[k])
	}
	for _, k := range slices.Sorted(maps.Keys(e.Labels)) {
		kv = append(kv, "label:"+k+"="+e.Labels[k])
	}
	return "{" + strings.Join(kv, " ") + "}"
}

// diff renders the lines only got has (+) and only want has (-).
func diff(got, want []string) string {
	var b strings.Builder
	for _, l := range got {
		if !slices.Contains(want, l) {
			b.WriteString("  + " + l + "\n")
		}
	}
	for _, l := range want {
		if !slices.Contains(got, l) {
			b.WriteString("  - " + l + "\n")
		}
	}
	return b.String()
}
