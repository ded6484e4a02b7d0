package source

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func meta(ns, name string, ann map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: ann}
}

func TestServiceTypes(t *testing.T) {
	h := map[string]string{alpha + "hostname": "s.example.com"}
	hi := map[string]string{alpha + "hostname": "s.example.com", alpha + "internal-hostname": "s.internal.example.com"}
	nodes := []*corev1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: "203.0.113.1"}, {Type: corev1.NodeInternalIP, Address: "10.1.0.1"}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "n2"}, Spec: corev1.NodeSpec{Unschedulable: true}, Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: "203.0.113.2"}}}},
	}
	tests := []struct {
		name string
		cfg  Config
		svc  *corev1.Service
		want string
	}{
		{"load balancer with internal hostname", Config{}, lbService("lb", hi, ip("192.0.2.1")),
			"s.example.com A 192.0.2.1 ttl=0 simple service/default/lb\ns.internal.example.com A 10.0.0.1 ttl=0 simple service/default/lb\n"},
		{"external IPs win over status", Config{}, func() *corev1.Service {
			s := lbService("lb", h, ip("192.0.2.1"))
			s.Spec.ExternalIPs = []string{"198.51.100.9"}
			return s
		}(), "s.example.com A 198.51.100.9 ttl=0 simple service/default/lb\n"},
		{"cluster ip with hostname is skipped", Config{}, &corev1.Service{ObjectMeta: meta("default", "c", h), Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.5"}},
			"skipped: service default/c: ClusterIP Service: the hostname annotation publishes nothing unless internal Services are published (PublishInternal, --publish-internal-services), as in external-dns; use internal-hostname\n"},
		{"cluster ip published internally", Config{PublishInternal: true}, &corev1.Service{ObjectMeta: meta("default", "c", h), Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.5"}},
			"s.example.com A 10.0.0.5 ttl=0 simple service/default/c\n"},
		{"headless waits for its EndpointSlices", Config{}, &corev1.Service{ObjectMeta: meta("default", "hl", h), Spec: corev1.ServiceSpec{ClusterIP: "None"}},
			"pending: service default/hl: headless Service: no EndpointSlice labelled kubernetes.io/service-name=hl yet\n"},
		{"external name", Config{}, &corev1.Service{ObjectMeta: meta("default", "x", h), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.net"}},
			"s.example.com CNAME db.example.net ttl=0 simple service/default/x\n"},
		{"node port", Config{}, &corev1.Service{ObjectMeta: meta("default", "np", h), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{NodePort: 30080}}}},
			"_np._tcp.s.example.com SRV 0 50 30080 s.example.com. ttl=0 simple service/default/np\ns.example.com A 203.0.113.1 ttl=0 simple service/default/np\n"},
		{"node port private", Config{}, &corev1.Service{ObjectMeta: meta("default", "np", map[string]string{alpha + "hostname": "s.example.com", alpha + "access": "private"}), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort}},
			"s.example.com A 10.1.0.1 ttl=0 simple service/default/np\n"},
		{"node port bad access", Config{}, &corev1.Service{ObjectMeta: meta("default", "np", map[string]string{alpha + "hostname": "s.example.com", alpha + "access": "Public"}), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort}},
			`invalid: service default/np: annotation external-dns.alpha.kubernetes.io/access "Public": want "public" or "private"` + "\n"},
		{"node port local traffic policy", Config{}, &corev1.Service{ObjectMeta: meta("default", "np", h), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal}},
			"pending: service default/np: externalTrafficPolicy Local: no endpoint in the EndpointSlices labelled kubernetes.io/service-name=np runs on a known Node yet\n"},
		{"service type filter", Config{ServiceTypes: []corev1.ServiceType{corev1.ServiceTypeNodePort}}, lbService("lb", h, ip("192.0.2.1")), ""},
		{"ignore hostname annotation", Config{IgnoreHostnameAnnotation: true}, lbService("lb", h, ip("192.0.2.1")), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check(t, mustNew(t, tt.cfg).Endpoints(&Snapshot{Services: []*corev1.Service{tt.svc}, Nodes: nodes}), tt.want)
		})
	}
}

