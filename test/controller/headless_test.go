package controller_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// sliceAuthors are the labels an EndpointSlice carries, by who wrote it: by hand (only
// the Service's name) or by Kubernetes' EndpointSlice controller (which also names itself
// and marks a headless Service's slices). The controller caches the second kind's slices
// of non-headless Services without their addresses: both must publish the same.
var sliceAuthors = []struct {
	name   string
	labels func(svc string, headless bool) map[string]string
}{
	{"by hand", func(svc string, _ bool) map[string]string {
		return map[string]string{discoveryv1.LabelServiceName: svc}
	}},
	{"by the EndpointSlice controller", func(svc string, headless bool) map[string]string {
		l := map[string]string{discoveryv1.LabelServiceName: svc, discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"}
		if headless {
			l[corev1.IsHeadlessService] = ""
		}
		return l
	}},
}

// TestControllerHeadlessFromEndpointSlices: a headless Service publishes its ready
// endpoints' addresses, read from its EndpointSlices (no Pod is read), and follows them
// when an endpoint becomes ready.
func TestControllerHeadlessFromEndpointSlices(t *testing.T) {
	for _, author := range sliceAuthors {
		t.Run(author.name, func(t *testing.T) {
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
				ObjectMeta:  metav1.ObjectMeta{Name: "db-1", Namespace: "default", Labels: author.labels("db", true)},
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
		})
	}
}

// TestControllerNodePortLocalFromEndpointSlices: a NodePort Service with
// externalTrafficPolicy Local publishes the external addresses of the Nodes its ready
// endpoints run on, and follows an endpoint that moves to another Node — also when its
// slices are the EndpointSlice controller's, which the controller caches with no address.
func TestControllerNodePortLocalFromEndpointSlices(t *testing.T) {
	for _, author := range sliceAuthors {
		t.Run(author.name, func(t *testing.T) {
			e := setup(t)
			ctx := t.Context()
			for i, ip := range []string{"192.0.2.1", "192.0.2.2", "192.0.2.3"} {
				if _, err := e.client.CoreV1().Nodes().Create(ctx, &corev1.Node{
					ObjectMeta: metav1.ObjectMeta{Name: "node-" + string(rune('a'+i))},
					Status:     corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: ip}}},
				}, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := e.client.CoreV1().Services("default").Create(ctx, &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Annotations: map[string]string{alpha + "hostname": "web.example.com"}},
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal,
					Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}},
			}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			ready := true
			endpoint := func(ip, pod, node string) discoveryv1.Endpoint {
				return discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: &ready},
					NodeName: &node, TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: pod, Namespace: "default"}}
			}
			// Two endpoints on node-a, one on node-b: the addresses of a and b, once each.
			slice, err := e.client.DiscoveryV1().EndpointSlices("default").Create(ctx, &discoveryv1.EndpointSlice{
				ObjectMeta:  metav1.ObjectMeta{Name: "web-1", Namespace: "default", Labels: author.labels("web", false)},
				AddressType: discoveryv1.AddressTypeIPv4,
				Endpoints: []discoveryv1.Endpoint{endpoint("10.1.0.1", "web-0", "node-a"), endpoint("10.1.0.2", "web-1", "node-a"),
					endpoint("10.1.0.3", "web-2", "node-b")},
			}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			startController(t, "controller", e.kc.Kubeconfig, e.sb, "--source", "service", "--txt-owner-id", "blue",
				"--leader-elect=false", "--debounce", "100ms")
			eventually(t, 20*time.Second, "the endpoints' nodes published", hasRecord(t, e.dns, e.zone, "web.example.com A 192.0.2.1,192.0.2.2"))

			// The endpoint on node-b moves to node-c.
			slice.Endpoints[2] = endpoint("10.1.0.4", "web-3", "node-c")
			if _, err := e.client.DiscoveryV1().EndpointSlices("default").Update(ctx, slice, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			eventually(t, 10*time.Second, "the moved endpoint's new node published", hasRecord(t, e.dns, e.zone, "web.example.com A 192.0.2.1,192.0.2.3"))
		})
	}
}
