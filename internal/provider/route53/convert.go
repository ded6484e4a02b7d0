package route53

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/route53/types"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/elbzone"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
)

// DefaultTTL is written for a record whose TTL is not configured (Endpoint.TTL 0), as
// external-dns does. A record set that Route 53 holds with TTL 0 is read as
// endpoint.TTLZero and written back with TTL 0.
const DefaultTTL = 300

// PropRoutingPolicy marks a record set read from Route 53 whose routing policy crossfade
// does not model (latency, geolocation, geoproximity, multivalue, CIDR): its value names
// the policy. Such sets are returned so the planner sees that the name and type are taken,
// but they cannot be written back: Apply refuses them.
const PropRoutingPolicy = "aws/routing-policy"

// hostnameTypes are the record types whose values hold domain names (possibly after a
// priority, as in MX and SRV) that compare case-insensitively and without the trailing dot;
// their values are normalised on read. Every other type (TXT, CAA, SOA, ...) is kept
// byte for byte as Route 53 returns it.
var hostnameTypes = map[string]bool{
	endpoint.TypeA: true, endpoint.TypeAAAA: true, endpoint.TypeCNAME: true, endpoint.TypeNS: true,
	endpoint.TypePTR: true, endpoint.TypeMX: true, endpoint.TypeSRV: true,
}

