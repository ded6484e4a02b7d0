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
		"or of a listener for its default action (…:listener/app/…)"
	wantLoadBalancerARN = "want the ARN of an Application Load Balancer (arn:aws:elasticloadbalancing:REGION:ACCOUNT:loadbalancer/app/NAME/ID)"
	wantAllWeighted     = "want true: select every weighted record set of the zone with members for from and to"
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
	reflect.TypeFor[Spec]():             {"onDrift": wantOnDrift},
	reflect.TypeFor[Record]():           {"type": wantRecordType},
	reflect.TypeFor[ALB]():              {"listenerRules": wantRuleARN, "from": wantTargetGroup, "to": wantTargetGroup},
	reflect.TypeFor[ALBSelect]():        {"loadBalancers": wantLoadBalancerARN},
	reflect.TypeFor[Select]():           {"allWeighted": wantAllWeighted},
	reflect.TypeFor[Step]():             {"percent": wantPercent},
	reflect.TypeFor[Weights]():          {"from": wantWeight, "to": wantWeight},
	reflect.TypeFor[HTTPGate]():         {"url": wantURL, "resolver": wantHostPort, "requests": wantRequests, "expectStatus": wantStatus, "minSuccessRatio": wantRatio, "latencySlack": wantSlack},
	reflect.TypeFor[Latency]():          {"percentile": wantPercentile},
	reflect.TypeFor[PrometheusGate]():   {"url": wantURL, "noData": wantNoData},
	reflect.TypeFor[DNSGate]():          {"servers": wantHostPort, "samples": wantSamples, "tolerance": wantRatio},
	reflect.TypeFor[TargetHealthGate](): {"minHealthy": wantMinHealthy},
	reflect.TypeFor[ALBTrafficGate]():   {"tolerance": wantRatio, "minRequests": wantMinRequests, "maxErrorRate": wantRatio, "period": wantPeriod},
	reflect.TypeFor[RetireCloudWatch](): {"period": wantPeriod},
	reflect.TypeFor[Rollback]():         {"mode": wantMode, "steps": wantPercent},
	reflect.TypeFor[TTL]():              {"lower": wantTTL},
	reflect.TypeFor[Retire]():           {"metrics": wantURL, "maxRate": wantSlack},
	reflect.TypeFor[RetireQuery]():      {"url": wantURL, "query": wantQuery},
}

func fieldWant(t reflect.Type, key string) string { return wants[t][key] }

// validator checks a decoded plan against the rules the engine relies on.
type validator struct {
	ps *problems
	c  *Cutover
}

