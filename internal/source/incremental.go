package source

import (
	"cmp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// Index says which record names each object's records have, for a controller that
// re-runs the source for the objects an event touched and re-plans only their names.
type Index struct {
	// Names are the names of the records each object wants (before records several
	// objects want are merged), by resource label ("service/default/web"), sorted.
	Names map[string][]string
	// Merged are the names where records of several objects were folded into one
	// (merge): one object's part of such a record cannot be told apart afterwards, so a
	// change at such a name needs every object's records again.
	Merged map[string]bool
}

// EndpointsIndexed is Endpoints with the Index of its result.
func (s *Source) EndpointsIndexed(snap *Snapshot) (Result, Index) {
	var r Result
	idx := Index{Names: map[string][]string{}, Merged: map[string]bool{}}
	if snap == nil {
		return r, idx
	}
	s.services(snap, &r)
	s.ingresses(snap, &r)
	s.dnsEndpoints(snap, &r)
	s.istio(snap, &r)
	s.routes(snap, &r)
	before := make(map[string]int, len(r.Endpoints))
	for _, e := range r.Endpoints {
		before[e.Name]++
		res := e.Resource()
		if names := idx.Names[res]; !slices.Contains(names, e.Name) {
			idx.Names[res] = append(names, e.Name)
		}
	}
	for _, names := range idx.Names {
		slices.Sort(names)
	}
	r.Endpoints = merge(r.Endpoints)
	for _, e := range r.Endpoints {
		before[e.Name]--
	}
	for name, n := range before {
		if n != 0 {
			idx.Merged[name] = true
		}
	}
	r.sort()
	return r, idx
}

// ServiceEndpoints converts one Service alone: what Endpoints gives for it when its
// records depend on no other object (ServiceStandsAlone).
func (s *Source) ServiceEndpoints(svc *corev1.Service) Result {
	var r Result
	s.services(&Snapshot{Services: []*corev1.Service{svc}}, &r)
	r.Endpoints = merge(r.Endpoints)
	r.sort()
	return r
}

// ServiceStandsAlone reports whether a Service's records are read from the Service
// alone: a NodePort Service's come from the Nodes (and, with externalTrafficPolicy
// Local, its EndpointSlices), a headless Service's from its EndpointSlices.
func ServiceStandsAlone(svc *corev1.Service) bool {
	return serviceType(svc) != corev1.ServiceTypeNodePort && !isHeadless(svc)
}

// ServiceResource is the resource label of a Service's records, "service/namespace/name".
func ServiceResource(namespace, name string) string { return resource("service", namespace, name) }

// MergeAt merges records several objects want at one name as Endpoints does, and sorts
// them in Result's order; it reports whether it folded any. eps is changed: pass copies
// of records shared elsewhere.
func MergeAt(eps []*endpoint.Endpoint) ([]*endpoint.Endpoint, bool) {
	n := len(eps)
	eps = merge(eps)
	slices.SortFunc(eps, compareEndpoints)
	return eps, len(eps) != n
}

// compareEndpoints is Result.Endpoints' order.
func compareEndpoints(a, b *endpoint.Endpoint) int {
	return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.Type, b.Type),
		strings.Compare(a.SetIdentifier, b.SetIdentifier), strings.Compare(a.Resource(), b.Resource()),
		slices.Compare(a.Targets, b.Targets))
}

// SortProblems puts r's problems (every slice but Endpoints) in their documented order,
// as a Result from Endpoints has them: for a result put together from several.
func SortProblems(r *Result) {
	eps := r.Endpoints
	r.Endpoints = nil
	r.sort()
	r.Endpoints = eps
}
