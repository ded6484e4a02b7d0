package sidebyside

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsr53 "github.com/aws/aws-sdk-go-v2/service/route53"
	r53types "github.com/aws/aws-sdk-go-v2/service/route53/types"
	corev1 "k8s.io/api/core/v1"

	"github.com/crossfade-io/crossfade/internal/controllertest"
	"github.com/crossfade-io/crossfade/internal/externaldnstest"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/provider/route53/route53test"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// pinZoneName names the two hosted zones, one public and one private, that
// checkPinnedRecords pins records to: below zoneName, so that both tools' domain filter
// takes them, and apart from it, so that zoneName's records stay in zoneName's zone.
const pinZoneName = "pinned." + zoneName

// createPinZone creates, in z's sandbox, a hosted zone named pinZoneName, private or
// public.
func createPinZone(t *testing.T, z zone, private bool) zone {
	t.Helper()
	in := &awsr53.CreateHostedZoneInput{Name: aws.String(pinZoneName), CallerReference: aws.String(fmt.Sprintf("%s/pinned/private=%t", t.Name(), private))}
	if private {
		in.HostedZoneConfig = &r53types.HostedZoneConfig{PrivateZone: true}
		in.VPC = &r53types.VPC{VPCId: aws.String("vpc-0123456789abcdef0"), VPCRegion: r53types.VPCRegionUsEast1}
	}
	out, err := route53test.Client(z.sb).CreateHostedZone(t.Context(), in)
	if err != nil {
		t.Fatalf("create the zone %s (private %t): %v", pinZoneName, private, err)
	}
	return zone{sb: z.sb, id: aws.ToString(out.HostedZone.Id)}
}

// pinZoneRecords lists the pinZoneName zone z as zone.published lists zoneName's: less
// its SOA and NS.
func pinZoneRecords(t *testing.T, z zone) []string {
	t.Helper()
	sets, err := externaldnstest.ListSets(t.Context(), route53test.Client(z.sb), z.id)
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(externaldnstest.Render(sets), func(l string) bool {
		name, rest, _ := strings.Cut(l, " ")
		return name == pinZoneName+"." && (strings.HasPrefix(rest, "SOA ") || strings.HasPrefix(rest, "NS "))
	})
}

// bareZoneID is a zone id without Route 53's "/hostedzone/", as a person writes it in
// the aws-hosted-zone-id annotation.
func bareZoneID(id string) string { return strings.TrimPrefix(id, "/hostedzone/") }

// reconciles is how many reconciles cf has finished, of either result.
func reconciles(t *testing.T, cf *controllertest.Process) int {
	t.Helper()
	return int(cf.Metric(t, `crossfade_reconciles_total{result="ok"}`) + cf.Metric(t, `crossfade_reconciles_total{result="error"}`))
}

