package cloudmap

import (
	"maps"
	"net"
	"net/netip"
	"reflect"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// FuzzDesire feeds arbitrary annotation values (the Cloud Map target, the attributes in
// either form, the port by name or number), a version label, the Service port's name and
// number, the EndpointSlice's port and one more endpoint address through Desire, beside a
// valid Service naming the same Cloud Map service. Nothing may panic; the fuzzed Service
// is either reported in Invalid with the annotation as its field, its value and a reason,
// and held, or every instance it asks for carries attributes Cloud Map takes (the limits
// desired.go states, checked here by a separate reading of them) with crossfade's reserved
// attributes set as crossfade sets them, under the id InstanceID gives, valid for Cloud
// Map; the same input gives the same answer, in either order of the Services; the valid
// Service's instances are exactly what they are without the fuzzed one.
//
// The inputs Kubernetes validates before any controller sees them are kept to what the
// API server takes: the version label is a label value, the extra address one that
// net.ParseIP reads, in the slice of its family as the API server checks it. The
// EndpointSlice's port is not kept: the API server does not range-check it, and any
// controller (or a person) may write a slice for a Service without a selector.
func FuzzDesire(f *testing.F) {
	type seed struct {
		target, attrs, port string
		portSet             bool
		version, portName   string
		portNum, sliceNum   int32
		addr, owner         string
	}
	for _, s := range []seed{
		{"corp.local/api", "", "", false, "v1", "http", 80, 8080, "10.0.1.9", "blue"},
		{" corp.local/api ", "env=prod, version = v2 ,team=pay", "grpc", true, "v1", "grpc", 9090, 50051, "fd00::9", "blue"},
		{"shop/web", `{"tags": "a,b", "note": "x y"}`, "9090", true, "", "", 9090, 1, "::ffff:10.0.0.1", "cluster-a@eu-west-1"},
		{"team/a/api", `{"a": "trailing\t"}`, " http ", true, "1.0.0", "http", 65535, 65535, "192.0.2.1", ""},
		{"corp.local", "env=prod", "", false, "v1", "http", 80, 8080, "", "blue"},
		{"/api", "", "", false, "", "http", 80, 8080, "", "blue"},
		{"corp.local/", "", "", false, "", "http", 80, 8080, "", "blue"},
		{"corp local/api", "", "", false, "", "http", 80, 8080, "", "blue"},
		{"corp.local/api", "cluster=other", "", false, "", "http", 80, 8080, "", "blue"},
		{"corp.local/api", "AWS_INSTANCE_IPV4=10.9.9.9", "", false, "", "http", 80, 8080, "", "blue"},
		{"corp.local/api", "crossfade.io/owner=green", "", false, "", "http", 80, 8080, "", "blue"},
		{"corp.local/api", "a=1,a=2", "", false, "", "http", 80, 8080, "", "blue"},
		{"corp.local/api", `{"a": "1", "a": "2"}`, "", false, "", "http", 80, 8080, "", "blue"},
		{"corp.local/api", "novalue", "", false, "", "http", 80, 8080, "", "blue"},
		{"corp.local/api", `{"a": 1}`, "", false, "", "http", 80, 8080, "", "blue"},
		{"corp.local/api", `{"a": "b"} x`, "", false, "", "http", 80, 8080, "", "blue"},
		{"corp.local/api", "k=" + strings.Repeat("v", 1025), "", false, "", "http", 80, 8080, "", "blue"},
		{"corp.local/api", strings.Repeat("k", 256) + "=v", "", false, "", "http", 80, 8080, "", "blue"},
		{"corp.local/api", manyAttrs(27), "", false, "v1", "http", 80, 8080, "", "blue"},
		{"corp.local/api", manyAttrs(26), "", false, "v1", "http", 80, 8080, "", "blue"},
		{"corp.local/api", "a=" + strings.Repeat("x", 1000) + ",b=" + strings.Repeat("x", 1000) + ",c=" + strings.Repeat("x", 1000) + ",d=" + strings.Repeat("x", 1000) + ",e=" + strings.Repeat("x", 900), "", false, "", "http", 80, 8080, "", "blue"},
		{"corp.local/api", "k=v\x01", "", false, "", "http", 80, 8080, "", "blue"},
		{"corp.local/api", `{"k": "\u00e9"}`, "", false, "", "http", 80, 8080, "", "blue"},
		{"corp.local/api", "", "nope", true, "", "http", 80, 8080, "", "blue"},
		{"corp.local/api", "", "", true, "", "", 80, 8080, "", "blue"},
		{"corp.local/api", "", "80", true, "", "http", 80, 70000, "10.0.1.9", "blue"},
		{"corp.local/api", "", "", false, "", "http", 80, -1, "10.0.1.9", "blue"},
		{"corp.local/api", "", "", false, "", "http", 80, 8080, "fe80::1%eth0", "blue"},
		{"corp.local/api", "", "9999", true, "", "http", 80, 70000, "10.0.1.9", "blue"},
		{"corp.local/api", "", "admin", true, "", "admin", 80, 8080, "10.0.1.9", "blue"},
	} {
		f.Add(s.target, s.attrs, s.port, s.portSet, s.version, s.portName, s.portNum, s.sliceNum, s.addr, s.owner)
	}
	f.Fuzz(func(t *testing.T, target, attrs, port string, portSet bool, version, portName string, portNum, sliceNum int32, addr, owner string) {
		id := Identity{Owner: owner, Cluster: "eks-blue"}
		if id.Validate() != nil {
			id.Owner = "blue"
		}
		ann := map[string]string{AnnotationService: target, AnnotationAttributes: attrs}
		if portSet {
			ann[AnnotationPort] = port
		}
		var labels map[string]string
		if len(validation.IsValidLabelValue(version)) == 0 {
			labels = map[string]string{LabelVersion: version}
		}
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Annotations: ann, Labels: labels},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: portName, Port: portNum}, {Name: "admin", Port: 9999}}}}
		ok := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "ok",
			Annotations: map[string]string{AnnotationService: "corp.local/api", AnnotationAttributes: "env=prod"}},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}
		v4 := []discoveryv1.Endpoint{ep("10.0.1.1", nil)}
		v6 := []discoveryv1.Endpoint{ep("fd00::1", nil)}
		// As the API server checks a slice's addresses: an IPv4 one is anything net.ParseIP
		// reads as IPv4 (an IPv4-mapped IPv6 address too), an IPv6 one the rest.
		if ip := net.ParseIP(addr); ip != nil && ip.To4() != nil {
			v4 = append(v4, ep(addr, nil))
		} else if ip != nil {
			v6 = append(v6, ep(addr, nil))
		}
		fuzzSlice := func(name string, typ discoveryv1.AddressType, eps []discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
			return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name,
				Labels: map[string]string{discoveryv1.LabelServiceName: "web"}}, AddressType: typ, Endpoints: eps,
				Ports: []discoveryv1.EndpointPort{{Name: ptrTo(portName), Port: ptrTo(sliceNum)}, {Name: ptrTo("admin"), Port: ptrTo[int32](9999)}}}
		}
		okSlice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "ok-a",
			Labels: map[string]string{discoveryv1.LabelServiceName: "ok"}}, AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints: []discoveryv1.Endpoint{ep("10.0.2.1", nil)}, Ports: []discoveryv1.EndpointPort{{Name: ptrTo("http"), Port: ptrTo[int32](8080)}}}
		all := []*discoveryv1.EndpointSlice{fuzzSlice("web-4", discoveryv1.AddressTypeIPv4, v4), fuzzSlice("web-6", discoveryv1.AddressTypeIPv6, v6), okSlice}

		d := Desire([]*corev1.Service{svc, ok}, all, id)

		// The same input, in either order, gives the same instances, refusals and holds.
		for _, again := range []Desired{Desire([]*corev1.Service{svc, ok}, all, id), Desire([]*corev1.Service{ok, svc}, all, id)} {
			if !reflect.DeepEqual(d.Instances, again.Instances) || !reflect.DeepEqual(d.Invalid, again.Invalid) || !reflect.DeepEqual(d.Held, again.Held) {
				t.Fatalf("Desire is not deterministic:\n%+v\n%+v", d, again)
			}
		}
		// The valid Service keeps exactly its instances beside the fuzzed one.
		alone := Desire([]*corev1.Service{ok}, all, id)
		okRes := Resource("shop", "ok")
		if got, want := instancesOfResource(d, okRes), instancesOfResource(alone, okRes); !reflect.DeepEqual(got, want) || len(want) != 1 {
			t.Fatalf("the valid Service's instances changed beside the fuzzed one:\n got %v\nwant %v", got, want)
		}

		res := Resource("shop", "web")
		ref := endpoint.ObjectRef{Kind: "Service", Namespace: "shop", Name: "web"}
		var mine []*endpoint.InvalidError
		for _, e := range d.Invalid {
			if e.Object != ref {
				t.Fatalf("refused an object that is not the fuzzed Service: %v", e)
			}
			mine = append(mine, e)
		}
		own := instancesOfResource(d, res)
		if len(mine) > 0 {
			checkRefusal(t, mine, ann, d, own)
			return
		}
		if d.Held[res] {
			t.Fatalf("held without a refusal")
		}
		custom, reason := parseAttributes(attrs)
		if reason != "" {
			t.Fatalf("attributes %q refused (%s) but not reported", attrs, reason)
		}
		want := map[string]string{AttrCluster: id.Cluster, AttrOwner: id.Owner, AttrResource: res}
		if v, ok := custom[AttrVersion]; ok {
			want[AttrVersion] = v
		} else if labels[LabelVersion] != "" {
			want[AttrVersion] = labels[LabelVersion]
		}
		for k, v := range custom {
			if _, set := want[k]; !set {
				want[k] = v
			}
		}
		// The slice port the chosen Service port is served on: the first slice port of its
		// name that is a port, the fuzzed one's or the admin port's 9999 (the fuzzed port
		// may be named admin too).
		chosen, _ := servicePort(svc)
		isPort := func(n int32) bool { return n >= 1 && n <= 65535 }
		var wantPort int32
		switch {
		case chosen.Name == portName && (isPort(sliceNum) || portName != "admin"):
			wantPort = sliceNum
		case chosen.Name == "admin":
			wantPort = 9999
		}
		for key, in := range own {
			checkInstance(t, key, in, want, id.Owner, wantPort)
		}
		// Nothing valid is lost: both ready endpoints every slice has become instances.
		if isPort(wantPort) {
			tgt, _ := parseTarget(target)
			for _, addr := range []string{"10.0.1.1", "fd00::1"} {
				if _, found := d.Instances[tgt][InstanceID(id.Owner, "shop", "web", addr, wantPort)]; !found {
					t.Fatalf("no instance for the ready endpoint %s, port %d: %v", addr, wantPort, own)
				}
			}
		}
	})
}

