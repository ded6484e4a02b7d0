package route53

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/source"
)

// TestHostedZonePinAndAliasOfOneType runs external-dns v0.23's aws-hosted-zone-id
// annotation and its alias "A" / "AAAA" from the sources through controller.Syncer to the
// sandbox, with a public and a private zone of the same name: an unpinned record goes into
// both (as external-dns writes it), a pinned one into its zone alone, and one pinned to a
// zone that is not a managed zone holding it into none, said so in Report.Unzoned; an alias
// of one type is written as that type alone, also to a load balancer. The next sync plans
// nothing (the pin is never written, so what is read back is what is wanted), and moving
// the pin moves the record: created in the new zone, deleted from the old, in one sync.
func TestHostedZonePinAndAliasOfOneType(t *testing.T) {
	const alb = "k8s-default-web-0123456789-1234567890.us-east-1.elb.amazonaws.com"
	sb := startSandbox(t)
	pub := createZone(t, sb, "example.com", false)
	priv := createZone(t, sb, "example.com", true)
	p := newTestProvider(t, sb, Config{})
	reg, err := registry.New(registry.Config{OwnerID: "blue"})
	if err != nil {
		t.Fatal(err)
	}
	s := &controller.Syncer{Provider: p, Registry: reg}
	src, err := source.New(source.Config{})
	if err != nil {
		t.Fatal(err)
	}
	svc := func(name, addr string, ann ...string) *corev1.Service {
		m := map[string]string{source.PrefixStable + "hostname": name + ".example.com"}
		for i := 0; i+1 < len(ann); i += 2 {
			m[source.PrefixStable+ann[i]] = ann[i+1]
		}
		return &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Annotations: m},
			Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIP: "10.0.0.1"},
			Status:     corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: addr}}}},
		}
	}
	alias := func(name, only string) *source.DNSEndpointRecord {
		return &source.DNSEndpointRecord{DNSName: name + ".example.com", RecordType: "CNAME", Targets: []string{alb},
			ProviderSpecific: []source.ProviderSpecificProp{{Name: "alias", Value: only}}}
	}
	snapshot := func(insideZone string) *source.Snapshot {
		return &source.Snapshot{
			Services: []*corev1.Service{
				svc("both", "192.0.2.1"),
				svc("inside", "10.1.0.1", "aws-hosted-zone-id", insideZone),
				svc("outside", "192.0.2.2", "aws-hosted-zone-id", "/hostedzone/"+pub.ID),
				svc("nowhere", "192.0.2.3", "aws-hosted-zone-id", "Z0NOTAMANAGEDZONE"),
			},
			DNSEndpoints: []*source.DNSEndpoint{{ObjectMeta: metav1.ObjectMeta{Name: "lb", Namespace: "default"},
				Spec: source.DNSEndpointSpec{Endpoints: []*source.DNSEndpointRecord{alias("v4", "A"), alias("v6", "AAAA")}}}},
		}
	}
	sync := func(step string, snap *source.Snapshot) *controller.Report {
		t.Helper()
		res := src.Endpoints(snap)
		if len(res.Invalid) > 0 || len(res.Pending) > 0 {
			t.Fatalf("%s: source: invalid %v, pending %v", step, res.Invalid, res.Pending)
		}
		rep, err := s.Sync(context.Background(), res.Endpoints)
		if err != nil || rep.Err() != nil || len(rep.Conflicts()) > 0 {
			t.Fatalf("%s: %v, %v, conflicts %v", step, err, rep.Err(), rep.Conflicts())
		}
		return rep
	}
	zone := func(z provider.Zone) []string {
		var out []string
		for _, r := range render(managed(records(t, p, z))) {
			if !strings.Contains(r, " TXT ") { // the ownership records follow their records
				out = append(out, r)
			}
		}
		return out
	}
	check := func(step string, wantPub, wantPriv []string) {
		t.Helper()
		if got := zone(pub); !slices.Equal(got, wantPub) {
			t.Errorf("%s: public zone\n got %q\nwant %q", step, got, wantPub)
		}
		if got := zone(priv); !slices.Equal(got, wantPriv) {
			t.Errorf("%s: private zone\n got %q\nwant %q", step, got, wantPriv)
		}
	}
	quiet := func(step string, snap *source.Snapshot) {
		t.Helper()
		for _, zr := range sync(step+", again", snap).Zones {
			if len(zr.Changes.Batches) > 0 || zr.Changes.Summary != (changes.Summary{}) {
				t.Errorf("%s: the next sync plans %+v in %s: %v", step, zr.Changes.Summary, zr.Zone, zr.Changes.Batches)
			}
		}
	}

	rep := sync("first", snapshot(priv.ID))
	if want := []string{"nowhere.example.com (pinned by aws/hosted-zone-id to hosted zone Z0NOTAMANAGEDZONE, which is not a managed zone of the longest name holding it)"}; !slices.Equal(rep.Unzoned, want) {
		t.Errorf("unzoned %q, want %q", rep.Unzoned, want)
	}
	shared := []string{"both.example.com A 192.0.2.1", "v4.example.com A " + alb, "v6.example.com AAAA " + alb}
	check("first", slices.Concat(shared[:1], []string{"outside.example.com A 192.0.2.2"}, shared[1:]),
		slices.Concat(shared[:1], []string{"inside.example.com A 10.1.0.1"}, shared[1:]))
	quiet("first", snapshot(priv.ID))

	sync("pin moved to the public zone", snapshot(pub.ID))
	check("pin moved", slices.Concat(shared[:1], []string{"inside.example.com A 10.1.0.1", "outside.example.com A 192.0.2.2"}, shared[1:]), shared)
	quiet("pin moved", snapshot(pub.ID))
	for _, z := range []provider.Zone{pub, priv} {
		for _, r := range records(t, p, z) {
			if _, ok := r.Prop(endpoint.PropHostedZoneID); ok {
				t.Errorf("%s read back with the pin: %v", r, r.ProviderSpecific)
			}
		}
	}
}
