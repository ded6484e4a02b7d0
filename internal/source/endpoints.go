package source

import (
	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// Endpoints converts the snapshot. It never fails: every object's problems are in the
// result, and one bad object never costs another its records.
func (s *Source) Endpoints(snap *Snapshot) Result {
	var r Result
	if snap == nil {
		return r
	}
	s.services(snap, &r)
	s.ingresses(snap, &r)
	s.dnsEndpoints(snap, &r)
	s.istio(snap, &r)
	s.routes(snap, &r)
	r.Endpoints = merge(r.Endpoints)
	r.sort()
	return r
}

// begin parses an annotated object's annotations. It returns nil, after filing the object
// in r, when the object is another controller's.
func (s *Source) begin(ref endpoint.ObjectRef, resource string, ann map[string]string, r *Result) (*object, *objectAnnotations) {
	a, errs := s.parseAnnotations(ref, ann)
	if a.foreign != "" {
		r.Skipped = append(r.Skipped, Skipped{Object: ref, Reason: a.foreign})
		return nil, nil
	}
	r.override(a)
	o := newObject(ref, resource)
	o.invalid = append(o.invalid, errs...)
	return o, a
}

// resource renders external-dns's resource label, "kind/namespace/name".
func resource(kind, namespace, name string) string {
	return kind + "/" + namespace + "/" + name
}
