package source

import (
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/crossfade-io/crossfade/internal/endpoint"
)

const (
	gatewayGroup = "gateway.networking.k8s.io"
	gatewayKind  = "Gateway"
)

// route is what crossfade reads of an HTTPRoute or a GRPCRoute.
type route struct {
	kind       string
	meta       *metav1.ObjectMeta
	hostnames  []gatewayv1.Hostname
	parentRefs []gatewayv1.ParentReference
	status     *gatewayv1.RouteStatus
	protocol   gatewayv1.ProtocolType
}

// gwParent is a Gateway API Gateway with its target override parsed.
type gwParent struct {
	gw      *gatewayv1.Gateway
	targets []string // target annotation on the Gateway; empty means status.addresses
	from    string
	why     string // set when the Gateway's annotations are invalid
}

// hostOrigin is one name a route asks for and where it was written.
type hostOrigin struct{ host, from string }

// routes converts HTTPRoutes and GRPCRoutes as external-dns's gateway-httproute and
// gateway-grpcroute sources do: a route publishes the hostnames it shares with the
// listeners of each parent Gateway that accepted it (status.parents[].conditions
// Accepted=True), pointing at that Gateway's status.addresses or its target annotation.
// ListenerSets are not read yet.
func (s *Source) routes(snap *Snapshot, r *Result) {
	if len(snap.HTTPRoutes) == 0 && len(snap.GRPCRoutes) == 0 {
		return
	}
	parents := map[string]*gwParent{}
	for _, gw := range snap.Gateways {
		if gw == nil || s.cfg.GatewayNamespace != "" && gw.Namespace != s.cfg.GatewayNamespace {
			continue
		}
		if s.gwLabels != nil && !s.gwLabels.Matches(labels.Set(gw.Labels)) {
			continue
		}
		ref := endpoint.ObjectRef{Kind: gatewayKind, Namespace: gw.Namespace, Name: gw.Name}
		p := &gwParent{gw: gw, from: "status.addresses of gateway " + gw.Namespace + "/" + gw.Name}
		a, errs := s.parseAnnotations(ref, gw.Annotations)
		r.override(a)
		switch {
		case len(errs) > 0:
			p.why = "gateway " + gw.Namespace + "/" + gw.Name + " is invalid: " + errs[0].Error()
		case len(a.targets) > 0:
			p.targets, p.from = a.targets, a.field(annTarget)+" of gateway "+gw.Namespace+"/"+gw.Name
		}
		parents[gw.Namespace+"/"+gw.Name] = p
	}
	namespaces := make(map[string]*corev1.Namespace, len(snap.Namespaces))
	for _, ns := range snap.Namespaces {
		if ns != nil {
			namespaces[ns.Name] = ns
		}
	}
	for _, rt := range snap.HTTPRoutes {
		if rt != nil {
			s.route(route{"HTTPRoute", &rt.ObjectMeta, rt.Spec.Hostnames, rt.Spec.ParentRefs, &rt.Status.RouteStatus, gatewayv1.HTTPProtocolType}, parents, namespaces, r)
		}
	}
	for _, rt := range snap.GRPCRoutes {
		if rt != nil {
			s.route(route{"GRPCRoute", &rt.ObjectMeta, rt.Spec.Hostnames, rt.Spec.ParentRefs, &rt.Status.RouteStatus, gatewayv1.HTTPSProtocolType}, parents, namespaces, r)
		}
	}
}

