package cloudmap

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var blue = Identity{Owner: "blue", Cluster: "eks-blue"}

// service is an annotated ClusterIP Service "web" in namespace "shop" with ports http
// (80) and grpc (9090), the given annotations (key, value pairs) and labels.
func service(labels map[string]string, annotations ...string) *corev1.Service {
	ann := map[string]string{}
	for i := 0; i+1 < len(annotations); i += 2 {
		ann[annotations[i]] = annotations[i+1]
	}
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Annotations: ann, Labels: labels},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}, {Name: "grpc", Port: 9090}}}}
}

// ep is an endpoint; ready nil means unset.
func ep(addr string, ready *bool) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{Addresses: []string{addr}, Conditions: discoveryv1.EndpointConditions{Ready: ready}}
}

// slice is an EndpointSlice of shop/web with the ports http→8080 and grpc→50051.
func slice(name string, typ discoveryv1.AddressType, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name,
		Labels: map[string]string{discoveryv1.LabelServiceName: "web", discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"}},
		AddressType: typ, Endpoints: eps,
		Ports: []discoveryv1.EndpointPort{{Name: ptrTo("http"), Port: ptrTo[int32](8080)}, {Name: ptrTo("grpc"), Port: ptrTo[int32](50051)}}}
}

// render shows desired instances as "target address:port attrs" lines, sorted; the ids
// are checked apart.
func render(d Desired) []string {
	var out []string
	for t, insts := range d.Instances {
		for id, in := range insts {
			if id != in.ID {
				out = append(out, "id mismatch "+id)
			}
			attrs := maps.Clone(in.Attributes)
			addr := attrs[AttrIPv4] + attrs[AttrIPv6]
			port := attrs[AttrPort]
			delete(attrs, AttrIPv4)
			delete(attrs, AttrIPv6)
			delete(attrs, AttrPort)
			var kv []string
			for _, k := range slices.Sorted(maps.Keys(attrs)) {
				kv = append(kv, k+"="+attrs[k])
			}
			out = append(out, fmt.Sprintf("%s %s:%s %s", t, addr, port, strings.Join(kv, ",")))
		}
	}
	slices.Sort(out)
	return out
}

