package sidebyside

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/crossfade-io/crossfade/internal/controllertest"
	"github.com/crossfade-io/crossfade/internal/externaldnstest"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/registry/crdstore"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

func TestMain(m *testing.M) { controllertest.Main(m) }

// startCrossfade runs `crossfade controller` over the cluster and zone as external-dns
// runs there (same sources, owner, domain filter and zone type), with args after those.
func startCrossfade(t *testing.T, name string, kube *kubetest.Cluster, z zone, owner string, args ...string) *controllertest.Process {
	t.Helper()
	return controllertest.Start(t, controllertest.Options{Name: name, Kubeconfig: kube.Kubeconfig, Route53URL: z.sb.APIURL(),
		Args: append([]string{"--source=service", "--source=ingress", "--provider=aws", "--registry=txt", "--txt-owner-id=" + owner,
			"--domain-filter=" + zoneName, "--aws-zone-type=public", "--leader-elect=false", "--interval=1s"}, args...)})
}

// takeover is one external-dns release TestControllerTakesOverFromExternalDNS hands a zone
// from and back to.
type takeover struct {
	rel externaldnstest.Release
	// legacy runs both tools with --enable-legacy-annotation-prefix.
	legacy bool
	// prefixOf is the annotation prefix each fixture object is written under (nil: the
	// legacy one for all).
	prefixOf func(object string) string
	// extra are annotations added to fixture objects, by object name, under the object's
	// prefix: what only this release reads.
	extra map[string]map[string]string
	// crdRegistry runs both tools with --registry crd --crd-registry-namespace
	// crdRegistryNamespace: ownership in DNSRecord objects, no TXT records in the zone.
	crdRegistry bool
	// txtRecords adds a TXT record to the DNSEndpoint and runs both tools with
	// --managed-record-types=A,AAAA,CNAME,TXT (managedTypes).
	txtRecords bool
	// pin ends the row with checkPinnedRecords (aws-hosted-zone-id, v0.23's).
	pin bool
}

// managedTypes are the record types both tools manage in a row with txtRecords: their
// default (A, AAAA, CNAME) and TXT. Repeated flags: external-dns's kingpin takes one
// type a flag (a comma is not a separator there); crossfade's pflag takes either form.
var managedTypes = []string{"--managed-record-types=A", "--managed-record-types=AAAA", "--managed-record-types=CNAME", "--managed-record-types=TXT"}

// The TXT record txtRecords adds to the DNSEndpoint: a value as Route 53 takes it (quoted;
// neither tool quotes a DNSEndpoint's TXT target for it).
const (
	txtRecordName  = "spf." + zoneName
	txtRecordValue = `"v=spf1 -all"`
)

// name is the subtest's name: the release, and the registry when it is not txt.
func (tc takeover) name() string {
	if tc.crdRegistry {
		return tc.rel.Version + " --registry crd"
	}
	return tc.rel.Version
}

// crdRegistryNamespace holds the DNSRecords of the takeover under --registry crd, apart
// from the fixtures.
const crdRegistryNamespace = "dns-registry"

// v023PrefixOf puts half the fixtures under v0.23.0's new prefix and half under the
// legacy one, as a cluster half-way through renaming its annotations: v0.23.0 reads the
// legacy one only with --enable-legacy-annotation-prefix.
func v023PrefixOf(object string) string {
	switch object {
	case "web", "ext", "db", "docs", "store", "app-green", "endpoints":
		return newPrefix
	}
	return legacyPrefix
}

