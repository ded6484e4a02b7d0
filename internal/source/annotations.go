package source

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// Annotation names, the part after the prefix, as external-dns v0.21.0 spells them.
const (
	annHostname                = "hostname"
	annInternalHostname        = "internal-hostname"
	annTTL                     = "ttl"
	annTarget                  = "target"
	annSetIdentifier           = "set-identifier"
	annAlias                   = "alias"
	annRecordType              = "record-type"
	annController              = "controller"
	annAccess                  = "access"
	annEndpointsType           = "endpoints-type"
	annIngressHostnameSource   = "ingress-hostname-source"
	annGatewayHostnameSource   = "gateway-hostname-source"
	annIngress                 = "ingress"
	annAWSPrefix               = "aws-"
	annAWSWeight               = "aws-weight"
	annAWSFailover             = "aws-failover"
	annAWSHealthCheckID        = "aws-health-check-id"
	annAWSEvaluateTargetHealth = "aws-evaluate-target-health"
	// annAWSHostedZoneID is external-dns v0.23's (its pull request 6559).
	annAWSHostedZoneID = "aws-hosted-zone-id"
)

// annotationNames are the names above that an object may carry (annAWSPrefix is a prefix
// of names, not one).
var annotationNames = map[string]bool{annHostname: true, annInternalHostname: true, annTTL: true, annTarget: true,
	annSetIdentifier: true, annAlias: true, annRecordType: true, annController: true, annAccess: true,
	annEndpointsType: true, annIngressHostnameSource: true, annGatewayHostnameSource: true, annIngress: true,
	annAWSWeight: true, annAWSFailover: true, annAWSHealthCheckID: true, annAWSEvaluateTargetHealth: true,
	annAWSHostedZoneID: true}

// KnownAnnotationName reports whether name, an annotation key's part after its prefix
// ("aws-weight"), is one the sources read: a bound for labels made of user input.
func KnownAnnotationName(name string) bool { return annotationNames[name] }

// KnownProperty reports whether name is a DNSEndpoint providerSpecific property the
// sources read ("aws/weight"), as KnownAnnotationName does for annotations.
func KnownProperty(name string) bool {
	switch name {
	case endpoint.PropAlias, propWeight, propFailover, endpoint.PropHealthCheckID, endpoint.PropEvaluateTargetHealth,
		endpoint.PropAliasZoneID, endpoint.PropHostedZoneID, propRecordType:
		return true
	}
	return false
}

// controllerValue is the controller annotation value external-dns (and crossfade) own.
const controllerValue = "dns-controller"

// Reasons shared by annotations and DNSEndpoint fields.
const (
	reasonTTL         = `want an integer number of seconds 1..2147483647 or a duration such as "5m"`
	reasonWeight      = "want an integer 0..255"
	reasonFailover    = "want PRIMARY or SECONDARY"
	reasonBool        = `want "true" or "false"`
	reasonHealthCheck = "want a Route 53 health check id"
	reasonAWSOther    = "not supported by crossfade: it publishes simple, weighted and failover records (aws-weight, aws-failover, aws-health-check-id, aws-evaluate-target-health, aws-hosted-zone-id)"
	reasonZoneID      = `want a hosted zone id, e.g. "Z1D633PJN98FT9" or "/hostedzone/Z1D633PJN98FT9"`
	// reasonAliasOnly refuses alias "A"/"AAAA" on an annotation: external-dns v0.23.0
	// documents them there, but its sources read only "true" from the annotation
	// (annotations.hasAliasFromAnnotations) and publish as if it were absent, an alias A
	// and AAAA to a load balancer; only a DNSEndpoint's providerSpecific alias carries
	// them to its AWS provider. Neither publishing what v0.23.0 did nor what the value
	// asks would be safe to guess at: the records are kept as they are.
	reasonAliasOnly   = `external-dns v0.23.0 ignores "A" and "AAAA" on this annotation (it reads only "true" here, and publishes as if the annotation were absent): set "true" or remove it, or publish the record from a DNSEndpoint with providerSpecific alias "A" or "AAAA"`
	reasonPTR         = "PTR records are not supported by crossfade: remove the annotation"
	reasonRecordType  = `want "ptr" or ""`
	reasonTwoPolicies = "a record takes one routing policy: set aws-weight or aws-failover, not both"
)

// annotation is one annotation as written on the object.
type annotation struct {
	key, value string
	prefix     int // index in the configured prefix list
}

// objectAnnotations is what one object's external-dns annotations say, parsed and
// checked. Values that only some kinds read (access, ingress-hostname-source, ...) are
// checked by those kinds through enum, so that an irrelevant annotation never makes an
// object invalid.
type objectAnnotations struct {
	obj    endpoint.ObjectRef
	prefix string // the first configured prefix, to name annotations that are absent
	found  map[string]annotation

	hostnames         []string
	internalHostnames []string
	targets           []string
	ttl               endpoint.TTL
	setIdentifier     string
	policy            endpoint.RoutingPolicy
	props             map[string]string
	// foreign is set when the controller annotation names another controller.
	foreign string
	// overridden are the legacy-prefix annotations set aside for the same key under an
	// earlier prefix (Config.LegacyAnnotationPrefix), each a sentence naming both keys.
	overridden []string
}