func validate(c *Cutover, ps *problems) {
	v := validator{ps: ps, c: c}
	var root path
	switch {
	case c.APIVersion == "":
		ps.add(root.field("apiVersion"), "", "required: "+wantAPIVersion)
	case c.APIVersion != APIVersion:
		ps.add(root.field("apiVersion"), c.APIVersion, wantAPIVersion)
	}
	switch {
	case c.Kind == "":
		ps.add(root.field("kind"), "", "required: "+wantKind)
	case c.Kind != Kind:
		ps.add(root.field("kind"), c.Kind, wantKind)
	}
	name := root.field("metadata").field("name")
	switch {
	case c.Metadata.Name == "":
		ps.add(name, "", "required: "+wantName)
	case !isLabel(c.Metadata.Name):
		ps.add(name, c.Metadata.Name, wantName)
	}
	sp := root.field("spec")
	if !ps.present(sp) {
		ps.add(sp, "", "required: want zone, records, from, to and steps")
		return
	}
	if c.Spec.CloudMap != nil {
		v.cloudMap(sp)
	} else if c.Spec.ALB != nil {
		v.alb(sp)
	} else {
		zone := v.zone(sp)
		if c.Spec.Select != nil {
			v.selectRecords(sp)
		} else {
			v.records(sp, zone)
		}
	}
	v.setIDs(sp)
	v.steps(sp)
	v.gates(sp)
	v.rollback(sp.field("rollback"))
	switch c.Spec.OnDrift {
	case "", DriftPause, DriftRollback:
	default:
		ps.add(sp.field("onDrift"), c.Spec.OnDrift, wantOnDrift)
	}
	v.timeouts(sp)
	if r := c.Spec.Retire; r != nil {
		v.retire(sp.field("retire"), r)
	}
	v.cloudWatchPacing(sp)
	if t := c.Spec.TTL; t != nil {
		lp := sp.field("ttl").field("lower")
		switch {
		case c.Spec.CloudMap != nil:
			ps.add(sp.field("ttl"), "", "not with spec.cloudMap: a Cloud Map cutover changes instances' health status, not records: there is no TTL to lower")
		case c.Spec.ALB != nil:
			ps.add(sp.field("ttl"), "", "not with spec.alb: an ALB weight change takes effect for new requests at once, there is no TTL to lower")
		case !ps.present(lp):
			ps.add(lp, "", "required: "+wantTTL)
		case t.Lower < 1 || t.Lower > maxTTL:
			ps.add(lp, strconv.FormatInt(t.Lower, 10), wantTTL)
		}
	}
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
func (v validator) zone(sp path) string {
	s := &v.c.Spec
	if s.Zone == "" {
		if s.ZoneID == "" {
			v.ps.add(sp.field("zone"), "", "required: want the hosted zone's name (e.g. example.com), or spec.zoneID")
		}
		return ""
	}
	zone := endpoint.NormalizeName(s.Zone)
	if why := endpoint.CheckName(zone); why != "" {
		v.ps.add(sp.field("zone"), s.Zone, "want a DNS name ("+why+")")
		return ""
	}
	return zone
}

// selectRecords checks spec.select: it selects the records, so none are listed.
func (v validator) selectRecords(sp path) {
	s := &v.c.Spec
	if len(s.Records) > 0 {
		v.ps.add(sp.field("records"), "", "not with spec.select: list the records or select them, not both")
	}
	if !s.Select.AllWeighted {
		v.ps.add(sp.field("select").field("allWeighted"), "false", wantAllWeighted)
	}
}

func (v validator) records(sp path, zone string) {
	rp := sp.field("records")
	if len(v.c.Spec.Records) == 0 {
		v.ps.add(rp, "", "required: want at least one record, e.g. [{name: www.example.com}]")
		return
	}
	type kept struct {
		index     int
		name, typ string
	}
	var seen []kept
	for i, r := range v.c.Spec.Records {
		p := rp.index(i)
		name := endpoint.NormalizeName(r.Name)
		nameOK := false
		switch why := endpoint.CheckName(name); {
		case r.Name == "":
			v.ps.add(p.field("name"), "", "required: want the record's DNS name")
		case why != "":
			v.ps.add(p.field("name"), r.Name, "want a DNS name ("+why+")")
		case zone != "" && !endpoint.InDomain(name, zone):
			v.ps.add(p.field("name"), r.Name, fmt.Sprintf("want a name at or below the zone %q", zone))
		default:
			nameOK = true
		}
		typ := strings.ToUpper(strings.TrimSpace(r.Type))
		switch typ {
		case "":
			typ = defaultRecordType
		case endpoint.TypeA, endpoint.TypeAAAA, endpoint.TypeCNAME:
		default:
			v.ps.add(p.field("type"), r.Type, wantRecordType)
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
				v.ps.add(p.field("name"), r.Name, fmt.Sprintf("duplicate of spec.records[%d] (%s %s): want each record once", k.index, name, typ))
				break
			}
			if k.typ == endpoint.TypeCNAME || typ == endpoint.TypeCNAME {
				v.ps.add(p.field("type"), typ, fmt.Sprintf("%s also has type %s at spec.records[%d]: a CNAME cannot share its name with other records", name, k.typ, k.index))
				break
			}
		}
		seen = append(seen, kept{i, name, typ})
	}
}