var takeovers = []takeover{
	{
		// No txtRecords: v0.21.0 creates a DNSEndpoint's TXT record and its ownership
		// record (txt-NAME) but never owns it after: its registry/mapper has no "txt-" type
		// prefix (supportedRecords, added in v0.23's PR 6435), so it reads txt-NAME back as
		// the legacy ownership record of a record named "txt-NAME", and the TXT record as
		// one of no owner, which it never updates or deletes. No pin: aws-hosted-zone-id
		// is v0.23's (PR 6559); v0.21.0 writes such a record into every zone of its name.
		rel: externaldnstest.V021,
	},
	{
		rel: externaldnstest.V023, legacy: true, prefixOf: v023PrefixOf,
		// Both prefixes on one object with different values: the new one wins.
		extra:      map[string]map[string]string{"api": {newPrefix + "ttl": "90"}},
		txtRecords: true, pin: true,
	},
	{
		// The same fixtures, ownership in DNSRecord objects (v0.23.0's --registry crd).
		rel: externaldnstest.V023, legacy: true, prefixOf: v023PrefixOf,
		extra:       map[string]map[string]string{"api": {newPrefix + "ttl": "90"}},
		crdRegistry: true,
		txtRecords:  true, pin: true,
	},
}

// TestControllerTakesOverFromExternalDNS, for each external-dns release: external-dns
// manages a zone from Services, Ingresses, DNSEndpoints and Gateway API routes (a
// dual-stack load balancer, a weighted pair, aliases, CNAMEs, an A/AAAA DNSEndpoint, an
// HTTPRoute and a GRPCRoute on a Gateway of the real Gateway API CRDs, for v0.23.0 both
// annotation prefixes and a DNSEndpoint's TXT record); it is stopped and `crossfade
// controller` starts with the same owner id over the same cluster: it makes 0 changes and
// finds no conflict, reconcile after reconcile. Then it is stopped and external-dns
// started again: 0 changes again. The handover external-dns users do today by deleting
// one Deployment and creating another, without a record touched.
//
// The row "v0.23.0 --registry crd" runs both tools with the CRD registry (ownership in
// DNSRecord objects, no TXT records): there 0 changes also means no DNSRecord written by
// crossfade, spec or status, and none by external-dns after it (resourceVersions compared).
//
// What a row leaves out, and why, is on its takeover (v0.21.0: TXT records and the pin).
// The v0.23.0 rows end with checkPinnedRecords (aws-hosted-zone-id, crossfade's side
// only: v0.23.0 itself never converges on a pinned record). v0.23.0's other annotations
// are TestControllerTakesOverV023Annotations.
func TestControllerTakesOverFromExternalDNS(t *testing.T) {
	for _, tc := range takeovers {
		t.Run(tc.name(), func(t *testing.T) {
			kube := kubetest.Start(t)
			n := controllerFixtures(t, kube, tc)
			z := newZone(t)

			opts := z.externalDNS(kube)
			opts.Release, opts.LegacyAnnotationPrefix = tc.rel, tc.legacy
			// The gateway sources need no other flag in either release (source/gateway.go):
			// ListenerSets are read only with --gateway-listener-sets (off by default), so
			// their CRD need not be installed.
			opts.Sources = []string{"service", "ingress", "crd", "gateway-httproute", "gateway-grpcroute"}
			args := []string{"--source=crd", "--source=gateway-httproute", "--source=gateway-grpcroute"}
			if tc.txtRecords {
				opts.Args = append(opts.Args, managedTypes...)
				args = append(args, managedTypes...)
			}
			if tc.crdRegistry {
				installDNSRecords(t, kube)
				opts.Registry = "crd"
				opts.Args = append(opts.Args, "--crd-registry-namespace="+crdRegistryNamespace)
				// Repeated after startCrossfade's --registry=txt: the last one wins.
				args = append(args, "--registry=crd", "--crd-registry-namespace="+crdRegistryNamespace)
			}
			edns := externaldnstest.Start(t, opts)
			z.waitConverged(t, edns, n)
			written := z.published(t)
			if err := edns.Stop(); err != nil {
				t.Fatal(err)
			}
			checkWritten(t, tc, written)
			var records []string
			if tc.crdRegistry {
				records = dnsRecords(t, kube)
				checkDNSRecords(t, tc, written, records)
			}

			if tc.legacy {
				args = append(args, "--enable-legacy-annotation-prefix")
			}
			before := changeCalls(sandboxtest.APICalls(t, z.sb))
			cf := startCrossfade(t, "crossfade", kube, z, owner, args...)
			cf.WaitReconciles(t, 5, time.Minute) // five reconciles, one a second
			if n := changeCalls(sandboxtest.APICalls(t, z.sb)) - before; n != 0 {
				t.Errorf("crossfade controller sent %d ChangeResourceRecordSets over external-dns %s's zone:\n%s", n, tc.rel.Version, diff(z.published(t), written))
			}
			if got := cf.Metric(t, "crossfade_conflicts"); got != 0 {
				t.Errorf("crossfade_conflicts = %v over a zone of its own owner id", got)
			}
			cf.Stop(t)
			if tc.crdRegistry {
				// 0 changes under the CRD registry is no write to a DNSRecord either: not
				// its spec, not its status (each write moves the resourceVersion).
				if now := dnsRecords(t, kube); !slices.Equal(now, records) {
					t.Errorf("crossfade controller wrote DNSRecords in %s over external-dns %s's:\n%s", crdRegistryNamespace, tc.rel.Version, diff(now, records))
				}
			}

			before = changeCalls(sandboxtest.APICalls(t, z.sb))
			edns = externaldnstest.Start(t, opts)
			edns.WaitLoops(t, 2)
			if n := changeCalls(sandboxtest.APICalls(t, z.sb)) - before; n != 0 {
				t.Errorf("external-dns %s sent %d ChangeResourceRecordSets after crossfade handed back", tc.rel.Version, n)
			}
			if now := z.published(t); !slices.Equal(now, written) {
				t.Errorf("the zone changed across the handover and back:\n%s", diff(now, written))
			}
			if tc.crdRegistry {
				if now := dnsRecords(t, kube); !slices.Equal(now, records) {
					t.Errorf("the DNSRecords changed across the handover and back:\n%s", diff(now, records))
				}
			}

			if tc.pin {
				if err := edns.Stop(); err != nil {
					t.Fatal(err)
				}
				checkPinnedRecords(t, tc, kube, z, written, args)
			}
		})
	}
}

