package controller

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// lastApplied is kubectl's copy of the whole object as last applied: often the largest
// thing in metadata, and never read.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// stripper is a Watcher's transform: it drops what crossfade never reads from an object
// before the informer caches it: managedFields (often half an object), kubectl's
// last-applied copy, the annotations no source reads, and the large parts of each kind
// that no source looks at (a Node's images and conditions, an Ingress's paths, a route's
// rules). The memory of the cache then grows with what is published, not with how busy
// the cluster is. It also makes update events that change only those parts compare
// equal, so they trigger no reconcile.
type stripper struct {
	// keepEndpoints keeps every EndpointSlice's endpoint addresses and ports (the Cloud
	// Map publisher's input), where most slices otherwise keep only their nodes.
	keepEndpoints bool
	// keepAnnotation says which annotation keys are read; nil keeps every annotation but
	// kubectl's last-applied copy.
	keepAnnotation func(key string) bool
}

// strip is the transform itself. Stripping a stripped object changes nothing and
// allocates nothing (a listed object passes twice: its page, then the informer).
func (s stripper) strip(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		stripMeta(m, s.keepAnnotation)
	}
	switch o := obj.(type) {
	case *corev1.Node:
		// Sources read addresses, labels and unschedulable; the status heartbeat, images,
		// capacity and conditions change every few seconds and weigh kilobytes.
		o.Status = corev1.NodeStatus{Addresses: o.Status.Addresses}
		o.Spec = corev1.NodeSpec{Unschedulable: o.Spec.Unschedulable}
	case *corev1.Service:
		o.Status.Conditions = nil
		// Sources read the type, cluster IP, external IPs and name, traffic policy, ports,
		// selector and publishNotReadyAddresses; the rest is the data path's business.
		o.Spec.ClusterIPs, o.Spec.IPFamilies, o.Spec.IPFamilyPolicy = nil, nil, nil
		o.Spec.SessionAffinity, o.Spec.SessionAffinityConfig = "", nil
		o.Spec.InternalTrafficPolicy, o.Spec.AllocateLoadBalancerNodePorts = nil, nil
		o.Spec.LoadBalancerSourceRanges, o.Spec.TrafficDistribution = nil, nil
	case *networkingv1.Ingress:
		for i := range o.Spec.Rules {
			o.Spec.Rules[i].HTTP = nil
		}
		o.Spec.DefaultBackend = nil
	case *discoveryv1.EndpointSlice:
		stripSlice(o, s.keepEndpoints)
	case *corev1.Namespace:
		o.Spec, o.Status = corev1.NamespaceSpec{}, corev1.NamespaceStatus{}
	case *gatewayv1.HTTPRoute:
		o.Spec.Rules = nil
	case *gatewayv1.GRPCRoute:
		o.Spec.Rules = nil
	}
	return obj, nil
}

// endpointSliceController is the managed-by label value of the slices Kubernetes' own
// EndpointSlice controller writes: it labels every slice of a headless Service with
// corev1.IsHeadlessService (and removes the label from the others), so for its slices
// the label alone says whether a source may read the endpoints' addresses.
const endpointSliceController = "endpointslice-controller.k8s.io"

// stripSlice keeps of an EndpointSlice what the Service source reads. A headless
// Service's slice keeps each endpoint's address, hostname, node, conditions and what its
// reference points at; any other Service reads its slices only for the nodes its ready
// endpoints run on (externalTrafficPolicy Local), so the EndpointSlice controller's
// slices of those keep one endpoint per node and condition, with no address. In a
// cluster where most Services are not headless that is most of the slices' weight.
// A slice written by anyone else keeps its addresses: nothing promises it the label.
//
// keepEndpoints keeps every slice's endpoints and ports, as the Cloud Map publisher reads
// them: each ready endpoint's address and the port it serves on.
func stripSlice(o *discoveryv1.EndpointSlice, keepEndpoints bool) {
	_, headless := o.Labels[corev1.IsHeadlessService]
	nodesOnly := !keepEndpoints && !headless && o.Labels[discoveryv1.LabelManagedBy] == endpointSliceController
	if !keepEndpoints {
		o.Ports = nil
	}
	// A slice is found by its Service's name label; nothing else of its metadata is read
	// (no event is ever sent about a slice), and the controller's change-trigger
	// annotation alone weighs as much as the rest.
	o.Annotations, o.UID, o.GenerateName = nil, "", ""
	o.Labels = keepLabels(o.Labels, discoveryv1.LabelServiceName, corev1.IsHeadlessService)
	if nodesOnly {
		o.Endpoints = nodeEndpoints(o.Endpoints)
		return
	}
	for i := range o.Endpoints {
		e := &o.Endpoints[i]
		e.Hints, e.DeprecatedTopology, e.Zone = nil, nil, nil
		// Sources read what the reference points at, never its UID or version. A listed
		// slice passes here twice (its page, then the informer's transform): the second
		// time the reference is already bare and is kept, not allocated again.
		if r := e.TargetRef; r != nil {
			if bare := (corev1.ObjectReference{APIVersion: r.APIVersion, Kind: r.Kind, Name: r.Name}); *r != bare {
				e.TargetRef = &bare
			}
		}
	}
}

// nodeEndpoints reduces endpoints to one per node and set of conditions, with only the
// node and the conditions: what a Service with externalTrafficPolicy Local reads. An
// endpoint on no node tells such a Service nothing and is dropped. The order of first
// appearance is kept.
func nodeEndpoints(eps []discoveryv1.Endpoint) []discoveryv1.Endpoint {
	type key struct {
		node                        string
		ready, serving, terminating int8
	}
	tri := func(b *bool) int8 {
		switch {
		case b == nil:
			return 0
		case *b:
			return 1
		}
		return 2
	}
	seen := make(map[key]bool, len(eps))
	out := eps[:0:0]
	for _, e := range eps {
		if e.NodeName == nil {
			continue
		}
		c := e.Conditions
		k := key{*e.NodeName, tri(c.Ready), tri(c.Serving), tri(c.Terminating)}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, discoveryv1.Endpoint{NodeName: e.NodeName, Conditions: c})
	}
	return out
}

func stripMeta(m metav1.Object, keepAnnotation func(string) bool) {
	m.SetManagedFields(nil)
	m.SetOwnerReferences(nil)
	m.SetFinalizers(nil)
	a := m.GetAnnotations()
	delete(a, lastApplied)
	if keepAnnotation == nil {
		return
	}
	// Helm's, Argo CD's and the load balancer controller's annotations (often a dozen
	// per object, some of them kilobytes of JSON) are never read: only the keys the
	// sources and the Cloud Map publisher read, and those --annotation-filter names, stay.
	for k := range a {
		if !keepAnnotation(k) {
			delete(a, k)
		}
	}
	if len(a) == 0 && a != nil {
		m.SetAnnotations(nil)
	}
}

// keepLabels returns the labels of keys that l has, nil when none; l itself when it holds
// nothing else (a second strip allocates nothing).
func keepLabels(l map[string]string, keys ...string) map[string]string {
	kept := 0
	for _, k := range keys {
		if _, ok := l[k]; ok {
			kept++
		}
	}
	if kept == len(l) {
		return l
	}
	var out map[string]string
	for _, k := range keys {
		if v, ok := l[k]; ok {
			if out == nil {
				out = make(map[string]string, len(keys))
			}
			out[k] = v
		}
	}
	return out
}