// has reports whether the object carries the annotation.
func (a *objectAnnotations) has(name string) bool {
	_, ok := a.found[name]
	return ok
}

// get returns an annotation's value.
func (a *objectAnnotations) get(name string) (string, bool) {
	an, ok := a.found[name]
	return an.value, ok
}

// field names the annotation for messages, with the key as written on the object.
func (a *objectAnnotations) field(name string) string {
	if an, ok := a.found[name]; ok {
		return "annotation " + an.key
	}
	return "annotation " + a.prefix + name
}

func (a *objectAnnotations) invalid(name, value, reason string) *endpoint.InvalidError {
	return &endpoint.InvalidError{Object: a.obj, Field: a.field(name), Value: value, Reason: reason}
}

// enum returns the annotation's value when it is one of allowed (compared as fold is
// told), "" when absent, and an error naming the choices otherwise.
func (a *objectAnnotations) enum(name string, fold bool, allowed ...string) (string, *endpoint.InvalidError) {
	v, ok := a.get(name)
	if !ok {
		return "", nil
	}
	for _, want := range allowed {
		if v == want || fold && strings.EqualFold(v, want) {
			return want, nil
		}
	}
	quoted := make([]string, len(allowed))
	for i, s := range allowed {
		quoted[i] = strconv.Quote(s)
	}
	return "", a.invalid(name, v, "want "+strings.Join(quoted, " or "))
}

// origins returns where the record fields that annotations set come from.
func (a *objectAnnotations) origins() origins {
	return origins{
		ttl:           a.field(annTTL),
		setIdentifier: a.field(annSetIdentifier),
		weight:        a.field(annAWSWeight),
		failover:      a.field(annAWSFailover),
		healthCheckID: a.field(annAWSHealthCheckID),
		targets:       a.field(annTarget),
	}
}

// parseAnnotations reads the object's annotations under the configured prefixes. It never
// panics; every problem is an *endpoint.InvalidError. When the controller annotation names
// another controller, foreign is set and nothing else is checked: the object is not ours.
func (s *Source) parseAnnotations(obj endpoint.ObjectRef, in map[string]string) (*objectAnnotations, []*endpoint.InvalidError) {
	a := &objectAnnotations{obj: obj, prefix: s.prefixes[0]}
	var dups map[string][]annotation
	for k, v := range in {
		for i, p := range s.prefixes {
			name, ok := strings.CutPrefix(k, p)
			if !ok {
				continue
			}
			if name == "" {
				break
			}
			an := annotation{key: k, value: v, prefix: i}
			if a.found == nil {
				a.found = map[string]annotation{}
			}
			if prev, ok := a.found[name]; ok {
				if dups == nil {
					dups = map[string][]annotation{}
				}
				if len(dups[name]) == 0 {
					dups[name] = append(dups[name], prev)
				}
				dups[name] = append(dups[name], an)
				if i < prev.prefix {
					a.found[name] = an
				}
			} else {
				a.found[name] = an
			}
			break
		}
	}
	if len(a.found) == 0 {
		return a, nil
	}
	var errs []*endpoint.InvalidError
	for _, all := range dups {
		slices.SortFunc(all, func(x, y annotation) int { return cmp.Compare(x.prefix, y.prefix) })
		for _, an := range all[1:] {
			switch {
			case an.value == all[0].value:
			case an.prefix == s.fallback:
				// The legacy prefix yields, as in external-dns v0.23 (its
				// ResolveLegacyAnnotations): set aside, and said so.
				a.overridden = append(a.overridden, "annotation "+an.key+" "+strconv.Quote(an.value)+
					" ignored: "+all[0].key+" "+strconv.Quote(all[0].value)+" is set and wins (--enable-legacy-annotation-prefix)")
			default:
				errs = append(errs, &endpoint.InvalidError{Object: obj, Field: "annotation " + an.key, Value: an.value,
					Reason: "conflicts with " + all[0].key + " " + strconv.Quote(all[0].value) + ": set one of them, or both to the same value"})
			}
		}
	}
	if v, ok := a.get(annController); ok && v != controllerValue {
		a.foreign = a.field(annController) + " is " + strconv.Quote(v) + ", not " + strconv.Quote(controllerValue)
		a.overridden = nil // not ours: nothing of it is read
		return a, nil
	}
	add := func(e *endpoint.InvalidError) {
		if e != nil {
			errs = append(errs, e)
		}
	}
	if v, ok := a.get(annHostname); ok {
		a.hostnames = splitList(v)
	}
	if v, ok := a.get(annInternalHostname); ok {
		a.internalHostnames = splitList(v)
	}
	if v, ok := a.get(annTarget); ok {
		a.targets = splitList(v)
	}
	if v, ok := a.get(annTTL); ok {
		ttl, good := parseTTL(v)
		if !good {
			add(a.invalid(annTTL, v, reasonTTL))
		}
		a.ttl = ttl
	}
	a.setIdentifier, _ = a.get(annSetIdentifier)
	if v, ok := a.get(annAlias); ok {
		b, err := strconv.ParseBool(v)
		switch {
		case v == endpoint.AliasOnlyA || v == endpoint.AliasOnlyAAAA:
			add(a.invalid(annAlias, v, reasonAliasOnly))
		case err != nil:
			add(a.invalid(annAlias, v, reasonBool))
		case b:
			a.setProp(endpoint.PropAlias, "true")
		}
	}
	if v, ok := a.get(annRecordType); ok {
		switch {
		case v == "":
		case strings.EqualFold(v, endpoint.TypePTR):
			add(a.invalid(annRecordType, v, reasonPTR))
		default:
			add(a.invalid(annRecordType, v, reasonRecordType))
		}
	}
	errs = append(errs, a.parseAWS()...)
	return a, errs
}

