// Package source turns Kubernetes objects into endpoints, reading annotations exactly as
// external-dns v0.21.0 reads them, under both the "external-dns.kubernetes.io/" and the
// "external-dns.alpha.kubernetes.io/" prefix.
//
// A Source works on objects, never on files or API servers: the controller feeds it from
// informer listers and package manifest feeds it from YAML, both through a Snapshot. One
// call to Endpoints returns the records, and, for every object that produced none, why:
// invalid input (an *endpoint.InvalidError naming the object, the annotation or field,
// the value and what was wanted), pending (valid, but its load balancer has no address
// yet) or skipped (not ours, e.g. another controller's). An invalid object contributes no
// record at all, and nothing else is lost: where external-dns logs an unparsable
// aws-weight and publishes weight 0, crossfade publishes nothing for that object and says
// so.
//
// Supported kinds: Service, Ingress, DNSEndpoint (externaldns.k8s.io/v1alpha1), Istio
// Gateway and VirtualService (networking.istio.io, read through small local types: we do
// not depend on istio.io/client-go for the five fields we read) and Gateway API HTTPRoute
// and GRPCRoute with their parent Gateways.
package source
