package endpoint

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Record types crossfade publishes and understands.
const (
	TypeA     = "A"
	TypeAAAA  = "AAAA"
	TypeCNAME = "CNAME"
	TypeTXT   = "TXT"
	TypeMX    = "MX"
	TypeNS    = "NS"
	TypeSRV   = "SRV"
	TypePTR   = "PTR"
	TypeNAPTR = "NAPTR"
)

// Label keys carried in the TXT ownership record, as external-dns names them.
const (
	// OwnerLabel holds the owner id (--txt-owner-id) of the record.
	OwnerLabel = "owner"
	// ResourceLabel holds the object that wants the record, as "kind/namespace/name".
	ResourceLabel = "resource"
	// WantsWeightLabel holds, while a cutover holds a weighted member's weight, the weight
	// the member's source asks for (written as "external-dns/crossfade-wants-weight=100"),
	// so that `cutover release` can tell, member by member, what handing the weights back
	// would do. It is absent whenever the zone holds what the source asks.
	WantsWeightLabel = "crossfade-wants-weight"
	// ConfirmsHoldLabel holds, while a cutover holds a weighted member's weight, the hold
	// its publisher has seen (registry.Authority.HoldID: the runner token of the authority
	// record, written as "external-dns/crossfade-confirms-hold=TOKEN"): the publisher has
	// read the zone since that hold began and recorded what its source asks for
	// (WantsWeightLabel), so `cutover release` may trust the record's silence. Absent
	// whenever no cutover holds the member's name.
	ConfirmsHoldLabel = "crossfade-confirms-hold"
	// WantsNone is WantsWeightLabel's value for a held member that no source asks for any
	// more: the publisher keeps it while the hold lasts, and deletes it at its first sync
	// after the release.
	WantsNone = "none"
)

// Provider-specific property names, spelled as external-dns spells them so that records
// round-trip between the two tools.
const (
	// PropAlias marks an A/AAAA record whose target is a Route 53 alias ("true").
	PropAlias = "alias"
	// PropEvaluateTargetHealth is the alias target's EvaluateTargetHealth ("true"/"false").
	PropEvaluateTargetHealth = "aws/evaluate-target-health"
	// PropHealthCheckID attaches a Route 53 health check to the record set.
	PropHealthCheckID = "aws/health-check-id"
	// PropAliasZoneID is the hosted zone of an alias target when it is not guessable.
	PropAliasZoneID = "aws/alias-hosted-zone-id"
	// PropHostedZoneID pins a record to one hosted zone (its id, without "/hostedzone/")
	// among those that could hold it, e.g. the private one of a public and a private zone
	// of the same name: external-dns v0.23's aws-hosted-zone-id annotation. The planner
	// routes by it and drops it (controller's assign); it is never written.
	PropHostedZoneID = "aws/hosted-zone-id"
)

// Alias property values beside "true" and "false": external-dns v0.23's alias of one
// type only, on a CNAME record (a hostname target), so that an alias to a target that
// has no IPv6 (or no IPv4) is not written for both types.
const (
	// AliasOnlyA makes a CNAME an alias A record, with no alias AAAA beside it.
	AliasOnlyA = "A"
	// AliasOnlyAAAA makes a CNAME an alias AAAA record, with no alias A beside it.
	AliasOnlyAAAA = "AAAA"
)

// TTL is a record's time to live in seconds. The zero value means "not configured" and
// lets the provider choose its default (Route 53: 300), as in external-dns, whose `ttl`
// annotation and DNSEndpoint recordTTL of 0 mean the same. A record that really has TTL 0
// (legal in Route 53, whose range is 0..2147483647) is TTLZero, so that a record read from
// a zone is written back exactly: a DELETE, or the DELETE half of a compare-and-swap,
// must match every field of the set or Route 53 refuses the whole batch.
type TTL int64

// TTLZero is a configured TTL of 0 seconds: resolvers must not cache the answer. Providers
// read a zone's TTL with NewTTL and write TTL.Seconds, which turn 0 into TTLZero and back.
// Sources never produce it (Validate refuses a negative TTL), so it only travels from a
// zone to a change of the same record.
const TTLZero TTL = -1

// NewTTL returns the TTL of a record set that a zone holds with the given seconds. A
// zone's 0 is a real TTL of 0 seconds: TTLZero, not the zero value ("not configured").
func NewTTL(seconds int64) TTL {
	if seconds == 0 {
		return TTLZero
	}
	return TTL(seconds)
}

// IsConfigured reports whether the TTL was set, by the source or by the zone it was read
// from: true for TTLZero, false for the zero value.
func (t TTL) IsConfigured() bool { return t > 0 || t == TTLZero }

// Seconds returns the TTL to write, in seconds: 0 for TTLZero, and 0 for a TTL that is not
// configured (the caller writes its default then; check IsConfigured first).
func (t TTL) Seconds() int64 {
	if t == TTLZero {
		return 0
	}
	return int64(t)
}

// Key identifies one record set: Route 53 and the TXT registry both address records by
// name, type and set identifier.
type Key struct {
	Name          string
	Type          string
	SetIdentifier string
}

// String renders the key as "name type [set-id]" for messages.
func (k Key) String() string {
	if k.SetIdentifier == "" {
		return k.Name + " " + k.Type
	}
	return k.Name + " " + k.Type + " [" + k.SetIdentifier + "]"
}

