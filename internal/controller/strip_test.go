package controller

import (
	"maps"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// strip is the transform with every annotation kept, as a Watcher built without
// KeepAnnotation uses it.
var strip = stripper{}.strip

// TestStripAnnotations: with KeepAnnotation only the annotations it names are cached
// (none left: no map at all); without it, all but kubectl's last-applied copy. A second
// strip of a stripped object allocates nothing.
func TestStripAnnotations(t *testing.T) {
	read := func(k string) bool { return strings.HasPrefix(k, "external-dns.alpha.kubernetes.io/") || k == "team" }
	all := map[string]string{lastApplied: "{…}", "external-dns.alpha.kubernetes.io/hostname": "web.example.com", "team": "a",
		"meta.helm.sh/release-name": "web", "service.beta.kubernetes.io/aws-load-balancer-type": "external"}
	for _, tc := range []struct {
		name string
		keep func(string) bool
		in   map[string]string
		want map[string]string
	}{
		{"only what is read", read, all, map[string]string{"external-dns.alpha.kubernetes.io/hostname": "web.example.com", "team": "a"}},
		{"nothing read", read, map[string]string{"meta.helm.sh/release-name": "web"}, nil},
		{"no annotations", read, nil, nil},
		{"no KeepAnnotation", nil, all, map[string]string{"external-dns.alpha.kubernetes.io/hostname": "web.example.com", "team": "a",
			"meta.helm.sh/release-name": "web", "service.beta.kubernetes.io/aws-load-balancer-type": "external"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			strip := stripper{keepAnnotation: tc.keep}.strip
			svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Annotations: maps.Clone(tc.in)}}
			got, _ := strip(svc)
			if a := got.(*corev1.Service).Annotations; !reflect.DeepEqual(a, tc.want) {
				t.Errorf("annotations after strip: %v, want %v", a, tc.want)
			}
			if n := testing.AllocsPerRun(10, func() { _, _ = strip(svc) }); n != 0 {
				t.Errorf("a second strip allocates %v times, want 0", n)
			}
		})
	}
}

// TestStripKeepsWhatSourcesRead: strip drops what no source reads (managedFields,
// kubectl's last-applied copy, a Node's heartbeat and images, an Ingress's paths) and
// keeps what they do; a Node update that only moved its heartbeat triggers nothing.
func TestStripKeepsWhatSourcesRead(t *testing.T) {
	meta := func() metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: "x", Namespace: "default", UID: "u1",
			Annotations:   map[string]string{lastApplied: "{…}", "external-dns.alpha.kubernetes.io/hostname": "x.example.com"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}
	}
	node := func(heartbeat int64) *corev1.Node {
		return &corev1.Node{ObjectMeta: meta(),
			Spec: corev1.NodeSpec{Unschedulable: true, PodCIDR: "10.1.0.0/24"},
			Status: corev1.NodeStatus{
				Addresses:  []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: "192.0.2.1"}},
				Images:     []corev1.ContainerImage{{Names: []string{"big"}}},
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, LastHeartbeatTime: metav1.Unix(heartbeat, 0)}},
			}}
	}
	got, err := strip(node(1))
	if err != nil {
		t.Fatal(err)
	}
	n := got.(*corev1.Node)
	if n.ManagedFields != nil || n.Annotations[lastApplied] != "" || n.Status.Images != nil || n.Status.Conditions != nil || n.Spec.PodCIDR != "" {
		t.Errorf("strip kept what no source reads: %+v", n)
	}
	if n.UID != "u1" || n.Annotations["external-dns.alpha.kubernetes.io/hostname"] == "" || !n.Spec.Unschedulable || len(n.Status.Addresses) != 1 {
		t.Errorf("strip dropped what sources read: %+v", n)
	}
	older, _ := strip(node(1))
	newer, _ := strip(node(2))
	if !sameForSources(older, newer) {
		t.Error("a heartbeat-only Node update would trigger a reconcile")
	}
	moved := node(2)
	moved.Status.Addresses[0].Address = "192.0.2.2"
	movedStripped, _ := strip(moved)
	if sameForSources(older, movedStripped) {
		t.Error("a Node whose address changed compares equal")
	}

	ing := &networkingv1.Ingress{ObjectMeta: meta(), Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{
		Host: "shop.example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
			Paths: []networkingv1.HTTPIngressPath{{Path: "/"}}}}}}}}
	got, _ = strip(ing)
	if i := got.(*networkingv1.Ingress); i.Spec.Rules[0].Host != "shop.example.com" || i.Spec.Rules[0].HTTP != nil {
		t.Errorf("Ingress after strip: %+v", i.Spec)
	}
}

