// Package crdstoretest is what tests of the CRD registry share: a real kube-apiserver
// with external-dns v0.23's DNSRecord CRD, a sandbox zone, publishers on either registry,
// and readers of the zone and the DNSRecords.
package crdstoretest

import (
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/provider/route53/route53test"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/registry/crdstore"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// ZoneName is the zone NewZone creates.
const ZoneName = "example.com"

// Kube is a kube-apiserver with the DNSRecord CRD installed.
type Kube struct {
	*kubetest.Cluster
	Dyn dynamic.Interface
}

// StartKube starts a kube-apiserver (stopped with the test) and installs the DNSRecord
// CRD crossfade ships (deploy/crds, copied unchanged from external-dns v0.23.0).
func StartKube(t testing.TB) *Kube {
	t.Helper()
	kc := kubetest.Start(t)
	kc.InstallCRDs(t, crdPath(t))
	dyn, err := dynamic.NewForConfig(kc.Config())
	if err != nil {
		t.Fatal(err)
	}
	return &Kube{Cluster: kc, Dyn: dyn}
}

// crdPath is deploy/crds' DNSRecord CRD, found from this file: the tests that use it run
// from different directories.
func crdPath(t testing.TB) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("crdstoretest: cannot find its own source file")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "deploy", "crds", "dnsrecords.externaldns.k8s.io.yaml")
}

// Namespace creates namespace ns.
func (k *Kube) Namespace(t testing.TB, ns string) {
	t.Helper()
	if _, err := k.Clientset(t).CoreV1().Namespaces().Create(t.Context(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// Object reads DNSRecord name in ns; nil when there is none.
func (k *Kube) Object(t testing.TB, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := k.Dyn.Resource(crdstore.Resource).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// Objects lists ns's DNSRecords as "name owner resourceVersion", sorted.
func (k *Kube) Objects(t testing.TB, ns string) []string {
	t.Helper()
	l, err := k.Dyn.Resource(crdstore.Resource).Namespace(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, u := range l.Items {
		out = append(out, u.GetName()+" "+u.GetLabels()[crdstore.OwnerLabel]+" "+u.GetResourceVersion())
	}
	slices.Sort(out)
	return out
}

// Zone is a sandbox (stopped with the test) holding the public zone ZoneName, and a
// Route 53 provider on it through the real SDK.
type Zone struct {
	Sandbox *sandbox.Sandbox
	DNS     *route53.Provider
	Zone    provider.Zone
}

// NewZone starts a sandbox with the zone ZoneName.
func NewZone(t testing.TB) *Zone {
	t.Helper()
	sb := sandboxtest.Start(t)
	if _, _, err := sb.Store().CreateZone(ZoneName, "ref", "", false); err != nil {
		t.Fatal(err)
	}
	dns := route53test.New(t, sb)
	zones, err := dns.Zones(t.Context())
	if err != nil || len(zones) != 1 {
		t.Fatalf("zones: %v %v", zones, err)
	}
	return &Zone{Sandbox: sb, DNS: dns, Zone: zones[0]}
}

// TXT is owner's publisher on the TXT registry.
func (z *Zone) TXT(t testing.TB, owner string) *controller.Syncer {
	t.Helper()
	return &controller.Syncer{Provider: z.DNS, Registry: ownerRegistry(t, owner), Policy: changes.Sync}
}

// CRD is owner's publisher on the CRD registry of namespace ns, as `crossfade controller
// --registry crd` builds it, and the registry's provider.
func (z *Zone) CRD(t testing.TB, k *Kube, ns, owner string) (*crdstore.Provider, *controller.Syncer) {
	t.Helper()
	reg := ownerRegistry(t, owner)
	p, err := crdstore.New(z.DNS, crdstore.Config{REST: k.Config(), Namespace: ns, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	return p, &controller.Syncer{Provider: p, Registry: reg, Policy: changes.Sync}
}

func ownerRegistry(t testing.TB, owner string) *registry.TXT {
	t.Helper()
	reg, err := registry.New(registry.Config{OwnerID: owner})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// Records lists the zone's records (not the apex NS and SOA) as "name TYPE set
// targets", sorted.
func (z *Zone) Records(t testing.TB) []string { return RecordLines(t, z.DNS, z.Zone) }

// RecordLines lists zone's records (not the apex NS and SOA) as "name TYPE set targets",
// sorted.
func RecordLines(t testing.TB, dns *route53.Provider, zone provider.Zone) []string {
	t.Helper()
	recs, err := dns.Records(t.Context(), zone)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		if r.Name == zone.Name && (r.Type == "NS" || r.Type == "SOA") {
			continue
		}
		out = append(out, strings.Join(strings.Fields(r.Name+" "+r.Type+" "+r.SetIdentifier+" "+strings.Join(r.Targets, ",")), " "))
	}
	slices.Sort(out)
	return out
}