func (s *Source) route(rt route, parents map[string]*gwParent, namespaces map[string]*corev1.Namespace, r *Result) {
	if !s.selects(rt.meta) {
		return
	}
	ref := endpoint.ObjectRef{Kind: rt.kind, Namespace: rt.meta.Namespace, Name: rt.meta.Name}
	o, a := s.begin(ref, resource(strings.ToLower(rt.kind), rt.meta.Namespace, rt.meta.Name), rt.meta.Annotations, r)
	if o == nil {
		return
	}
	hosts := s.routeHosts(o, rt, a)
	if len(rt.parentRefs) == 0 {
		if len(o.invalid) > 0 {
			o.finish(r)
		}
		return
	}
	type hostTargets struct {
		from, targetsFrom string
		targets           []string
	}
	found := map[string]*hostTargets{}
	var order []string
	var whys []string
	for _, ps := range rt.status.Parents {
		p, why := resolveParent(rt, ps.ParentRef, ps.Conditions, parents, s.cfg.GatewayName)
		if p == nil {
			if why != "" {
				whys = append(whys, why)
			}
			continue
		}
		section := ""
		if ps.ParentRef.SectionName != nil {
			section = string(*ps.ParentRef.SectionName)
		}
		matched := false
		for k := range p.gw.Spec.Listeners {
			lis := &p.gw.Spec.Listeners[k]
			if section != "" && string(lis.Name) != section || !listenerTakes(rt, ps.ParentRef, lis, p.gw.Namespace, namespaces) {
				continue
			}
			lisHost := ""
			if lis.Hostname != nil {
				lisHost = string(*lis.Hostname)
			}
			for _, h := range hosts {
				if lisHost == "" && h.host == "" {
					continue
				}
				host, ok := matchingHost(lisHost, h.host)
				if !ok {
					continue
				}
				from := h.from
				if h.host == "" || host != h.host && !strings.EqualFold(host, h.host) {
					from = fmt.Sprintf("spec.listeners[%d].hostname of gateway %s/%s", k, p.gw.Namespace, p.gw.Name)
				}
				ht := found[host]
				if ht == nil {
					ht = &hostTargets{from: from}
					found[host] = ht
					order = append(order, host)
				}
				matched = true
				if len(p.targets) > 0 {
					ht.targets = append(ht.targets, p.targets...)
					ht.targetsFrom = joinFrom(ht.targetsFrom, p.from)
					continue
				}
				for _, addr := range p.gw.Status.Addresses {
					ht.targets = append(ht.targets, addr.Value)
				}
				ht.targetsFrom = joinFrom(ht.targetsFrom, p.from)
			}
		}
		if !matched {
			whys = append(whys, "no listener of gateway "+p.gw.Namespace+"/"+p.gw.Name+" takes the route's hostnames")
		}
	}
	if len(order) == 0 {
		if len(whys) == 0 {
			whys = append(whys, "no parent Gateway has accepted the route yet (status.parents)")
		}
		o.wait(strings.Join(whys, "; "))
	}
	for _, host := range order {
		ht := found[host]
		if len(ht.targets) == 0 {
			o.wait("host " + host + ": " + ht.targetsFrom + " is empty: waiting for the gateway's address")
			continue
		}
		o.addName(host, ht.from, ht.targets, ht.targetsFrom, a)
	}
	o.finish(r)
}

func joinFrom(have, add string) string {
	if have == "" || have == add {
		return add
	}
	if strings.Contains(have, add) {
		return have
	}
	return have + "; " + add
}

// routeHosts returns the names a route asks for, honouring gateway-hostname-source. An
// empty host means "whatever the listener's hostname is". Where external-dns falls back
// to its default on an unknown gateway-hostname-source, crossfade reports it.
func (s *Source) routeHosts(o *object, rt route, a *objectAnnotations) []hostOrigin {
	hostSource, bad := a.enum(annGatewayHostnameSource, true, hostsDefinedOnly, hostsAnnotationOnly)
	if bad != nil {
		o.invalid = append(o.invalid, bad)
	}
	var hosts []hostOrigin
	if hostSource != hostsAnnotationOnly {
		for i, h := range rt.hostnames {
			hosts = append(hosts, hostOrigin{string(h), fmt.Sprintf("spec.hostnames[%d]", i)})
		}
	}
	if hostSource == "" && len(rt.hostnames) == 0 {
		hosts = append(hosts, hostOrigin{"", "spec.hostnames"})
	}
	if hostSource != hostsDefinedOnly && !s.cfg.IgnoreHostnameAnnotation {
		for _, h := range a.hostnames {
			hosts = append(hosts, hostOrigin{h, a.field(annHostname)})
		}
	}
	return hosts
}

// resolveParent returns the Gateway behind one status.parents entry when the route lists
// it in spec.parentRefs and the Gateway accepted the route, else why not ("" when the
// parent is not a Gateway crossfade reads).
func resolveParent(rt route, ref gatewayv1.ParentReference, conds []metav1.Condition, parents map[string]*gwParent, gwName string) (*gwParent, string) {
	if !hasParentRef(rt, ref) {
		return nil, ""
	}
	if strVal((*string)(ref.Group), gatewayGroup) != gatewayGroup || strVal((*string)(ref.Kind), gatewayKind) != gatewayKind {
		return nil, ""
	}
	ns := strVal((*string)(ref.Namespace), rt.meta.Namespace)
	p, ok := parents[ns+"/"+string(ref.Name)]
	if !ok || gwName != "" && gwName != string(ref.Name) {
		return nil, ""
	}
	if !conditionTrue(conds, string(gatewayv1.RouteConditionAccepted)) {
		return nil, "gateway " + ns + "/" + string(ref.Name) + " has not accepted the route (status.parents Accepted is not True)"
	}
	if p.why != "" {
		return nil, p.why
	}
	return p, ""
}

