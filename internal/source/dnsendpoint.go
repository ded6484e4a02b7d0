package source

import (
	"fmt"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// The providerSpecific properties read besides endpoint's, as external-dns's AWS provider
// spells them.
const (
	propWeight     = "aws/weight"
	propFailover   = "aws/failover"
	propRecordType = "record-type"
)

// DNSEndpointGroupVersion is the API group and version of external-dns's DNSEndpoint CRD.
const DNSEndpointGroupVersion = "externaldns.k8s.io/v1alpha1"

// DNSEndpoint is external-dns's DNSEndpoint custom resource (externaldns.k8s.io/v1alpha1),
// declared here with the CRD's JSON names so that crossfade reads the objects external-dns
// reads without importing external-dns.
type DNSEndpoint struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              DNSEndpointSpec   `json:"spec,omitempty"`
	Status            DNSEndpointStatus `json:"status,omitempty"`
}

// DNSEndpointSpec lists the records wanted.
type DNSEndpointSpec struct {
	Endpoints []*DNSEndpointRecord `json:"endpoints,omitempty"`
}

// DNSEndpointStatus is the status sub-resource; crossfade reads, never writes, it.
type DNSEndpointStatus struct {
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// DNSEndpointRecord is one entry of spec.endpoints: external-dns's endpoint.Endpoint as
// serialised in the CRD.
type DNSEndpointRecord struct {
	DNSName          string                 `json:"dnsName,omitempty"`
	Targets          []string               `json:"targets,omitempty"`
	RecordType       string                 `json:"recordType,omitempty"`
	SetIdentifier    string                 `json:"setIdentifier,omitempty"`
	RecordTTL        int64                  `json:"recordTTL,omitempty"`
	Labels           map[string]string      `json:"labels,omitempty"`
	ProviderSpecific []ProviderSpecificProp `json:"providerSpecific,omitempty"`
}

// ProviderSpecificProp is one providerSpecific {name, value} pair.
type ProviderSpecificProp struct {
	Name  string `json:"name,omitempty"`
	Value string `json:"value,omitempty"`
}

// dnsEndpoints converts DNSEndpoints entry by entry. Routing comes from the AWS
// provider-specific properties as external-dns's AWS provider reads them (aws/weight,
// aws/failover), checked; properties of other providers are ignored, as external-dns's
// AWS provider ignores them. A user-supplied owner label is dropped: ownership is the
// registry's.
func (s *Source) dnsEndpoints(snap *Snapshot, r *Result) {
	for _, de := range snap.DNSEndpoints {
		if de == nil || !s.selects(&de.ObjectMeta) {
			continue
		}
		ref := endpoint.ObjectRef{Kind: "DNSEndpoint", Namespace: de.Namespace, Name: de.Name}
		o := newObject(ref, resource("crd", de.Namespace, de.Name))
		for i, rec := range de.Spec.Endpoints {
			if rec != nil {
				o.addDNSEndpointRecord(fmt.Sprintf("spec.endpoints[%d]", i), rec)
			}
		}
		o.finish(r)
	}
}

func (o *object) addDNSEndpointRecord(path string, rec *DNSEndpointRecord) {
	from := origins{
		name:          path + ".dnsName",
		typ:           path + ".recordType",
		targets:       path + ".targets",
		ttl:           path + ".recordTTL",
		setIdentifier: path + ".setIdentifier",
	}
	e := &endpoint.Endpoint{
		Name:          endpoint.NormalizeName(rec.DNSName),
		Type:          rec.RecordType,
		Targets:       endpoint.NewTargets(rec.Targets...),
		TTL:           endpoint.TTL(rec.RecordTTL),
		SetIdentifier: rec.SetIdentifier,
		Labels:        endpoint.Labels{},
	}
	for k, v := range rec.Labels {
		if k != endpoint.OwnerLabel {
			e.Labels[k] = v
		}
	}
	e.Labels[endpoint.ResourceLabel] = o.resource
	// external-dns skips a record whose targets carry a trailing dot where the type forbids
	// one (all but CNAME, TXT, MX; NAPTR requires it); crossfade reports it.
	for j, t := range rec.Targets {
		hasDot := strings.HasSuffix(t, ".")
		switch rec.RecordType {
		case endpoint.TypeCNAME, endpoint.TypeTXT, endpoint.TypeMX:
		case endpoint.TypeNAPTR:
			if !hasDot {
				o.fail(fmt.Sprintf("%s.targets[%d]", path, j), t, "a NAPTR target must end in a dot")
			}
		default:
			if hasDot {
				o.fail(fmt.Sprintf("%s.targets[%d]", path, j), t, "remove the trailing dot: "+rec.RecordType+" targets take none")
			}
		}
	}
	for j, p := range rec.ProviderSpecific {
		field := fmt.Sprintf("%s.providerSpecific[%d]", path, j)
		switch p.Name {
		case endpoint.PropAlias:
			b, err := strconv.ParseBool(p.Value)
			switch {
			case p.Value == endpoint.AliasOnlyA || p.Value == endpoint.AliasOnlyAAAA:
				// external-dns v0.23's alias of one type, which its AWS provider applies
				// to a CNAME only (adjustCNAMERecordAndNewAaaaIfNeeded): on an A or AAAA
				// record it drops the property and writes no alias.
				if rec.RecordType != endpoint.TypeCNAME {
					o.fail(field+" (alias)", p.Value, `"A" and "AAAA" make a CNAME record (a hostname target) an alias of that type only; on an `+rec.RecordType+` record set "true" or remove it`)
					continue
				}
				e.SetProp(endpoint.PropAlias, p.Value)
			case err != nil:
				o.fail(field+" (alias)", p.Value, `want "true", "false", "A" or "AAAA"`)
			case b:
				e.SetProp(endpoint.PropAlias, "true")
			}
		case propWeight:
			from.weight = field + " (aws/weight)"
			w, err := strconv.ParseInt(p.Value, 10, 64)
			if err != nil || w < 0 || w > endpoint.MaxWeight {
				o.fail(from.weight, p.Value, reasonWeight)
				continue
			}
			if e.Policy.Kind == endpoint.Failover {
				o.fail(from.weight, p.Value, reasonTwoPolicies)
				continue
			}
			e.Policy = endpoint.WeightedPolicy(w)
		case propFailover:
			from.failover = field + " (aws/failover)"
			if !strings.EqualFold(p.Value, endpoint.Primary) && !strings.EqualFold(p.Value, endpoint.Secondary) {
				o.fail(from.failover, p.Value, reasonFailover)
				continue
			}
			if e.Policy.Kind == endpoint.Weighted {
				o.fail(from.failover, p.Value, reasonTwoPolicies)
				continue
			}
			e.Policy = endpoint.FailoverPolicy(p.Value)
		case endpoint.PropHealthCheckID:
			from.healthCheckID = field + " (" + p.Name + ")"
			if p.Value == "" || strings.ContainsAny(p.Value, " \t\r\n") {
				o.fail(from.healthCheckID, p.Value, reasonHealthCheck)
				continue
			}
			e.SetProp(endpoint.PropHealthCheckID, p.Value)
		case endpoint.PropEvaluateTargetHealth:
			b, err := strconv.ParseBool(p.Value)
			if err != nil {
				o.fail(field+" ("+p.Name+")", p.Value, reasonBool)
				continue
			}
			e.SetProp(endpoint.PropEvaluateTargetHealth, strconv.FormatBool(b))
		case endpoint.PropAliasZoneID:
			// crossfade's own: the hosted zone of an alias target crossfade cannot see,
			// such as a load balancer's canonical zone.
			if p.Value == "" || strings.ContainsAny(p.Value, " \t\r\n") {
				o.fail(field+" ("+p.Name+")", p.Value, "want a hosted zone id, e.g. Z35SXDOTRQ7X7K")
				continue
			}
			e.SetProp(endpoint.PropAliasZoneID, p.Value)
		case endpoint.PropHostedZoneID:
			id, ok := hostedZoneID(p.Value)
			if !ok {
				o.fail(field+" ("+p.Name+")", p.Value, reasonZoneID)
				continue
			}
			e.SetProp(endpoint.PropHostedZoneID, id)
		case propRecordType:
			switch {
			case p.Value == "":
			case strings.EqualFold(p.Value, endpoint.TypePTR):
				o.fail(field+" (record-type)", p.Value, "PTR records are not supported by crossfade: remove the property")
			default:
				o.fail(field+" (record-type)", p.Value, reasonRecordType)
			}
		default:
			if strings.HasPrefix(p.Name, "aws/") {
				o.fail(field+" ("+p.Name+")", p.Value, reasonAWSOther)
			}
		}
	}
	o.drafts = append(o.drafts, draft{ep: e, from: from})
}
