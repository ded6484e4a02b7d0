package source

import (
	"fmt"
	"slices"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// meshGateway in a VirtualService's gateways means the sidecars; it has no address.
const meshGateway = "mesh"

// istioGateway is an Istio Gateway with its annotations parsed and, once asked for, its
// targets: computed once per conversion however many VirtualServices bind to it.
type istioGateway struct {
	gw   *IstioGateway
	a    *objectAnnotations
	errs []*endpoint.InvalidError

	resolved bool
	targets  []string
	from     string
	why      string // why there are no targets
}

// istioIndex finds Istio Gateways and the objects their targets come from.
type istioIndex struct {
	src       *Source
	snap      *Snapshot
	gateways  map[string]*istioGateway // by "namespace/name"
	ingresses map[string]*networkingv1.Ingress
}

// istio converts Istio Gateways and VirtualServices as external-dns's istio-gateway and
// istio-virtualservice sources do. One difference: a Gateway with an empty spec.selector
// is pending, not matched against every Service in the cluster.
func (s *Source) istio(snap *Snapshot, r *Result) {
	if len(snap.IstioGateways) == 0 && len(snap.IstioVirtualServices) == 0 {
		return
	}
	idx := &istioIndex{src: s, snap: snap, gateways: map[string]*istioGateway{}}
	for _, gw := range snap.IstioGateways {
		if gw == nil || !s.inNamespace(gw.Namespace) {
			continue
		}
		ref := endpoint.ObjectRef{Kind: "Gateway", Namespace: gw.Namespace, Name: gw.Name}
		a, errs := s.parseAnnotations(ref, gw.Annotations)
		idx.gateways[gw.Namespace+"/"+gw.Name] = &istioGateway{gw: gw, a: a, errs: errs}
	}
	for _, gw := range snap.IstioGateways {
		if gw != nil && s.selects(&gw.ObjectMeta) {
			s.istioGateway(idx, idx.gateways[gw.Namespace+"/"+gw.Name], r)
		}
	}
	for _, vs := range snap.IstioVirtualServices {
		if vs != nil && s.selects(&vs.ObjectMeta) {
			s.virtualService(idx, vs, r)
		}
	}
}

func (s *Source) istioGateway(idx *istioIndex, g *istioGateway, r *Result) {
	gw := g.gw
	if g.a.foreign != "" {
		r.Skipped = append(r.Skipped, Skipped{Object: g.a.obj, Reason: g.a.foreign})
		return
	}
	r.override(g.a)
	o := newObject(g.a.obj, resource("gateway", gw.Namespace, gw.Name))
	type name struct{ host, from string }
	var names []name
	for i, srv := range gw.Spec.Servers {
		for j, h := range srv.Hosts {
			if _, after, ok := strings.Cut(h, "/"); ok && !strings.Contains(after, "/") {
				h = after
			}
			if h != "" && h != "*" {
				names = append(names, name{h, fmt.Sprintf("spec.servers[%d].hosts[%d]", i, j)})
			}
		}
	}
	if !s.cfg.IgnoreHostnameAnnotation {
		for _, h := range g.a.hostnames {
			names = append(names, name{h, g.a.field(annHostname)})
		}
	}
	if len(names) > 0 {
		idx.resolve(g) // may find the ingress annotation invalid
	}
	o.invalid = append(o.invalid, g.errs...)
	if len(names) == 0 {
		if len(o.invalid) > 0 {
			o.finish(r)
		}
		return
	}
	if len(g.targets) == 0 && g.why != "" && len(g.errs) == 0 {
		o.wait(g.why)
	}
	for _, n := range names {
		o.addName(n.host, n.from, g.targets, g.from, g.a)
	}
	o.finish(r)
}

// resolve finds a Gateway's targets: the target annotation, else the Ingress named by the
// ingress annotation, else the Services whose spec.selector carries the Gateway's
// spec.selector.
func (idx *istioIndex) resolve(g *istioGateway) {
	if g.resolved {
		return
	}
	g.resolved = true
	if len(g.errs) > 0 {
		g.why = "gateway " + g.gw.Namespace + "/" + g.gw.Name + " is invalid: " + g.errs[0].Error()
		return
	}
	if len(g.a.targets) > 0 {
		g.targets, g.from = g.a.targets, g.a.field(annTarget)
		return
	}
	if v, ok := g.a.get(annIngress); ok && v != "" {
		idx.fromIngress(g, v)
		return
	}
	sel := g.gw.Spec.Selector
	if len(sel) == 0 {
		g.why = "spec.selector is empty: crossfade does not guess the ingress-gateway Service (external-dns would take every Service's address); set spec.selector or the target annotation"
		return
	}
	selector := labels.SelectorFromSet(sel)
	var matched []string
	for _, svc := range idx.snap.Services {
		if svc == nil || !idx.src.inNamespace(svc.Namespace) || !selector.Matches(labels.Set(svc.Spec.Selector)) {
			continue
		}
		matched = append(matched, svc.Namespace+"/"+svc.Name)
		if len(svc.Spec.ExternalIPs) > 0 {
			g.targets = append(g.targets, svc.Spec.ExternalIPs...)
			continue
		}
		for _, lb := range svc.Status.LoadBalancer.Ingress {
			if lb.IP != "" {
				g.targets = append(g.targets, lb.IP)
			} else if lb.Hostname != "" {
				g.targets = append(g.targets, lb.Hostname)
			}
		}
	}
	slices.Sort(matched)
	g.from = "status.loadBalancer.ingress of service " + strings.Join(matched, ", ")
	switch {
	case len(matched) == 0:
		g.why = "no Service's spec.selector matches the gateway's spec.selector " + labels.Set(sel).String()
	case len(g.targets) == 0:
		g.why = "service " + strings.Join(matched, ", ") + " has no load balancer address yet"
	}
}

// fromIngress takes a Gateway's targets from the Ingress its ingress annotation names.
func (idx *istioIndex) fromIngress(g *istioGateway, ref string) {
	ns, name, ok := splitRef(ref, g.gw.Namespace)
	if !ok {
		g.errs = append(g.errs, g.a.invalid(annIngress, ref, `want "name" or "namespace/name"`))
		g.why = "gateway " + g.gw.Namespace + "/" + g.gw.Name + " is invalid: " + g.errs[0].Error()
		return
	}
	if idx.ingresses == nil {
		idx.ingresses = map[string]*networkingv1.Ingress{}
		for _, ing := range idx.snap.Ingresses {
			if ing != nil && idx.src.inNamespace(ing.Namespace) {
				idx.ingresses[ing.Namespace+"/"+ing.Name] = ing
			}
		}
	}
	ing, found := idx.ingresses[ns+"/"+name]
	if !found {
		g.why = "ingress " + ns + "/" + name + " named by " + g.a.field(annIngress) + " not found"
		return
	}
	for _, lb := range ing.Status.LoadBalancer.Ingress {
		if lb.IP != "" {
			g.targets = append(g.targets, lb.IP)
		} else if lb.Hostname != "" {
			g.targets = append(g.targets, lb.Hostname)
		}
	}
	g.from = "status.loadBalancer.ingress of ingress " + ns + "/" + name
	if len(g.targets) == 0 {
		g.why = "ingress " + ns + "/" + name + " has no load balancer address yet"
	}
}

// splitRef splits "name" or "namespace/name", defaulting the namespace.
func splitRef(ref, defaultNS string) (ns, name string, ok bool) {
	parts := strings.Split(ref, "/")
	switch {
	case len(parts) == 1 && parts[0] != "":
		return defaultNS, parts[0], true
	case len(parts) == 2 && parts[1] != "":
		if parts[0] == "" {
			parts[0] = defaultNS
		}
		return parts[0], parts[1], true
	}
	return "", "", false
}

func (s *Source) virtualService(idx *istioIndex, vs *IstioVirtualService, r *Result) {
	ref := endpoint.ObjectRef{Kind: "VirtualService", Namespace: vs.Namespace, Name: vs.Name}
	o, a := s.begin(ref, resource("virtualservice", vs.Namespace, vs.Name), vs.Annotations, r)
	if o == nil {
		return
	}
	type name struct{ host, from string }
	var names []name
	for i, h := range vs.Spec.Hosts {
		if _, after, ok := strings.Cut(h, "/"); ok && !strings.Contains(after, "/") {
			h = after
		}
		if h != "" && h != "*" {
			names = append(names, name{h, fmt.Sprintf("spec.hosts[%d]", i)})
		}
	}
	if !s.cfg.IgnoreHostnameAnnotation {
		for _, h := range a.hostnames {
			names = append(names, name{h, a.field(annHostname)})
		}
	}
	// Check every gateway reference once, whatever the hosts.
	gws := make([]*istioGateway, len(vs.Spec.Gateways))
	var missing []string
	for i, ref := range vs.Spec.Gateways {
		if ref == "" || ref == meshGateway {
			continue
		}
		ns, gname, ok := splitRef(ref, vs.Namespace)
		if !ok {
			o.fail(fmt.Sprintf("spec.gateways[%d]", i), ref, `want "name" or "namespace/name"`)
			continue
		}
		if gws[i] = idx.gateways[ns+"/"+gname]; gws[i] == nil {
			missing = append(missing, ns+"/"+gname)
		}
	}
	for _, n := range names {
		if len(a.targets) > 0 {
			o.addName(n.host, n.from, a.targets, a.field(annTarget), a)
			continue
		}
		var targets, froms, whys []string
		for _, g := range gws {
			if g == nil || !bindsTo(vs, g.gw, n.host) {
				continue
			}
			idx.resolve(g)
			if len(g.targets) == 0 {
				whys = append(whys, g.why)
				continue
			}
			targets = append(targets, g.targets...)
			froms = append(froms, g.from)
		}
		if len(targets) == 0 {
			o.wait(vsWhy(n.host, whys, missing))
			continue
		}
		o.addName(n.host, n.from, targets, strings.Join(froms, "; "), a)
	}
	if len(names) > 0 || len(o.invalid) > 0 {
		o.finish(r)
	}
}

func vsWhy(host string, whys, missing []string) string {
	if len(whys) > 0 {
		return "host " + host + ": " + strings.Join(whys, "; ")
	}
	if len(missing) > 0 {
		return "host " + host + ": no bound gateway has it; gateway " + strings.Join(missing, ", ") + " not found"
	}
	return "host " + host + ": no gateway in spec.gateways serves it"
}

// bindsTo reports whether vs binds to gw for host, following Istio's rules as
// external-dns's virtualServiceBindsToGateway applies them: exportTo must reach the
// gateway's namespace, and one server host ("namespace/host", "*", "*.suffix") must
// match.
func bindsTo(vs *IstioVirtualService, gw *IstioGateway, host string) bool {
	if len(vs.Spec.ExportTo) > 0 {
		exported := false
		for _, ns := range vs.Spec.ExportTo {
			if ns == "*" || ns == gw.Namespace || ns == "." && gw.Namespace == vs.Namespace {
				exported = true
			}
		}
		if !exported {
			return false
		}
	}
	for _, srv := range gw.Spec.Servers {
		for _, h := range srv.Hosts {
			ns := "*"
			parts := strings.Split(h, "/")
			switch len(parts) {
			case 1:
			case 2:
				ns, h = parts[0], parts[1]
			default:
				continue
			}
			if ns != "*" && ns != vs.Namespace && !(ns == "." && vs.Namespace == gw.Namespace) {
				continue
			}
			if h == "*" || h == host || strings.HasPrefix(h, "*.") && strings.HasSuffix(host, h[1:]) {
				return true
			}
		}
	}
	return false
}
