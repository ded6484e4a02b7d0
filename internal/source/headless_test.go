package source

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// to returns a pointer to v, for the optional fields of EndpointSlices.
func to[T any](v T) *T { return &v }

// slice returns an EndpointSlice of Service svc in default.
func slice(name, svc string, typ discoveryv1.AddressType, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "default", Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: typ,
		Endpoints:   eps,
	}
}

// podEndpoint returns an endpoint backed by Pod pod at addr on node ("" for none), with
// hostname ("" for none) and conditions as the EndpointSlice controller sets them for a
// Pod that is ready or not.
func podEndpoint(pod, addr, node, hostname string, ready bool) discoveryv1.Endpoint {
	ep := discoveryv1.Endpoint{
		Addresses:  []string{addr},
		Conditions: discoveryv1.EndpointConditions{Ready: to(ready), Serving: to(ready), Terminating: to(false)},
		TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: pod},
	}
	if node != "" {
		ep.NodeName = to(node)
	}
	if hostname != "" {
		ep.Hostname = to(hostname)
	}
	return ep
}

// terminating marks an endpoint as the EndpointSlice controller marks a ready Pod being
// deleted: serving, terminating, not ready (unless the Service publishes not-ready
// addresses).
func terminating(ep discoveryv1.Endpoint) discoveryv1.Endpoint {
	ep.Conditions = discoveryv1.EndpointConditions{Ready: to(false), Serving: to(true), Terminating: to(true)}
	return ep
}

func headlessService(name string, ann map[string]string) *corev1.Service {
	return &corev1.Service{ObjectMeta: meta("default", name, ann), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: corev1.ClusterIPNone}}
}

func testNodes() []*corev1.Node {
	addr := func(t corev1.NodeAddressType, a string) corev1.NodeAddress {
		return corev1.NodeAddress{Type: t, Address: a}
	}
	return []*corev1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{
			addr(corev1.NodeHostName, "n1"), addr(corev1.NodeExternalIP, "203.0.113.1"), addr(corev1.NodeInternalIP, "10.1.0.1"), addr(corev1.NodeInternalIP, "fd00::1")}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "n2"}, Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{addr(corev1.NodeInternalIP, "10.1.0.2")}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "n3"}, Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{addr(corev1.NodeExternalIP, "203.0.113.3")}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "cordoned"}, Spec: corev1.NodeSpec{Unschedulable: true}, Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{
			addr(corev1.NodeExternalIP, "203.0.113.9"), addr(corev1.NodeInternalIP, "10.1.0.9")}}},
	}
}