// checkPinnedRecords is the aws-hosted-zone-id part of the takeover (external-dns v0.23's
// PR 6559), crossfade's side only: once external-dns has handed the zone back and is
// stopped again, two hosted zones of one name join zoneName's, one public and one private
// (pinZoneName), and two Services are pinned, one to each. `crossfade controller` with the
// same owner id over all zones (--aws-zone-type="", and args, the row's other flags)
// writes each pinned record, with its ownership under the row's registry, into its pinned
// zone only; leaves zoneName's zone as external-dns wrote it (written); and then,
// reconcile after reconcile, makes 0 changes and finds no conflict. The pinned zones are
// named apart from zoneName so that only the two pinned records land in them: a private
// zone named zoneName would take a copy of every record (both tools write a record into
// every zone of its name), which under --registry crd costs one DNSRecord each.
//
// Not handed to external-dns v0.23.0 and back: it never converges on a pinned record. Its
// AWS provider uses aws/hosted-zone-id only to route a change (provider/aws newChange) and
// never puts it back on the records it reads (Records), so each loop's plan sees the
// desired record's pin as a changed provider-specific property and UPSERTs the pinned
// record and its ownership TXT record. Measured on the sandbox (a public and a private zone
// of one name, a Service pinned to each beside an unpinned one, --aws-zone-type=""): after the first loop's CREATEs,
// every loop sends one ChangeResourceRecordSets per pinned zone, each with 2 UPSERTs (the
// record and its a- TXT record): 2 calls and 4 changes a loop, loop after loop, while the
// unpinned record stays converged.
func checkPinnedRecords(t *testing.T, tc takeover, kube *kubetest.Cluster, z zone, written []string, args []string) {
	t.Helper()
	public, private := createPinZone(t, z, false), createPinZone(t, z, true)
	p := newPrefix // aws-hosted-zone-id is v0.23's, read under its new prefix
	createLoadBalancers(t, kube.Clientset(t), []loadBalancer{
		{"pinned-public", map[string]string{p + "hostname": "public." + pinZoneName, p + "aws-hosted-zone-id": bareZoneID(public.id)},
			[]corev1.LoadBalancerIngress{{IP: "192.0.2.90"}}},
		{"pinned-private", map[string]string{p + "hostname": "private." + pinZoneName, p + "aws-hosted-zone-id": bareZoneID(private.id)},
			[]corev1.LoadBalancerIngress{{IP: "192.0.2.91"}}},
	})
	// want is what a zone holds with the record pinned to it: the record and, under the
	// TXT registry, its ownership record (under --registry crd, a DNSRecord).
	want := func(label, ip, object string) []string {
		name := label + "." + pinZoneName
		out := []string{name + ". A ttl=300 " + ip}
		if !tc.crdRegistry {
			out = append(out, `a-`+name+`. TXT ttl=300 "heritage=external-dns,external-dns/owner=`+owner+`,external-dns/resource=service/`+namespace+`/`+object+`"`)
		}
		slices.Sort(out)
		return out
	}
	wantPublic, wantPrivate := want("public", "192.0.2.90", "pinned-public"), want("private", "192.0.2.91", "pinned-private")

	cf := startCrossfade(t, "crossfade (pinned)", kube, z, owner, append(slices.Clone(args), "--aws-zone-type=")...)
	// A failure bound, not an expectation: the first reconcile writes them.
	deadline := time.Now().Add(time.Minute)
	for len(pinZoneRecords(t, public)) < len(wantPublic) || len(pinZoneRecords(t, private)) < len(wantPrivate) {
		if time.Now().After(deadline) {
			t.Fatalf("crossfade controller did not write the pinned records in a minute:\npublic:\n%s\nprivate:\n%s\n%s",
				diff(pinZoneRecords(t, public), wantPublic), diff(pinZoneRecords(t, private), wantPrivate), cf.Log())
		}
		time.Sleep(100 * time.Millisecond)
	}
	n := reconciles(t, cf)
	cf.WaitReconciles(t, n+2, time.Minute) // a whole reconcile after the one that wrote
	calls := changeCalls(sandboxtest.APICalls(t, z.sb))
	pub, priv := pinZoneRecords(t, public), pinZoneRecords(t, private)
	cf.WaitReconciles(t, n+4, time.Minute)
	if got := changeCalls(sandboxtest.APICalls(t, z.sb)) - calls; got != 0 {
		t.Errorf("crossfade controller sent %d ChangeResourceRecordSets over the pinned records it wrote itself:\npublic:\n%s\nprivate:\n%s",
			got, diff(pinZoneRecords(t, public), pub), diff(pinZoneRecords(t, private), priv))
	}
	if got := cf.Metric(t, "crossfade_conflicts"); got != 0 {
		t.Errorf("crossfade_conflicts = %v over zones of its own owner id", got)
	}
	cf.Stop(t)

	if !slices.Equal(pub, wantPublic) {
		t.Errorf("the public zone %s %s, a record pinned to it:\n%s", pinZoneName, public.id, diff(pub, wantPublic))
	}
	if !slices.Equal(priv, wantPrivate) {
		t.Errorf("the private zone %s %s, a record pinned to it:\n%s", pinZoneName, private.id, diff(priv, wantPrivate))
	}
	if now := z.published(t); !slices.Equal(now, written) {
		t.Errorf("crossfade controller changed the zone %s external-dns wrote:\n%s", zoneName, diff(now, written))
	}
}
