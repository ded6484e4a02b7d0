package spec

import (
	"cmp"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// What each field wants, said the same way whether the value had the wrong type or was
// out of range.
const (
	wantAPIVersion  = `want "` + APIVersion + `"`
	wantKind        = `want "` + Kind + `"`
	wantName        = "want a DNS label: 1 to 63 of a-z, 0-9 and '-', starting and ending with a letter or digit (it names the journal and lock files)"
	wantPercent     = "want an integer 0..100"
	wantBarePercent = "want a percent 0..100"
	wantWeight      = "want an integer 0..255"
	wantALBWeight   = "want an integer 0..999 (an ALB target group weight)"
	wantRequests    = "want an integer 1..10000"
	wantStatus      = "want an HTTP status code 100..599"
	wantRatio       = "want a number 0..1"
	wantPercentile  = "want a number above 0 and at most 100"
	wantSlack       = "want a number ≥ 0"
	wantSamples     = "want an integer 1..100000"
	wantTTL         = "want an integer 1..2147483647 (seconds)"
	wantURL         = "want an absolute http:// or https:// URL with a host"
	wantHostPort    = `want host:port, e.g. "192.0.2.53:53"`
	wantNoData      = `want "fail" (or leave it out)`
	wantMode        = `want "` + RollbackImmediate + `" or "` + RollbackGradual + `"`
	wantOnDrift     = `want "` + DriftPause + `" or "` + DriftRollback + `"`
	wantRecordType  = "want A, AAAA or CNAME"
	wantQuery       = "want a PromQL query that yields one number"
	wantGateKind    = "want exactly one of http, prometheus, dns, targetHealth, albTraffic, cloudMapDiscovery"
	wantMinHealthy  = "want an integer 1..1000 (healthy targets per target group)"
	wantMinRequests = "want an integer 1..1000000000"
	wantPeriod      = "want a CloudWatch period in seconds: 1, 5, 10, 20, 30 or a multiple of 60"
	wantDelay       = `want a duration from 0s to 15m such as "2m": how long after a period ends CloudWatch holds all of it (0s for a CloudWatch that counts at once, the sandbox's)`
)

// What the ALB lever's fields want.
const (
	wantRuleARN = "want the ARN of an Application Load Balancer's listener rule (arn:aws:elasticloadbalancing:REGION:ACCOUNT:listener-rule/app/…), " +
		"or of a listener for its default action (…:listener/app/…, or a Network Load Balancer's …:listener/net/…)"
	wantLoadBalancerARN = "want the ARN of an Application Load Balancer (arn:aws:elasticloadbalancing:REGION:ACCOUNT:loadbalancer/app/NAME/ID)"
	wantAllWeighted     = "want true: select every weighted record set of the zone with members for from and to"
	wantZones           = "want hosted zones' names, e.g. [a.example.com, b.example.com]"
	wantTargetGroup     = "want a target group's ARN (arn:aws:elasticloadbalancing:REGION:ACCOUNT:targetgroup/NAME/ID) " +
		"or its name (1 to 32 of a-z, A-Z, 0-9 and '-', not starting or ending with '-')"
)

// Limits and defaults the engine and Route 53 impose.
const (
	maxSetIDLength    = 128 // Route 53's limit on SetIdentifier
	maxRequests       = 10000
	maxSamples        = 100000
	maxTTL            = 2147483647 // Route 53's limit on TTL
	maxWeight         = 255        // Route 53's limit on Weight
	maxALBWeight      = 999        // ELBv2's limit on a target group's weight
	maxTargetGroupLen = 32         // ELBv2's limit on a target group's name
	maxMinHealthy     = 1000       // ELBv2's limit on targets per target group
	maxMinRequests    = 1000000000
	noDataFail        = "fail"
	noDataPass        = "pass"
	defaultMinRatio   = 1.0
	defaultRecordType = endpoint.TypeA
)

// wants are the descriptions the decoder uses for a value of the wrong type, by struct
// and key; a list's entry describes its items.
var wants = map[reflect.Type]map[string]string{
	reflect.TypeFor[Cutover]():          {"apiVersion": wantAPIVersion, "kind": wantKind},
	reflect.TypeFor[Metadata]():         {"name": wantName},
	reflect.TypeFor[Spec]():             {"onDrift": wantOnDrift, "zones": wantZones},
	reflect.TypeFor[Record]():           {"type": wantRecordType},
	reflect.TypeFor[ALB]():              {"listenerRules": wantRuleARN, "from": wantTargetGroup, "to": wantTargetGroup},
	reflect.TypeFor[ALBSelect]():        {"loadBalancers": wantLoadBalancerARN},
	reflect.TypeFor[Select]():           {"allWeighted": wantAllWeighted},
	reflect.TypeFor[Step]():             {"percent": wantPercent},
	reflect.TypeFor[Weights]():          {"from": wantWeight, "to": wantWeight},
	reflect.TypeFor[HTTPGate]():         {"url": wantURL, "resolver": wantHostPort, "requests": wantRequests, "expectStatus": wantStatus, "minSuccessRatio": wantRatio, "latencySlack": wantSlack},
	reflect.TypeFor[Latency]():          {"percentile": wantPercentile},
	reflect.TypeFor[PrometheusGate]():   {"url": wantURL, "noData": wantNoData},
	reflect.TypeFor[DNSGate]():          {"servers": wantHostPort, "samples": wantSamples, "sampleNames": wantSamples, "tolerance": wantRatio},
	reflect.TypeFor[TargetHealthGate](): {"minHealthy": wantMinHealthy},
	reflect.TypeFor[ALBTrafficGate]():   {"tolerance": wantRatio, "minRequests": wantMinRequests, "maxErrorRate": wantRatio, "period": wantPeriod},
	reflect.TypeFor[RetireCloudWatch](): {"period": wantPeriod},
	reflect.TypeFor[Rollback]():         {"mode": wantMode, "steps": wantPercent},
	reflect.TypeFor[TTL]():              {"lower": wantTTL},
	reflect.TypeFor[Retire]():           {"metrics": wantURL, "maxRate": wantSlack},
	reflect.TypeFor[RetireQuery]():      {"url": wantURL, "query": wantQuery},
}

func fieldWant(t reflect.Type, key string) string { return wants[t][key] }

// validator checks a decoded plan against the rules the engine relies on. Each rule is a
// method that takes the field.Path of what it checks and returns a field.ErrorList, in
// cert-manager's style; ps says what was written (a 0 written is not a field left out)
// and takes the warnings, which are not errors.
type validator struct {
	ps *problems
	c  *Cutover
}

// validate checks c by the rules and keeps what they find in ps.
func validate(c *Cutover, ps *problems) {
	ps.keep(validator{ps: ps, c: c}.cutover())
}

// cutover checks the whole plan: apiVersion, kind, metadata and spec.
func (v validator) cutover() (errs field.ErrorList) {
	c, ps := v.c, v.ps
	var root *field.Path
	switch {
	case c.APIVersion == "":
		errs = append(errs, ps.required(root.Child("apiVersion"), wantAPIVersion))
	case c.APIVersion != APIVersion:
		errs = append(errs, ps.invalid(root.Child("apiVersion"), c.APIVersion, wantAPIVersion))
	}
	switch {
	case c.Kind == "":
		errs = append(errs, ps.required(root.Child("kind"), wantKind))
	case c.Kind != Kind:
		errs = append(errs, ps.invalid(root.Child("kind"), c.Kind, wantKind))
	}
	name := root.Child("metadata").Child("name")
	switch {
	case c.Metadata.Name == "":
		errs = append(errs, ps.required(name, wantName))
	case !isLabel(c.Metadata.Name):
		errs = append(errs, ps.invalid(name, c.Metadata.Name, wantName))
	}
	sp := root.Child("spec")
	if !ps.present(sp) {
		errs = append(errs, ps.required(sp, "want zone, records, from, to and steps"))
		return errs
	}
	if c.Spec.CloudMap != nil {
		errs = append(errs, v.cloudMap(sp)...)
	} else if c.Spec.ALB != nil {
		errs = append(errs, v.alb(sp)...)
	} else {
		zones, zerrs := v.zones(sp)
		errs = append(errs, zerrs...)
		if c.Spec.Select != nil {
			errs = append(errs, v.selectRecords(sp)...)
		} else {
			errs = append(errs, v.records(sp, zones)...)
		}
	}
	errs = append(errs, v.setIDs(sp)...)
	errs = append(errs, v.steps(sp)...)
	errs = append(errs, v.gates(sp)...)
	errs = append(errs, v.rollback(sp.Child("rollback"))...)
	switch c.Spec.OnDrift {
	case "", DriftPause, DriftRollback:
	default:
		errs = append(errs, ps.invalid(sp.Child("onDrift"), c.Spec.OnDrift, wantOnDrift))
	}
	errs = append(errs, v.timeouts(sp)...)
	if r := c.Spec.Retire; r != nil {
		errs = append(errs, v.retire(sp.Child("retire"), r)...)
	}
	errs = append(errs, v.cloudWatchPacing(sp)...)
	if t := c.Spec.TTL; t != nil {
		lp := sp.Child("ttl").Child("lower")
		switch {
		case c.Spec.CloudMap != nil:
			errs = append(errs, ps.forbidden(sp.Child("ttl"), "", "not with spec.cloudMap: a Cloud Map cutover changes instances' health status, not records: there is no TTL to lower"))
		case c.Spec.ALB != nil:
			errs = append(errs, ps.forbidden(sp.Child("ttl"), "", "not with spec.alb: an ALB weight change takes effect for new requests at once, there is no TTL to lower"))
		case !ps.present(lp):
			errs = append(errs, ps.required(lp, wantTTL))
		case t.Lower < 1 || t.Lower > maxTTL:
			errs = append(errs, ps.invalid(lp, strconv.FormatInt(t.Lower, 10), wantTTL))
		}
	}
	return errs
}

// isLabel reports whether s is a DNS label (RFC 1123), safe as a file name everywhere.
func isLabel(s string) bool {
	if len(s) < 1 || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// zone checks zone and zoneID and returns the normalised zone name, "" when there is
// none to check the records against.
func (v validator) zone(sp *field.Path) (zone string, errs field.ErrorList) {
	s := &v.c.Spec
	if s.Zone == "" {
		if s.ZoneID == "" {
			errs = append(errs, v.ps.required(sp.Child("zone"), "want the hosted zone's name (e.g. example.com), or spec.zoneID"))
		}
		return "", errs
	}
	zone = endpoint.NormalizeName(s.Zone)
	if why := endpoint.CheckName(zone); why != "" {
		errs = append(errs, v.ps.invalid(sp.Child("zone"), s.Zone, "want a DNS name ("+why+")"))
		return "", errs
	}
	return zone, nil
}

// maxZones bounds spec.zones: a step writes every zone, and Route 53 accepts 5 requests a
// second of an account.
const maxZones = 100

// zones checks zone and zoneID, or zones in their place, and returns the normalised zone
// names the records must be in; nil when there are none to check the records against
// (zoneID alone, or a zone that is not a DNS name).
func (v validator) zones(sp *field.Path) (zones []string, errs field.ErrorList) {
	s := &v.c.Spec
	if len(s.Zones) == 0 && v.ps.isBad(pathString(sp.Child("zones"))) {
		return nil, nil // the decoder said what is wrong with it; no zone is missing
	}
	if len(s.Zones) == 0 {
		zone, errs := v.zone(sp)
		if zone == "" {
			return nil, errs
		}
		return []string{zone}, errs
	}
	zp := sp.Child("zones")
	const either = "not with spec.zones: name the hosted zones in spec.zones, or one zone in spec.zone or spec.zoneID"
	if s.Zone != "" {
		errs = append(errs, v.ps.forbidden(sp.Child("zone"), s.Zone, either))
	}
	if s.ZoneID != "" {
		errs = append(errs, v.ps.forbidden(sp.Child("zoneID"), s.ZoneID, either))
	}
	if len(s.Zones) > maxZones {
		errs = append(errs, v.ps.invalid(zp, strconv.Itoa(len(s.Zones))+" zones", fmt.Sprintf("want at most %d zones", maxZones)))
	}
	seen := map[string]int{}
	for i, z := range s.Zones {
		name := endpoint.NormalizeName(z)
		switch why := endpoint.CheckName(name); {
		case z == "":
			errs = append(errs, v.ps.required(zp.Index(i), wantZones))
			continue
		case why != "":
			errs = append(errs, v.ps.invalid(zp.Index(i), z, "want a hosted zone's name ("+why+")"))
			continue
		}
		if j, dup := seen[name]; dup {
			errs = append(errs, v.ps.duplicate(zp.Index(i), z, fmt.Sprintf("duplicate of spec.zones[%d]: want each zone once", j)))
			continue
		}
		seen[name] = i
		zones = append(zones, name)
	}
	if len(errs) > 0 {
		// A zone left out would refuse records that are in it: check them once it is right.
		return nil, errs
	}
	return zones, nil
}

// ZoneOf returns the zone among zones (normalised names) that name is in: the longest
// one it is at or below, as Route 53 answers from the most specific zone; "" when none.
func ZoneOf(zones []string, name string) string {
	best := ""
	for _, z := range zones {
		if endpoint.InDomain(name, z) && len(z) > len(best) {
			best = z
		}
	}
	return best
}

// selectRecords checks spec.select: it selects the records, so none are listed.
func (v validator) selectRecords(sp *field.Path) (errs field.ErrorList) {
	s := &v.c.Spec
	if len(s.Records) > 0 {
		errs = append(errs, v.ps.forbidden(sp.Child("records"), "", "not with spec.select: list the records or select them, not both"))
	}
	if !s.Select.AllWeighted {
		errs = append(errs, v.ps.invalid(sp.Child("select").Child("allWeighted"), "false", wantAllWeighted))
	}
	return errs
}

func (v validator) records(sp *field.Path, zones []string) (errs field.ErrorList) {
	rp := sp.Child("records")
	if len(v.c.Spec.Records) == 0 {
		errs = append(errs, v.ps.required(rp, "want at least one record, e.g. [{name: www.example.com}]"))
		return errs
	}
	type kept struct {
		index     int
		name, typ string
	}
	var seen []kept
	for i, r := range v.c.Spec.Records {
		p := rp.Index(i)
		name := endpoint.NormalizeName(r.Name)
		nameOK := false
		switch why := endpoint.CheckName(name); {
		case r.Name == "":
			errs = append(errs, v.ps.required(p.Child("name"), "want the record's DNS name"))
		case why != "":
			errs = append(errs, v.ps.invalid(p.Child("name"), r.Name, "want a DNS name ("+why+")"))
		case len(zones) > 0 && ZoneOf(zones, name) == "":
			want := fmt.Sprintf("want a name at or below the zone %q", zones[0])
			if len(v.c.Spec.Zones) > 0 {
				want = fmt.Sprintf("want a name at or below one of spec.zones (%s)", strings.Join(zones, ", "))
			}
			errs = append(errs, v.ps.invalid(p.Child("name"), r.Name, want))
		default:
			nameOK = true
		}
		typ := strings.ToUpper(strings.TrimSpace(r.Type))
		switch typ {
		case "":
			typ = defaultRecordType
		case endpoint.TypeA, endpoint.TypeAAAA, endpoint.TypeCNAME:
		default:
			errs = append(errs, v.ps.invalid(p.Child("type"), r.Type, wantRecordType))
			continue
		}
		if !nameOK {
			continue
		}
		for _, k := range seen {
			if k.name != name {
				continue
			}
			if k.typ == typ {
				errs = append(errs, v.ps.duplicate(p.Child("name"), r.Name, fmt.Sprintf("duplicate of spec.records[%d] (%s %s): want each record once", k.index, name, typ)))
				break
			}
			if k.typ == endpoint.TypeCNAME || typ == endpoint.TypeCNAME {
				errs = append(errs, v.ps.invalid(p.Child("type"), typ, fmt.Sprintf("%s also has type %s at spec.records[%d]: a CNAME cannot share its name with other records", name, k.typ, k.index)))
				break
			}
		}
		seen = append(seen, kept{i, name, typ})
	}
	return errs
}

func (v validator) setIDs(sp *field.Path) (errs field.ErrorList) {
	s := &v.c.Spec
	for _, m := range []struct {
		key, value, role string
	}{{"from", s.From, "losing"}, {"to", s.To, "gaining"}} {
		p := sp.Child(m.key)
		if m.value == "" {
			if s.ALB == nil {
				errs = append(errs, v.ps.required(p, "want the set identifier of the cluster "+m.role+" traffic"))
			}
			continue
		}
		if n := utf8.RuneCountInString(m.value); n > maxSetIDLength {
			errs = append(errs, v.ps.invalid(p, m.value, fmt.Sprintf("want at most %d characters (a Route 53 set identifier), not %d", maxSetIDLength, n)))
		}
	}
	if s.From != "" && s.From == s.To {
		errs = append(errs, v.ps.invalid(sp.Child("to"), s.To, "same as spec.from: want the set identifier of another cluster"))
	}
	if a := s.ALB; a != nil && (s.From == "" || s.To == "") && a.From != "" && a.To != "" {
		// A name left out is the target group's: the two must still differ.
		if from, to := clusterNames(s); from == to && TargetGroupName(a.From) != TargetGroupName(a.To) {
			key := "to"
			if s.To != "" {
				key = "from"
			}
			errs = append(errs, v.ps.invalid(sp.Child(key), "", fmt.Sprintf("required here: the other cluster's name is %q, the same as this target group's name; name both clusters", from)))
		}
	}
	return errs
}

// clusterNames are the names a plan gives its clusters: spec.from and spec.to, which an
// ALB plan may leave out for its target groups' names.
func clusterNames(s *Spec) (from, to string) {
	from, to = s.From, s.To
	if a := s.ALB; a != nil {
		if from == "" {
			from = TargetGroupName(a.From)
		}
		if to == "" {
			to = TargetGroupName(a.To)
		}
	}
	return from, to
}

// alb checks the ALB lever's rules and target groups, and that nothing of the Route 53
// lever is set beside it.
func (v validator) alb(sp *field.Path) (errs field.ErrorList) {
	s := &v.c.Spec
	const notDNS = "not with spec.alb: an ALB cutover moves listener-rule weights and changes no DNS record; set one of them"
	if s.Zone != "" {
		errs = append(errs, v.ps.forbidden(sp.Child("zone"), s.Zone, notDNS))
	}
	if s.ZoneID != "" {
		errs = append(errs, v.ps.forbidden(sp.Child("zoneID"), s.ZoneID, notDNS))
	}
	if len(s.Zones) > 0 {
		errs = append(errs, v.ps.forbidden(sp.Child("zones"), "", notDNS))
	}
	if len(s.Records) > 0 {
		errs = append(errs, v.ps.forbidden(sp.Child("records"), "", notDNS))
	}
	if s.Select != nil {
		errs = append(errs, v.ps.forbidden(sp.Child("select"), "", "not with spec.alb: select the rules with spec.alb.select"))
	}
	ap := sp.Child("alb")
	a := s.ALB
	rp := ap.Child("listenerRules")
	if a.Select != nil {
		errs = append(errs, v.albSelect(ap)...)
	} else if len(a.ListenerRules) == 0 {
		errs = append(errs, v.ps.required(rp, "want at least one listener rule ARN (or listener ARN, for its default action)"))
	}
	errs = append(errs, v.arnList(rp, a.ListenerRules, checkRuleARN, "rule")...)
	if net := NetworkRules(a.ListenerRules); net > 0 && net < len(a.ListenerRules) {
		// A target group is TCP (an NLB's) or HTTP (an ALB's): no pair of groups is
		// forwarded to by both.
		errs = append(errs, v.ps.invalid(rp, "", "lists Network Load Balancer listeners (…/net/…) with Application Load Balancer rules (…/app/…): a cutover's target groups belong to one kind of load balancer"))
	}
	for _, f := range []struct{ key, ref, role string }{{"from", a.From, "losing"}, {"to", a.To, "gaining"}} {
		p := ap.Child(f.key)
		switch {
		case f.ref == "":
			errs = append(errs, v.ps.required(p, wantTargetGroup+", of the target group "+f.role+" traffic"))
		case !isTargetGroupRef(f.ref):
			errs = append(errs, v.ps.invalid(p, f.ref, wantTargetGroup))
		}
	}
	if a.From != "" && a.To != "" && TargetGroupName(a.From) == TargetGroupName(a.To) {
		errs = append(errs, v.ps.invalid(ap.Child("to"), a.To, "the same target group as spec.alb.from: want the other cluster's group"))
	}
	if cw := a.CloudWatch; cw != nil && cw.Delay != nil && cw.Delay.Duration > MaxCloudWatchDelay {
		errs = append(errs, v.ps.invalid(ap.Child("cloudWatch").Child("delay"), cw.Delay.String(), wantDelay))
	}
	return errs
}

// cloudWatchDelay is the plan's spec.alb.cloudWatch.delay, defaulted.
func (v validator) cloudWatchDelay() time.Duration {
	if a := v.c.Spec.ALB; a != nil && a.CloudWatch != nil && a.CloudWatch.Delay != nil {
		return a.CloudWatch.Delay.Duration
	}
	return DefaultCloudWatchDelay
}

// FirstCloudWatchVerdict is the longest a CloudWatch reader at period seconds (0: the
// default) may wait, after a write, before it can read a whole period of traffic at the
// new weights: the period the write fell in (it mixes the weights before and after), the
// next whole one, and the delay until CloudWatch holds it (spec.alb.cloudWatch.delay).
func FirstCloudWatchVerdict(period int, delay time.Duration) time.Duration {
	period = cmp.Or(period, DefaultCloudWatchPeriod)
	return 2*time.Duration(period)*time.Second + delay
}

// cloudWatchPacing checks an ALB plan's pauses and timeouts against how late its
// CloudWatch readers can judge (spec.alb.cloudWatch.delay): a step whose albTraffic gate
// cannot read a whole published period before its step time runs out can only roll
// back, and is refused; a pause the delay makes shorter than that is warned of, as the
// step holds on until the gate judges; a retire timeout that leaves no room for the
// drain to show is warned of too, and a delay that nothing reads.
func (v validator) cloudWatchPacing(sp *field.Path) (errs field.ErrorList) {
	s := &v.c.Spec
	if s.ALB == nil {
		return errs
	}
	delay := v.cloudWatchDelay()
	readers := false
	stepTimeout := s.Timeouts.Step.Duration
	if stepTimeout == 0 {
		stepTimeout = DefaultStepTimeout
	}
	refused := false
	for i, st := range s.Steps {
		pause, pauseField := s.Pause.Duration, "spec.pause"
		if st.Pause != nil {
			pause, pauseField = st.Pause.Duration, fmt.Sprintf("spec.steps[%d].pause", i)
		}
		for _, g := range slices.Concat(s.Gates, st.Gates) {
			if g.ALBTraffic == nil {
				continue
			}
			period := cmp.Or(g.ALBTraffic.Period, DefaultCloudWatchPeriod)
			if !ValidPeriod(period) {
				continue // refused by the gate's own check
			}
			readers = true
			need := FirstCloudWatchVerdict(period, delay)
			switch {
			case pause+stepTimeout < need && !refused:
				refused = true // once: every step would say the same
				errs = append(errs, v.ps.invalid(sp.Child("timeouts").Child("step"), stepTimeout.String(), fmt.Sprintf(
					"with %s %s, spec.timeouts.step %s and spec.alb.cloudWatch.delay %s, an albTraffic gate of period %ds first judges a step up to %s after its write "+
						"(the period the write fell in, a whole one, and the delay): the step would run out of time and roll back; raise spec.timeouts.step or the pause, or lower the delay or the period",
					pauseField, pause, stepTimeout, delay, period, need)))
			case pause > 0 && delay > 0 && pause < need && pause+stepTimeout >= need:
				// (Without a pause the gate decides how long the step holds; without a
				// delay the reader's wait is the periods' own, as it always was.)
				v.ps.warn(sp.Child("steps").Index(i), "", fmt.Sprintf(
					"holds for %s (%s), but its albTraffic gate reads whole published periods only and first judges up to %s after the write (spec.alb.cloudWatch.delay %s): the step holds on until it does",
					pause, pauseField, need, delay))
			}
		}
	}
	if r := s.Retire; r != nil && r.CloudWatch != nil {
		readers = true
		timeout := r.Timeout.Duration
		if timeout == 0 {
			timeout = DefaultRetireTimeout
		}
		if need := FirstCloudWatchVerdict(r.CloudWatch.Period, delay) + r.Window.Duration; r.Window.Duration > 0 && timeout >= r.Window.Duration && timeout < need {
			v.ps.warn(sp.Child("retire").Child("timeout"), timeout.String(), fmt.Sprintf(
				"the first reading that can show the drain comes up to %s after the last step's write (spec.alb.cloudWatch.delay %s), and the rate must then stay low for the window %s: "+
					"allow at least %s, or the cluster may be declared not retirable only because CloudWatch had not published yet", FirstCloudWatchVerdict(r.CloudWatch.Period, delay), delay, r.Window.Duration, need))
		}
	}
	if !readers && s.ALB.CloudWatch != nil && s.ALB.CloudWatch.Delay != nil {
		v.ps.warn(sp.Child("alb").Child("cloudWatch").Child("delay"), s.ALB.CloudWatch.Delay.String(), "no albTraffic gate nor retire.cloudWatch reads CloudWatch: the delay has no effect")
	}
	return errs
}

// checkRuleARN says why arn is not the ARN of an ALB listener or listener rule, "" when
// it is.
func checkRuleARN(arn string) string {
	res, ok := arnResource(arn)
	if !ok {
		return wantRuleARN
	}
	parts := strings.Split(res, "/")
	switch {
	case len(parts) < 2:
		return wantRuleARN
	case parts[0] != "listener" && parts[0] != "listener-rule":
		return wantRuleARN + ", not a " + parts[0]
	case parts[1] == "net" && parts[0] == "listener-rule":
		// An NLB's weighted target groups are its listeners' default action (ModifyListener).
		return wantRuleARN + ": a Network Load Balancer's weighted target groups are its listener's default action: list the listener"
	case parts[1] != "app" && parts[1] != "net":
		return wantRuleARN + ": a " + parts[1] + "/ load balancer's forward action has no target group weights to move"
	case parts[0] == "listener" && len(parts) != 5, parts[0] == "listener-rule" && len(parts) != 6:
		return wantRuleARN
	}
	for _, p := range parts {
		if p == "" {
			return wantRuleARN
		}
	}
	return ""
}

// albSelect checks spec.alb.select: the load balancers searched, and no rule listed.
func (v validator) albSelect(ap *field.Path) (errs field.ErrorList) {
	a := v.c.Spec.ALB
	if len(a.ListenerRules) > 0 {
		errs = append(errs, v.ps.forbidden(ap.Child("listenerRules"), "", "not with spec.alb.select: list the rules or select them, not both"))
	}
	lp := ap.Child("select").Child("loadBalancers")
	if len(a.Select.LoadBalancers) == 0 {
		errs = append(errs, v.ps.required(lp, wantLoadBalancerARN+", whose rules forwarding to from and to are selected"))
	}
	return append(errs, v.arnList(lp, a.Select.LoadBalancers, checkLoadBalancerARN, "load balancer")...)
}

// checkLoadBalancerARN says what is wrong with arn as an Application Load Balancer's ARN,
// or "".
func checkLoadBalancerARN(arn string) string {
	if !IsLoadBalancerARN(arn) || slices.Contains(strings.Split(arn, "/"), "") {
		return wantLoadBalancerARN
	}
	return ""
}

// arnList checks the ARNs listed at lp: check says what is wrong with one ("" when
// nothing), and one listed again is refused naming the index it repeats, item saying what
// each is ("rule"): a rule listed twice would be moved twice.
func (v validator) arnList(lp *field.Path, arns []string, check func(string) string, item string) (errs field.ErrorList) {
	seen := map[string]int{}
	for i, arn := range arns {
		p := lp.Index(i)
		if why := check(arn); why != "" {
			errs = append(errs, v.ps.invalid(p, arn, why))
			continue
		}
		if j, dup := seen[arn]; dup {
			errs = append(errs, v.ps.duplicate(p, arn, fmt.Sprintf("duplicate of %s[%d]: want each %s once", pathString(lp), j, item)))
			continue
		}
		seen[arn] = i
	}
	return errs
}

// isTargetGroupRef reports whether ref is a target group's ARN or a valid name.
func isTargetGroupRef(ref string) bool {
	if res, ok := arnResource(ref); ok {
		parts := strings.Split(res, "/")
		return len(parts) == 3 && parts[0] == "targetgroup" && isTargetGroupName(parts[1]) && parts[2] != ""
	}
	return isTargetGroupName(ref)
}

// isTargetGroupName reports whether s is a name ELBv2 accepts for a target group.
func isTargetGroupName(s string) bool {
	if len(s) < 1 || len(s) > maxTargetGroupLen || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// MaxSteps bounds spec.steps, in a plan file and (its MaxItems) in a Cutover object. The
// journal numbers a gradual rollback's stops -2, -3, … and the TTL's writes -100 and
// -101: a plan with 98 steps or more could journal a stop under a TTL write's number.
// The bound also keeps a Cutover's journal (a handful of entries a step, in its status)
// well inside its 2,048 entries. No real cutover comes near 64 steps.
const MaxSteps = 64

// steps checks every step and warns about steps that probably do not do what was meant.
func (v validator) steps(sp *field.Path) (errs field.ErrorList) {
	s := &v.c.Spec
	stp := sp.Child("steps")
	if len(s.Steps) == 0 {
		errs = append(errs, v.ps.required(stp, "want at least one step, e.g. [10, 50, 100]"))
		return errs
	}
	if len(s.Steps) > MaxSteps {
		errs = append(errs, v.ps.invalid(stp, fmt.Sprintf("%d steps", len(s.Steps)), fmt.Sprintf("want at most %d steps", MaxSteps)))
		return errs
	}
	var prev Weights
	prevIndex := -1
	for i, st := range s.Steps {
		p := stp.Index(i)
		w, werrs := v.stepWeights(p, st)
		errs = append(errs, werrs...)
		if len(werrs) > 0 {
			prevIndex = -1
			continue
		}
		switch {
		case w.From == 0 && w.To == 0 && s.CloudMap != nil:
			errs = append(errs, v.ps.invalid(p.Child("weights"), "", "both weights are 0: a Cloud Map step keeps at least one instance healthy, and needs a share for from or to; write percent: 0 or percent: 100"))
		case w.From == 0 && w.To == 0 && s.ALB != nil:
			v.ps.warn(p.Child("weights"), "", "both weights are 0: the ALB then forwards to the rules' other target groups only; plan and run refuse it for a rule that has none")
		case w.From == 0 && w.To == 0:
			v.ps.warn(p.Child("weights"), "", `both weights are 0: Route 53 then answers with every member evenly; it does not mean "off"`)
		}
		if prevIndex >= 0 && shareLess(w, prev) {
			v.ps.warn(p, "", fmt.Sprintf("the share of traffic to %q falls from %s (spec.steps[%d]) to %s: this step moves traffic back", s.To, share(prev), prevIndex, share(w)))
		}
		prev, prevIndex = w, i
	}
	return errs
}

// stepWeights checks one step and returns its weights, which are good when there are
// no errors.
func (v validator) stepWeights(p *field.Path, st Step) (w Weights, errs field.ErrorList) {
	switch {
	case st.Percent != nil && st.Weights != nil:
		errs = append(errs, v.ps.invalid(p, "", "want exactly one of percent or weights, not both"))
	case st.Percent == nil && st.Weights == nil:
		errs = append(errs, v.ps.invalid(p, "", "want percent or weights"))
	case st.Percent != nil:
		pct := *st.Percent
		if pct >= 0 && pct <= 100 {
			return percentWeights(pct), nil
		}
		if v.ps.value(p, "") != "" { // written as a bare number: `- 150`
			errs = append(errs, v.ps.invalid(p, strconv.FormatInt(pct, 10), wantBarePercent))
		} else {
			errs = append(errs, v.ps.invalid(p.Child("percent"), strconv.FormatInt(pct, 10), wantPercent))
		}
	default:
		wp := p.Child("weights")
		limit, want := int64(maxWeight), wantWeight
		if v.c.Spec.ALB != nil {
			limit, want = maxALBWeight, wantALBWeight
		}
		for _, f := range []struct {
			key string
			w   int64
		}{{"from", st.Weights.From}, {"to", st.Weights.To}} {
			switch {
			case !v.ps.present(wp.Child(f.key)):
				errs = append(errs, v.ps.required(wp.Child(f.key), want))
			case f.w < 0 || f.w > limit:
				errs = append(errs, v.ps.invalid(wp.Child(f.key), strconv.FormatInt(f.w, 10), want))
			}
		}
		return *st.Weights, errs
	}
	return Weights{}, errs
}

func percentWeights(p int64) Weights { return Weights{From: 100 - p, To: p} }

// shareLess reports whether a sends a smaller share of traffic to `to` than b. Both
// weights 0 is an even split, as Route 53 answers it.
func shareLess(a, b Weights) bool {
	an, ad := shareFraction(a)
	bn, bd := shareFraction(b)
	return an*bd < bn*ad
}

func shareFraction(w Weights) (num, den int64) {
	if w.From+w.To == 0 {
		return 1, 2
	}
	return w.To, w.From + w.To
}

func share(w Weights) string {
	n, d := shareFraction(w)
	return strconv.FormatFloat(float64(n)*100/float64(d), 'g', 4, 64) + "%"
}

// gates checks every gate, spec-level and per step, and that the names a step ends up
// with are unique (the report and the journal key results by name).
func (v validator) gates(sp *field.Path) (errs field.ErrorList) {
	s := &v.c.Spec
	specNames, stepNames := gateNames(v.c)
	gp := sp.Child("gates")
	specSeen := map[string]*field.Path{}
	for i, g := range s.Gates {
		p := gp.Index(i)
		errs = append(errs, v.gate(p, g)...)
		errs = append(errs, v.uniqueName(p, g, specNames[i], specSeen)...)
	}
	for i, st := range s.Steps {
		seen := maps.Clone(specSeen)
		for j, g := range st.Gates {
			p := sp.Child("steps").Index(i).Child("gates").Index(j)
			errs = append(errs, v.gate(p, g)...)
			errs = append(errs, v.uniqueName(p, g, stepNames[i][j], seen)...)
		}
	}
	return errs
}

func (v validator) uniqueName(p *field.Path, g Gate, name string, seen map[string]*field.Path) (errs field.ErrorList) {
	other, dup := seen[name]
	if !dup {
		seen[name] = p
		return errs
	}
	if g.Name != "" {
		errs = append(errs, v.ps.duplicate(p.Child("name"), g.Name, fmt.Sprintf("duplicate gate name in this step (%s has it too): want unique names", other)))
		return errs
	}
	errs = append(errs, v.ps.invalid(p, "", fmt.Sprintf("its default name %q is taken by %s: want unique names; name one of them", name, other)))
	return errs
}

// gateNames gives every gate its name: its own, or "<kind>-<n>" where n counts the gates
// of that kind (named or not) over spec.gates and then each step's gates, so that a
// default name is stable however the gates are named around it.
func gateNames(c *Cutover) (spec []string, steps [][]string) {
	count := map[string]int{}
	name := func(g Gate) string {
		k := gateKind(g)
		count[k]++
		if g.Name != "" {
			return g.Name
		}
		return k + "-" + strconv.Itoa(count[k])
	}
	for _, g := range c.Spec.Gates {
		spec = append(spec, name(g))
	}
	for _, st := range c.Spec.Steps {
		var names []string
		for _, g := range st.Gates {
			names = append(names, name(g))
		}
		steps = append(steps, names)
	}
	return spec, steps
}

func gateKind(g Gate) string {
	switch {
	case g.HTTP != nil:
		return "http"
	case g.Prometheus != nil:
		return "prometheus"
	case g.DNS != nil:
		return "dns"
	case g.TargetHealth != nil:
		return "targetHealth"
	case g.ALBTraffic != nil:
		return "albTraffic"
	case g.CloudMapDiscovery != nil:
		return "cloudMapDiscovery"
	}
	return "gate"
}

func (v validator) gate(p *field.Path, g Gate) (errs field.ErrorList) {
	var kinds []string
	for _, k := range []struct {
		name string
		set  bool
	}{{"http", g.HTTP != nil}, {"prometheus", g.Prometheus != nil}, {"dns", g.DNS != nil},
		{"targetHealth", g.TargetHealth != nil}, {"albTraffic", g.ALBTraffic != nil}, {"cloudMapDiscovery", g.CloudMapDiscovery != nil}} {
		if k.set {
			kinds = append(kinds, k.name)
		}
	}
	switch len(kinds) {
	case 0:
		errs = append(errs, v.ps.invalid(p, "", wantGateKind))
		return errs
	case 1:
	default:
		errs = append(errs, v.ps.invalid(p, "", wantGateKind+", not "+strings.Join(kinds, " and ")))
		return errs
	}
	switch {
	case g.HTTP != nil:
		errs = append(errs, v.httpGate(p.Child("http"), g.HTTP)...)
	case g.Prometheus != nil:
		errs = append(errs, v.prometheusGate(p.Child("prometheus"), g.Prometheus)...)
	case g.CloudMapDiscovery != nil:
		errs = append(errs, v.cloudMapDiscoveryGate(p.Child("cloudMapDiscovery"), g.CloudMapDiscovery)...)
	case v.c.Spec.CloudMap != nil && (g.DNS != nil || g.TargetHealth != nil || g.ALBTraffic != nil):
		errs = append(errs, v.ps.forbidden(p.Child(gateKind(g)), "", "not with spec.cloudMap: a Cloud Map cutover changes instances' health status, no record nor target group; use a cloudMapDiscovery, http or prometheus gate"))
	case g.DNS != nil && v.c.Spec.ALB != nil:
		errs = append(errs, v.ps.forbidden(p.Child("dns"), "", "not with spec.alb: a dns gate compares the records' DNS answers with their weights, and an ALB cutover changes no record; use an http or prometheus gate"))
	case g.DNS != nil:
		errs = append(errs, v.dnsGate(p.Child("dns"), g.DNS)...)
	case v.c.Spec.ALB == nil && g.TargetHealth != nil:
		errs = append(errs, v.ps.forbidden(p.Child("targetHealth"), "", "only with spec.alb: it checks the health of the target groups an ALB cutover moves traffic to"))
	case v.c.Spec.ALB == nil && g.ALBTraffic != nil:
		errs = append(errs, v.ps.forbidden(p.Child("albTraffic"), "", "only with spec.alb: it reads the CloudWatch metrics of the target groups an ALB cutover moves traffic between; use a dns gate for records"))
	case g.TargetHealth != nil:
		if mp := p.Child("targetHealth").Child("minHealthy"); v.ps.present(mp) && (g.TargetHealth.MinHealthy < 1 || g.TargetHealth.MinHealthy > maxMinHealthy) {
			errs = append(errs, v.ps.invalid(mp, strconv.Itoa(g.TargetHealth.MinHealthy), wantMinHealthy))
		}
	case g.ALBTraffic != nil:
		errs = append(errs, v.albTrafficGate(p.Child("albTraffic"), g.ALBTraffic)...)
	}
	return errs
}

// NLBCloudWatchWhy says why CloudWatch cannot judge a Network Load Balancer cutover: the
// gates' and the retire check's refusals on an NLB end with it.
const NLBCloudWatchWhy = "AWS/NetworkELB publishes flow counts per load balancer only, not per target group: an NLB's split between target groups cannot be read from CloudWatch; " +
	"gate on targetHealth and the clusters' own metrics (a prometheus gate; retire.metrics or retire.prometheus)"

func (v validator) albTrafficGate(p *field.Path, g *ALBTrafficGate) (errs field.ErrorList) {
	if a := v.c.Spec.ALB; a != nil && NetworkRules(a.ListenerRules) > 0 {
		// A query for an NLB's flows by target group answers no datapoints on AWS, which
		// would read as 0 connections: a gate judged on nothing.
		return append(errs, v.ps.forbidden(p, "", "not on a Network Load Balancer: "+NLBCloudWatchWhy))
	}
	if t := g.Tolerance; t != nil && !(*t >= 0 && *t <= 1) {
		errs = append(errs, v.ps.invalid(p.Child("tolerance"), formatFloat(*t), wantRatio))
	}
	if mp := p.Child("minRequests"); v.ps.present(mp) && (g.MinRequests < 1 || g.MinRequests > maxMinRequests) {
		errs = append(errs, v.ps.invalid(mp, strconv.Itoa(g.MinRequests), wantMinRequests))
	}
	if r := g.MaxErrorRate; r != nil && !(*r >= 0 && *r <= 1) {
		errs = append(errs, v.ps.invalid(p.Child("maxErrorRate"), formatFloat(*r), wantRatio))
	}
	if d := g.MaxResponseTime; d != nil && d.Duration <= 0 {
		errs = append(errs, v.ps.invalid(p.Child("maxResponseTime"), d.String(), `want a duration > 0 such as "500ms"`))
	}
	if pp := p.Child("period"); v.ps.present(pp) && !ValidPeriod(g.Period) {
		errs = append(errs, v.ps.invalid(pp, strconv.Itoa(g.Period), wantPeriod))
	}
	if wp := p.Child("window"); v.ps.present(wp) && g.Window.Duration <= 0 {
		errs = append(errs, v.ps.invalid(wp, g.Window.String(), `want a duration > 0 such as "5m"`))
	}
	return errs
}

// ValidPeriod reports whether seconds is a period CloudWatch takes: 1, 5, 10, 20 or 30
// (high resolution), or a multiple of 60.
func ValidPeriod(seconds int) bool {
	switch seconds {
	case 1, 5, 10, 20, 30:
		return true
	}
	return seconds >= 60 && seconds%60 == 0
}

func (v validator) httpGate(p *field.Path, h *HTTPGate) (errs field.ErrorList) {
	from, to := clusterNames(&v.c.Spec)
	if h.URL == "" && len(h.Clusters) == 0 {
		errs = append(errs, v.ps.invalid(p, "", "want url, clusters or both: nothing to probe"))
	}
	if h.URL != "" {
		errs = append(errs, v.url(p.Child("url"), h.URL)...)
	}
	for _, id := range slices.Sorted(maps.Keys(h.Clusters)) {
		kp := mapKey(p.Child("clusters"), id)
		if from != "" && to != "" && id != from && id != to {
			errs = append(errs, v.ps.invalidExact(kp, "", fmt.Sprintf("want a key that is spec.from (%q) or spec.to (%q)", from, to)))
		}
		errs = append(errs, v.url(kp, h.Clusters[id])...)
	}
	if h.Resolver != "" && !isHostPort(h.Resolver) {
		errs = append(errs, v.ps.invalid(p.Child("resolver"), h.Resolver, wantHostPort))
	}
	if rp := p.Child("requests"); v.ps.present(rp) && (h.Requests < 1 || h.Requests > maxRequests) {
		errs = append(errs, v.ps.invalid(rp, strconv.Itoa(h.Requests), wantRequests))
	}
	if tp := p.Child("timeout"); v.ps.present(tp) && h.Timeout.Duration <= 0 {
		errs = append(errs, v.ps.invalid(tp, h.Timeout.String(), `want a duration > 0 such as "2s"`))
	}
	for i, code := range h.ExpectStatus {
		if code < 100 || code > 599 {
			errs = append(errs, v.ps.invalid(p.Child("expectStatus").Index(i), strconv.Itoa(code), wantStatus))
		}
	}
	if r := h.MinSuccessRatio; r != nil && !(*r >= 0 && *r <= 1) {
		errs = append(errs, v.ps.invalid(p.Child("minSuccessRatio"), formatFloat(*r), wantRatio))
	}
	if l := h.Latency; l != nil {
		lp := p.Child("latency")
		if pp := lp.Child("percentile"); v.ps.present(pp) && !(l.Percentile > 0 && l.Percentile <= 100) {
			errs = append(errs, v.ps.invalid(pp, formatFloat(l.Percentile), wantPercentile))
		}
		switch mp := lp.Child("max"); {
		case !v.ps.present(mp):
			errs = append(errs, v.ps.invalid(mp, "", `required: want a duration > 0 such as "500ms"`))
		case l.Max.Duration <= 0:
			errs = append(errs, v.ps.invalid(mp, l.Max.String(), `want a duration > 0 such as "500ms"`))
		}
	}
	if h.NoWorseThanFrom && from != "" && to != "" && (h.Clusters[from] == "" || h.Clusters[to] == "") {
		errs = append(errs, v.ps.invalid(p.Child("noWorseThanFrom"), "true", fmt.Sprintf("want clusters for both %q and %q to compare", from, to)))
	}
	if s := h.LatencySlack; s != nil && !(*s >= 0) {
		errs = append(errs, v.ps.invalid(p.Child("latencySlack"), formatFloat(*s), wantSlack))
	}
	return errs
}

func (v validator) prometheusGate(p *field.Path, g *PrometheusGate) (errs field.ErrorList) {
	if g.URL == "" {
		errs = append(errs, v.ps.required(p.Child("url"), wantURL))
	} else {
		errs = append(errs, v.url(p.Child("url"), g.URL)...)
	}
	switch {
	case g.Query == "":
		errs = append(errs, v.ps.required(p.Child("query"), wantQuery))
	case strings.TrimSpace(g.Query) == "":
		errs = append(errs, v.ps.invalid(p.Child("query"), g.Query, wantQuery))
	}
	switch {
	case g.Min == nil && g.Max == nil:
		errs = append(errs, v.ps.invalid(p, "", "want min, max or both: nothing to compare the value with"))
	case g.Min != nil && g.Max != nil && *g.Min > *g.Max:
		errs = append(errs, v.ps.invalid(p.Child("min"), formatFloat(*g.Min), fmt.Sprintf("want at most max (%s): no value could pass", formatFloat(*g.Max))))
	}
	switch g.NoData {
	case "", noDataFail:
	case noDataPass:
		// Never blind: a step must not pass on no measurement (the gate refuses it too).
		errs = append(errs, v.ps.invalid(p.Child("noData"), g.NoData, fmt.Sprintf("a step would pass on no measurement: make the query answer when there is no data, e.g. %q, and leave noData out", "("+g.Query+") or vector(0)")))
	default:
		errs = append(errs, v.ps.invalid(p.Child("noData"), g.NoData, wantNoData))
	}
	return errs
}

func (v validator) dnsGate(p *field.Path, g *DNSGate) (errs field.ErrorList) {
	for i, s := range g.Servers {
		if !isHostPort(s) {
			errs = append(errs, v.ps.invalid(p.Child("servers").Index(i), s, wantHostPort))
		}
	}
	if sp := p.Child("samples"); v.ps.present(sp) && (g.Samples < 1 || g.Samples > maxSamples) {
		errs = append(errs, v.ps.invalid(sp, strconv.Itoa(g.Samples), wantSamples))
	}
	if sp := p.Child("sampleNames"); v.ps.present(sp) && (g.SampleNames < 1 || g.SampleNames > maxSamples) {
		errs = append(errs, v.ps.invalid(sp, strconv.Itoa(g.SampleNames), wantSamples))
	}
	if t := g.Tolerance; t != nil && !(*t >= 0 && *t <= 1) {
		errs = append(errs, v.ps.invalid(p.Child("tolerance"), formatFloat(*t), wantRatio))
	}
	return errs
}

func (v validator) rollback(p *field.Path) (errs field.ErrorList) {
	r := &v.c.Spec.Rollback
	switch r.Mode {
	case "", RollbackImmediate:
		if len(r.Steps) > 0 {
			errs = append(errs, v.ps.invalid(p.Child("steps"), "", `want none with mode "immediate" (the default); set mode: gradual to roll back in steps`))
		}
		if r.Pause.Duration > 0 {
			v.ps.warn(p.Child("pause"), r.Pause.String(), "ignored: an immediate rollback does not pause")
		}
	case RollbackGradual:
		if len(r.Steps) == 0 {
			errs = append(errs, v.ps.invalid(p.Child("steps"), "", `required by mode "gradual": want the percents to pass through on the way back, descending, e.g. [50, 10]`))
		}
		for i, pct := range r.Steps {
			sp := p.Child("steps").Index(i)
			switch {
			case pct < 0 || pct > 100:
				errs = append(errs, v.ps.invalid(sp, strconv.FormatInt(pct, 10), wantPercent))
			case i > 0 && pct >= r.Steps[i-1]:
				errs = append(errs, v.ps.invalid(sp, strconv.FormatInt(pct, 10), fmt.Sprintf("want less than the step before (%d): a gradual rollback descends", r.Steps[i-1])))
			}
		}
	default:
		errs = append(errs, v.ps.invalid(p.Child("mode"), r.Mode, wantMode))
	}
	return errs
}

// timeouts warns when the total bound is shorter than the pauses alone: such a cutover
// can only end in a rollback.
func (v validator) timeouts(sp *field.Path) (errs field.ErrorList) {
	s := &v.c.Spec
	if s.Timeouts.Total.Duration <= 0 {
		return errs
	}
	var sum time.Duration
	for _, st := range s.Steps {
		if st.Pause != nil {
			sum += st.Pause.Duration
		} else {
			sum += s.Pause.Duration
		}
	}
	if s.Timeouts.Total.Duration < sum {
		v.ps.warn(sp.Child("timeouts").Child("total"), s.Timeouts.Total.String(), fmt.Sprintf("shorter than the steps' pauses together (%s): the cutover cannot finish in time and will roll back", sum))
	}
	return errs
}

func (v validator) retire(p *field.Path, r *Retire) (errs field.ErrorList) {
	var sources []string
	for _, s := range []struct {
		name string
		set  bool
	}{{"metrics", r.Metrics != ""}, {"prometheus", r.Prometheus != nil}, {"cloudWatch", r.CloudWatch != nil}} {
		if s.set {
			sources = append(sources, s.name)
		}
	}
	switch {
	case len(sources) == 0 && v.c.Spec.ALB != nil && NetworkRules(v.c.Spec.ALB.ListenerRules) > 0:
		errs = append(errs, v.ps.invalid(p, "", "want metrics (with counter) or prometheus: where to read the from cluster's request rate (an NLB's is not in CloudWatch)"))
	case len(sources) == 0 && v.c.Spec.ALB != nil:
		errs = append(errs, v.ps.invalid(p, "", "want cloudWatch (the from target group's RequestCount), metrics (with counter) or prometheus: where to read the from cluster's request rate"))
	case len(sources) == 0:
		errs = append(errs, v.ps.invalid(p, "", "want metrics (with counter) or prometheus: where to read the from cluster's request rate"))
	case len(sources) > 1:
		errs = append(errs, v.ps.invalid(p, "", "want exactly one of metrics, prometheus and cloudWatch, not "+strings.Join(sources, " and ")))
	case r.CloudWatch != nil:
		cp := p.Child("cloudWatch")
		switch pp := cp.Child("period"); {
		case v.c.Spec.ALB == nil:
			errs = append(errs, v.ps.forbidden(cp, "", "only with spec.alb: it reads the from target group's CloudWatch RequestCount; use metrics or prometheus for a Route 53 cutover"))
		case NetworkRules(v.c.Spec.ALB.ListenerRules) > 0:
			// Read as 0 flows, it would declare a cluster that still holds connections drained.
			errs = append(errs, v.ps.forbidden(cp, "", "not on a Network Load Balancer: "+NLBCloudWatchWhy))
		case v.ps.present(pp) && !ValidPeriod(r.CloudWatch.Period):
			errs = append(errs, v.ps.invalid(pp, strconv.Itoa(r.CloudWatch.Period), wantPeriod))
		}
	case r.Metrics != "":
		errs = append(errs, v.url(p.Child("metrics"), r.Metrics)...)
		if strings.TrimSpace(r.Counter) == "" {
			errs = append(errs, v.ps.invalid(p.Child("counter"), r.Counter, "required with metrics: the request counter's name, e.g. http_requests_total"))
		}
	default:
		qp := p.Child("prometheus")
		errs = append(errs, v.url(qp.Child("url"), r.Prometheus.URL)...)
		if strings.TrimSpace(r.Prometheus.Query) == "" {
			errs = append(errs, v.ps.invalid(qp.Child("query"), r.Prometheus.Query, "required: "+wantQuery))
		}
	}
	if !(r.MaxRate >= 0) {
		errs = append(errs, v.ps.invalid(p.Child("maxRate"), formatFloat(r.MaxRate), "want a number ≥ 0 (requests per second)"))
	}
	switch wp := p.Child("window"); {
	case !v.ps.present(wp):
		errs = append(errs, v.ps.invalid(wp, "", `required: want a duration > 0 such as "5m"`))
	case r.Window.Duration <= 0:
		errs = append(errs, v.ps.invalid(wp, r.Window.String(), `want a duration > 0 such as "5m"`))
	}
	if tp := p.Child("timeout"); v.ps.present(tp) && r.Timeout.Duration < r.Window.Duration {
		errs = append(errs, v.ps.invalid(tp, r.Timeout.String(), fmt.Sprintf("want at least the window (%s): the rate could never stay low long enough", r.Window.String())))
	}
	return errs
}

// url checks an absolute http(s) URL with a host, as the gates dial it.
func (v validator) url(p *field.Path, raw string) (errs field.ErrorList) {
	if raw == "" {
		errs = append(errs, v.ps.required(p, wantURL))
		return errs
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		errs = append(errs, v.ps.invalid(p, raw, wantURL))
	}
	return errs
}

// isHostPort reports whether s is host:port with an IP address or DNS name and a port
// 1..65535.
func isHostPort(s string) bool {
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" {
		return false
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return false
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	return endpoint.CheckName(endpoint.NormalizeName(host)) == "" && host == strings.TrimSpace(host)
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// PauseTooShort says that a pause the plan file wrote is shorter than the TTL its step
// (or rollback stop) must hold for (safety rule 4). field is the field the user wrote —
// "spec.pause", "spec.steps[2].pause" or "spec.rollback.pause" — never one derived from
// it: the steps that take spec.pause are reported once, as spec.pause, and steps lists
// them (1-based; nil when every step takes it). ttl is the TTL the steps are written
// with: the plan's spec.ttl.lower when lowered, else the records' own (for alias members,
// their targets'). from, optional, says where that TTL comes from (only its first element
// is read): when it is an alias target's, no write lowers it, and the advice says so
// rather than pointing at spec.ttl.lower.
func PauseTooShort(field string, pause, ttl time.Duration, lowered bool, steps []int, from ...PauseFloor) string {
	var f PauseFloor
	if len(from) > 0 {
		f = from[0]
	}
	// The floor is the aliases' when no plain member's TTL (or the lowered one) is longer.
	aliasFloor := f.AliasTTL > 0 && f.AliasTTL >= ttl
	var b strings.Builder
	secs, aliasSecs := ttlSeconds(ttl), ttlSeconds(f.AliasTTL)
	fmt.Fprintf(&b, "%s %s is shorter than ", field, pause)
	switch {
	case aliasFloor:
		fmt.Fprintf(&b, "the TTL the alias targets answer with (%s)", secs)
	case lowered:
		fmt.Fprintf(&b, "the TTL spec.ttl.lower sets (%s)", secs)
	default:
		fmt.Fprintf(&b, "the records' TTL %s", secs)
	}
	if len(steps) > 0 {
		var names []string
		for _, s := range steps {
			names = append(names, strconv.Itoa(s))
		}
		fmt.Fprintf(&b, " (steps %s take it)", strings.Join(names, ", "))
	}
	fmt.Fprintf(&b, ": a step never completes sooner than the TTL, as resolvers may answer with the weights before it until then; set %s to at least %s", field, secs)
	switch {
	case aliasFloor:
		fmt.Fprintf(&b, ": the alias targets answer with a TTL of %s, which no write lowers (spec.ttl.lower applies to the plain members only)", secs)
	case f.AliasTTL > 0 && lowered:
		fmt.Fprintf(&b, ", or a lower spec.ttl.lower, not below %s: the alias targets answer with a TTL of %s, which no write lowers", aliasSecs, aliasSecs)
	case f.AliasTTL > 0:
		fmt.Fprintf(&b, ", or lower the plain members' TTL for the cutover with spec.ttl.lower, not below %s: the alias targets answer with a TTL of %s, which no write lowers", aliasSecs, aliasSecs)
	case lowered:
		b.WriteString(", or a lower spec.ttl.lower")
	default:
		b.WriteString(", or lower the TTL for the cutover with spec.ttl.lower")
	}
	return b.String()
}

// PauseFloor says where the TTL a pause must cover comes from, for PauseTooShort.
type PauseFloor struct {
	// AliasTTL is the longest TTL the plan's alias members' targets answer with (0: no
	// alias member). Route 53 answers an alias with its target's TTL: no write lowers it.
	AliasTTL time.Duration
}

// ttlSeconds writes a TTL as the whole seconds it is read as: "60s", not "1m0s".
func ttlSeconds(ttl time.Duration) string { return fmt.Sprintf("%ds", int64(ttl/time.Second)) }
