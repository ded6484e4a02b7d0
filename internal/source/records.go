package source

import (
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// origins says where each model field of a record came from ("annotation …/ttl",
// "spec.endpoints[0].recordTTL"), so that a model-level problem found by
// endpoint.Validate is reported against what the user wrote.
type origins struct {
	name, typ, targets, ttl, setIdentifier, weight, failover, healthCheckID string
}

// field maps a model field name (endpoint.FieldTTL, ...) to its origin.
func (o *origins) field(model string) string {
	var f string
	switch model {
	case endpoint.FieldName:
		f = o.name
	case endpoint.FieldType:
		f = o.typ
	case endpoint.FieldTargets:
		f = o.targets
	case endpoint.FieldTTL:
		f = o.ttl
	case endpoint.FieldSetIdentifier:
		f = o.setIdentifier
	case endpoint.FieldWeight:
		f = o.weight
	case endpoint.FieldFailover:
		f = o.failover
	case endpoint.FieldHealthCheckID:
		f = o.healthCheckID
	}
	if f == "" {
		return model
	}
	return f
}

// draft is one record an object wants, with the origins of its fields.
type draft struct {
	ep   *endpoint.Endpoint
	from origins
	// badName marks a record whose name is invalid: it is left out, the rest published.
	badName bool
}

// object collects what one source object wants and what is wrong with it.
type object struct {
	ref      endpoint.ObjectRef
	resource string
	drafts   []draft
	invalid  []*endpoint.InvalidError
	pending  []string
}

func newObject(ref endpoint.ObjectRef, resource string) *object {
	return &object{ref: ref, resource: resource}
}

// fail records a problem with the object.
func (o *object) fail(field, value, reason string) {
	o.invalid = append(o.invalid, &endpoint.InvalidError{Object: o.ref, Field: field, Value: value, Reason: reason})
}

// wait records why (part of) the object cannot be published yet.
func (o *object) wait(reason string) { o.pending = append(o.pending, reason) }

// addName adds the records for one name from annotation-driven settings: the targets are
// grouped into A, AAAA and CNAME records as external-dns's EndpointsForHostname groups
// them. nameFrom and targetsFrom name where the name and targets came from.
func (o *object) addName(host, nameFrom string, targets []string, targetsFrom string, a *objectAnnotations) {
	from := a.origins()
	from.name, from.targets = nameFrom, targetsFrom
	var byType [3][]string
	for _, t := range targets {
		switch suitableType(t) {
		case endpoint.TypeA:
			byType[0] = append(byType[0], t)
		case endpoint.TypeAAAA:
			byType[1] = append(byType[1], t)
		default:
			byType[2] = append(byType[2], t)
		}
	}
	for i, typ := range [3]string{endpoint.TypeA, endpoint.TypeAAAA, endpoint.TypeCNAME} {
		if len(byType[i]) == 0 {
			continue
		}
		o.addRecord(host, typ, endpoint.NewTargets(byType[i]...), a, from)
	}
}

// addRecord adds one record of a given type with the annotation-driven settings.
func (o *object) addRecord(host, typ string, targets endpoint.Targets, a *objectAnnotations, from origins) {
	e := &endpoint.Endpoint{
		Name:          endpoint.NormalizeName(host),
		Type:          typ,
		Targets:       targets,
		TTL:           a.ttl,
		SetIdentifier: a.setIdentifier,
		Policy:        a.policy,
		Labels:        endpoint.Labels{endpoint.ResourceLabel: o.resource},
	}
	if len(a.props) > 0 {
		e.ProviderSpecific = maps.Clone(a.props)
	}
	o.drafts = append(o.drafts, draft{ep: e, from: from})
}

// suitableType is external-dns's SuitableType: A for IPv4, AAAA for IPv6, else CNAME.
func suitableType(target string) string {
	ip, err := netip.ParseAddr(target)
	if err != nil {
		return endpoint.TypeCNAME
	}
	if ip.Is4() {
		return endpoint.TypeA
	}
	return endpoint.TypeAAAA
}

// finish validates the object's records and files the object in r: invalid (no record
// published), or its records plus any pending reasons.
func (o *object) finish(r *Result) {
	// When an annotation already failed to parse, the routing policy it would have set is
	// missing, and the model's "set-identifier without a policy" would only echo that.
	parseFailed := len(o.invalid) > 0
	cnames := map[endpoint.Key]*draft{}
	// A bad name in a list costs that name alone: the object's other names are published
	// and the bad one is reported.
	var badNames []*endpoint.InvalidError
	for i := range o.drafts {
		d := &o.drafts[i]
		for _, fe := range d.ep.Validate() {
			switch {
			case parseFailed && (fe.Field == endpoint.FieldSetIdentifier || fe.Field == endpoint.FieldWeight || fe.Field == endpoint.FieldFailover):
			case fe.Field == endpoint.FieldName:
				badNames = append(badNames, &endpoint.InvalidError{Object: o.ref, Field: d.from.field(fe.Field), Value: fe.Value, Reason: fe.Reason})
				d.badName = true
			default:
				o.fail(d.from.field(fe.Field), fe.Value, fe.Reason)
			}
		}
		if d.ep.Type == endpoint.TypeCNAME {
			cnames[endpoint.Key{Name: d.ep.Name, SetIdentifier: d.ep.SetIdentifier}] = d
		}
	}
	if len(cnames) > 0 {
		// A CNAME excludes every other record at its name, so an object whose targets mix
		// hostnames and addresses (a load balancer status with both) wants invalid DNS.
		for _, d := range o.drafts {
			c, ok := cnames[endpoint.Key{Name: d.ep.Name, SetIdentifier: d.ep.SetIdentifier}]
			if ok && d.ep.Type != endpoint.TypeCNAME && c.from.targets != "" {
				o.fail(c.from.targets, strings.Join(append(slices.Clone(d.ep.Targets), c.ep.Targets...), ","),
					"a CNAME cannot share its name "+d.ep.Name+" with "+d.ep.Type+" records: the targets mix hostnames and addresses")
				break
			}
		}
	}
	if len(o.invalid) > 0 || len(badNames) > 0 {
		// What the object published while it was valid must outlive its mistake: its
		// records are kept, not deleted for want of a source.
		r.Held = append(r.Held, o.resource)
	}
	if len(o.invalid) > 0 {
		r.Invalid = append(r.Invalid, dedupe(append(o.invalid, badNames...))...)
		return
	}
	r.Invalid = append(r.Invalid, dedupe(badNames)...)
	for _, reason := range o.pending {
		r.Pending = append(r.Pending, Pending{Object: o.ref, Reason: reason})
	}
	for _, d := range o.drafts {
		if !d.badName {
			r.Endpoints = append(r.Endpoints, d.ep)
		}
	}
}

// dedupe drops repeated errors: one bad annotation shows up in every record of its object.
func dedupe(errs []*endpoint.InvalidError) []*endpoint.InvalidError {
	out := errs[:0]
	seen := make(map[endpoint.InvalidError]bool, len(errs))
	for _, e := range errs {
		if !seen[*e] {
			seen[*e] = true
			out = append(out, e)
		}
	}
	return out
}

// mergeKey identifies records that external-dns's MergeEndpoints folds into one: same
// name, type, set identifier and TTL. crossfade also requires the same routing policy and
// provider properties (external-dns keeps the first object's silently), and never merges
// CNAMEs with different targets: those stay apart for the planner to report as a
// conflict.
type mergeKey struct {
	key    endpoint.Key
	ttl    endpoint.TTL
	policy endpoint.RoutingPolicy
	props  string
	cname  string
}

// merge folds records several objects want into one, targets joined; the object whose
// resource label sorts first keeps its label, as in external-dns's service source.
func merge(eps []*endpoint.Endpoint) []*endpoint.Endpoint {
	if len(eps) < 2 {
		return eps
	}
	slices.SortStableFunc(eps, func(a, b *endpoint.Endpoint) int { return strings.Compare(a.Resource(), b.Resource()) })
	index := make(map[mergeKey]*endpoint.Endpoint, len(eps))
	out := eps[:0]
	for _, e := range eps {
		k := mergeKey{key: e.Key(), ttl: e.TTL, policy: e.Policy, props: propsKey(e.ProviderSpecific)}
		if e.Type == endpoint.TypeCNAME {
			k.cname = strings.Join(e.Targets, ",")
		}
		if first, ok := index[k]; ok {
			if first.Resource() != e.Resource() || !first.Targets.Same(e.Targets) {
				first.Targets = endpoint.NewTargets(append(first.Targets, e.Targets...)...)
			}
			continue
		}
		index[k] = e
		out = append(out, e)
	}
	return out
}

func propsKey(m map[string]string) string {
	if len(m) == 0 {
		return ""
	}
	keys := slices.Sorted(maps.Keys(m))
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(m[k])
		b.WriteByte(0)
	}
	return b.String()
}
