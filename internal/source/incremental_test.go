package source

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestEndpointsIndexed checks that EndpointsIndexed gives Endpoints' result, the names of
// each object's records, and the names where records of several objects were merged; and
// that ServiceEndpoints gives for one Service what Endpoints gives for it alone.
func TestEndpointsIndexed(t *testing.T) {
	const hostname = "external-dns.alpha.kubernetes.io/hostname"
	a := lbService("a", map[string]string{hostname: "a.example.com,shared.example.com"}, ip("192.0.2.1"))
	b := lbService("b", map[string]string{hostname: "shared.example.com"}, ip("192.0.2.2"))
	c := lbService("c", map[string]string{hostname: "c.example.com", "external-dns.alpha.kubernetes.io/ttl": "bad"}, ip("192.0.2.3"))
	src, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	snap := &Snapshot{Services: []*corev1.Service{a, b, c}}
	res, idx := src.EndpointsIndexed(snap)
	if got, want := show(res), show(src.Endpoints(snap)); got != want {
		t.Errorf("result\n%s\nwant Endpoints'\n%s", got, want)
	}
	wantNames := map[string][]string{
		"service/default/a": {"a.example.com", "shared.example.com"},
		"service/default/b": {"shared.example.com"},
	}
	if !reflect.DeepEqual(idx.Names, wantNames) {
		t.Errorf("names %v, want %v", idx.Names, wantNames)
	}
	if want := map[string]bool{"shared.example.com": true}; !reflect.DeepEqual(idx.Merged, want) {
		t.Errorf("merged %v, want %v", idx.Merged, want)
	}
	for _, svc := range []*corev1.Service{a, b, c} {
		if got, want := show(src.ServiceEndpoints(svc)), show(src.Endpoints(&Snapshot{Services: []*corev1.Service{svc}})); got != want {
			t.Errorf("ServiceEndpoints(%s)\n%s\nwant\n%s", svc.Name, got, want)
		}
	}
}

// TestServiceStandsAlone checks which Services' records are read from the Service alone.
func TestServiceStandsAlone(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec corev1.ServiceSpec
		want bool
	}{
		{"load balancer", corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIP: "10.0.0.1"}, true},
		{"cluster IP", corev1.ServiceSpec{ClusterIP: "10.0.0.1"}, true},
		{"external name", corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "x.example.com"}, true},
		{"node port: the Nodes' addresses", corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, ClusterIP: "10.0.0.1"}, false},
		{"headless: the EndpointSlices' addresses", corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ServiceStandsAlone(&corev1.Service{Spec: tc.spec}); got != tc.want {
				t.Errorf("ServiceStandsAlone: %v, want %v", got, tc.want)
			}
		})
	}
}