// TestHeadless: a headless Service publishes its ready endpoints' addresses under its
// names, and each endpoint with a hostname under "<hostname>.<name>", read from its
// EndpointSlices as external-dns v0.21.0 reads them from EndpointSlices and Pods.
func TestHeadless(t *testing.T) {
	h := map[string]string{alpha + "hostname": "hl.example.com"}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{alpha + "hostname": "hl.example.com"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	// A StatefulSet of three: two ready on n1 and n2, one starting on n1.
	sts := slice("hl-abc", "hl", discoveryv1.AddressTypeIPv4,
		podEndpoint("web-0", "10.2.0.1", "n1", "web-0", true),
		podEndpoint("web-1", "10.2.0.2", "n2", "web-1", true),
		podEndpoint("web-2", "10.2.0.3", "n1", "web-2", false))
	tests := []struct {
		name   string
		cfg    Config
		svc    *corev1.Service
		slices []*discoveryv1.EndpointSlice
		want   string
	}{
		{"ready endpoints under the name and their hostnames", Config{}, headlessService("hl", h), []*discoveryv1.EndpointSlice{sts},
			"hl.example.com A 10.2.0.1,10.2.0.2 ttl=0 simple service/default/hl\n" +
				"web-0.hl.example.com A 10.2.0.1 ttl=0 simple service/default/hl\n" +
				"web-1.hl.example.com A 10.2.0.2 ttl=0 simple service/default/hl\n"},
		{"spec.publishNotReadyAddresses publishes the endpoints not ready", Config{}, func() *corev1.Service {
			s := headlessService("hl", h)
			s.Spec.PublishNotReadyAddresses = true
			return s
		}(), []*discoveryv1.EndpointSlice{sts},
			"hl.example.com A 10.2.0.1,10.2.0.2,10.2.0.3 ttl=0 simple service/default/hl\n" +
				"web-0.hl.example.com A 10.2.0.1 ttl=0 simple service/default/hl\n" +
				"web-1.hl.example.com A 10.2.0.2 ttl=0 simple service/default/hl\n" +
				"web-2.hl.example.com A 10.2.0.3 ttl=0 simple service/default/hl\n"},
		{"AlwaysPublishNotReadyAddresses does too, terminating ones included", Config{AlwaysPublishNotReadyAddresses: true}, headlessService("hl", h),
			[]*discoveryv1.EndpointSlice{slice("hl-abc", "hl", discoveryv1.AddressTypeIPv4,
				podEndpoint("a", "10.2.0.1", "n1", "", false), terminating(podEndpoint("b", "10.2.0.2", "n1", "", true)))},
			"hl.example.com A 10.2.0.1,10.2.0.2 ttl=0 simple service/default/hl\n"},
		{"a terminating endpoint is not ready", Config{}, headlessService("hl", h),
			[]*discoveryv1.EndpointSlice{slice("hl-abc", "hl", discoveryv1.AddressTypeIPv4,
				podEndpoint("a", "10.2.0.1", "n1", "", true), terminating(podEndpoint("b", "10.2.0.2", "n1", "", true)))},
			"hl.example.com A 10.2.0.1 ttl=0 simple service/default/hl\n"},
		{"a ready condition left unset counts as ready", Config{}, headlessService("hl", h),
			[]*discoveryv1.EndpointSlice{slice("hl-abc", "hl", discoveryv1.AddressTypeIPv4, func() discoveryv1.Endpoint {
				ep := podEndpoint("a", "10.2.0.1", "n1", "", true)
				ep.Conditions = discoveryv1.EndpointConditions{}
				return ep
			}())},
			"hl.example.com A 10.2.0.1 ttl=0 simple service/default/hl\n"},
		{"dual stack: A from the IPv4 slice, AAAA from the IPv6 one", Config{}, headlessService("hl", h), []*discoveryv1.EndpointSlice{
			slice("hl-v4", "hl", discoveryv1.AddressTypeIPv4, podEndpoint("web-0", "10.2.0.1", "n1", "web-0", true)),
			slice("hl-v6", "hl", discoveryv1.AddressTypeIPv6, podEndpoint("web-0", "fd00:2::1", "n1", "web-0", true))},
			"hl.example.com A 10.2.0.1 ttl=0 simple service/default/hl\n" +
				"hl.example.com AAAA fd00:2::1 ttl=0 simple service/default/hl\n" +
				"web-0.hl.example.com A 10.2.0.1 ttl=0 simple service/default/hl\n" +
				"web-0.hl.example.com AAAA fd00:2::1 ttl=0 simple service/default/hl\n"},
		{"only the first address of an endpoint", Config{}, headlessService("hl", h), []*discoveryv1.EndpointSlice{slice("hl-abc", "hl", discoveryv1.AddressTypeIPv4, func() discoveryv1.Endpoint {
			ep := podEndpoint("a", "10.2.0.1", "n1", "", true)
			ep.Addresses = append(ep.Addresses, "10.2.0.99")
			return ep
		}())}, "hl.example.com A 10.2.0.1 ttl=0 simple service/default/hl\n"},
		{"publish host ip: each endpoint's Node host IP, once per Node", Config{PublishHostIP: true}, headlessService("hl", h), []*discoveryv1.EndpointSlice{sts},
			"hl.example.com A 10.1.0.1,10.1.0.2 ttl=0 simple service/default/hl\n" +
				"web-0.hl.example.com A 10.1.0.1 ttl=0 simple service/default/hl\n" +
				"web-1.hl.example.com A 10.1.0.2 ttl=0 simple service/default/hl\n"},
		{"endpoints-type HostIP: a Node without InternalIP gives its ExternalIP", Config{}, headlessService("hl", with(map[string]string{alpha + "endpoints-type": "HostIP"})),
			[]*discoveryv1.EndpointSlice{slice("hl-abc", "hl", discoveryv1.AddressTypeIPv4, podEndpoint("a", "10.2.0.1", "n3", "", true))},
			"hl.example.com A 203.0.113.3 ttl=0 simple service/default/hl\n"},
		{"endpoints-type NodeExternalIP wins over publish host ip; a Node without one is reported", Config{PublishHostIP: true},
			headlessService("hl", with(map[string]string{alpha + "endpoints-type": "NodeExternalIP"})), []*discoveryv1.EndpointSlice{sts},
			"hl.example.com A 203.0.113.1 ttl=0 simple service/default/hl\n" +
				"web-0.hl.example.com A 203.0.113.1 ttl=0 simple service/default/hl\n" +
				"pending: service default/hl: headless Service: EndpointSlice default/hl-abc endpoints[1] left out: its Node n2 has no ExternalIP\n"},
		{"host ip of a Node not known yet", Config{PublishHostIP: true}, headlessService("hl", h),
			[]*discoveryv1.EndpointSlice{slice("hl-abc", "hl", discoveryv1.AddressTypeIPv4,
				podEndpoint("a", "10.2.0.1", "gone", "", true), podEndpoint("b", "10.2.0.2", "", "", true), podEndpoint("c", "10.2.0.3", "n2", "", true))},
			"hl.example.com A 10.1.0.2 ttl=0 simple service/default/hl\n" +
				"pending: service default/hl: headless Service: EndpointSlice default/hl-abc endpoints[0] left out: its Node gone is not known yet\n" +
				"pending: service default/hl: headless Service: EndpointSlice default/hl-abc endpoints[1] left out: it names no Node (nodeName)\n"},
		{"bad endpoints-type", Config{}, headlessService("hl", with(map[string]string{alpha + "endpoints-type": "hostip"})), []*discoveryv1.EndpointSlice{sts},
			`invalid: service default/hl: annotation external-dns.alpha.kubernetes.io/endpoints-type "hostip": want "NodeExternalIP" or "HostIP"` + "\n"},
		{"the Service's target annotation wins", Config{}, headlessService("hl", with(map[string]string{alpha + "target": "198.51.100.1"})), []*discoveryv1.EndpointSlice{sts},
			"hl.example.com A 198.51.100.1 ttl=0 simple service/default/hl\n"},
		{"internal-hostname publishes the endpoints too", Config{}, headlessService("hl", map[string]string{alpha + "internal-hostname": "hl.internal.example.com"}),
			[]*discoveryv1.EndpointSlice{slice("hl-abc", "hl", discoveryv1.AddressTypeIPv4, podEndpoint("a", "10.2.0.1", "n1", "a", true))},
			"a.hl.internal.example.com A 10.2.0.1 ttl=0 simple service/default/hl\nhl.internal.example.com A 10.2.0.1 ttl=0 simple service/default/hl\n"},
		{"ttl, set identifier and weight apply to every record", Config{},
			headlessService("hl", with(map[string]string{alpha + "ttl": "30", alpha + "set-identifier": "blue", alpha + "aws-weight": "10"})),
			[]*discoveryv1.EndpointSlice{slice("hl-abc", "hl", discoveryv1.AddressTypeIPv4, podEndpoint("a", "10.2.0.1", "n1", "a", true))},
			"a.hl.example.com A [blue] 10.2.0.1 ttl=30 weighted(10) service/default/hl\nhl.example.com A [blue] 10.2.0.1 ttl=30 weighted(10) service/default/hl\n"},
		{"endpoints that are not Pods, and FQDN slices, are left out and reported", Config{}, headlessService("hl", h), []*discoveryv1.EndpointSlice{
			slice("hl-abc", "hl", discoveryv1.AddressTypeIPv4, podEndpoint("a", "10.2.0.1", "n1", "", true), func() discoveryv1.Endpoint {
				ep := podEndpoint("x", "10.2.0.8", "", "", true)
				ep.TargetRef = nil
				return ep
			}(), func() discoveryv1.Endpoint {
				ep := podEndpoint("x", "10.2.0.9", "", "", true)
				ep.TargetRef.Kind = "VirtualMachineInstance"
				return ep
			}()),
			slice("hl-fqdn", "hl", discoveryv1.AddressTypeFQDN, podEndpoint("b", "db.example.net", "", "", true))},
			"hl.example.com A 10.2.0.1 ttl=0 simple service/default/hl\n" +
				"pending: service default/hl: headless Service: EndpointSlice default/hl-abc endpoints[1] and 1 more left out: its targetRef is not a Pod\n" +
				"pending: service default/hl: headless Service: EndpointSlice default/hl-fqdn endpoints[0] left out: addressType FQDN is not IPv4 or IPv6\n"},
		{"no EndpointSlice yet", Config{}, headlessService("hl", h), nil,
			"pending: service default/hl: headless Service: no EndpointSlice labelled kubernetes.io/service-name=hl yet\n"},
		{"slices of other Services and namespaces are not read", Config{}, headlessService("hl", h), []*discoveryv1.EndpointSlice{
			slice("other-abc", "other", discoveryv1.AddressTypeIPv4, podEndpoint("a", "10.2.0.1", "n1", "", true)),
			func() *discoveryv1.EndpointSlice {
				s := slice("hl-abc", "hl", discoveryv1.AddressTypeIPv4, podEndpoint("a", "10.2.0.2", "n1", "", true))
				s.Namespace = "elsewhere"
				return s
			}(),
			func() *discoveryv1.EndpointSlice {
				s := slice("hl-unlabelled", "hl", discoveryv1.AddressTypeIPv4, podEndpoint("a", "10.2.0.3", "n1", "", true))
				s.Labels = nil
				return s
			}()},
			"pending: service default/hl: headless Service: no EndpointSlice labelled kubernetes.io/service-name=hl yet\n"},
		{"empty slice", Config{}, headlessService("hl", h), []*discoveryv1.EndpointSlice{slice("hl-abc", "hl", discoveryv1.AddressTypeIPv4)},
			"pending: service default/hl: headless Service: its EndpointSlices list no endpoint yet\n"},
		{"no endpoint ready", Config{}, headlessService("hl", h), []*discoveryv1.EndpointSlice{slice("hl-abc", "hl", discoveryv1.AddressTypeIPv4,
			podEndpoint("a", "10.2.0.1", "n1", "a", false), podEndpoint("b", "10.2.0.2", "n1", "b", false))},
			"pending: service default/hl: headless Service: none of its endpoints is ready (2 not ready; spec.publishNotReadyAddresses publishes them anyway)\n"},
		{"a bad endpoint hostname costs that name only", Config{}, headlessService("hl", h), []*discoveryv1.EndpointSlice{slice("hl-abc", "hl", discoveryv1.AddressTypeIPv4,
			podEndpoint("a", "10.2.0.1", "n1", "a", true), podEndpoint("b", "10.2.0.2", "n1", "b_!", true))},
			"a.hl.example.com A 10.2.0.1 ttl=0 simple service/default/hl\nhl.example.com A 10.2.0.1,10.2.0.2 ttl=0 simple service/default/hl\n" +
				`invalid: service default/hl: EndpointSlice default/hl-abc endpoints[1].hostname "b_!.hl.example.com": label "b_!" has character '!': want a-z, 0-9, '-', '_'` + "\n"},
		{"without a hostname annotation nothing is read", Config{}, headlessService("hl", nil), []*discoveryv1.EndpointSlice{sts}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := &Snapshot{Services: []*corev1.Service{tt.svc}, EndpointSlices: tt.slices, Nodes: testNodes()}
			check(t, mustNew(t, tt.cfg).Endpoints(snap), tt.want)
		})
	}
}

