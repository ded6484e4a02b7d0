package source

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// services converts Services as external-dns's service source does, from the hostname and
// internal-hostname annotations. Headless Services publish their endpoints, and NodePort
// Services with externalTrafficPolicy Local the Nodes running them, read from
// EndpointSlices where external-dns reads Pods (see headlessTargets and localNodes for
// what that changes).
func (s *Source) services(snap *Snapshot, r *Result) {
	idx := &endpointIndex{snap: snap}
	for _, svc := range snap.Services {
		if svc == nil || !s.selects(&svc.ObjectMeta) {
			continue
		}
		if s.svcTypes != nil && !s.svcTypes[serviceType(svc)] {
			continue
		}
		ref := endpoint.ObjectRef{Kind: "Service", Namespace: svc.Namespace, Name: svc.Name}
		o, a := s.begin(ref, resource("service", svc.Namespace, svc.Name), svc.Annotations, r)
		if o == nil {
			continue
		}
		var hosts []string
		if !s.cfg.IgnoreHostnameAnnotation {
			hosts = a.hostnames
		}
		// external-dns reads internal-hostname only when it reads hostname.
		var internal []string
		if !s.cfg.IgnoreHostnameAnnotation {
			internal = a.internalHostnames
		}
		if len(hosts) == 0 && len(internal) == 0 {
			if len(o.invalid) > 0 {
				o.finish(r)
			}
			continue
		}
		// Read once for both annotations: their endpoints are the same.
		var hl *headless
		for i, list := range [2][]string{hosts, internal} {
			if len(list) == 0 {
				continue
			}
			useClusterIP := i == 1
			nameFrom := a.field(annHostname)
			if useClusterIP {
				nameFrom = a.field(annInternalHostname)
			}
			// A headless Service publishes its endpoints under both annotations, as in
			// external-dns; its target annotation, when set, wins as for any Service.
			if isHeadless(svc) && len(a.targets) == 0 {
				if hl == nil {
					hl = s.headlessTargets(o, svc, a, idx)
				}
				for _, h := range list {
					hl.add(o, h, nameFrom, a)
				}
				continue
			}
			targets, targetsFrom, skip := s.serviceTargets(o, svc, a, useClusterIP, idx)
			if skip != "" {
				if len(o.invalid) == 0 {
					r.Skipped = append(r.Skipped, Skipped{Object: ref, Reason: skip})
				}
				continue
			}
			for _, h := range list {
				if len(targets) > 0 {
					o.addName(h, nameFrom, targets, targetsFrom, a)
				}
				if serviceType(svc) == corev1.ServiceTypeNodePort && len(a.targets) == 0 {
					s.nodePortSRV(o, svc, h, nameFrom, a)
				}
			}
		}
		o.finish(r)
	}
}

// isHeadless reports whether a Service is headless: of type ClusterIP with clusterIP None.
func isHeadless(svc *corev1.Service) bool {
	return serviceType(svc) == corev1.ServiceTypeClusterIP && svc.Spec.ClusterIP == corev1.ClusterIPNone
}

func serviceType(svc *corev1.Service) corev1.ServiceType {
	if svc.Spec.Type == "" {
		return corev1.ServiceTypeClusterIP
	}
	return svc.Spec.Type
}

