package source

import (
	"cmp"
	"slices"

	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// Result is the outcome of one conversion. Every object that carries crossfade's
// annotations (or, for kinds such as DNSEndpoint, exists at all) ends up in exactly one of
// Endpoints (by resource label), Invalid, Pending or Skipped. Each slice is sorted, so
// equal snapshots give equal results.
type Result struct {
	// Endpoints are the records wanted, sorted by name, type, set identifier, resource.
	Endpoints []*endpoint.Endpoint
	// Invalid are the problems with objects' input. An object with any of them publishes
	// no record, except that a bad name in a list costs only that name.
	Invalid []*endpoint.InvalidError
	// Held are the resources ("service/default/web") of the objects with problems in
	// Invalid: the records they own must be kept as they are, not deleted because the
	// object no longer yields them (safety rule 6: nothing else is lost).
	Held []string
	// Pending are valid objects that cannot be published yet, typically because their
	// load balancer has no address.
	Pending []Pending
	// Skipped are objects left out on purpose, e.g. annotated for another controller.
	Skipped []Skipped
	// Overridden are annotations read and set aside, each with its object and a sentence
	// naming both keys: with Config.LegacyAnnotationPrefix, a legacy-prefix annotation whose
	// value differs from the same key under an earlier prefix, which wins as in external-dns
	// v0.23 (which logs a warning for each). The object is published from the winner; this
	// is for the controller to say so.
	Overridden []Skipped
}

// override files a's set-aside annotations.
func (r *Result) override(a *objectAnnotations) {
	for _, m := range a.overridden {
		r.Overridden = append(r.Overridden, Skipped{Object: a.obj, Reason: m})
	}
}

// Pending is a valid object without targets yet.
type Pending struct {
	Object endpoint.ObjectRef
	Reason string
}

// String renders "service default/web: reason".
func (p Pending) String() string { return p.Object.String() + ": " + p.Reason }

// Skipped is an object left out on purpose.
type Skipped struct {
	Object endpoint.ObjectRef
	Reason string
}

// String renders "service default/web: reason".
func (s Skipped) String() string { return s.Object.String() + ": " + s.Reason }

func compareRefs(a, b endpoint.ObjectRef) int {
	return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

// sort puts every slice in its documented order.
func (r *Result) sort() {
	slices.SortFunc(r.Endpoints, func(a, b *endpoint.Endpoint) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Type, b.Type),
			cmp.Compare(a.SetIdentifier, b.SetIdentifier), cmp.Compare(a.Resource(), b.Resource()),
			slices.Compare(a.Targets, b.Targets))
	})
	slices.SortStableFunc(r.Invalid, func(a, b *endpoint.InvalidError) int {
		return cmp.Or(compareRefs(a.Object, b.Object), cmp.Compare(a.Field, b.Field),
			cmp.Compare(a.Value, b.Value), cmp.Compare(a.Reason, b.Reason))
	})
	slices.Sort(r.Held)
	r.Held = slices.Compact(r.Held)
	slices.SortStableFunc(r.Pending, func(a, b Pending) int {
		return cmp.Or(compareRefs(a.Object, b.Object), cmp.Compare(a.Reason, b.Reason))
	})
	slices.SortStableFunc(r.Skipped, func(a, b Skipped) int {
		return cmp.Or(compareRefs(a.Object, b.Object), cmp.Compare(a.Reason, b.Reason))
	})
	slices.SortFunc(r.Overridden, func(a, b Skipped) int {
		return cmp.Or(compareRefs(a.Object, b.Object), cmp.Compare(a.Reason, b.Reason))
	})
	r.Overridden = slices.Compact(r.Overridden)
}