// manyAttrs is n distinct k=v attributes.
func manyAttrs(n int) string {
	var kv []string
	for i := range n {
		kv = append(kv, "k"+strconv.Itoa(i)+"=v")
	}
	return strings.Join(kv, ",")
}

// instancesOfResource is the instances d asks for on behalf of res, by target and id.
func instancesOfResource(d Desired, res string) map[string]Instance {
	out := map[string]Instance{}
	for t, insts := range d.Instances {
		for key, in := range insts {
			if in.Resource == res {
				out[t.String()+" "+key] = in
			}
		}
	}
	return out
}

// checkRefusal checks the fuzzed Service's refusal: one, naming one of the annotations the
// publisher reads with its value and a reason; the Service held; no instance asked for.
func checkRefusal(t *testing.T, errs []*endpoint.InvalidError, ann map[string]string, d Desired, own map[string]Instance) {
	t.Helper()
	if len(errs) != 1 {
		t.Fatalf("%d refusals of one Service: %v", len(errs), errs)
	}
	e := errs[0]
	key, isAnnotation := strings.CutPrefix(e.Field, "annotation ")
	if !isAnnotation || !ReadsAnnotation(key) || e.Value != ann[key] || e.Reason == "" {
		t.Fatalf("refusal without the annotation, its value and a reason: %#v", e)
	}
	if msg := e.Error(); !strings.Contains(msg, "shop/web") || !strings.Contains(msg, key) {
		t.Fatalf("refusal %q does not name the object and the annotation", msg)
	}
	if !d.Held[Resource("shop", "web")] {
		t.Fatalf("refused but not held: its instances would be deregistered")
	}
	if len(own) > 0 {
		t.Fatalf("refused but asks for instances %v", own)
	}
}