// serviceTargets returns the targets of a Service that is not headless (or has the target
// annotation) and where they came from. An empty target list has been filed as pending or
// invalid on o; skip says why the Service is left out.
func (s *Source) serviceTargets(o *object, svc *corev1.Service, a *objectAnnotations, useClusterIP bool, idx *endpointIndex) (targets []string, from, skip string) {
	if len(a.targets) > 0 {
		return a.targets, a.field(annTarget), ""
	}
	switch serviceType(svc) {
	case corev1.ServiceTypeLoadBalancer:
		if useClusterIP {
			return clusterIP(o, svc)
		}
		if len(svc.Spec.ExternalIPs) > 0 {
			return svc.Spec.ExternalIPs, "spec.externalIPs", ""
		}
		for _, lb := range svc.Status.LoadBalancer.Ingress {
			if lb.IP != "" {
				targets = append(targets, lb.IP)
			}
			if lb.Hostname != "" {
				targets = append(targets, lb.Hostname)
			}
		}
		if len(targets) == 0 {
			o.wait("status.loadBalancer.ingress is empty: waiting for the load balancer's address")
		}
		return targets, "status.loadBalancer.ingress", ""
	case corev1.ServiceTypeClusterIP:
		if useClusterIP || s.cfg.PublishInternal {
			return clusterIP(o, svc)
		}
		return nil, "", "ClusterIP Service: the hostname annotation publishes nothing unless internal Services are published (PublishInternal, --publish-internal-services), as in external-dns; use internal-hostname"
	case corev1.ServiceTypeNodePort:
		return s.nodeTargets(o, svc, a, idx)
	case corev1.ServiceTypeExternalName:
		if len(svc.Spec.ExternalIPs) > 0 {
			return svc.Spec.ExternalIPs, "spec.externalIPs", ""
		}
		if svc.Spec.ExternalName == "" {
			o.fail("spec.externalName", "", "want a hostname")
			return nil, "", ""
		}
		return []string{svc.Spec.ExternalName}, "spec.externalName", ""
	default:
		o.fail("spec.type", string(svc.Spec.Type), "want ClusterIP, NodePort, LoadBalancer or ExternalName")
		return nil, "", ""
	}
}

func clusterIP(o *object, svc *corev1.Service) ([]string, string, string) {
	if svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		o.wait("spec.clusterIP is not set: waiting for a cluster IP")
		return nil, "spec.clusterIP", ""
	}
	return []string{svc.Spec.ClusterIP}, "spec.clusterIP", ""
}

// nodeTargets picks Node addresses for a NodePort Service by the access annotation, as
// external-dns does: public takes ExternalIPs, private InternalIPs, and without the
// annotation ExternalIPs when any Node has one. The Nodes are all Nodes, or with
// externalTrafficPolicy Local those running the Service's endpoints (localNodes).
// Unschedulable Nodes are left out, as with external-dns's default
// --exclude-unschedulable.
func (s *Source) nodeTargets(o *object, svc *corev1.Service, a *objectAnnotations, idx *endpointIndex) ([]string, string, string) {
	access, bad := a.enum(annAccess, false, "public", "private")
	if bad != nil {
		o.invalid = append(o.invalid, bad)
		return nil, "", ""
	}
	nodes := idx.snap.Nodes
	if svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal {
		if nodes = localNodes(svc, idx); len(nodes) == 0 {
			o.wait("externalTrafficPolicy Local: no endpoint in the EndpointSlices labelled " + discoveryv1.LabelServiceName + "=" + svc.Name + " runs on a known Node yet")
			return nil, "Node status.addresses", ""
		}
	}
	var external, internal []string
	for _, n := range nodes {
		if n == nil || n.Spec.Unschedulable {
			continue
		}
		for _, addr := range n.Status.Addresses {
			switch addr.Type {
			case corev1.NodeExternalIP:
				external = append(external, addr.Address)
			case corev1.NodeInternalIP:
				internal = append(internal, addr.Address)
			}
		}
	}
	targets := internal
	if access == "public" || access == "" && len(external) > 0 {
		targets = external
	}
	if len(targets) == 0 {
		o.wait("no Node has an address of the kind the access annotation selects")
	}
	return targets, "Node status.addresses", ""
}

// nodePortSRV adds external-dns's SRV records for a NodePort Service: one per node port,
// "_name._proto.host" pointing at "0 50 port host.".
func (s *Source) nodePortSRV(o *object, svc *corev1.Service, host, nameFrom string, a *objectAnnotations) {
	from := a.origins()
	from.name, from.targets = nameFrom, "spec.ports"
	host = strings.TrimSuffix(host, ".")
	for _, p := range svc.Spec.Ports {
		if p.NodePort <= 0 {
			continue
		}
		proto := strings.ToLower(string(p.Protocol))
		if proto == "" {
			proto = "tcp"
		}
		name := fmt.Sprintf("_%s._%s.%s", svc.Name, proto, host)
		o.addRecord(name, endpoint.TypeSRV, endpoint.Targets{fmt.Sprintf("0 50 %d %s.", p.NodePort, endpoint.NormalizeName(host))}, a, from)
	}
}