func ingress(name string, ann map[string]string, hosts []string, tls []string, lb ...networkingv1.IngressLoadBalancerIngress) *networkingv1.Ingress {
	ing := &networkingv1.Ingress{ObjectMeta: meta("web", name, ann)}
	for _, h := range hosts {
		ing.Spec.Rules = append(ing.Spec.Rules, networkingv1.IngressRule{Host: h})
	}
	if len(tls) > 0 {
		ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: tls}}
	}
	ing.Status.LoadBalancer.Ingress = lb
	return ing
}

func TestIngress(t *testing.T) {
	lb := networkingv1.IngressLoadBalancerIngress{Hostname: "ing.elb.amazonaws.com"}
	class := "public"
	classed := ingress("classed", nil, []string{"c.example.com"}, nil, lb)
	classed.Spec.IngressClassName = &class
	tests := []struct {
		name string
		cfg  Config
		ing  *networkingv1.Ingress
		want string
	}{
		{"rules, tls and annotation", Config{}, ingress("i", map[string]string{alpha + "hostname": "extra.example.com"}, []string{"a.example.com", ""}, []string{"t.example.com", "a.example.com"}, lb),
			"a.example.com CNAME ing.elb.amazonaws.com ttl=0 simple ingress/web/i\nextra.example.com CNAME ing.elb.amazonaws.com ttl=0 simple ingress/web/i\nt.example.com CNAME ing.elb.amazonaws.com ttl=0 simple ingress/web/i\n"},
		{"defined hosts only", Config{}, ingress("i", map[string]string{alpha + "hostname": "extra.example.com", alpha + "ingress-hostname-source": "Defined-Hosts-Only"}, []string{"a.example.com"}, nil, lb),
			"a.example.com CNAME ing.elb.amazonaws.com ttl=0 simple ingress/web/i\n"},
		{"annotation only", Config{}, ingress("i", map[string]string{alpha + "hostname": "extra.example.com", alpha + "ingress-hostname-source": "annotation-only"}, []string{"a.example.com"}, nil, lb),
			"extra.example.com CNAME ing.elb.amazonaws.com ttl=0 simple ingress/web/i\n"},
		{"bad hostname source", Config{}, ingress("i", map[string]string{alpha + "ingress-hostname-source": "both"}, []string{"a.example.com"}, nil, lb),
			`invalid: ingress web/i: annotation external-dns.alpha.kubernetes.io/ingress-hostname-source "both": want "defined-hosts-only" or "annotation-only"` + "\n"},
		{"ignore tls and rules", Config{IgnoreIngressTLSSpec: true, IgnoreIngressRulesSpec: true}, ingress("i", nil, []string{"a.example.com"}, []string{"t.example.com"}, lb), ""},
		{"bad rule host", Config{}, ingress("i", nil, []string{"bad_host!.example.com"}, nil, lb),
			`invalid: ingress web/i: spec.rules[0].host "bad_host!.example.com": label "bad_host!" has character '!': want a-z, 0-9, '-', '_'` + "\n"},
		{"pending", Config{}, ingress("i", nil, []string{"a.example.com"}, nil),
			"pending: ingress web/i: status.loadBalancer.ingress is empty: waiting for the ingress controller to publish an address\n"},
		{"class filter drops", Config{IngressClassNames: []string{"internal"}}, classed, ""},
		{"class filter keeps", Config{IngressClassNames: []string{"public"}}, classed, "c.example.com CNAME ing.elb.amazonaws.com ttl=0 simple ingress/web/classed\n"},
		{"legacy class annotation", Config{IngressClassNames: []string{"internal"}}, ingress("old", map[string]string{"kubernetes.io/ingress.class": "internal"}, []string{"o.example.com"}, nil, lb),
			"o.example.com CNAME ing.elb.amazonaws.com ttl=0 simple ingress/web/old\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check(t, mustNew(t, tt.cfg).Endpoints(&Snapshot{Ingresses: []*networkingv1.Ingress{tt.ing}}), tt.want)
		})
	}
}