// TestStripServiceAndSlice: a Service keeps every field a source reads and loses the data
// path's; an EndpointSlice keeps its Service's name label and each endpoint's address,
// conditions, node and reference (kind and name), and loses the rest.
func TestStripServiceAndSlice(t *testing.T) {
	yes, local, policy := true, corev1.ServiceInternalTrafficPolicyCluster, corev1.IPFamilyPolicySingleStack
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u1",
		Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"external-dns.alpha.kubernetes.io/hostname": "web.example.com"}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10"},
			ExternalIPs: []string{"192.0.2.1"}, ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal,
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, NodePort: 30080}}, Selector: map[string]string{"app": "web"},
			PublishNotReadyAddresses: true, IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol}, IPFamilyPolicy: &policy,
			SessionAffinity: corev1.ServiceAffinityClientIP, InternalTrafficPolicy: &local, AllocateLoadBalancerNodePorts: &yes,
			LoadBalancerSourceRanges: []string{"0.0.0.0/0"}},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "192.0.2.9"}}}}}
	want := svc.DeepCopy()
	want.Spec = corev1.ServiceSpec{Type: svc.Spec.Type, ClusterIP: svc.Spec.ClusterIP, ExternalIPs: svc.Spec.ExternalIPs,
		ExternalTrafficPolicy: svc.Spec.ExternalTrafficPolicy, Ports: svc.Spec.Ports, Selector: svc.Spec.Selector,
		PublishNotReadyAddresses: true}
	got, _ := strip(svc)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("service stripped to\n%+v\nwant\n%+v", got.(*corev1.Service).Spec, want.Spec)
	}

	node, host := "n1", "web-0"
	slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "web-abc", Namespace: "default", UID: "s1",
		GenerateName: "web-", Annotations: map[string]string{"endpoints.kubernetes.io/last-change-trigger-time": "2026-11-25T00:00:00Z"},
		Labels: map[string]string{discoveryv1.LabelServiceName: "web", discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io",
			corev1.IsHeadlessService: ""}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.244.0.5"}, Hostname: &host, NodeName: &node,
			Conditions: discoveryv1.EndpointConditions{Ready: &yes},
			Zone:       &node, TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web-0", UID: "p1", ResourceVersion: "7"}}},
		Ports: []discoveryv1.EndpointPort{{Port: new(int32(80))}}}
	got, _ = strip(slice)
	s := got.(*discoveryv1.EndpointSlice)
	if s.Annotations != nil || s.UID != "" || s.GenerateName != "" || s.Ports != nil {
		t.Errorf("slice keeps metadata or ports no source reads: %+v", s.ObjectMeta)
	}
	if len(s.Labels) != 2 || s.Labels[discoveryv1.LabelServiceName] != "web" {
		t.Errorf("slice labels %v, want its Service's name and the headless label only", s.Labels)
	}
	e := s.Endpoints[0]
	if e.Addresses[0] != "10.244.0.5" || *e.Hostname != host || *e.NodeName != node || !*e.Conditions.Ready || e.Zone != nil {
		t.Errorf("endpoint stripped to %+v", e)
	}
	if *e.TargetRef != (corev1.ObjectReference{Kind: "Pod", Name: "web-0"}) {
		t.Errorf("targetRef %+v, want kind and name only", *e.TargetRef)
	}
}

// TestStripSliceOfNonHeadlessService: the EndpointSlice controller's slice of a Service
// that is not headless keeps one endpoint per node and conditions, with nothing else
// (what externalTrafficPolicy Local reads); a slice whose author does not promise the
// headless label keeps its addresses. With Cloud Map on, every slice keeps its endpoints
// and ports (the publisher registers each address on its port).
func TestStripSliceOfNonHeadlessService(t *testing.T) {
	yes, no := true, false
	ep := func(ip, node string, ready *bool) discoveryv1.Endpoint {
		e := discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ready, Serving: ready},
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "p-" + ip}}
		if node != "" {
			e.NodeName = &node
		}
		return e
	}
	nodeOnly := func(node string, ready *bool) discoveryv1.Endpoint {
		return discoveryv1.Endpoint{NodeName: &node, Conditions: discoveryv1.EndpointConditions{Ready: ready, Serving: ready}}
	}
	endpoints := []discoveryv1.Endpoint{ep("10.0.0.1", "a", &yes), ep("10.0.0.2", "a", &yes), ep("10.0.0.3", "b", &yes),
		ep("10.0.0.4", "a", &no), ep("10.0.0.5", "", &yes)}
	controllerNotHeadless := map[string]string{discoveryv1.LabelServiceName: "web", discoveryv1.LabelManagedBy: endpointSliceController}
	ports := []discoveryv1.EndpointPort{{Name: new("http"), Port: new(int32(8080))}}
	for _, tc := range []struct {
		name     string
		labels   map[string]string
		cloudMap bool
		want     []discoveryv1.Endpoint
	}{
		{"EndpointSlice controller, not headless", controllerNotHeadless, false,
			[]discoveryv1.Endpoint{nodeOnly("a", &yes), nodeOnly("b", &yes), nodeOnly("a", &no)}},
		{"EndpointSlice controller, headless",
			map[string]string{discoveryv1.LabelServiceName: "web", discoveryv1.LabelManagedBy: endpointSliceController, corev1.IsHeadlessService: ""},
			false, endpoints},
		{"another author", map[string]string{discoveryv1.LabelServiceName: "web", discoveryv1.LabelManagedBy: "mesh.example.com"}, false, endpoints},
		{"by hand", map[string]string{discoveryv1.LabelServiceName: "web"}, false, endpoints},
		{"EndpointSlice controller, not headless, Cloud Map on", controllerNotHeadless, true, endpoints},
	} {
		t.Run(tc.name, func(t *testing.T) {
			slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "web-x", Namespace: "default", Labels: tc.labels,
				Annotations: map[string]string{"endpoints.kubernetes.io/last-change-trigger-time": "2026-11-25T00:00:00Z"}},
				AddressType: discoveryv1.AddressTypeIPv4, Endpoints: append([]discoveryv1.Endpoint(nil), endpoints...), Ports: ports}
			strip := stripper{keepEndpoints: tc.cloudMap}.strip
			got, _ := strip(slice)
			// A listed slice passes twice (its page, then the transform): the same again.
			again, _ := strip(got)
			s := again.(*discoveryv1.EndpointSlice)
			if !reflect.DeepEqual(s.Endpoints, tc.want) {
				t.Errorf("endpoints after strip:\n%+v\nwant\n%+v", s.Endpoints, tc.want)
			}
			if wantPorts := map[bool][]discoveryv1.EndpointPort{true: ports}[tc.cloudMap]; !reflect.DeepEqual(s.Ports, wantPorts) || s.Annotations != nil {
				t.Errorf("ports %v (want %v), annotations %v", s.Ports, wantPorts, s.Annotations)
			}
		})
	}
}
