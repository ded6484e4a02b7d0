package spec

import (
	"maps"
	"slices"
)

// Hand-written deep copies, in the shape controller-gen writes them (DeepCopyInto and
// DeepCopy), so that a Cutover resource can embed Spec without generated code. Each
// starts from a shallow copy and replaces every pointer, slice and map; TestDeepCopy
// fills every field by reflection and fails on any left shared.

// copyPtr returns a pointer to a copy of *p; nil for nil.
func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// DeepCopyInto copies c into out, sharing no memory.
func (c *Cutover) DeepCopyInto(out *Cutover) {
	*out = *c
	c.Spec.DeepCopyInto(&out.Spec)
}

// DeepCopy returns a copy of c that shares no memory with it.
func (c *Cutover) DeepCopy() *Cutover {
	if c == nil {
		return nil
	}
	out := new(Cutover)
	c.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies s into out, sharing no memory.
func (s *Spec) DeepCopyInto(out *Spec) {
	*out = *s
	out.Zones = slices.Clone(s.Zones)
	out.Records = slices.Clone(s.Records)
	out.Select = copyPtr(s.Select)
	out.ALB = s.ALB.DeepCopy()
	if s.CloudMap != nil {
		out.CloudMap = new(CloudMap)
		s.CloudMap.DeepCopyInto(out.CloudMap)
	}
	if s.Steps != nil {
		out.Steps = make([]Step, len(s.Steps))
		for i := range s.Steps {
			s.Steps[i].DeepCopyInto(&out.Steps[i])
		}
	}
	out.Gates = copyGates(s.Gates)
	out.Rollback.Steps = slices.Clone(s.Rollback.Steps)
	out.TTL = copyPtr(s.TTL)
	if s.Retire != nil {
		r := *s.Retire
		r.Prometheus = copyPtr(r.Prometheus)
		r.CloudWatch = copyPtr(r.CloudWatch)
		out.Retire = &r
	}
}

// DeepCopy returns a copy of s that shares no memory with it.
func (s *Spec) DeepCopy() *Spec {
	if s == nil {
		return nil
	}
	out := new(Spec)
	s.DeepCopyInto(out)
	return out
}

// DeepCopy returns a copy of a that shares no memory with it.
func (a *ALB) DeepCopy() *ALB {
	if a == nil {
		return nil
	}
	out := *a
	out.ListenerRules = slices.Clone(a.ListenerRules)
	if a.Select != nil {
		out.Select = &ALBSelect{LoadBalancers: slices.Clone(a.Select.LoadBalancers)}
	}
	if a.CloudWatch != nil {
		out.CloudWatch = &ALBCloudWatch{Delay: copyPtr(a.CloudWatch.Delay)}
	}
	return &out
}

// DeepCopyInto copies c into out, sharing no memory.
func (c *CloudMap) DeepCopyInto(out *CloudMap) {
	*out = *c
	out.QueryParameters = maps.Clone(c.QueryParameters)
	out.OptionalParameters = maps.Clone(c.OptionalParameters)
}

// DeepCopyInto copies s into out, sharing no memory.
func (s *Step) DeepCopyInto(out *Step) {
	*out = *s
	out.Percent = copyPtr(s.Percent)
	out.Weights = copyPtr(s.Weights)
	out.Pause = copyPtr(s.Pause)
	out.Gates = copyGates(s.Gates)
}

func copyGates(in []Gate) []Gate {
	if in == nil {
		return nil
	}
	out := make([]Gate, len(in))
	for i := range in {
		in[i].DeepCopyInto(&out[i])
	}
	return out
}

// DeepCopyInto copies g into out, sharing no memory.
func (g *Gate) DeepCopyInto(out *Gate) {
	*out = *g
	if h := g.HTTP; h != nil {
		c := *h
		c.Clusters = maps.Clone(h.Clusters)
		c.ExpectStatus = slices.Clone(h.ExpectStatus)
		c.MinSuccessRatio = copyPtr(h.MinSuccessRatio)
		c.Latency = copyPtr(h.Latency)
		c.LatencySlack = copyPtr(h.LatencySlack)
		out.HTTP = &c
	}
	if p := g.Prometheus; p != nil {
		c := *p
		c.Max, c.Min = copyPtr(p.Max), copyPtr(p.Min)
		out.Prometheus = &c
	}
	if d := g.DNS; d != nil {
		c := *d
		c.Servers = slices.Clone(d.Servers)
		c.Tolerance = copyPtr(d.Tolerance)
		out.DNS = &c
	}
	out.TargetHealth = copyPtr(g.TargetHealth)
	if a := g.ALBTraffic; a != nil {
		c := *a
		c.Tolerance = copyPtr(a.Tolerance)
		c.MaxErrorRate = copyPtr(a.MaxErrorRate)
		c.MaxResponseTime = copyPtr(a.MaxResponseTime)
		out.ALBTraffic = &c
	}
	if d := g.CloudMapDiscovery; d != nil {
		c := *d
		c.Tolerance = copyPtr(d.Tolerance)
		out.CloudMapDiscovery = &c
	}
}