func TestDNSEndpoint(t *testing.T) {
	de := func(recs ...*DNSEndpointRecord) *DNSEndpoint {
		return &DNSEndpoint{ObjectMeta: meta("infra", "d", nil), Spec: DNSEndpointSpec{Endpoints: recs}}
	}
	tests := []struct {
		name string
		in   *DNSEndpoint
		want string
	}{
		{"records", de(
			&DNSEndpointRecord{DNSName: "A.example.com.", RecordType: "A", Targets: []string{"192.0.2.2", "192.0.2.1"}, RecordTTL: 30, Labels: map[string]string{"owner": "spoof", "team": "x"}},
			nil,
			&DNSEndpointRecord{DNSName: "txt.example.com", RecordType: "TXT", Targets: []string{`"v=spf1 -all"`}},
			&DNSEndpointRecord{DNSName: "f.example.com", RecordType: "CNAME", SetIdentifier: "one", Targets: []string{"x.example.net"},
				ProviderSpecific: []ProviderSpecificProp{{Name: "aws/failover", Value: "PRIMARY"}, {Name: "aws/health-check-id", Value: "hc-1"}, {Name: "cloudflare-proxied", Value: "true"}}},
		), "a.example.com A 192.0.2.1,192.0.2.2 ttl=30 simple crd/infra/d\nf.example.com CNAME [one] x.example.net ttl=0 failover(PRIMARY) crd/infra/d map[aws/health-check-id:hc-1]\ntxt.example.com TXT \"v=spf1 -all\" ttl=0 simple crd/infra/d\n"},
		{"bad weight", de(&DNSEndpointRecord{DNSName: "w.example.com", RecordType: "A", SetIdentifier: "s", Targets: []string{"192.0.2.1"}, ProviderSpecific: []ProviderSpecificProp{{Name: "aws/weight", Value: "heavy"}}}),
			`invalid: dnsendpoint infra/d: spec.endpoints[0].providerSpecific[0] (aws/weight) "heavy": want an integer 0..255` + "\n"},
		{"weight without set identifier", de(&DNSEndpointRecord{DNSName: "w.example.com", RecordType: "A", Targets: []string{"192.0.2.1"}, ProviderSpecific: []ProviderSpecificProp{{Name: "aws/weight", Value: "5"}}}),
			`invalid: dnsendpoint infra/d: spec.endpoints[0].providerSpecific[0] (aws/weight) "5": set without set-identifier: a weighted record needs one` + "\n"},
		{"negative ttl", de(&DNSEndpointRecord{DNSName: "t.example.com", RecordType: "A", Targets: []string{"192.0.2.1"}, RecordTTL: -1}),
			`invalid: dnsendpoint infra/d: spec.endpoints[0].recordTTL "-1": want 0..2147483647 seconds` + "\n"},
		{"bad type and name", de(&DNSEndpointRecord{DNSName: "", RecordType: "LOC", Targets: []string{"x"}}),
			"invalid: dnsendpoint infra/d: spec.endpoints[0].dnsName: empty name\n" + `invalid: dnsendpoint infra/d: spec.endpoints[0].recordType "LOC": want one of A, AAAA, CNAME, TXT, MX, NS, SRV, PTR, NAPTR` + "\n"},
		{"trailing dot on an A target", de(&DNSEndpointRecord{DNSName: "a.example.com", RecordType: "A", Targets: []string{"192.0.2.1."}}),
			`invalid: dnsendpoint infra/d: spec.endpoints[0].targets[0] "192.0.2.1.": remove the trailing dot: A targets take none` + "\n"},
		{"no targets", de(&DNSEndpointRecord{DNSName: "a.example.com", RecordType: "A"}),
			"invalid: dnsendpoint infra/d: spec.endpoints[0].targets: no targets: the record would have no value\n"},
		{"alias to a load balancer's zone", de(&DNSEndpointRecord{DNSName: "lb.example.com", RecordType: "A", Targets: []string{"k8s-app.elb.us-east-1.amazonaws.com"},
			ProviderSpecific: []ProviderSpecificProp{{Name: "alias", Value: "true"}, {Name: "aws/alias-hosted-zone-id", Value: "Z35SXDOTRQ7X7K"}}}),
			"lb.example.com A k8s-app.elb.us-east-1.amazonaws.com ttl=0 simple crd/infra/d map[alias:true aws/alias-hosted-zone-id:Z35SXDOTRQ7X7K]\n"},
		{"empty alias zone id", de(&DNSEndpointRecord{DNSName: "lb.example.com", RecordType: "A", Targets: []string{"lb.example.net"},
			ProviderSpecific: []ProviderSpecificProp{{Name: "alias", Value: "true"}, {Name: "aws/alias-hosted-zone-id", Value: ""}}}),
			`invalid: dnsendpoint infra/d: spec.endpoints[0].providerSpecific[1] (aws/alias-hosted-zone-id): want a hosted zone id, e.g. Z35SXDOTRQ7X7K` + "\n"},
		{"alias of one type on a CNAME", de(
			&DNSEndpointRecord{DNSName: "v4.example.com", RecordType: "CNAME", Targets: []string{"v4.example.net"}, ProviderSpecific: []ProviderSpecificProp{{Name: "alias", Value: "A"}}},
			&DNSEndpointRecord{DNSName: "v6.example.com", RecordType: "CNAME", Targets: []string{"v6.example.net"}, ProviderSpecific: []ProviderSpecificProp{{Name: "alias", Value: "AAAA"}}}),
			"v4.example.com CNAME v4.example.net ttl=0 simple crd/infra/d map[alias:A]\nv6.example.com CNAME v6.example.net ttl=0 simple crd/infra/d map[alias:AAAA]\n"},
		{"alias of one type on an A record", de(&DNSEndpointRecord{DNSName: "a.example.com", RecordType: "A", Targets: []string{"192.0.2.1"}, ProviderSpecific: []ProviderSpecificProp{{Name: "alias", Value: "AAAA"}}}),
			`invalid: dnsendpoint infra/d: spec.endpoints[0].providerSpecific[0] (alias) "AAAA": "A" and "AAAA" make a CNAME record (a hostname target) an alias of that type only; on an A record set "true" or remove it` + "\n"},
		{"alias neither bool nor type", de(&DNSEndpointRecord{DNSName: "a.example.com", RecordType: "CNAME", Targets: []string{"lb.example.net"}, ProviderSpecific: []ProviderSpecificProp{{Name: "alias", Value: "aaaa"}}}),
			`invalid: dnsendpoint infra/d: spec.endpoints[0].providerSpecific[0] (alias) "aaaa": want "true", "false", "A" or "AAAA"` + "\n"},
		{"hosted zone id pins the record", de(&DNSEndpointRecord{DNSName: "a.example.com", RecordType: "A", Targets: []string{"192.0.2.1"}, ProviderSpecific: []ProviderSpecificProp{{Name: "aws/hosted-zone-id", Value: "/hostedzone/Z0PRIVATE1"}}}),
			"a.example.com A 192.0.2.1 ttl=0 simple crd/infra/d map[aws/hosted-zone-id:Z0PRIVATE1]\n"},
		{"hosted zone id not one", de(&DNSEndpointRecord{DNSName: "a.example.com", RecordType: "A", Targets: []string{"192.0.2.1"}, ProviderSpecific: []ProviderSpecificProp{{Name: "aws/hosted-zone-id", Value: "private"}}}),
			`invalid: dnsendpoint infra/d: spec.endpoints[0].providerSpecific[0] (aws/hosted-zone-id) "private": want a hosted zone id, e.g. "Z1D633PJN98FT9" or "/hostedzone/Z1D633PJN98FT9"` + "\n"},
		{"unsupported aws property", de(&DNSEndpointRecord{DNSName: "a.example.com", RecordType: "A", Targets: []string{"192.0.2.1"}, ProviderSpecific: []ProviderSpecificProp{{Name: "aws/geolocation-country-code", Value: "DE"}}}),
			`invalid: dnsendpoint infra/d: spec.endpoints[0].providerSpecific[0] (aws/geolocation-country-code) "DE": ` + reasonAWSOther + "\n"},
	}
	src := mustNew(t, Config{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := src.Endpoints(&Snapshot{DNSEndpoints: []*DNSEndpoint{tt.in}})
			check(t, r, tt.want)
			for _, e := range r.Endpoints {
				if e.Labels["owner"] != "" || e.Labels["resource"] != "crd/infra/d" {
					t.Errorf("labels %v", e.Labels)
				}
			}
		})
	}
}