// UnescapeName turns a name as Route 53 returns it into the model's form: octal escapes
// (`\052` for `*`, `\100` for `@`, ...) and backslash escapes decoded, lower case, no
// trailing dot.
func UnescapeName(name string) string {
	if !strings.Contains(name, `\`) {
		return endpoint.NormalizeName(name)
	}
	var b strings.Builder
	b.Grow(len(name))
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c != '\\' || i+1 >= len(name) {
			b.WriteByte(c)
			continue
		}
		if i+3 < len(name) && isOctal(name[i+1]) && isOctal(name[i+2]) && isOctal(name[i+3]) {
			if v, err := strconv.ParseUint(name[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(name[i+1])
		i++
	}
	return endpoint.NormalizeName(b.String())
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// aliasResolver finds the hosted zone that holds an alias target among known zones.
type aliasResolver struct {
	known []provider.Zone
}

// aliasZone returns the hosted zone id toRecordSet writes for an alias to target that
// names none: an AWS load balancer's canonical hosted zone for its region and type, else
// the deepest known zone holding target. The load balancer comes first: its DNS name
// lives in AWS's zone whatever zones the account holds, and Route 53 wants that zone.
func (r aliasResolver) aliasZone(target string, private bool) (string, bool) {
	if id, ok := elbzone.ZoneFor(target); ok {
		return id, true
	}
	return r.zoneFor(target, private)
}

// zoneFor returns the id of the deepest known zone containing target. When a public and a
// private zone share that name, the one matching private wins; any other tie is
// ambiguous and returns false, so the caller must say which zone it means.
func (r aliasResolver) zoneFor(target string, private bool) (string, bool) {
	best := provider.Holding(r.known, endpoint.NormalizeName(target))
	if len(best) > 1 {
		best = slices.DeleteFunc(best, func(z provider.Zone) bool { return z.Private != private })
	}
	if len(best) != 1 {
		return "", false
	}
	return best[0].ID, true
}

// isAlias reports whether e is written as an alias. Unlike Endpoint.IsAlias it accepts
// every type, so that a CNAME or TXT alias read from a zone can be deleted again.
func isAlias(e *endpoint.Endpoint) bool {
	v, _ := e.Prop(endpoint.PropAlias)
	b, _ := strconv.ParseBool(v)
	return b
}

// toEndpoint converts one record set read from zone into the model. Properties that equal
// what toRecordSet would write by default are left out (EvaluateTargetHealth true, as
// external-dns's --aws-evaluate-target-health defaults; an alias zone id that
// aliasResolver.aliasZone finds for the target: a load balancer's canonical zone or the
// known zone holding it), so a desired endpoint that does not set them compares equal to
// the record read back. A TTL of 0 is read as endpoint.TTLZero, not as "not configured".
func toEndpoint(rs types.ResourceRecordSet, zone provider.Zone, r aliasResolver) *endpoint.Endpoint {
	e := &endpoint.Endpoint{
		Name:          UnescapeName(aws.ToString(rs.Name)),
		Type:          string(rs.Type),
		SetIdentifier: aws.ToString(rs.SetIdentifier),
	}
	if rs.TTL != nil {
		e.TTL = endpoint.NewTTL(*rs.TTL)
	}
	switch {
	case rs.Weight != nil:
		e.Policy = endpoint.WeightedPolicy(*rs.Weight)
	case rs.Failover != "":
		e.Policy = endpoint.FailoverPolicy(string(rs.Failover))
	case rs.Region != "":
		e.SetProp(PropRoutingPolicy, "latency")
	case rs.GeoLocation != nil:
		e.SetProp(PropRoutingPolicy, "geolocation")
	case rs.GeoProximityLocation != nil:
		e.SetProp(PropRoutingPolicy, "geoproximity")
	case rs.MultiValueAnswer != nil:
		e.SetProp(PropRoutingPolicy, "multivalue")
	case rs.CidrRoutingConfig != nil:
		e.SetProp(PropRoutingPolicy, "cidr")
	case rs.TrafficPolicyInstanceId != nil:
		e.SetProp(PropRoutingPolicy, "traffic-policy")
	}
	if id := aws.ToString(rs.HealthCheckId); id != "" {
		e.SetProp(endpoint.PropHealthCheckID, id)
	}
	if a := rs.AliasTarget; a != nil {
		target := UnescapeName(aws.ToString(a.DNSName))
		e.Targets = endpoint.Targets{target}
		e.SetProp(endpoint.PropAlias, "true")
		if !a.EvaluateTargetHealth {
			e.SetProp(endpoint.PropEvaluateTargetHealth, "false")
		}
		zid := trimZoneID(aws.ToString(a.HostedZoneId))
		if got, ok := r.aliasZone(target, zone.Private); !ok || got != zid {
			e.SetProp(endpoint.PropAliasZoneID, zid)
		}
		return e
	}
	e.Targets = make(endpoint.Targets, 0, len(rs.ResourceRecords))
	for _, rr := range rs.ResourceRecords {
		v := aws.ToString(rr.Value)
		if hostnameTypes[e.Type] {
			v = endpoint.NormalizeTarget(v)
		}
		e.Targets = append(e.Targets, v)
	}
	slices.Sort(e.Targets)
	return e
}

// toRecordSet converts an endpoint into the record set Route 53 is sent. It is the one
// conversion both Apply and the dry-run use.
func toRecordSet(e *endpoint.Endpoint, zone provider.Zone, r aliasResolver) (*types.ResourceRecordSet, error) {
	if e == nil {
		return nil, errors.New("no endpoint")
	}
	if p, ok := e.Prop(PropRoutingPolicy); ok {
		return nil, fmt.Errorf("%s routing is not supported: crossfade writes simple, weighted and failover sets only", p)
	}
	if e.Name == "" || e.Type == "" {
		return nil, errors.New("name and type are required")
	}
	rs := &types.ResourceRecordSet{
		Name: aws.String(e.Name + "."),
		Type: types.RRType(e.Type),
	}
	if e.SetIdentifier != "" {
		rs.SetIdentifier = aws.String(e.SetIdentifier)
	}
	switch e.Policy.Kind {
	case endpoint.Weighted:
		rs.Weight = aws.Int64(e.Policy.Weight)
	case endpoint.Failover:
		rs.Failover = types.ResourceRecordSetFailover(e.Policy.Role)
	}
	if id, ok := e.Prop(endpoint.PropHealthCheckID); ok && id != "" {
		rs.HealthCheckId = aws.String(id)
	}
	if isAlias(e) {
		if len(e.Targets) != 1 {
			return nil, fmt.Errorf("alias needs exactly one target, has %d", len(e.Targets))
		}
		target := endpoint.NormalizeName(e.Targets[0])
		zid, _ := e.Prop(endpoint.PropAliasZoneID)
		zid = trimZoneID(zid)
		if zid == "" {
			var ok bool
			if zid, ok = r.aliasZone(target, zone.Private); !ok {
				return nil, fmt.Errorf("alias target %s: not a load balancer of a known region and no single known hosted zone holds it; set %s to the target's hosted zone id (for a load balancer, its CanonicalHostedZoneId)", target, endpoint.PropAliasZoneID)
			}
		}
		eth := true
		if v, ok := e.Prop(endpoint.PropEvaluateTargetHealth); ok {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, fmt.Errorf("%s %q: want true or false", endpoint.PropEvaluateTargetHealth, v)
			}
			eth = b
		}
		rs.AliasTarget = &types.AliasTarget{HostedZoneId: aws.String(zid), DNSName: aws.String(target + "."), EvaluateTargetHealth: eth}
		return rs, nil
	}
	if len(e.Targets) == 0 {
		return nil, errors.New("no targets")
	}
	ttl := e.TTL.Seconds()
	if !e.TTL.IsConfigured() {
		ttl = DefaultTTL
	}
	rs.TTL = aws.Int64(ttl)
	rs.ResourceRecords = make([]types.ResourceRecord, len(e.Targets))
	for i, t := range e.Targets {
		// Verbatim: TXT values carry their quotes, as Route 53 wants and returns them.
		rs.ResourceRecords[i] = types.ResourceRecord{Value: aws.String(t)}
	}
	return rs, nil
}

// toChangeBatch converts batch for zone; r resolves alias targets without a zone id.
func toChangeBatch(zone provider.Zone, batch changes.Batch, comment string, r aliasResolver) (*types.ChangeBatch, error) {
	cb := &types.ChangeBatch{Changes: make([]types.Change, 0, len(batch))}
	if comment != "" {
		cb.Comment = aws.String(comment)
	}
	for i, c := range batch {
		switch c.Action {
		case changes.Create, changes.Delete, changes.Upsert:
		default:
			return nil, fmt.Errorf("change %d: action %q: want CREATE, DELETE or UPSERT", i+1, c.Action)
		}
		rs, err := toRecordSet(c.Endpoint, zone, r)
		if err != nil {
			what := "?"
			if c.Endpoint != nil {
				what = c.Endpoint.Key().String()
			}
			return nil, fmt.Errorf("change %d (%s %s): %w", i+1, c.Action, what, err)
		}
		cb.Changes = append(cb.Changes, types.Change{Action: types.ChangeAction(c.Action), ResourceRecordSet: rs})
	}
	return cb, nil
}

// ChangeBatch returns the Route 53 change batch Apply sends for batch in zone. Alias
// targets without endpoint.PropAliasZoneID resolve to a load balancer's canonical hosted
// zone, else to the deepest of known zones holding them.
func ChangeBatch(zone provider.Zone, batch changes.Batch, comment string, known []provider.Zone) (*types.ChangeBatch, error) {
	cb, err := toChangeBatch(zone, batch, comment, aliasResolver{known: known})
	if err != nil {
		return nil, fmt.Errorf("zone %s: %w", zone, err)
	}
	return cb, nil
}

// ChangeBatchJSON renders batch as the JSON document that
// `aws route53 change-resource-record-sets --change-batch file://…` accepts: the same
// change batch Apply sends, with absent fields left out.
func ChangeBatchJSON(zone provider.Zone, batch changes.Batch, comment string, known []provider.Zone) ([]byte, error) {
	cb, err := ChangeBatch(zone, batch, comment, known)
	if err != nil {
		return nil, err
	}
	return marshalChangeBatch(cb)
}

// The JSON shape of the AWS CLI's --change-batch, field names as in the API.
type (
	jsonBatch struct {
		Comment string       `json:"Comment,omitempty"`
		Changes []jsonChange `json:"Changes"`
	}
	jsonChange struct {
		Action            string    `json:"Action"`
		ResourceRecordSet jsonRRSet `json:"ResourceRecordSet"`
	}
	jsonRRSet struct {
		Name            string       `json:"Name"`
		Type            string       `json:"Type"`
		SetIdentifier   string       `json:"SetIdentifier,omitempty"`
		Weight          *int64       `json:"Weight,omitempty"`
		Failover        string       `json:"Failover,omitempty"`
		TTL             *int64       `json:"TTL,omitempty"`
		ResourceRecords []jsonRecord `json:"ResourceRecords,omitempty"`
		AliasTarget     *jsonAlias   `json:"AliasTarget,omitempty"`
		HealthCheckID   string       `json:"HealthCheckId,omitempty"`
	}
	jsonRecord struct {
		Value string `json:"Value"`
	}
	jsonAlias struct {
		HostedZoneID         string `json:"HostedZoneId"`
		DNSName              string `json:"DNSName"`
		EvaluateTargetHealth bool   `json:"EvaluateTargetHealth"`
	}
)

// marshalChangeBatch renders a change batch built by toChangeBatch, indented, without HTML
// escaping so TXT values read as written.
func marshalChangeBatch(cb *types.ChangeBatch) ([]byte, error) {
	out := jsonBatch{Comment: aws.ToString(cb.Comment), Changes: make([]jsonChange, 0, len(cb.Changes))}
	for _, c := range cb.Changes {
		rs := c.ResourceRecordSet
		if rs == nil {
			return nil, errors.New("change without a record set")
		}
		js := jsonRRSet{
			Name: aws.ToString(rs.Name), Type: string(rs.Type), SetIdentifier: aws.ToString(rs.SetIdentifier),
			Weight: rs.Weight, Failover: string(rs.Failover), TTL: rs.TTL, HealthCheckID: aws.ToString(rs.HealthCheckId),
		}
		for _, rr := range rs.ResourceRecords {
			js.ResourceRecords = append(js.ResourceRecords, jsonRecord{Value: aws.ToString(rr.Value)})
		}
		if a := rs.AliasTarget; a != nil {
			js.AliasTarget = &jsonAlias{HostedZoneID: aws.ToString(a.HostedZoneId), DNSName: aws.ToString(a.DNSName), EvaluateTargetHealth: a.EvaluateTargetHealth}
		}
		out.Changes = append(out.Changes, jsonChange{Action: string(c.Action), ResourceRecordSet: js})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// trimZoneID drops the "/hostedzone/" prefix Route 53 puts on zone ids.
func trimZoneID(id string) string {
	return strings.TrimPrefix(strings.TrimPrefix(id, "/"), "hostedzone/")
}
