package cloudmap

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// The annotations a Service publishes itself into Cloud Map with. They live under
// crossfade.io/: external-dns's Cloud Map provider (aws-sd) is another model — a
// hostname becomes a whole Cloud Map service that one owner id owns (in the service's
// description) — which is exactly what two clusters sharing a service cannot use.
const (
	// AnnotationService names the Cloud Map namespace and service the Service's endpoints
	// are registered in: "<namespace name>/<service name>", e.g. "corp.local/api". One
	// value, so that a Service is in exactly one Cloud Map service; split at the last "/"
	// (an HTTP namespace's name may hold a "/", a service's may not).
	AnnotationService = "crossfade.io/cloudmap-service"
	// AnnotationAttributes are custom attributes every instance of the Service carries,
	// the ones clients select on: "env=prod,team=payments", or a JSON object of strings
	// for values holding a comma ({"tags": "a,b"}). "version" here overrides the version
	// label.
	AnnotationAttributes = "crossfade.io/cloudmap-attributes"
	// AnnotationPort picks the Service port whose endpoints' port becomes
	// AWS_INSTANCE_PORT, by name or number; without it the Service's first port.
	AnnotationPort = "crossfade.io/cloudmap-port"
	// LabelVersion is where the version attribute comes from by default: the recommended
	// label the application's tooling (Helm charts, kustomize) already sets.
	LabelVersion = "app.kubernetes.io/version"
)

// ReadsAnnotation reports whether the publisher reads the annotation key: the
// controller's cache keeps these on Services whatever the sources read.
func ReadsAnnotation(key string) bool {
	return key == AnnotationService || key == AnnotationAttributes || key == AnnotationPort
}

// The attributes crossfade writes on every instance besides the annotation's.
const (
	// AttrIPv4, AttrIPv6 and AttrPort are Cloud Map's reserved attributes for the
	// instance's address and port: the A/AAAA and SRV records of a DNS namespace are
	// built from them.
	AttrIPv4 = "AWS_INSTANCE_IPV4"
	AttrIPv6 = "AWS_INSTANCE_IPV6"
	AttrPort = "AWS_INSTANCE_PORT"
	// AttrCluster is the cluster id clients select a cluster's instances by
	// (DiscoverInstances QueryParameters cluster=blue). Reserved: a Service cannot claim
	// to be another cluster's.
	AttrCluster = "cluster"
	// AttrVersion is the application's version (LabelVersion, or the annotation's
	// "version"); absent when neither says.
	AttrVersion = "version"
	// AttrOwner records which controller registered the instance: the only instances a
	// controller ever changes or deregisters are those whose AttrOwner is its own owner id.
	AttrOwner = "crossfade.io/owner"
	// AttrResource names the object that asked for the instance ("service/default/web", as
	// external-dns's ownership records name it): for people reading the instance, and so
	// that an object whose input turns invalid keeps its instances as they are.
	AttrResource = "crossfade.io/resource"
)

// Cloud Map's limits on attributes (servicediscovery 2017-03-14, RegisterInstance).
const (
	maxAttrKeyLen       = 255
	maxAttrValueLen     = 1024
	maxCustomAttributes = 30
	maxAttributesTotal  = 5000
)

var (
	// attrKeyPattern and attrValuePattern are the Attributes map's patterns in Cloud Map's
	// model: printable ASCII keys; values of printable ASCII, spaces and tabs allowed
	// anywhere but first (the model's pattern lets one end a value).
	attrKeyPattern   = regexp.MustCompile(`^[a-zA-Z0-9!-~]+$`)
	attrValuePattern = regexp.MustCompile(`^([a-zA-Z0-9!-~][ \ta-zA-Z0-9!-~]*){0,1}[a-zA-Z0-9!-~]{0,1}$`)
)

// reserved tells whether an annotation may not set the attribute key: Cloud Map's own
// (AWS_…), the cluster id and crossfade's.
func reserved(key string) bool {
	return strings.HasPrefix(key, "AWS_") || key == AttrCluster || strings.HasPrefix(key, "crossfade.io/")
}

// Target is a Cloud Map service, by namespace name and service name.
type Target struct{ Namespace, Service string }