// Endpoint is one DNS record set, wanted by a source or found in a zone.
type Endpoint struct {
	// Name is the fully qualified name, lower case, without the trailing dot.
	Name string
	// Type is the record type (A, AAAA, CNAME, TXT, ...).
	Type string
	// Targets are the record values, kept sorted so that equal sets compare equal.
	Targets Targets
	// TTL is the time to live; 0 lets the provider choose, TTLZero is a TTL of 0 seconds.
	TTL TTL
	// SetIdentifier tells apart the members of a weighted or failover group.
	SetIdentifier string
	// Policy is the routing policy: simple, weighted or failover.
	Policy RoutingPolicy
	// Labels carry ownership: owner and resource, and whatever else the registry keeps.
	Labels Labels
	// ProviderSpecific holds provider properties such as alias and health-check id.
	ProviderSpecific map[string]string

	// ownership is the ownership TXT value Labels are read from while Labels is nil
	// (SetOwnership).
	ownership Ownership
}

// Key returns the record set's identity.
func (e *Endpoint) Key() Key {
	return Key{Name: e.Name, Type: e.Type, SetIdentifier: e.SetIdentifier}
}

// Owner returns the owner label, "" when the record has no owner.
func (e *Endpoint) Owner() string { return e.Label(OwnerLabel) }

// Resource returns the resource label, "" when unknown.
func (e *Endpoint) Resource() string { return e.Label(ResourceLabel) }

// Prop returns a provider-specific property.
func (e *Endpoint) Prop(name string) (string, bool) {
	v, ok := e.ProviderSpecific[name]
	return v, ok
}

// SetProp sets a provider-specific property, allocating the map on first use.
func (e *Endpoint) SetProp(name, value string) {
	if e.ProviderSpecific == nil {
		e.ProviderSpecific = map[string]string{}
	}
	e.ProviderSpecific[name] = value
}

// IsAlias reports whether the record is a Route 53 alias.
func (e *Endpoint) IsAlias() bool {
	v, ok := e.ProviderSpecific[PropAlias]
	if !ok || (e.Type != TypeA && e.Type != TypeAAAA) {
		return false
	}
	b, _ := strconv.ParseBool(v)
	return b
}

// Clone returns a deep copy, so that planners can change labels without touching input.
func (e *Endpoint) Clone() *Endpoint {
	c := *e
	c.Targets = slices.Clone(e.Targets)
	if e.Labels == nil && e.ownership.value != "" {
		// A fresh map already: read from the ownership value.
		c.Labels = e.AllLabels()
	} else {
		c.Labels = maps.Clone(e.Labels)
	}
	c.ownership = Ownership{}
	c.ProviderSpecific = maps.Clone(e.ProviderSpecific)
	return &c
}

// SameRecord reports whether two endpoints would be written identically: same key,
// targets, routing policy and provider properties, and same TTL where desired sets one.
// Labels are not compared; they live in the TXT record.
func (e *Endpoint) SameRecord(o *Endpoint) bool {
	if e.Key() != o.Key() || !e.Targets.Same(o.Targets) || e.Policy != o.Policy {
		return false
	}
	if e.TTL.IsConfigured() && o.TTL.IsConfigured() && e.TTL != o.TTL {
		return false
	}
	return sameProps(e.ProviderSpecific, o.ProviderSpecific)
}

// sameProps compares provider properties as written: the alias target's zone id is
// derived by the provider, and an alias's EvaluateTargetHealth is written true when unset
// (external-dns's --aws-evaluate-target-health default).
func sameProps(a, b map[string]string) bool {
	if len(a) == 0 && len(b) == 0 {
		// Most records: nothing to compare.
		return true
	}
	norm := func(m map[string]string, k string) string {
		v := m[k]
		if k == PropEvaluateTargetHealth && v == "" {
			return "true"
		}
		return v
	}
	for _, m := range []map[string]string{a, b} {
		for k := range m {
			if k != PropAliasZoneID && norm(a, k) != norm(b, k) {
				return false
			}
		}
	}
	return true
}

// String renders the endpoint for logs: "name type [set-id] targets".
func (e *Endpoint) String() string {
	return e.Key().String() + " " + strings.Join(e.Targets, ",")
}

// Targets are a record set's values.
type Targets []string

// NewTargets returns the values normalised: hostnames lower case without trailing dot,
// duplicates dropped, sorted.
func NewTargets(values ...string) Targets {
	t := make(Targets, 0, len(values))
	for _, v := range values {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		t = append(t, NormalizeTarget(v))
	}
	slices.Sort(t)
	return slices.Compact(t)
}

// NormalizeTarget lower-cases a hostname target and drops its trailing dot. Free text
// (a quoted TXT value) is returned unchanged: its case is part of its meaning.
func NormalizeTarget(v string) string {
	if strings.ContainsAny(v, "\" =") {
		return v
	}
	return strings.ToLower(strings.TrimSuffix(v, "."))
}

// Same reports whether both hold the same values regardless of order and case.
func (t Targets) Same(o Targets) bool {
	if len(t) != len(o) {
		return false
	}
	if slices.IsSorted(t) && slices.IsSorted(o) {
		for i := range t {
			// Values read from a zone and wanted by a source are normalised alike: most are
			// equal as they are, which is cheaper to tell than equal but for case.
			if t[i] != o[i] && !strings.EqualFold(t[i], o[i]) {
				return false
			}
		}
		return true
	}
	a, b := slices.Clone(t), slices.Clone(o)
	slices.Sort(a)
	slices.Sort(b)
	return slices.EqualFunc(a, b, strings.EqualFold)
}

// Labels are the key/value metadata kept in a record's TXT ownership record.
type Labels map[string]string

// NormalizeName lower-cases a DNS name and drops its trailing dot.
func NormalizeName(name string) string {
	return strings.ToLower(strings.TrimSuffix(strings.TrimSpace(name), "."))
}