func istioSnap() *Snapshot {
	return &Snapshot{
		Services: []*corev1.Service{{
			ObjectMeta: meta("istio-system", "istio-ingressgateway", nil),
			Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"istio": "ingressgateway", "app": "gw"}},
			Status:     corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{host("gw.elb.amazonaws.com")}}},
		}},
		IstioGateways: []*IstioGateway{
			{ObjectMeta: meta("istio-system", "public", nil), Spec: IstioGatewaySpec{Selector: map[string]string{"istio": "ingressgateway"},
				Servers: []IstioServer{{Hosts: []string{"shop/*.shop.example.com", "gw.example.com"}}}}},
			{ObjectMeta: meta("istio-system", "pinned", map[string]string{alpha + "target": "198.51.100.1"}), Spec: IstioGatewaySpec{
				Servers: []IstioServer{{Hosts: []string{"*/pinned.example.com", "*"}}}}},
			{ObjectMeta: meta("istio-system", "unselected", nil), Spec: IstioGatewaySpec{Servers: []IstioServer{{Hosts: []string{"u.example.com"}}}}},
			{ObjectMeta: meta("istio-system", "via-ingress", map[string]string{alpha + "ingress": "web/front"}), Spec: IstioGatewaySpec{
				Servers: []IstioServer{{Hosts: []string{"front.example.com"}}}}},
		},
		Ingresses: []*networkingv1.Ingress{{ObjectMeta: meta("web", "front", nil), Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{
			Ingress: []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.50"}}}}}},
		IstioVirtualServices: []*IstioVirtualService{
			{ObjectMeta: meta("shop", "cart", nil), Spec: IstioVirtualServiceSpec{Hosts: []string{"cart.shop.example.com", "*"}, Gateways: []string{"istio-system/public", "mesh"}}},
			{ObjectMeta: meta("shop", "wrongns", nil), Spec: IstioVirtualServiceSpec{Hosts: []string{"x.other.example.com"}, Gateways: []string{"istio-system/public"}}},
			{ObjectMeta: meta("shop", "missing", nil), Spec: IstioVirtualServiceSpec{Hosts: []string{"m.example.com"}, Gateways: []string{"nope"}}},
			{ObjectMeta: meta("shop", "badref", nil), Spec: IstioVirtualServiceSpec{Hosts: []string{"b.example.com"}, Gateways: []string{"a/b/c"}}},
			{ObjectMeta: meta("other", "private", nil), Spec: IstioVirtualServiceSpec{Hosts: []string{"p.shop.example.com"}, Gateways: []string{"istio-system/public"}, ExportTo: []string{"."}}},
		},
	}
}

func TestIstio(t *testing.T) {
	want := `*.shop.example.com CNAME gw.elb.amazonaws.com ttl=0 simple gateway/istio-system/public
cart.shop.example.com CNAME gw.elb.amazonaws.com ttl=0 simple virtualservice/shop/cart
front.example.com A 192.0.2.50 ttl=0 simple gateway/istio-system/via-ingress
gw.example.com CNAME gw.elb.amazonaws.com ttl=0 simple gateway/istio-system/public
pinned.example.com A 198.51.100.1 ttl=0 simple gateway/istio-system/pinned
invalid: virtualservice shop/badref: spec.gateways[0] "a/b/c": want "name" or "namespace/name"
pending: gateway istio-system/unselected: spec.selector is empty: crossfade does not guess the ingress-gateway Service (external-dns would take every Service's address); set spec.selector or the target annotation
pending: virtualservice other/private: host p.shop.example.com: no gateway in spec.gateways serves it
pending: virtualservice shop/missing: host m.example.com: no bound gateway has it; gateway shop/nope not found
pending: virtualservice shop/wrongns: host x.other.example.com: no gateway in spec.gateways serves it
`
	snap := istioSnap()
	// The Ingress named by the gateway's ingress annotation wants the same record: the
	// two merge, as in external-dns, and the first resource keeps the label.
	snap.Ingresses[0].Spec.Rules = []networkingv1.IngressRule{{Host: "front.example.com"}}
	check(t, mustNew(t, Config{}).Endpoints(snap), want)
}

func TestGatewayAPI(t *testing.T) {
	from := gatewayv1.NamespacesFromSelector
	hn := func(s string) *gatewayv1.Hostname { h := gatewayv1.Hostname(s); return &h }
	ns := func(s string) *gatewayv1.Namespace { n := gatewayv1.Namespace(s); return &n }
	gw := &gatewayv1.Gateway{
		ObjectMeta: meta("infra", "edge", nil),
		Spec: gatewayv1.GatewaySpec{Listeners: []gatewayv1.Listener{
			{Name: "http", Protocol: gatewayv1.HTTPProtocolType, Port: 80, Hostname: hn("*.example.com"),
				AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: &from, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"edge": "yes"}}}}},
		}},
		Status: gatewayv1.GatewayStatus{Addresses: []gatewayv1.GatewayStatusAddress{{Value: "192.0.2.80"}}},
	}
	accepted := []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue}}
	parent := gatewayv1.ParentReference{Name: "edge", Namespace: ns("infra")}
	rt := func(namespace, name string, ann map[string]string, hosts []string, conds []metav1.Condition) *gatewayv1.HTTPRoute {
		r := &gatewayv1.HTTPRoute{ObjectMeta: meta(namespace, name, ann)}
		for _, h := range hosts {
			r.Spec.Hostnames = append(r.Spec.Hostnames, gatewayv1.Hostname(h))
		}
		r.Spec.ParentRefs = []gatewayv1.ParentReference{parent}
		if conds != nil {
			r.Status.Parents = []gatewayv1.RouteParentStatus{{ParentRef: parent, Conditions: conds}}
		}
		return r
	}
	snap := &Snapshot{
		Gateways:   []*gatewayv1.Gateway{gw},
		Namespaces: []*corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "apps", Labels: map[string]string{"edge": "yes"}}}, {ObjectMeta: metav1.ObjectMeta{Name: "closed"}}},
		HTTPRoutes: []*gatewayv1.HTTPRoute{
			rt("apps", "orders", map[string]string{alpha + "ttl": "30", alpha + "set-identifier": "a", alpha + "aws-weight": "50"}, []string{"orders.example.com", "other.net"}, accepted),
			rt("apps", "nohost", nil, nil, accepted),
			rt("apps", "waiting", nil, []string{"w.example.com"}, nil),
			rt("apps", "refused", nil, []string{"r.example.com"}, []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionFalse}}),
			rt("closed", "closed", nil, []string{"c.example.com"}, accepted),
			rt("apps", "annotated", map[string]string{alpha + "hostname": "extra.example.com", alpha + "gateway-hostname-source": "annotation-only"}, []string{"spec.example.com"}, accepted),
			rt("apps", "badsource", map[string]string{alpha + "gateway-hostname-source": "all"}, []string{"b.example.com"}, accepted),
		},
		GRPCRoutes: []*gatewayv1.GRPCRoute{{ObjectMeta: meta("apps", "rpc", nil),
			Spec:   gatewayv1.GRPCRouteSpec{CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{parent}}, Hostnames: []gatewayv1.Hostname{"rpc.example.com"}},
			Status: gatewayv1.GRPCRouteStatus{RouteStatus: gatewayv1.RouteStatus{Parents: []gatewayv1.RouteParentStatus{{ParentRef: parent, Conditions: accepted}}}}}},
	}
	want := `*.example.com A 192.0.2.80 ttl=0 simple httproute/apps/nohost
extra.example.com A 192.0.2.80 ttl=0 simple httproute/apps/annotated
orders.example.com A [a] 192.0.2.80 ttl=30 weighted(50) httproute/apps/orders
rpc.example.com A 192.0.2.80 ttl=0 simple grpcroute/apps/rpc
invalid: httproute apps/badsource: annotation external-dns.alpha.kubernetes.io/gateway-hostname-source "all": want "defined-hosts-only" or "annotation-only"
pending: httproute apps/refused: gateway infra/edge has not accepted the route (status.parents Accepted is not True)
pending: httproute apps/waiting: no parent Gateway has accepted the route yet (status.parents)
pending: httproute closed/closed: no listener of gateway infra/edge takes the route's hostnames
`
	check(t, mustNew(t, Config{}).Endpoints(snap), want)

	// The Gateway's target annotation overrides its status addresses.
	gw.Annotations = map[string]string{stable + "target": "edge.example.net"}
	snap.HTTPRoutes = snap.HTTPRoutes[:1]
	snap.GRPCRoutes = nil
	check(t, mustNew(t, Config{}).Endpoints(snap), "orders.example.com CNAME [a] edge.example.net ttl=30 weighted(50) httproute/apps/orders\n")
	// Gateway filters.
	check(t, mustNew(t, Config{GatewayNamespace: "elsewhere"}).Endpoints(snap), "pending: httproute apps/orders: no parent Gateway has accepted the route yet (status.parents)\n")
}

