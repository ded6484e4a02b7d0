package source

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Snapshot is the set of objects one conversion reads. Objects are read, never changed;
// a Snapshot built from informer listers may share them with the cache.
type Snapshot struct {
	Services             []*corev1.Service
	Ingresses            []*networkingv1.Ingress
	DNSEndpoints         []*DNSEndpoint
	IstioGateways        []*IstioGateway
	IstioVirtualServices []*IstioVirtualService
	// Gateways are the Gateway API parents of HTTPRoutes and GRPCRoutes; they publish
	// nothing themselves.
	Gateways   []*gatewayv1.Gateway
	HTTPRoutes []*gatewayv1.HTTPRoute
	GRPCRoutes []*gatewayv1.GRPCRoute
	// Nodes supply the addresses of NodePort Services, and of headless Services' endpoints
	// under PublishHostIP or the endpoints-type annotation.
	Nodes []*corev1.Node
	// EndpointSlices supply the endpoints of headless Services and the Nodes of NodePort
	// Services with externalTrafficPolicy Local. A slice belongs to the Service its
	// kubernetes.io/service-name label names, in its own namespace; slices without the
	// label are not read. They stand in for the Pods external-dns reads, so that no Pod
	// is ever cached (external-dns issue 5595).
	EndpointSlices []*discoveryv1.EndpointSlice
	// Namespaces supply the labels that Gateway listeners' allowedRoutes selectors match.
	Namespaces []*corev1.Namespace
}

// Len counts the objects held.
func (s *Snapshot) Len() int {
	return len(s.Services) + len(s.Ingresses) + len(s.DNSEndpoints) + len(s.IstioGateways) +
		len(s.IstioVirtualServices) + len(s.Gateways) + len(s.HTTPRoutes) + len(s.GRPCRoutes) +
		len(s.Nodes) + len(s.Namespaces) + len(s.EndpointSlices)
}

// Append adds o's objects to s.
func (s *Snapshot) Append(o *Snapshot) {
	s.Services = append(s.Services, o.Services...)
	s.Ingresses = append(s.Ingresses, o.Ingresses...)
	s.DNSEndpoints = append(s.DNSEndpoints, o.DNSEndpoints...)
	s.IstioGateways = append(s.IstioGateways, o.IstioGateways...)
	s.IstioVirtualServices = append(s.IstioVirtualServices, o.IstioVirtualServices...)
	s.Gateways = append(s.Gateways, o.Gateways...)
	s.HTTPRoutes = append(s.HTTPRoutes, o.HTTPRoutes...)
	s.GRPCRoutes = append(s.GRPCRoutes, o.GRPCRoutes...)
	s.Nodes = append(s.Nodes, o.Nodes...)
	s.Namespaces = append(s.Namespaces, o.Namespaces...)
	s.EndpointSlices = append(s.EndpointSlices, o.EndpointSlices...)
}