// controllerFixtures creates createFixtures' objects under tc's prefixes, plus a second
// weighted member beside app-blue (a weighted pair) and a DNSEndpoint with an A and an
// AAAA record, and returns how many record sets external-dns writes for them: want's,
// plus two records and their two ownership TXT records for each of the two additions.
func controllerFixtures(t *testing.T, kube *kubetest.Cluster, tc takeover) int {
	t.Helper()
	ctx := t.Context()
	cs := kube.Clientset(t)
	createFixtures(t, cs, tc.prefixOf)
	prefix := func(object string) string {
		if tc.prefixOf == nil {
			return legacyPrefix
		}
		return tc.prefixOf(object)
	}
	p := prefix("app-green")
	createLoadBalancers(t, cs, []loadBalancer{{"app-green", map[string]string{
		p + "hostname": "app.shop.example.com", p + "set-identifier": "green", p + "aws-weight": "0"},
		[]corev1.LoadBalancerIngress{{Hostname: nlb}}}})
	for object, ann := range tc.extra {
		svc, err := cs.CoreV1().Services(namespace).Get(ctx, object, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("annotate service %s: %v", object, err)
		}
		maps.Copy(svc.Annotations, ann)
		if _, err := cs.CoreV1().Services(namespace).Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("annotate service %s: %v", object, err)
		}
	}

	endpoints := []any{
		map[string]any{"dnsName": "crd.shop.example.com", "recordType": "A", "targets": []any{"192.0.2.40"}, "recordTTL": int64(120)},
		map[string]any{"dnsName": "crd.shop.example.com", "recordType": "AAAA", "targets": []any{"2001:db8::40"}, "recordTTL": int64(120)},
	}
	txt := 0
	if tc.txtRecords {
		endpoints = append(endpoints, map[string]any{"dnsName": txtRecordName, "recordType": "TXT", "targets": []any{txtRecordValue}})
		txt = 1 // the record; its ownership TXT record under the TXT registry
		if !tc.crdRegistry {
			txt = 2
		}
	}
	createDNSEndpoint(t, kube, "endpoints", endpoints...)

	installGatewayAPI(t, kube)
	createGatewayRoutes(t, kube, prefix("shop-web"))

	if tc.crdRegistry {
		// No ownership TXT records: want's other records, and the two additions' two each.
		return len(slices.DeleteFunc(slices.Clone(want), isTXT)) + 2 + 2 + txt + gatewayRecords(true)
	}
	return len(want) + 4 + 4 + txt + gatewayRecords(false)
}