func TestMatchingHost(t *testing.T) {
	tests := []struct{ a, b, want string }{
		{"", "a.example.com", "a.example.com"},
		{"*.example.com", "a.example.com", "a.example.com"},
		{"a.example.com", "*.example.com", "a.example.com"},
		{"*.example.com", "example.com", ""},
		{"*.example.com", "*.b.example.com", "*.b.example.com"},
		{"A.Example.com", "a.example.com", "a.example.com"},
		{"192.0.2.1", "", ""},
	}
	for _, tt := range tests {
		if got, _ := matchingHost(tt.a, tt.b); got != tt.want {
			t.Errorf("matchingHost(%q, %q) = %q, want %q", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestFilters(t *testing.T) {
	svc := func(ns, name string, labels, ann map[string]string) *corev1.Service {
		s := lbService(name, ann, ip("192.0.2.1"))
		s.Namespace, s.Labels = ns, labels
		return s
	}
	snap := &Snapshot{Services: []*corev1.Service{
		svc("a", "one", map[string]string{"team": "x"}, map[string]string{alpha + "hostname": "one.example.com", "class": "public"}),
		svc("b", "two", map[string]string{"team": "y"}, map[string]string{alpha + "hostname": "two.example.com", "class": "internal"}),
	}}
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{Namespace: "a"}, "one.example.com A 192.0.2.1 ttl=0 simple service/a/one\n"},
		{Config{LabelFilter: "team=y"}, "two.example.com A 192.0.2.1 ttl=0 simple service/b/two\n"},
		{Config{AnnotationFilter: "class in (public)"}, "one.example.com A 192.0.2.1 ttl=0 simple service/a/one\n"},
		{Config{AnnotationFilter: "class notin (public)", LabelFilter: "team"}, "two.example.com A 192.0.2.1 ttl=0 simple service/b/two\n"},
	}
	for _, tt := range tests {
		check(t, mustNew(t, tt.cfg).Endpoints(snap), tt.want)
	}
}

func TestMergeAndDeterminism(t *testing.T) {
	h := map[string]string{alpha + "hostname": "rr.example.com"}
	snap := &Snapshot{Services: []*corev1.Service{
		lbService("b", h, ip("192.0.2.2")),
		lbService("a", h, ip("192.0.2.1")),
		lbService("c", map[string]string{alpha + "hostname": "rr.example.com", alpha + "ttl": "5"}, ip("192.0.2.3")),
	}}
	want := "rr.example.com A 192.0.2.1,192.0.2.2 ttl=0 simple service/default/a\nrr.example.com A 192.0.2.3 ttl=5 simple service/default/c\n"
	src := mustNew(t, Config{})
	check(t, src.Endpoints(snap), want)
	snap.Services[0], snap.Services[2] = snap.Services[2], snap.Services[0]
	check(t, src.Endpoints(snap), want)
	if r := src.Endpoints(nil); len(r.Endpoints) != 0 {
		t.Error("nil snapshot")
	}
}