// TestNodePortLocal: a NodePort Service with externalTrafficPolicy Local publishes the
// Nodes that run its endpoints, the best ranked only, as external-dns v0.21.0 picks them
// from the Service's Pods.
func TestNodePortLocal(t *testing.T) {
	h := map[string]string{alpha + "hostname": "np.example.com"}
	svc := func(ann map[string]string) *corev1.Service {
		return &corev1.Service{ObjectMeta: meta("default", "np", ann), Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeNodePort, ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal,
			Ports: []corev1.ServicePort{{NodePort: 30080, Protocol: corev1.ProtocolTCP}}}}
	}
	const srv = "_np._tcp.np.example.com SRV 0 50 30080 np.example.com. ttl=0 simple service/default/np\n"
	tests := []struct {
		name   string
		svc    *corev1.Service
		slices []*discoveryv1.EndpointSlice
		want   string
	}{
		{"only Nodes with a ready endpoint", svc(h), []*discoveryv1.EndpointSlice{slice("np-abc", "np", discoveryv1.AddressTypeIPv4,
			podEndpoint("a", "10.2.0.1", "n1", "", true), podEndpoint("b", "10.2.0.2", "n3", "", false))},
			srv + "np.example.com A 203.0.113.1 ttl=0 simple service/default/np\n"},
		{"no ready endpoint: every Node running one", svc(h), []*discoveryv1.EndpointSlice{slice("np-abc", "np", discoveryv1.AddressTypeIPv4,
			podEndpoint("a", "10.2.0.1", "n1", "", false), podEndpoint("b", "10.2.0.2", "n3", "", false))},
			srv + "np.example.com A 203.0.113.1,203.0.113.3 ttl=0 simple service/default/np\n"},
		{"ready and terminating beats not ready", svc(h), []*discoveryv1.EndpointSlice{slice("np-abc", "np", discoveryv1.AddressTypeIPv4,
			podEndpoint("a", "10.2.0.1", "n1", "", false), terminating(podEndpoint("b", "10.2.0.2", "n3", "", true)))},
			srv + "np.example.com A 203.0.113.3 ttl=0 simple service/default/np\n"},
		{"ready and not terminating beats terminating", svc(h), []*discoveryv1.EndpointSlice{slice("np-abc", "np", discoveryv1.AddressTypeIPv4,
			podEndpoint("a", "10.2.0.1", "n1", "", true), terminating(podEndpoint("b", "10.2.0.2", "n3", "", true)))},
			srv + "np.example.com A 203.0.113.1 ttl=0 simple service/default/np\n"},
		{"a Node's best endpoint counts", svc(h), []*discoveryv1.EndpointSlice{slice("np-abc", "np", discoveryv1.AddressTypeIPv4,
			podEndpoint("a", "10.2.0.1", "n1", "", false), podEndpoint("b", "10.2.0.2", "n1", "", true), podEndpoint("c", "10.2.0.3", "n3", "", false))},
			srv + "np.example.com A 203.0.113.1 ttl=0 simple service/default/np\n"},
		{"readiness is the serving condition, which publishNotReadyAddresses leaves alone", func() *corev1.Service {
			s := svc(h)
			s.Spec.PublishNotReadyAddresses = true
			return s
		}(), []*discoveryv1.EndpointSlice{slice("np-abc", "np", discoveryv1.AddressTypeIPv4,
			podEndpoint("a", "10.2.0.1", "n1", "", true), func() discoveryv1.Endpoint {
				ep := podEndpoint("b", "10.2.0.2", "n3", "", false)
				ep.Conditions.Ready = to(true)
				return ep
			}())},
			srv + "np.example.com A 203.0.113.1 ttl=0 simple service/default/np\n"},
		{"private access: InternalIPs of those Nodes", svc(map[string]string{alpha + "hostname": "np.example.com", alpha + "access": "private"}),
			[]*discoveryv1.EndpointSlice{slice("np-abc", "np", discoveryv1.AddressTypeIPv4, podEndpoint("a", "10.2.0.1", "n2", "", true))},
			srv + "np.example.com A 10.1.0.2 ttl=0 simple service/default/np\n"},
		{"an unschedulable Node is left out", svc(h), []*discoveryv1.EndpointSlice{slice("np-abc", "np", discoveryv1.AddressTypeIPv4,
			podEndpoint("a", "10.2.0.1", "cordoned", "", true), podEndpoint("b", "10.2.0.2", "n3", "", true))},
			srv + "np.example.com A 203.0.113.3 ttl=0 simple service/default/np\n"},
		{"endpoints on unknown or no Nodes do not count", svc(h), []*discoveryv1.EndpointSlice{slice("np-abc", "np", discoveryv1.AddressTypeIPv4,
			podEndpoint("a", "10.2.0.1", "gone", "", true), podEndpoint("b", "10.2.0.2", "", "", true), podEndpoint("c", "10.2.0.3", "n3", "", false))},
			srv + "np.example.com A 203.0.113.3 ttl=0 simple service/default/np\n"},
		{"no endpoint yet: the SRV record alone, and why", svc(h), nil,
			srv + "pending: service default/np: externalTrafficPolicy Local: no endpoint in the EndpointSlices labelled kubernetes.io/service-name=np runs on a known Node yet\n"},
		{"the target annotation needs no Node", svc(map[string]string{alpha + "hostname": "np.example.com", alpha + "target": "198.51.100.1"}), nil,
			"np.example.com A 198.51.100.1 ttl=0 simple service/default/np\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := &Snapshot{Services: []*corev1.Service{tt.svc}, EndpointSlices: tt.slices, Nodes: testNodes()}
			check(t, mustNew(t, Config{}).Endpoints(snap), tt.want)
		})
	}
}

// TestSnapshotEndpointSlices: Len counts EndpointSlices and Append carries them.
func TestSnapshotEndpointSlices(t *testing.T) {
	var s Snapshot
	s.Append(&Snapshot{EndpointSlices: []*discoveryv1.EndpointSlice{slice("a", "a", discoveryv1.AddressTypeIPv4)}})
	if len(s.EndpointSlices) != 1 || s.Len() != 1 {
		t.Fatalf("EndpointSlices %d, Len %d; want 1, 1", len(s.EndpointSlices), s.Len())
	}
}