func (v validator) setIDs(sp path) {
	s := &v.c.Spec
	for _, m := range []struct {
		key, value, role string
	}{{"from", s.From, "losing"}, {"to", s.To, "gaining"}} {
		p := sp.field(m.key)
		if m.value == "" {
			if s.ALB == nil {
				v.ps.add(p, "", "required: want the set identifier of the cluster "+m.role+" traffic")
			}
			continue
		}
		if n := utf8.RuneCountInString(m.value); n > maxSetIDLength {
			v.ps.add(p, m.value, fmt.Sprintf("want at most %d characters (a Route 53 set identifier), not %d", maxSetIDLength, n))
		}
	}
	if s.From != "" && s.From == s.To {
		v.ps.add(sp.field("to"), s.To, "same as spec.from: want the set identifier of another cluster")
	}
	if a := s.ALB; a != nil && (s.From == "" || s.To == "") && a.From != "" && a.To != "" {
		// A name left out is the target group's: the two must still differ.
		if from, to := clusterNames(s); from == to && TargetGroupName(a.From) != TargetGroupName(a.To) {
			key := "to"
			if s.To != "" {
				key = "from"
			}
			v.ps.add(sp.field(key), "", fmt.Sprintf("required here: the other cluster's name is %q, the same as this target group's name; name both clusters", from))
		}
	}
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
func (v validator) alb(sp path) {
	s := &v.c.Spec
	const notDNS = "not with spec.alb: an ALB cutover moves listener-rule weights and changes no DNS record; set one of them"
	if s.Zone != "" {
		v.ps.add(sp.field("zone"), s.Zone, notDNS)
	}
	if s.ZoneID != "" {
		v.ps.add(sp.field("zoneID"), s.ZoneID, notDNS)
	}
	if len(s.Records) > 0 {
		v.ps.add(sp.field("records"), "", notDNS)
	}
	if s.Select != nil {
		v.ps.add(sp.field("select"), "", "not with spec.alb: select the rules with spec.alb.select")
	}
	ap := sp.field("alb")
	a := s.ALB
	rp := ap.field("listenerRules")
	if a.Select != nil {
		v.albSelect(ap)
	} else if len(a.ListenerRules) == 0 {
		v.ps.add(rp, "", "required: want at least one listener rule ARN (or listener ARN, for its default action)")
	}
	seen := map[string]int{}
	for i, arn := range a.ListenerRules {
		p := rp.index(i)
		if why := checkRuleARN(arn); why != "" {
			v.ps.add(p, arn, why)
			continue
		}
		if j, dup := seen[arn]; dup {
			v.ps.add(p, arn, fmt.Sprintf("duplicate of spec.alb.listenerRules[%d]: want each rule once", j))
			continue
		}
		seen[arn] = i
	}
	for _, f := range []struct{ key, ref, role string }{{"from", a.From, "losing"}, {"to", a.To, "gaining"}} {
		p := ap.field(f.key)
		switch {
		case f.ref == "":
			v.ps.add(p, "", "required: "+wantTargetGroup+", of the target group "+f.role+" traffic")
		case !isTargetGroupRef(f.ref):
			v.ps.add(p, f.ref, wantTargetGroup)
		}
	}
	if a.From != "" && a.To != "" && TargetGroupName(a.From) == TargetGroupName(a.To) {
		v.ps.add(ap.field("to"), a.To, "the same target group as spec.alb.from: want the other cluster's group")
	}
	if cw := a.CloudWatch; cw != nil && cw.Delay != nil && cw.Delay.Duration > MaxCloudWatchDelay {
		v.ps.add(ap.field("cloudWatch").field("delay"), cw.Delay.String(), wantDelay)
	}
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
func (v validator) cloudWatchPacing(sp path) {
	s := &v.c.Spec
	if s.ALB == nil {
		return
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
				v.ps.add(sp.field("timeouts").field("step"), stepTimeout.String(), fmt.Sprintf(
					"with %s %s, spec.timeouts.step %s and spec.alb.cloudWatch.delay %s, an albTraffic gate of period %ds first judges a step up to %s after its write "+
						"(the period the write fell in, a whole one, and the delay): the step would run out of time and roll back; raise spec.timeouts.step or the pause, or lower the delay or the period",
					pauseField, pause, stepTimeout, delay, period, need))
			case pause > 0 && delay > 0 && pause < need && pause+stepTimeout >= need:
				// (Without a pause the gate decides how long the step holds; without a
				// delay the reader's wait is the periods' own, as it always was.)
				v.ps.warn(sp.field("steps").index(i), "", fmt.Sprintf(
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
			v.ps.warn(sp.field("retire").field("timeout"), timeout.String(), fmt.Sprintf(
				"the first reading that can show the drain comes up to %s after the last step's write (spec.alb.cloudWatch.delay %s), and the rate must then stay low for the window %s: "+
					"allow at least %s, or the cluster may be declared not retirable only because CloudWatch had not published yet", FirstCloudWatchVerdict(r.CloudWatch.Period, delay), delay, r.Window.Duration, need))
		}
	}
	if !readers && s.ALB.CloudWatch != nil && s.ALB.CloudWatch.Delay != nil {
		v.ps.warn(sp.field("alb").field("cloudWatch").field("delay"), s.ALB.CloudWatch.Delay.String(), "no albTraffic gate nor retire.cloudWatch reads CloudWatch: the delay has no effect")
	}
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
	case parts[1] != "app":
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
func (v validator) albSelect(ap path) {
	a := v.c.Spec.ALB
	if len(a.ListenerRules) > 0 {
		v.ps.add(ap.field("listenerRules"), "", "not with spec.alb.select: list the rules or select them, not both")
	}
	lp := ap.field("select").field("loadBalancers")
	if len(a.Select.LoadBalancers) == 0 {
		v.ps.add(lp, "", "required: "+wantLoadBalancerARN+", whose rules forwarding to from and to are selected")
	}
	seen := map[string]int{}
	for i, arn := range a.Select.LoadBalancers {
		p := lp.index(i)
		if !IsLoadBalancerARN(arn) || slices.Contains(strings.Split(arn, "/"), "") {
			v.ps.add(p, arn, wantLoadBalancerARN)
			continue
		}
		if j, dup := seen[arn]; dup {
			v.ps.add(p, arn, fmt.Sprintf("duplicate of spec.alb.select.loadBalancers[%d]: want each load balancer once", j))
			continue
		}
		seen[arn] = i
	}
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

// steps checks every step and warns about steps that probably do not do what was meant.
func (v validator) steps(sp path) {
	s := &v.c.Spec
	stp := sp.field("steps")
	if len(s.Steps) == 0 {
		v.ps.add(stp, "", "required: want at least one step, e.g. [10, 50, 100]")
		return
	}
	var prev Weights
	prevIndex := -1
	for i, st := range s.Steps {
		p := stp.index(i)
		w, ok := v.stepWeights(p, st)
		if !ok {
			prevIndex = -1
			continue
		}
		switch {
		case w.From == 0 && w.To == 0 && s.CloudMap != nil:
			v.ps.add(p.field("weights"), "", "both weights are 0: a Cloud Map step keeps at least one instance healthy, and needs a share for from or to; write percent: 0 or percent: 100")
		case w.From == 0 && w.To == 0 && s.ALB != nil:
			v.ps.warn(p.field("weights"), "", "both weights are 0: the ALB then forwards to the rules' other target groups only; plan and run refuse it for a rule that has none")
		case w.From == 0 && w.To == 0:
			v.ps.warn(p.field("weights"), "", `both weights are 0: Route 53 then answers with every member evenly; it does not mean "off"`)
		}
		if prevIndex >= 0 && shareLess(w, prev) {
			v.ps.warn(p, "", fmt.Sprintf("the share of traffic to %q falls from %s (spec.steps[%d]) to %s: this step moves traffic back", s.To, share(prev), prevIndex, share(w)))
		}
		prev, prevIndex = w, i
	}
}

// stepWeights checks one step and returns its weights.
func (v validator) stepWeights(p path, st Step) (Weights, bool) {
	switch {
	case st.Percent != nil && st.Weights != nil:
		v.ps.add(p, "", "want exactly one of percent or weights, not both")
	case st.Percent == nil && st.Weights == nil:
		v.ps.add(p, "", "want percent or weights")
	case st.Percent != nil:
		pct := *st.Percent
		if pct >= 0 && pct <= 100 {
			return percentWeights(pct), true
		}
		if v.ps.value(p, "") != "" { // written as a bare number: `- 150`
			v.ps.add(p, strconv.FormatInt(pct, 10), wantBarePercent)
		} else {
			v.ps.add(p.field("percent"), strconv.FormatInt(pct, 10), wantPercent)
		}
	default:
		wp := p.field("weights")
		ok := true
		limit, want := int64(maxWeight), wantWeight
		if v.c.Spec.ALB != nil {
			limit, want = maxALBWeight, wantALBWeight
		}
		for _, f := range []struct {
			key string
			w   int64
		}{{"from", st.Weights.From}, {"to", st.Weights.To}} {
			switch {
			case !v.ps.present(wp.field(f.key)):
				v.ps.add(wp.field(f.key), "", "required: "+want)
				ok = false
			case f.w < 0 || f.w > limit:
				v.ps.add(wp.field(f.key), strconv.FormatInt(f.w, 10), want)
				ok = false
			}
		}
		return *st.Weights, ok
	}
	return Weights{}, false
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
func (v validator) gates(sp path) {
	s := &v.c.Spec
	specNames, stepNames := gateNames(v.c)
	gp := sp.field("gates")
	specSeen := map[string]path{}
	for i, g := range s.Gates {
		p := gp.index(i)
		v.gate(p, g)
		v.uniqueName(p, g, specNames[i], specSeen)
	}
	for i, st := range s.Steps {
		seen := maps.Clone(specSeen)
		for j, g := range st.Gates {
			p := sp.field("steps").index(i).field("gates").index(j)
			v.gate(p, g)
			v.uniqueName(p, g, stepNames[i][j], seen)
		}
	}
}

func (v validator) uniqueName(p path, g Gate, name string, seen map[string]path) {
	other, dup := seen[name]
	if !dup {
		seen[name] = p
		return
	}
	if g.Name != "" {
		v.ps.add(p.field("name"), g.Name, fmt.Sprintf("duplicate gate name in this step (%s has it too): want unique names", other))
		return
	}
	v.ps.add(p, "", fmt.Sprintf("its default name %q is taken by %s: want unique names; name one of them", name, other))
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

func (v validator) gate(p path, g Gate) {
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
		v.ps.add(p, "", wantGateKind)
		return
	case 1:
	default:
		v.ps.add(p, "", wantGateKind+", not "+strings.Join(kinds, " and "))
		return
	}
	switch {
	case g.HTTP != nil:
		v.httpGate(p.field("http"), g.HTTP)
	case g.Prometheus != nil:
		v.prometheusGate(p.field("prometheus"), g.Prometheus)
	case g.CloudMapDiscovery != nil:
		v.cloudMapDiscoveryGate(p.field("cloudMapDiscovery"), g.CloudMapDiscovery)
	case v.c.Spec.CloudMap != nil && (g.DNS != nil || g.TargetHealth != nil || g.ALBTraffic != nil):
		v.ps.add(p.field(gateKind(g)), "", "not with spec.cloudMap: a Cloud Map cutover changes instances' health status, no record nor target group; use a cloudMapDiscovery, http or prometheus gate")
	case g.DNS != nil && v.c.Spec.ALB != nil:
		v.ps.add(p.field("dns"), "", "not with spec.alb: a dns gate compares the records' DNS answers with their weights, and an ALB cutover changes no record; use an http or prometheus gate")
	case g.DNS != nil:
		v.dnsGate(p.field("dns"), g.DNS)
	case v.c.Spec.ALB == nil && g.TargetHealth != nil:
		v.ps.add(p.field("targetHealth"), "", "only with spec.alb: it checks the health of the target groups an ALB cutover moves traffic to")
	case v.c.Spec.ALB == nil && g.ALBTraffic != nil:
		v.ps.add(p.field("albTraffic"), "", "only with spec.alb: it reads the CloudWatch metrics of the target groups an ALB cutover moves traffic between; use a dns gate for records")
	case g.TargetHealth != nil:
		if mp := p.field("targetHealth").field("minHealthy"); v.ps.present(mp) && (g.TargetHealth.MinHealthy < 1 || g.TargetHealth.MinHealthy > maxMinHealthy) {
			v.ps.add(mp, strconv.Itoa(g.TargetHealth.MinHealthy), wantMinHealthy)
		}
	case g.ALBTraffic != nil:
		v.albTrafficGate(p.field("albTraffic"), g.ALBTraffic)
	}
}

func (v validator) albTrafficGate(p path, g *ALBTrafficGate) {
	if t := g.Tolerance; t != nil && !(*t >= 0 && *t <= 1) {
		v.ps.add(p.field("tolerance"), formatFloat(*t), wantRatio)
	}
	if mp := p.field("minRequests"); v.ps.present(mp) && (g.MinRequests < 1 || g.MinRequests > maxMinRequests) {
		v.ps.add(mp, strconv.Itoa(g.MinRequests), wantMinRequests)
	}
	if r := g.MaxErrorRate; r != nil && !(*r >= 0 && *r <= 1) {
		v.ps.add(p.field("maxErrorRate"), formatFloat(*r), wantRatio)
	}
	if d := g.MaxResponseTime; d != nil && d.Duration <= 0 {
		v.ps.add(p.field("maxResponseTime"), d.String(), `want a duration > 0 such as "500ms"`)
	}
	if pp := p.field("period"); v.ps.present(pp) && !ValidPeriod(g.Period) {
		v.ps.add(pp, strconv.Itoa(g.Period), wantPeriod)
	}
	if wp := p.field("window"); v.ps.present(wp) && g.Window.Duration <= 0 {
		v.ps.add(wp, g.Window.String(), `want a duration > 0 such as "5m"`)
	}
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

func (v validator) httpGate(p path, h *HTTPGate) {
	from, to := clusterNames(&v.c.Spec)
	if h.URL == "" && len(h.Clusters) == 0 {
		v.ps.add(p, "", "want url, clusters or both: nothing to probe")
	}
	if h.URL != "" {
		v.url(p.field("url"), h.URL)
	}
	for _, id := range slices.Sorted(maps.Keys(h.Clusters)) {
		kp := p.field("clusters").key(id)
		if from != "" && to != "" && id != from && id != to {
			v.ps.addExact(kp, "", fmt.Sprintf("want a key that is spec.from (%q) or spec.to (%q)", from, to))
		}
		v.url(kp, h.Clusters[id])
	}
	if h.Resolver != "" && !isHostPort(h.Resolver) {
		v.ps.add(p.field("resolver"), h.Resolver, wantHostPort)
	}
	if rp := p.field("requests"); v.ps.present(rp) && (h.Requests < 1 || h.Requests > maxRequests) {
		v.ps.add(rp, strconv.Itoa(h.Requests), wantRequests)
	}
	if tp := p.field("timeout"); v.ps.present(tp) && h.Timeout.Duration <= 0 {
		v.ps.add(tp, h.Timeout.String(), `want a duration > 0 such as "2s"`)
	}
	for i, code := range h.ExpectStatus {
		if code < 100 || code > 599 {
			v.ps.add(p.field("expectStatus").index(i), strconv.Itoa(code), wantStatus)
		}
	}
	if r := h.MinSuccessRatio; r != nil && !(*r >= 0 && *r <= 1) {
		v.ps.add(p.field("minSuccessRatio"), formatFloat(*r), wantRatio)
	}
	if l := h.Latency; l != nil {
		lp := p.field("latency")
		if pp := lp.field("percentile"); v.ps.present(pp) && !(l.Percentile > 0 && l.Percentile <= 100) {
			v.ps.add(pp, formatFloat(l.Percentile), wantPercentile)
		}
		switch mp := lp.field("max"); {
		case !v.ps.present(mp):
			v.ps.add(mp, "", `required: want a duration > 0 such as "500ms"`)
		case l.Max.Duration <= 0:
			v.ps.add(mp, l.Max.String(), `want a duration > 0 such as "500ms"`)
		}
	}
	if h.NoWorseThanFrom && from != "" && to != "" && (h.Clusters[from] == "" || h.Clusters[to] == "") {
		v.ps.add(p.field("noWorseThanFrom"), "true", fmt.Sprintf("want clusters for both %q and %q to compare", from, to))
	}
	if s := h.LatencySlack; s != nil && !(*s >= 0) {
		v.ps.add(p.field("latencySlack"), formatFloat(*s), wantSlack)
	}
}

func (v validator) prometheusGate(p path, g *PrometheusGate) {
	if g.URL == "" {
		v.ps.add(p.field("url"), "", "required: "+wantURL)
	} else {
		v.url(p.field("url"), g.URL)
	}
	switch {
	case g.Query == "":
		v.ps.add(p.field("query"), "", "required: "+wantQuery)
	case strings.TrimSpace(g.Query) == "":
		v.ps.add(p.field("query"), g.Query, wantQuery)
	}
	switch {
	case g.Min == nil && g.Max == nil:
		v.ps.add(p, "", "want min, max or both: nothing to compare the value with")
	case g.Min != nil && g.Max != nil && *g.Min > *g.Max:
		v.ps.add(p.field("min"), formatFloat(*g.Min), fmt.Sprintf("want at most max (%s): no value could pass", formatFloat(*g.Max)))
	}
	switch g.NoData {
	case "", noDataFail:
	case noDataPass:
		// Never blind: a step must not pass on no measurement (the gate refuses it too).
		v.ps.add(p.field("noData"), g.NoData, fmt.Sprintf("a step would pass on no measurement: make the query answer when there is no data, e.g. %q, and leave noData out", "("+g.Query+") or vector(0)"))
	default:
		v.ps.add(p.field("noData"), g.NoData, wantNoData)
	}
}

func (v validator) dnsGate(p path, g *DNSGate) {
	for i, s := range g.Servers {
		if !isHostPort(s) {
			v.ps.add(p.field("servers").index(i), s, wantHostPort)
		}
	}
	if sp := p.field("samples"); v.ps.present(sp) && (g.Samples < 1 || g.Samples > maxSamples) {
		v.ps.add(sp, strconv.Itoa(g.Samples), wantSamples)
	}
	if t := g.Tolerance; t != nil && !(*t >= 0 && *t <= 1) {
		v.ps.add(p.field("tolerance"), formatFloat(*t), wantRatio)
	}
}

func (v validator) rollback(p path) {
	r := &v.c.Spec.Rollback
	switch r.Mode {
	case "", RollbackImmediate:
		if len(r.Steps) > 0 {
			v.ps.add(p.field("steps"), "", `want none with mode "immediate" (the default); set mode: gradual to roll back in steps`)
		}
		if r.Pause.Duration > 0 {
			v.ps.warn(p.field("pause"), r.Pause.String(), "ignored: an immediate rollback does not pause")
		}
	case RollbackGradual:
		if len(r.Steps) == 0 {
			v.ps.add(p.field("steps"), "", `required by mode "gradual": want the percents to pass through on the way back, descending, e.g. [50, 10]`)
		}
		for i, pct := range r.Steps {
			sp := p.field("steps").index(i)
			switch {
			case pct < 0 || pct > 100:
				v.ps.add(sp, strconv.FormatInt(pct, 10), wantPercent)
			case i > 0 && pct >= r.Steps[i-1]:
				v.ps.add(sp, strconv.FormatInt(pct, 10), fmt.Sprintf("want less than the step before (%d): a gradual rollback descends", r.Steps[i-1]))
			}
		}
	default:
		v.ps.add(p.field("mode"), r.Mode, wantMode)
	}
}

// timeouts warns when the total bound is shorter than the pauses alone: such a cutover
// can only end in a rollback.
func (v validator) timeouts(sp path) {
	s := &v.c.Spec
	if s.Timeouts.Total.Duration <= 0 {
		return
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
		v.ps.warn(sp.field("timeouts").field("total"), s.Timeouts.Total.String(), fmt.Sprintf("shorter than the steps' pauses together (%s): the cutover cannot finish in time and will roll back", sum))
	}
}

func (v validator) retire(p path, r *Retire) {
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
	case len(sources) == 0 && v.c.Spec.ALB != nil:
		v.ps.add(p, "", "want cloudWatch (the from target group's RequestCount), metrics (with counter) or prometheus: where to read the from cluster's request rate")
	case len(sources) == 0:
		v.ps.add(p, "", "want metrics (with counter) or prometheus: where to read the from cluster's request rate")
	case len(sources) > 1:
		v.ps.add(p, "", "want exactly one of metrics, prometheus and cloudWatch, not "+strings.Join(sources, " and "))
	case r.CloudWatch != nil:
		cp := p.field("cloudWatch")
		switch pp := cp.field("period"); {
		case v.c.Spec.ALB == nil:
			v.ps.add(cp, "", "only with spec.alb: it reads the from target group's CloudWatch RequestCount; use metrics or prometheus for a Route 53 cutover")
		case v.ps.present(pp) && !ValidPeriod(r.CloudWatch.Period):
			v.ps.add(pp, strconv.Itoa(r.CloudWatch.Period), wantPeriod)
		}
	case r.Metrics != "":
		v.url(p.field("metrics"), r.Metrics)
		if strings.TrimSpace(r.Counter) == "" {
			v.ps.add(p.field("counter"), r.Counter, "required with metrics: the request counter's name, e.g. http_requests_total")
		}
	default:
		qp := p.field("prometheus")
		v.url(qp.field("url"), r.Prometheus.URL)
		if strings.TrimSpace(r.Prometheus.Query) == "" {
			v.ps.add(qp.field("query"), r.Prometheus.Query, "required: "+wantQuery)
		}
	}
	if !(r.MaxRate >= 0) {
		v.ps.add(p.field("maxRate"), formatFloat(r.MaxRate), "want a number ≥ 0 (requests per second)")
	}
	switch wp := p.field("window"); {
	case !v.ps.present(wp):
		v.ps.add(wp, "", `required: want a duration > 0 such as "5m"`)
	case r.Window.Duration <= 0:
		v.ps.add(wp, r.Window.String(), `want a duration > 0 such as "5m"`)
	}
	if tp := p.field("timeout"); v.ps.present(tp) && r.Timeout.Duration < r.Window.Duration {
		v.ps.add(tp, r.Timeout.String(), fmt.Sprintf("want at least the window (%s): the rate could never stay low long enough", r.Window.String()))
	}
}

// url checks an absolute http(s) URL with a host, as the gates dial it.
func (v validator) url(p path, raw string) {
	if raw == "" {
		v.ps.add(p, "", "required: "+wantURL)
		return
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		v.ps.add(p, raw, wantURL)
	}
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