// isTXT reports whether a line of externaldnstest.Render is a TXT record set.
func isTXT(line string) bool {
	_, rest, _ := strings.Cut(line, " ")
	return strings.HasPrefix(rest, "TXT ")
}

// installDNSRecords installs the DNSRecord CRD crossfade ships (deploy/crds, v0.23.0's
// own) and creates crdRegistryNamespace for them.
func installDNSRecords(t *testing.T, kube *kubetest.Cluster) {
	t.Helper()
	kube.InstallCRDs(t, filepath.Join("..", "..", "deploy", "crds", "dnsrecords.externaldns.k8s.io.yaml"))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: crdRegistryNamespace}}
	if _, err := kube.Clientset(t).CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", crdRegistryNamespace, err)
	}
}

// dnsRecords lists the DNSRecords of crdRegistryNamespace one a line, sorted: name,
// resourceVersion, owner label, spec and status as JSON. Two listings that render the same
// hold the same objects, unwritten in between (any write, of status too, moves the
// resourceVersion).
func dnsRecords(t *testing.T, kube *kubetest.Cluster) []string {
	t.Helper()
	list, err := dynamic.NewForConfigOrDie(kube.Config()).Resource(crdstore.Resource).Namespace(crdRegistryNamespace).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list DNSRecords in %s: %v", crdRegistryNamespace, err)
	}
	out := make([]string, 0, len(list.Items))
	for _, u := range list.Items {
		spec, err := json.Marshal(u.Object["spec"])
		if err != nil {
			t.Fatalf("DNSRecord %s/%s: spec: %v", crdRegistryNamespace, u.GetName(), err)
		}
		status, err := json.Marshal(u.Object["status"])
		if err != nil {
			t.Fatalf("DNSRecord %s/%s: status: %v", crdRegistryNamespace, u.GetName(), err)
		}
		out = append(out, fmt.Sprintf("%s resourceVersion=%s owner=%s spec=%s status=%s",
			u.GetName(), u.GetResourceVersion(), u.GetLabels()["externaldns.k8s.io/owner"], spec, status))
	}
	slices.Sort(out)
	return out
}

// checkDNSRecords checks what external-dns tc.rel wrote under the CRD registry: no TXT
// record in the zone, and one DNSRecord of owner per record set it wrote.
func checkDNSRecords(t *testing.T, tc takeover, written, records []string) {
	t.Helper()
	for _, l := range written {
		if isTXT(l) && !strings.HasPrefix(l, txtRecordName+". ") {
			t.Errorf("external-dns %s --registry crd wrote an ownership TXT record: %s", tc.rel.Version, l)
		}
	}
	if len(records) != len(written) {
		t.Errorf("external-dns %s --registry crd wrote %d DNSRecords for %d record sets:\n  %s\nzone:\n  %s", tc.rel.Version,
			len(records), len(written), strings.Join(records, "\n  "), strings.Join(written, "\n  "))
	}
	for _, r := range records {
		if !strings.Contains(r, " owner="+owner+" ") {
			t.Errorf("external-dns %s: a DNSRecord not of owner %s: %s", tc.rel.Version, owner, r)
		}
	}
}

