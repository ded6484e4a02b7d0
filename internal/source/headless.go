package source

import (
	"cmp"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// Values of the endpoints-type annotation, as external-dns v0.21.0 spells them (its
// comparison is case-sensitive).
const (
	endpointsNodeExternalIP = "NodeExternalIP"
	endpointsHostIP         = "HostIP"
)

// Where a headless Service's names and targets come from, for messages.
const (
	fromEndpointAddresses = "EndpointSlice endpoints[].addresses"
	fromEndpointNodes     = "Node status.addresses of EndpointSlice endpoints[].nodeName"
)

// endpointIndex finds a Service's EndpointSlices and a Node by name. One conversion builds
// it on first use, so that snapshots without headless or NodePort-Local Services pay
// nothing.
type endpointIndex struct {
	snap   *Snapshot
	built  bool
	slices map[string][]*discoveryv1.EndpointSlice // by "namespace/service"
	nodes  map[string]*corev1.Node
}

func (x *endpointIndex) build() {
	if x.built {
		return
	}
	x.built = true
	x.slices = map[string][]*discoveryv1.EndpointSlice{}
	for _, sl := range x.snap.EndpointSlices {
		if sl == nil {
			continue
		}
		// The label is how the EndpointSlice controller (and external-dns's index) ties a
		// slice to its Service; a slice without it belongs to no Service.
		svc := sl.Labels[discoveryv1.LabelServiceName]
		if svc == "" {
			continue
		}
		k := sl.Namespace + "/" + svc
		x.slices[k] = append(x.slices[k], sl)
	}
	for _, list := range x.slices {
		// Sorted so that the examples in messages do not depend on informer order.
		slices.SortFunc(list, func(a, b *discoveryv1.EndpointSlice) int { return cmp.Compare(a.Name, b.Name) })
	}
	x.nodes = make(map[string]*corev1.Node, len(x.snap.Nodes))
	for _, n := range x.snap.Nodes {
		if n != nil {
			x.nodes[n.Name] = n
		}
	}
}

// slicesOf returns the EndpointSlices of a Service.
func (x *endpointIndex) slicesOf(svc *corev1.Service) []*discoveryv1.EndpointSlice {
	x.build()
	return x.slices[svc.Namespace+"/"+svc.Name]
}

// node returns the Node an endpoint runs on, or nil when the endpoint names none or the
// Node is not known.
func (x *endpointIndex) node(ep *discoveryv1.Endpoint) *corev1.Node {
	if ep.NodeName == nil {
		return nil
	}
	x.build()
	return x.nodes[*ep.NodeName]
}

// headless is what a headless Service's endpoints publish: every target under each of the
// Service's names, and under "<endpoint hostname>.<name>" the targets of the endpoints
// with that hostname.
type headless struct {
	all        []string
	byHostname map[string][]string
	// hostnameFrom names, for each hostname, the first field it was read from.
	hostnameFrom map[string]string
	targetsFrom  string
}

// headlessTargets reads a headless Service's endpoints from its EndpointSlices as
// external-dns v0.21.0's extractHeadlessEndpoints reads them from EndpointSlices and Pods:
//
//   - an endpoint that is not ready is left out unless the Service sets
//     spec.publishNotReadyAddresses or AlwaysPublishNotReadyAddresses is set (a nil ready
//     condition counts as ready, as the API says);
//   - only endpoints whose targetRef is a Pod are read; publishing endpoint addresses,
//     only slices of addressType IPv4 and IPv6;
//   - the target is the endpoint's first address; with the endpoints-type annotation
//     NodeExternalIP the ExternalIPs of its Node; with HostIP (or PublishHostIP) its
//     Node's host IP;
//   - an endpoint with a hostname also publishes "<hostname>.<name>".
//
// Where external-dns reads the Pod, crossfade reads what the EndpointSlice says of it:
// the hostname is the endpoint's (set by the EndpointSlice controller only when the Pod's
// spec.subdomain names this Service; external-dns takes spec.hostname whatever the
// subdomain), the host IP is the Node's (the kubelet's choice for status.hostIP), and a
// Pod's own target annotation, which external-dns lets override the endpoint's targets,
// is not read: Pods are not cached at all. external-dns also leaves out an endpoint whose
// Pod is not in its cache; crossfade trusts the slice. An endpoints-type value other
// than the two external-dns knows makes the Service invalid (external-dns publishes
// the endpoints' addresses then). What is left out, and why, is reported as pending on o.
func (s *Source) headlessTargets(o *object, svc *corev1.Service, a *objectAnnotations, idx *endpointIndex) *headless {
	mode, bad := a.enum(annEndpointsType, false, endpointsNodeExternalIP, endpointsHostIP)
	if bad != nil {
		o.invalid = append(o.invalid, bad)
		return &headless{}
	}
	if mode == "" && s.cfg.PublishHostIP {
		mode = endpointsHostIP
	}
	h := &headless{targetsFrom: fromEndpointAddresses}
	if mode != "" {
		h.targetsFrom = fromEndpointNodes
	}
	notReadyToo := svc.Spec.PublishNotReadyAddresses || s.cfg.AlwaysPublishNotReadyAddresses
	var left leftOut
	slicesFound := idx.slicesOf(svc)
	endpoints, notReady := 0, 0
	for _, sl := range slicesFound {
		for i := range sl.Endpoints {
			ep := &sl.Endpoints[i]
			endpoints++
			where := fmt.Sprintf("EndpointSlice %s/%s endpoints[%d]", sl.Namespace, sl.Name, i)
			if !endpointCondition(ep.Conditions.Ready) && !notReadyToo {
				notReady++
				continue
			}
			if mode == "" && sl.AddressType != discoveryv1.AddressTypeIPv4 && sl.AddressType != discoveryv1.AddressTypeIPv6 {
				left.add("addressType "+string(sl.AddressType)+" is not IPv4 or IPv6", where)
				continue
			}
			if r := ep.TargetRef; r == nil || r.APIVersion != "" || r.Kind != "Pod" {
				left.add("its targetRef is not a Pod", where)
				continue
			}
			var targets []string
			switch mode {
			case endpointsNodeExternalIP:
				targets = nodeAddresses(idx.node(ep), corev1.NodeExternalIP)
				if len(targets) == 0 {
					left.add(nodeProblem(idx, ep, "has no ExternalIP"), where)
				}
			case endpointsHostIP:
				if ip := hostIP(idx.node(ep)); ip != "" {
					targets = []string{ip}
				} else {
					left.add(nodeProblem(idx, ep, "has no InternalIP or ExternalIP"), where)
				}
			default:
				if len(ep.Addresses) > 0 {
					targets = ep.Addresses[:1]
				} else {
					left.add("it has no address", where)
				}
			}
			if len(targets) == 0 {
				continue
			}
			h.all = append(h.all, targets...)
			if ep.Hostname != nil && *ep.Hostname != "" {
				name := *ep.Hostname
				if h.byHostname == nil {
					h.byHostname, h.hostnameFrom = map[string][]string{}, map[string]string{}
				}
				if _, ok := h.byHostname[name]; !ok {
					h.hostnameFrom[name] = where + ".hostname"
				}
				h.byHostname[name] = append(h.byHostname[name], targets...)
			}
		}
	}
	left.report(o)
	if len(h.all) == 0 {
		switch {
		case len(slicesFound) == 0:
			o.wait("headless Service: no EndpointSlice labelled " + discoveryv1.LabelServiceName + "=" + svc.Name + " yet")
		case endpoints == 0:
			o.wait("headless Service: its EndpointSlices list no endpoint yet")
		case notReady > 0:
			o.wait(fmt.Sprintf("headless Service: none of its endpoints is ready (%d not ready; spec.publishNotReadyAddresses publishes them anyway)", notReady))
		}
	}
	return h
}

// add adds the records of one of the Service's names.
func (h *headless) add(o *object, host, nameFrom string, a *objectAnnotations) {
	if len(h.all) == 0 {
		return
	}
	o.addName(host, nameFrom, h.all, h.targetsFrom, a)
	for _, name := range slices.Sorted(maps.Keys(h.byHostname)) {
		o.addName(name+"."+host, h.hostnameFrom[name], h.byHostname[name], h.targetsFrom, a)
	}
}

// endpointCondition reads an EndpointSlice condition whose nil value means true (ready,
// serving).
func endpointCondition(c *bool) bool { return c == nil || *c }

// nodeAddresses returns a Node's addresses of one type, in order; none for a nil Node.
func nodeAddresses(n *corev1.Node, typ corev1.NodeAddressType) []string {
	if n == nil {
		return nil
	}
	var out []string
	for _, addr := range n.Status.Addresses {
		if addr.Type == typ {
			out = append(out, addr.Address)
		}
	}
	return out
}

// hostIP returns the address the kubelet puts in its Pods' status.hostIP: the Node's first
// InternalIP that parses, else its first ExternalIP (Kubernetes' GetNodeHostIPs). "" for
// a nil Node or none.
func hostIP(n *corev1.Node) string {
	if n == nil {
		return ""
	}
	for _, typ := range [2]corev1.NodeAddressType{corev1.NodeInternalIP, corev1.NodeExternalIP} {
		for _, addr := range n.Status.Addresses {
			if addr.Type != typ {
				continue
			}
			if ip, err := netip.ParseAddr(addr.Address); err == nil {
				return ip.String()
			}
		}
	}
	return ""
}

// nodeProblem says why an endpoint's Node gave no address: it names none, it is not known
// (yet), or it has no address of the kind wanted (what).
func nodeProblem(idx *endpointIndex, ep *discoveryv1.Endpoint, what string) string {
	switch {
	case ep.NodeName == nil || *ep.NodeName == "":
		return "it names no Node (nodeName)"
	case idx.node(ep) == nil:
		return "its Node " + *ep.NodeName + " is not known yet"
	default:
		return "its Node " + *ep.NodeName + " " + what
	}
}

// leftOut counts the endpoints left out for each reason, with the first as an example, so
// that a slice of a thousand such endpoints makes one message, not a thousand.
type leftOut struct {
	reasons []string
	count   map[string]int
	example map[string]string
}

func (l *leftOut) add(reason, where string) {
	if l.count == nil {
		l.count, l.example = map[string]int{}, map[string]string{}
	}
	if l.count[reason] == 0 {
		l.reasons = append(l.reasons, reason)
		l.example[reason] = where
	}
	l.count[reason]++
}

// report files one pending reason per reason on o.
func (l *leftOut) report(o *object) {
	for _, reason := range l.reasons {
		n := l.count[reason]
		var more string
		if n > 1 {
			more = fmt.Sprintf(" and %d more", n-1)
		}
		o.wait(fmt.Sprintf("headless Service: %s%s left out: %s", l.example[reason], more, reason))
	}
}

// localNodes returns the Nodes a NodePort Service with externalTrafficPolicy Local sends
// traffic to: those running its endpoints, as external-dns v0.21.0 selects them from the
// Service's Pods, ranked the same way. Only the Nodes at the best rank any endpoint
// reaches are returned: ready and not terminating, else ready and terminating, else any.
// An endpoint's readiness is its serving condition (the Pod's Ready condition, whatever
// spec.publishNotReadyAddresses says; when unset, its ready condition), and it is
// terminating when its terminating condition is true. external-dns counts only Pods in
// phase Running; an EndpointSlice also lists a Pod that is still starting (phase Pending,
// with an address) as not ready, so when no endpoint is ready crossfade may name a Node
// that external-dns would not.
func localNodes(svc *corev1.Service, idx *endpointIndex) []*corev1.Node {
	const (
		notReady = iota + 1
		readyTerminating
		readyNonTerminating
	)
	best := map[*corev1.Node]int{}
	top := 0
	for _, sl := range idx.slicesOf(svc) {
		for i := range sl.Endpoints {
			ep := &sl.Endpoints[i]
			n := idx.node(ep)
			if n == nil {
				continue
			}
			serving := ep.Conditions.Serving
			if serving == nil {
				serving = ep.Conditions.Ready
			}
			p := notReady
			if endpointCondition(serving) {
				p = readyTerminating
				if ep.Conditions.Terminating == nil || !*ep.Conditions.Terminating {
					p = readyNonTerminating
				}
			}
			best[n] = max(best[n], p)
			top = max(top, p)
		}
	}
	var nodes []*corev1.Node
	for n, p := range best {
		if p == top {
			nodes = append(nodes, n)
		}
	}
	slices.SortFunc(nodes, func(a, b *corev1.Node) int { return strings.Compare(a.Name, b.Name) })
	return nodes
}