// parseAWS reads the aws-* annotations into the routing policy and provider properties.
// Unlike external-dns, which passes any aws-* value through and writes weight 0 when
// aws-weight does not parse, every value is checked here.
func (a *objectAnnotations) parseAWS() []*endpoint.InvalidError {
	var errs []*endpoint.InvalidError
	// Sorted so that errors come out in one order.
	names := make([]string, 0, 4)
	for name := range a.found {
		if strings.HasPrefix(name, annAWSPrefix) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		v := a.found[name].value
		switch name {
		case annAWSWeight:
			w, err := strconv.ParseInt(v, 10, 64)
			if err != nil || w < 0 || w > endpoint.MaxWeight {
				errs = append(errs, a.invalid(name, v, reasonWeight))
				continue
			}
			if a.has(annAWSFailover) {
				errs = append(errs, a.invalid(name, v, reasonTwoPolicies))
				continue
			}
			a.policy = endpoint.WeightedPolicy(w)
		case annAWSFailover:
			if !strings.EqualFold(v, endpoint.Primary) && !strings.EqualFold(v, endpoint.Secondary) {
				errs = append(errs, a.invalid(name, v, reasonFailover))
				continue
			}
			if !a.has(annAWSWeight) {
				a.policy = endpoint.FailoverPolicy(v)
			}
		case annAWSHealthCheckID:
			if v == "" || strings.ContainsFunc(v, unicode.IsSpace) {
				errs = append(errs, a.invalid(name, v, reasonHealthCheck))
				continue
			}
			a.setProp(endpoint.PropHealthCheckID, v)
		case annAWSEvaluateTargetHealth:
			b, err := strconv.ParseBool(v)
			if err != nil {
				errs = append(errs, a.invalid(name, v, reasonBool))
				continue
			}
			a.setProp(endpoint.PropEvaluateTargetHealth, strconv.FormatBool(b))
		case annAWSHostedZoneID:
			id, ok := hostedZoneID(v)
			if !ok {
				errs = append(errs, a.invalid(name, v, reasonZoneID))
				continue
			}
			a.setProp(endpoint.PropHostedZoneID, id)
		default:
			errs = append(errs, a.invalid(name, v, reasonAWSOther))
		}
	}
	return errs
}

// hostedZoneID reads a hosted zone id as external-dns v0.23 does (its cleanZoneID: an
// optional "/hostedzone/" dropped), and checks it is one: upper case letters and digits,
// as Route 53 writes them.
func hostedZoneID(v string) (string, bool) {
	id := strings.TrimPrefix(v, "/hostedzone/")
	if id == "" || len(id) > 32 || strings.IndexFunc(id, func(r rune) bool { return !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') }) >= 0 {
		return "", false
	}
	return id, true
}

func (a *objectAnnotations) setProp(name, value string) {
	if a.props == nil {
		a.props = map[string]string{}
	}
	a.props[name] = value
}

// splitList splits a comma-separated hostname or target list as external-dns does, but
// drops every kind of white space (YAML folding leaves newlines) and empty entries (a
// trailing comma), and trailing dots.
func splitList(v string) []string {
	v = strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, v)
	if v == "" {
		return nil
	}
	parts := strings.Split(v, ",")
	out := parts[:0]
	for _, p := range parts {
		if p = strings.TrimSuffix(p, "."); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// parseTTL reads a TTL as external-dns does: a Go duration first, else an integer number
// of seconds. 0 means "not configured", as external-dns documents; anything else must lie
// in 1..2147483647 seconds (external-dns logs a warning and drops such a TTL).
func parseTTL(s string) (endpoint.TTL, bool) {
	var secs int64
	if d, err := time.ParseDuration(s); err == nil {
		if d == 0 {
			return 0, true
		}
		secs = int64(d / time.Second)
		if d < 0 {
			return 0, false
		}
	} else {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, false
		}
		if n == 0 {
			return 0, true
		}
		secs = n
	}
	if secs < 1 || secs > math.MaxInt32 {
		return 0, false
	}
	return endpoint.TTL(secs), true
}