// createDNSEndpoint installs the DNSEndpoint CRD crossfade ships (deploy/crds) and creates
// DNSEndpoint name in namespace with endpoints.
func createDNSEndpoint(t *testing.T, kube *kubetest.Cluster, name string, endpoints ...any) {
	t.Helper()
	kube.InstallCRDs(t, filepath.Join("..", "..", "deploy", "crds", "dnsendpoints.externaldns.k8s.io.yaml"))
	de := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "externaldns.k8s.io/v1alpha1", "kind": "DNSEndpoint",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"spec":     map[string]any{"endpoints": endpoints},
	}}
	gvr := schema.GroupVersionResource{Group: "externaldns.k8s.io", Version: "v1alpha1", Resource: "dnsendpoints"}
	if _, err := dynamic.NewForConfigOrDie(kube.Config()).Resource(gvr).Namespace(namespace).Create(t.Context(), de, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create dnsendpoint %s/%s: %v", namespace, name, err)
	}
}

// checkWritten checks what tells tc's release apart in the zone it wrote: the ownership TXT
// record of an alias A (cname- or a-; none under the CRD registry: checkDNSRecords), and,
// where both prefixes are set on api, the new one's TTL.
func checkWritten(t *testing.T, tc takeover, written []string) {
	t.Helper()
	zone := strings.Join(written, "\n")
	aliases := []string{"web", "www", "store", "secure", "legacy"}
	if tc.crdRegistry {
		aliases = nil
	}
	for _, name := range aliases {
		if want := tc.rel.AliasAOwnershipPrefix + name + "." + zoneName + ". TXT "; !strings.Contains(zone, want) {
			t.Errorf("external-dns %s: no %q record owning the alias A of %s:\n%s", tc.rel.Version, want, name, zone)
		}
	}
	// The Gateway routes and the DNSEndpoint's TXT record: published, or the takeover of
	// them would prove nothing.
	lines := []string{
		httpRouteHost + ". A ttl=120 192.0.2.80", httpRouteHost + ". AAAA ttl=120 2001:db8::80",
		grpcRouteHost + ". A ttl=300 192.0.2.80", grpcRouteHost + ". AAAA ttl=300 2001:db8::80",
	}
	if tc.txtRecords {
		lines = append(lines, txtRecordName+". TXT ttl=300 "+txtRecordValue)
		if !tc.crdRegistry {
			lines = append(lines, "txt-"+txtRecordName+". TXT ttl=300 ")
		}
	}
	for _, l := range lines {
		if !slices.ContainsFunc(written, func(w string) bool { return strings.HasPrefix(w, l) }) {
			t.Errorf("external-dns %s wrote no %q:\n%s", tc.rel.Version, l, zone)
		}
	}
	if _, ok := tc.extra["api"][newPrefix+"ttl"]; ok {
		if want := "api." + zoneName + ". A ttl=90 "; !strings.Contains(zone, want) {
			t.Errorf("external-dns %s: the new prefix's ttl did not win (want %q):\n%s", tc.rel.Version, want, zone)
		}
	}
}

// TestTwoClustersOneNameWithExternalDNS: two clusters (two API servers) publish one name,
// each its own weighted member (set identifier = cluster id) under its own owner id: one
// cluster runs crossfade, the other external-dns. Both members live through many loops of
// both; neither deletes or rewrites the other's, and neither writes at all once both
// members stand.
func TestTwoClustersOneNameWithExternalDNS(t *testing.T) {
	z := newZone(t)
	blue, green := kubetest.Start(t), kubetest.Start(t)
	member(t, blue.Clientset(t), "blue", "192.0.2.10")
	member(t, green.Clientset(t), "green", "192.0.2.20")

	startCrossfade(t, "crossfade (blue)", blue, z, "blue")
	opts := z.externalDNS(green)
	opts.OwnerID = "green"
	opts.Interval = 2 * time.Second
	edns := externaldnstest.Start(t, opts)

	both := func(lines []string) bool {
		s := strings.Join(lines, "\n")
		return strings.Contains(s, "[blue]") && strings.Contains(s, "[green]")
	}
	deadline := time.Now().Add(60 * time.Second)
	for !both(z.published(t)) {
		if time.Now().After(deadline) {
			t.Fatalf("both members never stood:\n%s", strings.Join(z.published(t), "\n"))
		}
		time.Sleep(200 * time.Millisecond)
	}
	edns.WaitLoops(t, 1)
	before := z.published(t)
	calls := changeCalls(sandboxtest.APICalls(t, z.sb))
	edns.WaitLoops(t, 3) // three more external-dns loops; crossfade reconciles every second meanwhile
	after := z.published(t)
	if !slices.Equal(before, after) || !both(after) {
		t.Errorf("the members moved while both clusters want theirs:\n%s", diff(after, before))
	}
	if n := changeCalls(sandboxtest.APICalls(t, z.sb)) - calls; n != 0 {
		t.Errorf("%d ChangeResourceRecordSets while nothing changed: the two fight over the name", n)
	}
}

