package source

import (
	"fmt"
	"slices"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// ingressClassAnnotation is the legacy class annotation external-dns also matches.
const ingressClassAnnotation = "kubernetes.io/ingress.class"

// Values of the ingress-hostname-source and gateway-hostname-source annotations.
const (
	hostsDefinedOnly    = "defined-hosts-only"
	hostsAnnotationOnly = "annotation-only"
)

// ingresses converts Ingresses as external-dns's ingress source does: names from
// spec.rules[].host, spec.tls[].hosts and the hostname annotation (narrowed by
// ingress-hostname-source), targets from the target annotation or status.loadBalancer.
// Where external-dns publishes nothing for an unknown ingress-hostname-source value,
// crossfade reports it.
func (s *Source) ingresses(snap *Snapshot, r *Result) {
	for _, ing := range snap.Ingresses {
		if ing == nil || !s.selects(&ing.ObjectMeta) || !s.ingressClassMatches(ing) {
			continue
		}
		ref := endpoint.ObjectRef{Kind: "Ingress", Namespace: ing.Namespace, Name: ing.Name}
		o, a := s.begin(ref, resource("ingress", ing.Namespace, ing.Name), ing.Annotations, r)
		if o == nil {
			continue
		}
		hostSource, bad := a.enum(annIngressHostnameSource, true, hostsDefinedOnly, hostsAnnotationOnly)
		if bad != nil {
			o.invalid = append(o.invalid, bad)
		}
		type name struct{ host, from string }
		var names []name
		if hostSource != hostsAnnotationOnly {
			if !s.cfg.IgnoreIngressRulesSpec {
				for i, rule := range ing.Spec.Rules {
					if rule.Host != "" {
						names = append(names, name{rule.Host, fmt.Sprintf("spec.rules[%d].host", i)})
					}
				}
			}
			if !s.cfg.IgnoreIngressTLSSpec {
				for i, tls := range ing.Spec.TLS {
					for j, h := range tls.Hosts {
						if h != "" {
							names = append(names, name{h, fmt.Sprintf("spec.tls[%d].hosts[%d]", i, j)})
						}
					}
				}
			}
		}
		if hostSource != hostsDefinedOnly && !s.cfg.IgnoreHostnameAnnotation {
			for _, h := range a.hostnames {
				names = append(names, name{h, a.field(annHostname)})
			}
		}
		targets, targetsFrom := a.targets, a.field(annTarget)
		if len(targets) == 0 {
			targetsFrom = "status.loadBalancer.ingress"
			for _, lb := range ing.Status.LoadBalancer.Ingress {
				if lb.IP != "" {
					targets = append(targets, lb.IP)
				}
				if lb.Hostname != "" {
					targets = append(targets, lb.Hostname)
				}
			}
		}
		if len(names) > 0 && len(targets) == 0 {
			o.wait("status.loadBalancer.ingress is empty: waiting for the ingress controller to publish an address")
		}
		for _, n := range names {
			o.addName(n.host, n.from, targets, targetsFrom, a)
		}
		if len(names) > 0 || len(o.invalid) > 0 {
			o.finish(r)
		}
	}
}

// ingressClassMatches applies IngressClassNames to spec.ingressClassName, falling back to
// the legacy annotation, as external-dns's --ingress-class does.
func (s *Source) ingressClassMatches(ing *networkingv1.Ingress) bool {
	if len(s.cfg.IngressClassNames) == 0 {
		return true
	}
	if c := ing.Spec.IngressClassName; c != nil && *c != "" {
		return slices.Contains(s.cfg.IngressClassNames, *c)
	}
	return slices.Contains(s.cfg.IngressClassNames, ing.Annotations[ingressClassAnnotation])
}
