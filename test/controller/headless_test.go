package controller_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestControllerHeadlessFromEndpointSlices: a headless Service publishes its ready
// endpoints' addresses, read from its EndpointSlices (no Pod is read), and follows them
// when an endpoint becomes ready.
func TestControllerHeadlessFromEndpointSlices(t *testing.T) {
	e := setup(t)
	ctx := t.Context()
	if _, err := e.client.CoreV1().Services("default").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default", Annotations: map[string]string{alpha + "hostname": "db.example.com"}},
		Spec:       corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{Port: 5432}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ready, notReady := true, false
	endpoint := func(ip, pod string, ok *bool) discoveryv1.Endpoint {
		return discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ok},
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: pod, Namespace: "default"}}
	}
	slice, err := e.client.DiscoveryV1().EndpointSlices("default").Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "db-1", Namespace: "default", Labels: map[string]string{discoveryv1.LabelServiceName: "db"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{endpoint("10.1.0.1", "db-0", &ready), endpoint("10.1.0.2", "db-1", &notReady)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	startController(t, "controller", e.kc.Kubeconfig, e.sb, "--source", "service", "--txt-owner-id", "blue",
		"--leader-elect=false", "--debounce", "100ms")
	eventually(t, 20*time.Second, "ready endpoint published", hasRecord(t, e.dns, e.zone, "db.example.com A 10.1.0.1"))

	slice.Endpoints[1].Conditions.Ready = &ready
	if _, err := e.client.DiscoveryV1().EndpointSlices("default").Update(ctx, slice, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "second endpoint published once ready", func() (bool, string) {
		s := strings.Join(records(t, e.dns, e.zone), "\n")
		return strings.Contains(s, "db.example.com A 10.1.0.1,10.1.0.2"), s
	})
}
