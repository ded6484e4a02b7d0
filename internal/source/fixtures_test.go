package source

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// lbService returns a LoadBalancer Service in default with one LB address.
func lbService(name string, ann map[string]string, lb ...corev1.LoadBalancerIngress) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Annotations: ann},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIP: "10.0.0.1"},
		Status:     corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: lb}},
	}
}

func ip(a string) corev1.LoadBalancerIngress   { return corev1.LoadBalancerIngress{IP: a} }
func host(h string) corev1.LoadBalancerIngress { return corev1.LoadBalancerIngress{Hostname: h} }

// show renders a result one line per item, for exact comparisons.
func show(r Result) string {
	var b strings.Builder
	for _, e := range r.Endpoints {
		fmt.Fprintf(&b, "%s %s ttl=%d %s %s", e.Key(), strings.Join(e.Targets, ","), e.TTL, e.Policy, e.Resource())
		if len(e.ProviderSpecific) > 0 {
			fmt.Fprintf(&b, " %v", e.ProviderSpecific)
		}
		b.WriteByte('\n')
	}
	for _, e := range r.Invalid {
		fmt.Fprintf(&b, "invalid: %s\n", e)
	}
	for _, p := range r.Pending {
		fmt.Fprintf(&b, "pending: %s\n", p)
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(&b, "skipped: %s\n", s)
	}
	for _, s := range r.Overridden {
		fmt.Fprintf(&b, "overridden: %s\n", s)
	}
	return b.String()
}

func mustNew(t testing.TB, cfg Config) *Source {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func check(t *testing.T, got Result, want string) {
	t.Helper()
	if s := show(got); s != want {
		t.Errorf("got\n%s\nwant\n%s", s, want)
	}
}
