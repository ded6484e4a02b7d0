package source

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// IstioGroup is the API group of Istio's networking resources; crossfade reads its
// v1alpha3, v1beta1 and v1 versions alike, since the fields read are the same in all.
const IstioGroup = "networking.istio.io"

// IstioGateway is an Istio Gateway with only the fields crossfade reads. We declare it
// here rather than import istio.io/client-go, whose dependency tree is far larger than
// the five fields we need.
type IstioGateway struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              IstioGatewaySpec `json:"spec,omitempty"`
}

// IstioGatewaySpec holds the servers and the ingress-gateway workload selector.
type IstioGatewaySpec struct {
	Servers []IstioServer `json:"servers,omitempty"`
	// Selector picks the ingress-gateway Pods; crossfade finds their Service by matching
	// it against Services' spec.selector, as external-dns does.
	Selector map[string]string `json:"selector,omitempty"`
}

// IstioServer is one server of a Gateway; only its hosts are read.
type IstioServer struct {
	// Hosts are "host" or "namespace/host"; "*" matches any host.
	Hosts []string `json:"hosts,omitempty"`
}

// IstioVirtualService is an Istio VirtualService with only the fields crossfade reads.
type IstioVirtualService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              IstioVirtualServiceSpec `json:"spec,omitempty"`
}

// IstioVirtualServiceSpec holds the hosts, the gateways bound and the export scope.
type IstioVirtualServiceSpec struct {
	Hosts []string `json:"hosts,omitempty"`
	// Gateways are "name" or "namespace/name"; "mesh" means the sidecars, not a gateway.
	Gateways []string `json:"gateways,omitempty"`
	ExportTo []string `json:"exportTo,omitempty"`
}