func hasParentRef(rt route, ref gatewayv1.ParentReference) bool {
	ns := strVal((*string)(ref.Namespace), rt.meta.Namespace)
	group := strVal((*string)(ref.Group), gatewayGroup)
	kind := strVal((*string)(ref.Kind), gatewayKind)
	for _, p := range rt.parentRefs {
		if strVal((*string)(p.Group), gatewayGroup) == group && strVal((*string)(p.Kind), gatewayKind) == kind &&
			p.Name == ref.Name && strVal((*string)(p.Namespace), rt.meta.Namespace) == ns {
			return true
		}
	}
	return false
}

func conditionTrue(conds []metav1.Condition, typ string) bool {
	for _, c := range conds {
		if c.Type == typ {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

// listenerTakes reports whether a listener accepts the route: protocol (HTTPS counts as
// HTTP), port when the parent reference names one, and allowedRoutes.
func listenerTakes(rt route, ref gatewayv1.ParentReference, lis *gatewayv1.Listener, gwNamespace string, namespaces map[string]*corev1.Namespace) bool {
	if !protocolMatches(rt.protocol, lis.Protocol) {
		return false
	}
	if ref.Port != nil && *ref.Port != lis.Port {
		return false
	}
	allow := lis.AllowedRoutes
	from := gatewayv1.NamespacesFromSame
	if allow != nil && allow.Namespaces != nil && allow.Namespaces.From != nil {
		from = *allow.Namespaces.From
	}
	switch from {
	case gatewayv1.NamespacesFromAll:
	case gatewayv1.NamespacesFromSame:
		if gwNamespace != rt.meta.Namespace {
			return false
		}
	case gatewayv1.NamespacesFromSelector:
		sel, err := metav1.LabelSelectorAsSelector(allow.Namespaces.Selector)
		ns, ok := namespaces[rt.meta.Namespace]
		if err != nil || !ok || !sel.Matches(labels.Set(ns.Labels)) {
			return false
		}
	default:
		return false
	}
	if allow == nil || len(allow.Kinds) == 0 {
		return true
	}
	for _, gk := range allow.Kinds {
		if strVal((*string)(gk.Group), gatewayGroup) == gatewayGroup && string(gk.Kind) == rt.kind {
			return true
		}
	}
	return false
}

func protocolMatches(a, b gatewayv1.ProtocolType) bool {
	if a == gatewayv1.HTTPSProtocolType {
		a = gatewayv1.HTTPProtocolType
	}
	if b == gatewayv1.HTTPSProtocolType {
		b = gatewayv1.HTTPProtocolType
	}
	if a == gatewayv1.TCPProtocolType && b == gatewayv1.TLSProtocolType {
		b = gatewayv1.TCPProtocolType
	}
	return a == b
}

// matchingHost returns the more specific of two overlapping hostnames, where "*.x"
// matches any name below x and "" matches anything, as external-dns's gwMatchingHost.
func matchingHost(a, b string) (string, bool) {
	var ok bool
	if a, ok = canonicalHost(a); !ok {
		return "", false
	}
	if b, ok = canonicalHost(b); !ok {
		return "", false
	}
	if a == "" {
		return b, true
	}
	if b == "" || a == b {
		return a, true
	}
	if na, nb := len(a), len(b); nb < na || na == nb && strings.HasPrefix(b, "*.") {
		a, b = b, a
	}
	if strings.HasPrefix(a, "*.") && strings.HasSuffix(b, a[1:]) {
		return b, true
	}
	return "", false
}

// canonicalHost lower-cases a hostname; IP addresses and names that are not RFC 1123
// domains (after an optional "*." wildcard) are not hostnames.
func canonicalHost(h string) (string, bool) {
	if h == "" {
		return "", true
	}
	if _, err := netip.ParseAddr(h); err == nil || !isDNS1123Domain(strings.TrimPrefix(h, "*.")) {
		return "", false
	}
	return strings.ToLower(h), true
}

func isDNS1123Domain(s string) bool {
	if n := len(s); n == 0 || n > 255 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		n := len(label)
		if n == 0 || n > 63 || !isAlphaNum(label[0]) || !isAlphaNum(label[n-1]) {
			return false
		}
		for i := 1; i < n-1; i++ {
			if label[i] != '-' && !isAlphaNum(label[i]) {
				return false
			}
		}
	}
	return true
}

func isAlphaNum(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
}

func strVal(p *string, def string) string {
	if p == nil || *p == "" {
		return def
	}
	return *p
}