// checkInstance checks one instance the fuzzed Service asks for against Cloud Map's limits
// and crossfade's reserved attributes: want are the attributes other than the address and
// port, exactly.
func checkInstance(t *testing.T, key string, in Instance, want map[string]string, owner string, port int32) {
	t.Helper()
	attrs := in.Attributes
	if !strings.HasSuffix(key, " "+in.ID) || in.Resource != Resource("shop", "web") {
		t.Fatalf("instance %s filed under %q", in.ID, key)
	}
	if !instanceIDPattern.MatchString(in.ID) {
		t.Fatalf("instance id %q is not one Cloud Map takes", in.ID)
	}
	total, custom := 0, 0
	for k, v := range attrs {
		total += len(k) + len(v)
		if !strings.HasPrefix(k, "AWS_") {
			custom++
		}
		if len(k) < 1 || len(k) > 255 || !printableNoSpace(k) {
			t.Fatalf("attribute key %q is not one Cloud Map takes", k)
		}
		if len(v) > 1024 || !cloudMapValue(v) {
			t.Fatalf("attribute %s value %q is not one Cloud Map takes", k, v)
		}
	}
	if custom > 30 || total > 5000 {
		t.Fatalf("%d custom attributes, %d characters: over Cloud Map's limits", custom, total)
	}
	v4, has4 := attrs[AttrIPv4]
	v6, has6 := attrs[AttrIPv6]
	addr := v4 + v6
	a, err := netip.ParseAddr(addr)
	switch {
	case has4 == has6 || err != nil || a.String() != addr || a.Zone() != "":
		t.Fatalf("instance address attributes %q %q", v4, v6)
	case has4 && !a.Is4(), has6 && (a.Is4() || a.Is4In6()):
		t.Fatalf("address %s under the wrong attribute (IPv4 %v)", addr, has4)
	}
	if p, err := strconv.Atoi(attrs[AttrPort]); err != nil || p < 1 || p > 65535 || p != int(port) {
		t.Fatalf("%s = %q, want the slice's port %d", AttrPort, attrs[AttrPort], port)
	}
	if id := InstanceID(owner, "shop", "web", addr, port); in.ID != id {
		t.Fatalf("instance id %s, InstanceID gives %s", in.ID, id)
	}
	rest := maps.Clone(attrs)
	delete(rest, AttrIPv4)
	delete(rest, AttrIPv6)
	delete(rest, AttrPort)
	if !reflect.DeepEqual(rest, want) {
		t.Fatalf("attributes %v, want %v and the address and port", rest, want)
	}
}

// printableNoSpace is Cloud Map's attribute key: printable ASCII, no space.
func printableNoSpace(s string) bool {
	for i := range len(s) {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// cloudMapValue is Cloud Map's attribute value pattern read plainly: empty, or printable
// ASCII that begins with a character other than a space or a tab, and holds no other
// whitespace than those two.
func cloudMapValue(s string) bool {
	for i := range len(s) {
		c := s[i]
		if (c == ' ' || c == '\t') && i > 0 {
			continue
		}
		if c <= ' ' || c > '~' {
			return false
		}
	}
	return true
}