// String renders "namespace/service", as the annotation names it.
func (t Target) String() string { return t.Namespace + "/" + t.Service }

// Instance is one instance a Service asks for.
type Instance struct {
	ID         string
	Attributes map[string]string
	// Resource is the object asking for it, as AttrResource holds it.
	Resource string
}

// Identity says who a controller is in Cloud Map.
type Identity struct {
	// Owner is written into AttrOwner; it must be the same across restarts and unique
	// among everything registering into the same services.
	Owner string
	// Cluster is written into AttrCluster.
	Cluster string
	// Namespaces, when set, are the only Cloud Map namespaces a Service may name.
	Namespaces []string
}

// Validate checks that the identity can be written as attributes.
func (id Identity) Validate() error {
	for _, f := range []struct{ name, v string }{{"owner id", id.Owner}, {"cluster id", id.Cluster}} {
		if f.v == "" {
			return fmt.Errorf("cloud map %s: empty", f.name)
		}
		if reason := checkValue(f.v); reason != "" {
			return fmt.Errorf("cloud map %s %q: %s", f.name, f.v, reason)
		}
	}
	return nil
}

// Desired is what the Services ask of Cloud Map.
type Desired struct {
	// Instances are the wanted instances by target, then by id.
	Instances map[Target]map[string]Instance
	// Wanted are the resources naming each target (for problems about the target).
	Wanted map[Target][]string
	// Invalid are the objects whose annotations cannot be published.
	Invalid []*endpoint.InvalidError
	// Held are the resources of the invalid objects: their instances are kept as they
	// are, wherever they are, until the object is fixed or deleted.
	Held map[string]bool
}

// Desire computes the instances the annotated Services ask for from their
// EndpointSlices: one per ready endpoint address. It has no I/O.
func Desire(services []*corev1.Service, eps []*discoveryv1.EndpointSlice, id Identity) Desired {
	d := Desired{Instances: map[Target]map[string]Instance{}, Wanted: map[Target][]string{}, Held: map[string]bool{}}
	byService := map[string][]*discoveryv1.EndpointSlice{}
	for _, s := range eps {
		if name := s.Labels[discoveryv1.LabelServiceName]; name != "" {
			byService[s.Namespace+"/"+name] = append(byService[s.Namespace+"/"+name], s)
		}
	}
	for _, svc := range services {
		value, ok := svc.Annotations[AnnotationService]
		if !ok {
			continue
		}
		ref := endpoint.ObjectRef{Kind: "Service", Namespace: svc.Namespace, Name: svc.Name}
		res := Resource(svc.Namespace, svc.Name)
		invalid := func(annotation, value, reason string) {
			d.Invalid = append(d.Invalid, &endpoint.InvalidError{Object: ref, Field: "annotation " + annotation, Value: value, Reason: reason})
			d.Held[res] = true
		}
		target, reason := parseTarget(value)
		if reason == "" && len(id.Namespaces) > 0 && !slices.Contains(id.Namespaces, target.Namespace) {
			reason = fmt.Sprintf("namespace %q is not one this controller manages (--cloudmap-namespace %s)", target.Namespace, strings.Join(id.Namespaces, ","))
		}
		if reason != "" {
			invalid(AnnotationService, value, reason)
			continue
		}
		custom, reason := parseAttributes(svc.Annotations[AnnotationAttributes])
		if reason != "" {
			invalid(AnnotationAttributes, svc.Annotations[AnnotationAttributes], reason)
			continue
		}
		port, reason := servicePort(svc)
		if reason != "" {
			invalid(AnnotationPort, svc.Annotations[AnnotationPort], reason)
			continue
		}
		base := maps.Clone(custom)
		base[AttrCluster], base[AttrOwner], base[AttrResource] = id.Cluster, id.Owner, res
		if v, ok := custom[AttrVersion]; ok {
			base[AttrVersion] = v
		} else if v := svc.Labels[LabelVersion]; v != "" {
			base[AttrVersion] = v
		}
		if n := len(base); n > maxCustomAttributes {
			invalid(AnnotationAttributes, svc.Annotations[AnnotationAttributes],
				fmt.Sprintf("%d attributes with crossfade's own %s, %s, %s and %s; Cloud Map takes at most %d custom attributes",
					n, AttrCluster, AttrVersion, AttrOwner, AttrResource, maxCustomAttributes))
			continue
		}
		// The longest address and port an instance can add: an IPv6 address in full.
		if total := attributesLen(base) + len(AttrIPv6) + len("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff") + len(AttrPort) + len("65535"); total > maxAttributesTotal {
			invalid(AnnotationAttributes, svc.Annotations[AnnotationAttributes],
				fmt.Sprintf("the attributes may take %d characters; Cloud Map takes at most %d (keys and values)", total, maxAttributesTotal))
			continue
		}
		insts := instancesOf(svc, port, byService[svc.Namespace+"/"+svc.Name], base, id.Owner, res)
		d.Wanted[target] = append(d.Wanted[target], res)
		if d.Instances[target] == nil {
			d.Instances[target] = map[string]Instance{}
		}
		for _, in := range insts {
			d.Instances[target][in.ID] = in
		}
	}
	return d
}

