package controller_test

import (
	"context"
	"strings"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestControllerReadsFilteredAnnotations: the controller caches only the annotations
// something reads, so each way one is read must survive the cache on a real
// kube-apiserver: the annotation filter's key (also when it changes later), a custom
// prefix, and the legacy ingress class, next to a dozen annotations nobody reads.
func TestControllerReadsFilteredAnnotations(t *testing.T) {
	e := setup(t)
	client, sb, dns, z := e.client, e.sb, e.dns, e.zone
	const custom = "dns.example.org/"
	bystanders := func(ann map[string]string) map[string]string {
		for k, v := range map[string]string{
			"meta.helm.sh/release-name": "web", "meta.helm.sh/release-namespace": "default",
			"service.beta.kubernetes.io/aws-load-balancer-type":            "external",
			"service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip",
			"alb.ingress.kubernetes.io/actions.ssl-redirect":               `{"Type":"redirect","RedirectConfig":{"Protocol":"HTTPS","Port":"443"}}`,
			"argocd.argoproj.io/tracking-id":                               "web:/Service:default/web",
		} {
			ann[k] = v
		}
		return ann
	}
	lbService(t, client, "pay", "192.0.2.10", bystanders(map[string]string{custom + "hostname": "pay.example.com", "team": "payments"}))
	lbService(t, client, "ops", "192.0.2.11", bystanders(map[string]string{custom + "hostname": "ops.example.com", "team": "ops"}))
	// Ingresses are filtered by the annotation filter too: this one passes it, and its
	// legacy class annotation picks it by --ingress-class.
	ctx := context.Background()
	ing, err := client.NetworkingV1().Ingresses("default").Create(ctx, &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "default", Annotations: bystanders(map[string]string{
			"kubernetes.io/ingress.class": "public", "team": "payments"})},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "shop.example.com"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.20"}}
	if _, err := client.NetworkingV1().Ingresses("default").UpdateStatus(ctx, ing, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	startController(t, "controller", e.kc.Kubeconfig, sb, "--source", "service", "--source", "ingress",
		"--annotation-prefix", custom, "--annotation-filter", "team in (payments)", "--ingress-class", "public",
		"--txt-owner-id", "blue", "--leader-elect=false", "--debounce", "100ms", "--interval", "1s")

	eventually(t, 20*time.Second, "the Service and the Ingress that pass the filter are published", func() (bool, string) {
		s := strings.Join(records(t, dns, z), "\n")
		return strings.Contains(s, "pay.example.com A 192.0.2.10") && strings.Contains(s, "shop.example.com A 192.0.2.20"), s
	})
	if s := strings.Join(records(t, dns, z), "\n"); strings.Contains(s, "ops.example.com") {
		t.Fatalf("the Service the filter leaves out is published:\n%s", s)
	}
	// The filter's key changes on a cached object: the cache follows it.
	annotate(t, client, "ops", "team", "payments")
	eventually(t, 10*time.Second, "ops published once its team passes the filter", hasRecord(t, dns, z, "ops.example.com A 192.0.2.11"))
	annotate(t, client, "pay", "team", "ops")
	eventually(t, 10*time.Second, "pay removed once its team no longer passes", func() (bool, string) {
		s := strings.Join(records(t, dns, z), "\n")
		return !strings.Contains(s, "pay.example.com"), s
	})
}
