package sidebyside

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/crossfade-io/crossfade/internal/controllertest"
	"github.com/crossfade-io/crossfade/internal/externaldnstest"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

func TestMain(m *testing.M) { controllertest.Main(m) }

// startCrossfade runs `crossfade controller` over the cluster and zone as external-dns
// runs there (same sources, owner, domain filter and zone type).
func startCrossfade(t *testing.T, name string, kube *kubetest.Cluster, z zone, owner string) *controllertest.Process {
	t.Helper()
	return controllertest.Start(t, controllertest.Options{Name: name, Kubeconfig: kube.Kubeconfig, Route53URL: z.sb.APIURL(),
		Args: []string{"--source=service", "--source=ingress", "--provider=aws", "--registry=txt", "--txt-owner-id=" + owner,
			"--domain-filter=" + zoneName, "--aws-zone-type=public", "--leader-elect=false", "--interval=1s"}})
}

// TestControllerTakesOverFromExternalDNS: external-dns manages a zone; it is stopped and
// `crossfade controller` starts with the same owner id over the same cluster: it makes 0
// changes, reconcile after reconcile. Then it is stopped and external-dns started again:
// 0 changes again. The handover external-dns users do today by deleting one Deployment
// and creating another, without a record touched.
func TestControllerTakesOverFromExternalDNS(t *testing.T) {
	kube := kubetest.Start(t)
	createFixtures(t, kube.Clientset(t))
	z := newZone(t)

	edns := externaldnstest.Start(t, z.externalDNS(kube))
	z.waitConverged(t, edns, len(want))
	written := z.published(t)
	if err := edns.Stop(); err != nil {
		t.Fatal(err)
	}

	before := changeCalls(sandboxtest.APICalls(t, z.sb))
	cf := startCrossfade(t, "crossfade", kube, z, owner)
	cf.WaitReconciles(t, 5, time.Minute) // five reconciles, one a second
	if n := changeCalls(sandboxtest.APICalls(t, z.sb)) - before; n != 0 {
		t.Errorf("crossfade controller sent %d ChangeResourceRecordSets over external-dns's zone:\n%s", n, diff(z.published(t), written))
	}
	if got := cf.Metric(t, "crossfade_conflicts"); got != 0 {
		t.Errorf("crossfade_conflicts = %v over a zone of its own owner id", got)
	}
	cf.Stop(t)

	before = changeCalls(sandboxtest.APICalls(t, z.sb))
	edns = externaldnstest.Start(t, z.externalDNS(kube))
	edns.WaitLoops(t, 2)
	if n := changeCalls(sandboxtest.APICalls(t, z.sb)) - before; n != 0 {
		t.Errorf("external-dns sent %d ChangeResourceRecordSets after crossfade handed back", n)
	}
	if now := z.published(t); !slices.Equal(now, written) {
		t.Errorf("the zone changed across the handover and back:\n%s", diff(now, written))
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
