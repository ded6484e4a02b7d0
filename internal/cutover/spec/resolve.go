package spec

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// resolve turns a valid plan file into the Plan the engine runs: every default applied,
// every step as weights, every gate named and copied (steps share no pointers, so the
// engine may keep per-step state in them).
func resolve(c *Cutover) *Plan {
	s := &c.Spec
	p := &Plan{
		Name:          c.Metadata.Name,
		Zone:          s.Zone,
		ZoneID:        s.ZoneID,
		Zones:         normalizeZones(s.Zones),
		From:          s.From,
		To:            s.To,
		InSyncTimeout: s.Timeouts.InSync.Duration,
		StepTimeout:   s.Timeouts.Step.Duration,
		TotalTimeout:  s.Timeouts.Total.Duration,
	}
	if a := s.ALB; a != nil {
		p.ALB = &ALB{ListenerRules: slices.Clone(a.ListenerRules), From: a.From, To: a.To}
		if a.Select != nil {
			p.ALB.Select = &ALBSelect{LoadBalancers: slices.Clone(a.Select.LoadBalancers)}
		}
		p.From, p.To = clusterNames(s)
		// The delay is how the metrics are read, not what the plan moves: it is kept out
		// of p.ALB (as written, and hashed), so that it may change across a resume.
		p.CloudWatchDelay = DefaultCloudWatchDelay
		if cw := a.CloudWatch; cw != nil && cw.Delay != nil {
			p.CloudWatchDelay = cw.Delay.Duration
		}
	}
	if c := s.CloudMap; c != nil {
		p.CloudMap = resolveCloudMap(c)
	}
	p.SelectAllWeighted = s.Select != nil && s.Select.AllWeighted
	if p.InSyncTimeout == 0 {
		p.InSyncTimeout = DefaultInSyncTimeout
	}
	if p.StepTimeout == 0 {
		p.StepTimeout = DefaultStepTimeout
	}
	if s.TTL != nil {
		p.LowerTTL = s.TTL.Lower
	}
	if s.Retire != nil {
		r := *s.Retire
		if r.Prometheus != nil {
			q := *r.Prometheus
			r.Prometheus = &q
		}
		if r.CloudWatch != nil {
			cw := *r.CloudWatch
			if cw.Period == 0 {
				cw.Period = DefaultCloudWatchPeriod
			}
			r.CloudWatch = &cw
		}
		if r.Timeout.Duration == 0 {
			r.Timeout.Duration = DefaultRetireTimeout
		}
		p.Retire = &r
	}
	for _, r := range s.Records {
		typ := strings.ToUpper(strings.TrimSpace(r.Type))
		if typ == "" {
			typ = defaultRecordType
		}
		p.Records = append(p.Records, Record{Name: endpoint.NormalizeName(r.Name), Type: typ})
	}
	specNames, stepNames := gateNames(c)
	for i, st := range s.Steps {
		ps := PlanStep{Pause: s.Pause.Duration}
		if s.Pause.Duration > 0 {
			ps.PauseField = "spec.pause"
		}
		if st.Percent != nil {
			ps.Weights = percentWeights(*st.Percent)
		} else if st.Weights != nil {
			ps.Weights = *st.Weights
		}
		if st.Pause != nil {
			ps.Pause, ps.PauseField = st.Pause.Duration, fmt.Sprintf("spec.steps[%d].pause", i)
		}
		for j, g := range s.Gates {
			ps.Gates = append(ps.Gates, resolveGate(g, specNames[j]))
		}
		for j, g := range st.Gates {
			ps.Gates = append(ps.Gates, resolveGate(g, stepNames[i][j]))
		}
		p.Steps = append(p.Steps, ps)
	}
	p.Rollback = PlanRollback{Mode: s.Rollback.Mode, Pause: s.Rollback.Pause.Duration}
	if p.Rollback.Mode == "" {
		p.Rollback.Mode = RollbackImmediate
	}
	p.OnDrift = s.OnDrift
	if p.OnDrift == "" {
		p.OnDrift = DriftPause
	}
	for _, pct := range s.Rollback.Steps {
		p.Rollback.Steps = append(p.Rollback.Steps, percentWeights(pct))
	}
	return p
}

// resolveGate returns a deep copy of g with its name and every default set, so that the
// engine never meets a nil ratio or a zero count.
func resolveGate(g Gate, name string) Gate {
	out := Gate{Name: name}
	if g.HTTP != nil {
		h := *g.HTTP
		h.Clusters = maps.Clone(h.Clusters)
		h.ExpectStatus = slices.Clone(h.ExpectStatus)
		if h.Requests == 0 {
			h.Requests = DefaultHTTPRequests
		}
		if h.Timeout.Duration == 0 {
			h.Timeout.Duration = DefaultHTTPTimeout
		}
		h.MinSuccessRatio = new(orDefault(h.MinSuccessRatio, defaultMinRatio))
		h.LatencySlack = new(orDefault(h.LatencySlack, DefaultLatencySlack))
		if h.Latency != nil {
			l := *h.Latency
			if l.Percentile == 0 {
				l.Percentile = DefaultPercentile
			}
			h.Latency = &l
		}
		out.HTTP = &h
	}
	if g.Prometheus != nil {
		m := *g.Prometheus
		if m.Min != nil {
			m.Min = new(*m.Min)
		}
		if m.Max != nil {
			m.Max = new(*m.Max)
		}
		if m.NoData == "" {
			m.NoData = noDataFail
		}
		out.Prometheus = &m
	}
	if g.DNS != nil {
		d := *g.DNS
		d.Servers = slices.Clone(d.Servers)
		if d.Samples == 0 {
			d.Samples = DefaultDNSSamples
		}
		d.Tolerance = new(orDefault(d.Tolerance, DefaultDNSTolerance))
		out.DNS = &d
	}
	if g.TargetHealth != nil {
		h := *g.TargetHealth
		if h.MinHealthy == 0 {
			h.MinHealthy = DefaultMinHealthy
		}
		out.TargetHealth = &h
	}
	if g.ALBTraffic != nil {
		a := *g.ALBTraffic
		a.Tolerance = new(orDefault(a.Tolerance, DefaultALBTolerance))
		if a.MinRequests == 0 {
			a.MinRequests = DefaultMinRequests
		}
		if a.MaxErrorRate != nil {
			a.MaxErrorRate = new(*a.MaxErrorRate)
		}
		if a.MaxResponseTime != nil {
			a.MaxResponseTime = new(*a.MaxResponseTime)
		}
		if a.Period == 0 {
			a.Period = DefaultCloudWatchPeriod
		}
		out.ALBTraffic = &a
	}
	if g.CloudMapDiscovery != nil {
		d := *g.CloudMapDiscovery
		d.Tolerance = new(orDefault(d.Tolerance, DefaultCloudMapTolerance))
		out.CloudMapDiscovery = &d
	}
	return out
}

func orDefault(v *float64, def float64) float64 {
	if v == nil {
		return def
	}
	return *v
}

// normalizeZones returns spec.zones normalised as the records' names are; nil for none.
func normalizeZones(zones []string) []string {
	if len(zones) == 0 {
		return nil
	}
	out := make([]string, len(zones))
	for i, z := range zones {
		out[i] = endpoint.NormalizeName(z)
	}
	return out
}