// Resource is the resource label of a Service, as AttrResource holds it.
func Resource(namespace, name string) string { return "service/" + namespace + "/" + name }

func attributesLen(attrs map[string]string) int {
	n := 0
	for k, v := range attrs {
		n += len(k) + len(v)
	}
	return n
}

// instancesOf returns an instance per ready endpoint address of the Service's slices, in
// the port of the Service's chosen port, sorted by id. An address in several slices
// (slices being replaced) counts once.
func instancesOf(svc *corev1.Service, port corev1.ServicePort, eps []*discoveryv1.EndpointSlice, base map[string]string, owner, res string) []Instance {
	seen := map[string]Instance{}
	for _, s := range eps {
		var addrKey string
		switch s.AddressType {
		case discoveryv1.AddressTypeIPv4:
			addrKey = AttrIPv4
		case discoveryv1.AddressTypeIPv6:
			addrKey = AttrIPv6
		default:
			continue // FQDN endpoints have no address to register
		}
		num, ok := slicePort(s, port)
		if !ok {
			continue
		}
		for _, e := range s.Endpoints {
			// Ready unset means ready (the API's rule for consumers). A terminating
			// endpoint is not ready unless the Service publishes not-ready addresses,
			// in which case the EndpointSlice controller marks it ready itself.
			if (e.Conditions.Ready != nil && !*e.Conditions.Ready) || len(e.Addresses) == 0 {
				continue
			}
			a, err := netip.ParseAddr(e.Addresses[0])
			if err != nil || (addrKey == AttrIPv4) != a.Is4() {
				continue
			}
			addr := a.String()
			attrs := maps.Clone(base)
			attrs[addrKey], attrs[AttrPort] = addr, strconv.Itoa(int(num))
			id := InstanceID(owner, svc.Namespace, svc.Name, addr, num)
			seen[id] = Instance{ID: id, Attributes: attrs, Resource: res}
		}
	}
	out := make([]Instance, 0, len(seen))
	for _, in := range seen {
		out = append(out, in)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// slicePort is the port the slice's endpoints serve the Service port on: the slice port
// of the same name (the EndpointSlice controller names slice ports after the Service's,
// and resolves a named target port per pod, which is why each slice carries its own).
func slicePort(s *discoveryv1.EndpointSlice, sp corev1.ServicePort) (int32, bool) {
	for _, p := range s.Ports {
		name := ""
		if p.Name != nil {
			name = *p.Name
		}
		proto := corev1.ProtocolTCP
		if p.Protocol != nil {
			proto = *p.Protocol
		}
		spProto := sp.Protocol
		if spProto == "" {
			spProto = corev1.ProtocolTCP
		}
		// The API server does not range-check a slice's port (any controller, or a
		// person, may write a slice for a Service without a selector): a port over 65535
		// is none, as Cloud Map refuses it in AWS_INSTANCE_PORT.
		if name == sp.Name && proto == spProto && p.Port != nil && *p.Port > 0 && *p.Port <= 65535 {
			return *p.Port, true
		}
	}
	return 0, false
}

// servicePort picks the Service port AnnotationPort names, else the first.
func servicePort(svc *corev1.Service) (corev1.ServicePort, string) {
	ports := svc.Spec.Ports
	want, set := svc.Annotations[AnnotationPort]
	if !set {
		if len(ports) == 0 {
			return corev1.ServicePort{}, "the Service has no port"
		}
		return ports[0], ""
	}
	want = strings.TrimSpace(want)
	n, numErr := strconv.Atoi(want)
	for _, p := range ports {
		if p.Name == want || (numErr == nil && int(p.Port) == n) {
			return p, ""
		}
	}
	var names []string
	for _, p := range ports {
		names = append(names, fmt.Sprintf("%s (%d)", p.Name, p.Port))
	}
	return corev1.ServicePort{}, fmt.Sprintf("no Service port has this name or number; the Service has %s", strings.Join(names, ", "))
}

// parseTarget reads AnnotationService.
func parseTarget(v string) (Target, string) {
	v = strings.TrimSpace(v)
	i := strings.LastIndex(v, "/")
	if i <= 0 || i == len(v)-1 {
		return Target{}, "want <namespace>/<service>, e.g. corp.local/api"
	}
	t := Target{Namespace: v[:i], Service: v[i+1:]}
	if strings.ContainsAny(t.Service, " \t") || strings.ContainsAny(t.Namespace, " \t") {
		return Target{}, "want <namespace>/<service> without spaces"
	}
	return t, ""
}

// parseAttributes reads AnnotationAttributes: "k=v,k2=v2" (spaces around items are
// ignored) or a JSON object of strings.
func parseAttributes(v string) (map[string]string, string) {
	out := map[string]string{}
	v = strings.TrimSpace(v)
	if v == "" {
		return out, ""
	}
	if strings.HasPrefix(v, "{") {
		var reason string
		if out, reason = jsonAttributes(v); reason != "" {
			return nil, reason
		}
	} else {
		for item := range strings.SplitSeq(v, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			k, val, ok := strings.Cut(item, "=")
			if !ok {
				return nil, fmt.Sprintf("item %q: want key=value (or a JSON object)", item)
			}
			k, val = strings.TrimSpace(k), strings.TrimSpace(val)
			if _, dup := out[k]; dup {
				return nil, fmt.Sprintf("key %q given twice", k)
			}
			out[k] = val
		}
	}
	for _, k := range slices.Sorted(maps.Keys(out)) {
		switch {
		case reserved(k):
			return nil, fmt.Sprintf("key %q is reserved: crossfade sets AWS_INSTANCE_*, %s and crossfade.io/* itself", k, AttrCluster)
		case len(k) > maxAttrKeyLen || !attrKeyPattern.MatchString(k):
			return nil, fmt.Sprintf("key %q: want 1 to %d printable ASCII characters, no space", k, maxAttrKeyLen)
		}
		if reason := checkValue(out[k]); reason != "" {
			return nil, fmt.Sprintf("key %q: value %q: %s", k, out[k], reason)
		}
	}
	return out, ""
}

// jsonAttributes reads a JSON object of strings, refusing a key given twice as the
// key=value form does (json.Unmarshal would keep the last silently).
func jsonAttributes(v string) (map[string]string, string) {
	const want = "not a JSON object of strings: "
	dec := json.NewDecoder(strings.NewReader(v))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, want + "want {"
	}
	out := map[string]string{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, want + err.Error()
		}
		k, _ := t.(string) // an object's keys are strings, or Token failed
		var val string
		if err := dec.Decode(&val); err != nil {
			return nil, fmt.Sprintf("%skey %q: %v", want, k, err)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Sprintf("key %q given twice", k)
		}
		out[k] = val
	}
	if _, err := dec.Token(); err != nil { // the closing }
		return nil, want + err.Error()
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, want + "something follows the object"
	}
	return out, ""
}

// checkValue says why v is not an attribute value Cloud Map takes, "" when it is.
func checkValue(v string) string {
	if len(v) > maxAttrValueLen {
		return fmt.Sprintf("longer than %d characters", maxAttrValueLen)
	}
	if !attrValuePattern.MatchString(v) {
		return "want printable ASCII, spaces and tabs allowed but not first"
	}
	return ""
}