func TestDesire(t *testing.T) {
	yes, no := ptrTo(true), ptrTo(false)
	own := "crossfade.io/owner=blue,crossfade.io/resource=service/shop/web"
	v4 := slice("web-a", discoveryv1.AddressTypeIPv4, ep("10.0.1.1", yes), ep("10.0.1.2", nil), ep("10.0.1.3", no))
	for _, tc := range []struct {
		name     string
		svc      *corev1.Service
		slices   []*discoveryv1.EndpointSlice
		id       Identity
		want     []string
		invalid  string // the invalid annotation, "" when valid
		reason   string // part of the reason
		notMatch bool
	}{
		{name: "not annotated: nothing", svc: service(nil), slices: []*discoveryv1.EndpointSlice{v4}},
		{name: "ready and unset-ready endpoints, first port, version label",
			svc:    service(map[string]string{LabelVersion: "v1-21"}, AnnotationService, "corp.local/api"),
			slices: []*discoveryv1.EndpointSlice{v4},
			want: []string{
				"corp.local/api 10.0.1.1:8080 cluster=eks-blue," + own + ",version=v1-21",
				"corp.local/api 10.0.1.2:8080 cluster=eks-blue," + own + ",version=v1-21",
			}},
		{name: "port by name, attributes, version attribute overrides the label",
			svc: service(map[string]string{LabelVersion: "v1"}, AnnotationService, " corp.local/api ", AnnotationPort, "grpc",
				AnnotationAttributes, "env=prod, version = v2 ,team=pay"),
			slices: []*discoveryv1.EndpointSlice{slice("web-a", discoveryv1.AddressTypeIPv4, ep("10.0.1.1", yes))},
			want:   []string{"corp.local/api 10.0.1.1:50051 cluster=eks-blue," + own + ",env=prod,team=pay,version=v2"}},
		{name: "port by number, JSON attributes with a comma",
			svc:    service(nil, AnnotationService, "shop/web", AnnotationPort, "9090", AnnotationAttributes, `{"tags": "a,b"}`),
			slices: []*discoveryv1.EndpointSlice{slice("web-a", discoveryv1.AddressTypeIPv4, ep("10.0.1.1", yes))},
			want:   []string{"shop/web 10.0.1.1:50051 cluster=eks-blue," + own + ",tags=a,b"}},
		{name: "IPv6 slice, the same address in two slices once, FQDN slices skipped",
			svc: service(nil, AnnotationService, "corp.local/api"),
			slices: []*discoveryv1.EndpointSlice{
				slice("web-6", discoveryv1.AddressTypeIPv6, ep("fd00::0001", yes)),
				slice("web-6b", discoveryv1.AddressTypeIPv6, ep("fd00::1", yes)),
				slice("web-f", discoveryv1.AddressTypeFQDN, ep("db.example.com", yes)),
			},
			want: []string{"corp.local/api fd00::1:8080 cluster=eks-blue," + own}},
		{name: "a namespace name with a slash: split at the last",
			svc:    service(nil, AnnotationService, "team/a/api"),
			slices: []*discoveryv1.EndpointSlice{slice("web-a", discoveryv1.AddressTypeIPv4, ep("10.0.1.1", yes))},
			want:   []string{"team/a/api 10.0.1.1:8080 cluster=eks-blue," + own}},
		{name: "a slice without the Service's port: no instance",
			svc: service(nil, AnnotationService, "corp.local/api"),
			slices: []*discoveryv1.EndpointSlice{func() *discoveryv1.EndpointSlice {
				s := slice("web-a", discoveryv1.AddressTypeIPv4, ep("10.0.1.1", yes))
				s.Ports = s.Ports[1:]
				return s
			}()}},
		{name: "namespace outside --cloudmap-namespace", svc: service(nil, AnnotationService, "other/api"),
			id: Identity{Owner: "blue", Cluster: "blue", Namespaces: []string{"corp.local"}}, invalid: AnnotationService, reason: "not one this controller manages"},
		{name: "no service part", svc: service(nil, AnnotationService, "corp.local"), invalid: AnnotationService, reason: "want <namespace>/<service>"},
		{name: "empty namespace", svc: service(nil, AnnotationService, "/api"), invalid: AnnotationService, reason: "want <namespace>/<service>"},
		{name: "reserved cluster", svc: service(nil, AnnotationService, "a/b", AnnotationAttributes, "cluster=green"),
			invalid: AnnotationAttributes, reason: `key "cluster" is reserved`},
		{name: "reserved AWS attribute", svc: service(nil, AnnotationService, "a/b", AnnotationAttributes, "AWS_INSTANCE_IPV4=1.2.3.4"),
			invalid: AnnotationAttributes, reason: "reserved"},
		{name: "reserved owner", svc: service(nil, AnnotationService, "a/b", AnnotationAttributes, "crossfade.io/owner=green"),
			invalid: AnnotationAttributes, reason: "reserved"},
		{name: "item without =", svc: service(nil, AnnotationService, "a/b", AnnotationAttributes, "env"),
			invalid: AnnotationAttributes, reason: "want key=value"},
		{name: "key twice", svc: service(nil, AnnotationService, "a/b", AnnotationAttributes, "env=a,env=b"),
			invalid: AnnotationAttributes, reason: "given twice"},
		{name: "bad JSON", svc: service(nil, AnnotationService, "a/b", AnnotationAttributes, `{"env": 1}`),
			invalid: AnnotationAttributes, reason: "not a JSON object of strings"},
		{name: "key twice in JSON", svc: service(nil, AnnotationService, "a/b", AnnotationAttributes, `{"env": "a", "env": "b"}`),
			invalid: AnnotationAttributes, reason: `key "env" given twice`},
		{name: "JSON with something after it", svc: service(nil, AnnotationService, "a/b", AnnotationAttributes, `{"env": "a"} x`),
			invalid: AnnotationAttributes, reason: "something follows the object"},
		{name: "JSON not closed", svc: service(nil, AnnotationService, "a/b", AnnotationAttributes, `{"env": "a"`),
			invalid: AnnotationAttributes, reason: "not a JSON object of strings"},
		{name: "key with a space", svc: service(nil, AnnotationService, "a/b", AnnotationAttributes, `{"my key": "v"}`),
			invalid: AnnotationAttributes, reason: "printable ASCII"},
		{name: "value with a non-ASCII letter", svc: service(nil, AnnotationService, "a/b", AnnotationAttributes, "env=prød"),
			invalid: AnnotationAttributes, reason: "printable ASCII"},
		{name: "too many attributes", svc: service(nil, AnnotationService, "a/b", AnnotationAttributes, manyAttributes(28)),
			invalid: AnnotationAttributes, reason: "at most 30 custom attributes"},
		{name: "too long in all", svc: service(nil, AnnotationService, "a/b", AnnotationAttributes,
			"a="+strings.Repeat("x", 1000)+",b="+strings.Repeat("x", 1000)+",c="+strings.Repeat("x", 1000)+",d="+strings.Repeat("x", 1000)+",e="+strings.Repeat("x", 1000)),
			invalid: AnnotationAttributes, reason: "at most 5000"},
		{name: "unknown port", svc: service(nil, AnnotationService, "a/b", AnnotationPort, "metrics"),
			invalid: AnnotationPort, reason: "the Service has http (80), grpc (9090)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := tc.id
			if id.Owner == "" {
				id = blue
			}
			d := Desire([]*corev1.Service{tc.svc}, tc.slices, id)
			if tc.invalid != "" {
				if len(d.Invalid) != 1 || d.Invalid[0].Field != "annotation "+tc.invalid || !strings.Contains(d.Invalid[0].Reason, tc.reason) {
					t.Fatalf("invalid %v, want one on %s saying %q", d.Invalid, tc.invalid, tc.reason)
				}
				if e := d.Invalid[0]; e.Object.Kind != "Service" || e.Object.Namespace != "shop" || e.Object.Name != "web" {
					t.Errorf("invalid names %v", e.Object)
				}
				if !d.Held["service/shop/web"] || len(d.Instances) != 0 {
					t.Errorf("an invalid Service must hold its instances and want none: held %v, instances %v", d.Held, d.Instances)
				}
				return
			}
			if len(d.Invalid) != 0 {
				t.Fatalf("invalid: %v", d.Invalid)
			}
			if got := render(d); !slices.Equal(got, tc.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }

func manyAttributes(n int) string {
	var kv []string
	for i := range n {
		kv = append(kv, fmt.Sprintf("k%d=v", i))
	}
	return strings.Join(kv, ",")
}

// TestDesireIDs: each instance's id is InstanceID of the owner, the Service and its
// address and port; the ids of one Service's endpoints differ, and so do two clusters'.
func TestDesireIDs(t *testing.T) {
	svc := service(nil, AnnotationService, "corp.local/api")
	s := slice("web-a", discoveryv1.AddressTypeIPv4, ep("10.0.1.1", nil), ep("10.0.1.2", nil))
	target := Target{"corp.local", "api"}
	ids := func(id Identity) []string {
		return slices.Sorted(maps.Keys(Desire([]*corev1.Service{svc}, []*discoveryv1.EndpointSlice{s}, id).Instances[target]))
	}
	b := ids(blue)
	want := []string{InstanceID("blue", "shop", "web", "10.0.1.1", 8080), InstanceID("blue", "shop", "web", "10.0.1.2", 8080)}
	slices.Sort(want)
	if !slices.Equal(b, want) || b[0] == b[1] {
		t.Errorf("ids %v, want %v", b, want)
	}
	g := ids(Identity{Owner: "green", Cluster: "eks-blue"})
	if slices.Contains(g, b[0]) || slices.Contains(g, b[1]) {
		t.Errorf("green's ids %v share one with blue's %v", g, b)
	}
}

func TestIdentityValidate(t *testing.T) {
	for _, tc := range []struct {
		id   Identity
		want string
	}{
		{Identity{Owner: "blue", Cluster: "eks blue"}, ""},
		{Identity{Owner: "", Cluster: "x"}, "owner id: empty"},
		{Identity{Owner: "blue", Cluster: " x"}, "cluster id \" x\": want printable ASCII"},
		{Identity{Owner: "blüe", Cluster: "x"}, "owner id \"blüe\""},
	} {
		err := tc.id.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: %v, want %q", tc.id, err, tc.want)
		}
	}
}