// member creates a LoadBalancer Service publishing www.<zone> as the cluster's weighted
// member.
func member(t *testing.T, cs kubernetes.Interface, cluster, ip string) {
	t.Helper()
	svc, err := cs.CoreV1().Services("default").Create(t.Context(), &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "www", Namespace: "default", Annotations: map[string]string{
			"external-dns.alpha.kubernetes.io/hostname":       "www." + zoneName,
			"external-dns.alpha.kubernetes.io/set-identifier": cluster,
			"external-dns.alpha.kubernetes.io/aws-weight":     "50",
		}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, AllocateLoadBalancerNodePorts: ptr(false),
			Ports: []corev1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: ip}}
	if _, err := cs.CoreV1().Services("default").UpdateStatus(t.Context(), svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func ptr[T any](v T) *T { return &v }

// TestControllerTakesOverV023Annotations: external-dns v0.23.0 publishes, beside a plain
// A record, one object carrying an annotation v0.23.0 added; `crossfade controller` takes
// the zone over with 0 changes and hands it back with 0 changes, as in
// TestControllerTakesOverFromExternalDNS.
//
// Not here: a record pinned with aws-hosted-zone-id (PR 6559). external-dns v0.23.0 itself
// never converges on one: its AWS provider does not put aws/hosted-zone-id back on the
// records it reads, so every loop UPSERTs the pinned record and its TXT record. crossfade's
// side (the record goes to the pinned zone only, and the next sync plans nothing) is
// checkPinnedRecords, at the end of TestControllerTakesOverFromExternalDNS's v0.23.0 rows, and
// internal/provider/route53's TestHostedZonePinAndAliasOfOneType.
func TestControllerTakesOverV023Annotations(t *testing.T) {
	for _, tc := range []struct {
		name string
		// ann are the Service's annotations.
		ann map[string]string
		lb  []corev1.LoadBalancerIngress
		// sets is how many record sets external-dns writes in all zones, the plain
		// record's included.
		sets int
		// has and hasNot are lines (prefixes) the zones external-dns wrote must and must
		// not hold.
		has, hasNot []string
		// endpoint, when set, is published as a DNSEndpoint's one endpoint instead of the
		// Service's annotations (ann and lb unused), both tools with --source=crd too.
		endpoint map[string]any
	}{
		{
			// PR 5997 is a DNSEndpoint property: v0.23.0 reads the alias annotation of a
			// Service or Ingress as "true" or nothing (source/annotations
			// hasAliasFromAnnotations), so alias: AAAA there is ignored and a load balancer
			// gets its alias A and AAAA as without it. crossfade must do the same.
			name: "alias=AAAA annotation",
			ann:  map[string]string{newPrefix + "hostname": "v6." + zoneName, newPrefix + "alias": "AAAA"},
			lb:   []corev1.LoadBalancerIngress{{Hostname: dualstackALB}},
			sets: 2 + 4,
			has: []string{"v6." + zoneName + ". A alias=" + dualstackALB + ".", "a-v6." + zoneName + ". TXT ",
				"v6." + zoneName + ". AAAA alias=" + dualstackALB + ".", "aaaa-v6." + zoneName + ". TXT "},
		},
		{
			// PR 5997: a DNSEndpoint's alias property AAAA: an alias AAAA alone, owned by
			// its aaaa- TXT record.
			name: "alias=AAAA DNSEndpoint",
			endpoint: map[string]any{"dnsName": "v6." + zoneName, "recordType": "CNAME", "targets": []any{dualstackALB},
				"providerSpecific": []any{map[string]any{"name": "alias", "value": "AAAA"}}},
			sets:   2 + 2,
			has:    []string{"v6." + zoneName + ". AAAA alias=" + dualstackALB + ".", "aaaa-v6." + zoneName + ". TXT "},
			hasNot: []string{"v6." + zoneName + ". A ", "a-v6." + zoneName + ". TXT ", "cname-v6." + zoneName + ". TXT "},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kube := kubetest.Start(t)
			cs := kube.Clientset(t)
			if _, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			z := newZone(t)
			zones := []zone{z}
			lbs := []loadBalancer{{"plain", map[string]string{newPrefix + "hostname": "plain." + zoneName}, []corev1.LoadBalancerIngress{{IP: "192.0.2.60"}}}}
			if tc.endpoint == nil {
				lbs = append(lbs, loadBalancer{"subject", tc.ann, tc.lb})
			}
			createLoadBalancers(t, cs, lbs)
			var crd []string
			if tc.endpoint != nil {
				createDNSEndpoint(t, kube, "subject", tc.endpoint)
				crd = []string{"--source=crd"}
			}
			all := func() []string {
				var out []string
				for _, z := range zones {
					for _, l := range z.published(t) {
						out = append(out, z.id+" "+l)
					}
				}
				return out
			}

			opts := z.externalDNS(kube)
			opts.Release = externaldnstest.V023
			if crd != nil {
				opts.Sources = []string{"service", "ingress", "crd"}
			}
			edns := externaldnstest.Start(t, opts)
			// A failure bound, not an expectation: external-dns writes them in its first loop.
			for loops := 0; len(all()) < tc.sets; loops++ {
				if loops == 10 {
					t.Fatalf("external-dns v0.23.0 wrote %d record sets in %d loops, want %d:\n%s", len(all()), loops, tc.sets, strings.Join(all(), "\n"))
				}
				edns.WaitLoops(t, 1)
			}
			z.waitConverged(t, edns, 0)
			written := all()
			if err := edns.Stop(); err != nil {
				t.Fatal(err)
			}
			holds := func(prefix string) bool {
				return slices.ContainsFunc(written, func(l string) bool {
					_, l, _ = strings.Cut(l, " ") // the zone id
					return strings.HasPrefix(l, prefix)
				})
			}
			for _, l := range tc.has {
				if !holds(l) {
					t.Errorf("external-dns v0.23.0 wrote no %q:\n%s", l, strings.Join(written, "\n"))
				}
			}
			for _, l := range tc.hasNot {
				if holds(l) {
					t.Errorf("external-dns v0.23.0 wrote %q:\n%s", l, strings.Join(written, "\n"))
				}
			}

			args := crd
			before := changeCalls(sandboxtest.APICalls(t, z.sb))
			cf := startCrossfade(t, "crossfade", kube, z, owner, args...)
			cf.WaitReconciles(t, 5, time.Minute)
			if n := changeCalls(sandboxtest.APICalls(t, z.sb)) - before; n != 0 {
				t.Errorf("crossfade controller sent %d ChangeResourceRecordSets over external-dns v0.23.0's zones:\n%s", n, diff(all(), written))
			}
			cf.Stop(t)

			before = changeCalls(sandboxtest.APICalls(t, z.sb))
			edns = externaldnstest.Start(t, opts)
			edns.WaitLoops(t, 2)
			if n := changeCalls(sandboxtest.APICalls(t, z.sb)) - before; n != 0 {
				t.Errorf("external-dns v0.23.0 sent %d ChangeResourceRecordSets after crossfade handed back", n)
			}
			if now := all(); !slices.Equal(now, written) {
				t.Errorf("the zones changed across the handover and back:\n%s", diff(now, written))
			}
		})
	}
}
