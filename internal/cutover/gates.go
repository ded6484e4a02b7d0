package cutover

import (
	"context"
	"fmt"
	"slices"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// GateClients are what gates call besides the URLs their specs name (lever.GateClients:
// a lever's factory gives them with the lever).
type GateClients = lever.GateClients

// NewGate builds the gate a spec describes, with the clients it calls.
func NewGate(g spec.Gate, c GateClients) (Gate, error) {
	switch {
	case g.HTTP != nil:
		return gate.NewHTTP(g.Name, *g.HTTP)
	case g.Prometheus != nil:
		return gate.NewPrometheus(g.Name, *g.Prometheus)
	case g.DNS != nil:
		d := *g.DNS
		if len(d.Servers) == 0 {
			if len(c.DNSServers) == 0 {
				return nil, fmt.Errorf("gate %s: dns gate without servers: list them in the plan (servers) or give --dns-server", g.Name)
			}
			d.Servers = slices.Clone(c.DNSServers)
		}
		return gate.NewDNS(g.Name, d, gate.WithSampleNames(d.SampleNames))
	case g.TargetHealth != nil:
		return gate.NewTargetHealth(g.Name, *g.TargetHealth, c.ELB)
	case g.ALBTraffic != nil:
		return gate.NewALBTraffic(g.Name, *g.ALBTraffic, c.CloudWatch, c.CloudWatchDelay)
	case g.CloudMapDiscovery != nil:
		return gate.NewCloudMapDiscovery(g.Name, *g.CloudMapDiscovery, c.CloudMap, c.ServiceDiscovery)
	}
	return nil, fmt.Errorf("gate %s: no kind set", g.Name)
}

// Prechecker is a gate that also judges a step before its weights are written: a failure
// fails the step with nothing written (gate.TargetHealth: no traffic onto a target group
// without a healthy target).
type Prechecker interface {
	Precheck(ctx context.Context, s gate.Step) gate.Result
}

// newResidual builds the retire check's reader of the from cluster's request rate: the
// plan's metrics endpoint or Prometheus query, or the from target group's CloudWatch
// RequestCount, found in l.
func newResidual(rt spec.Retire, p *spec.Plan, cw gate.MetricsAPI, l Snapshot) (*gate.Residual, error) {
	if rt.CloudWatch == nil {
		return gate.NewResidual(rt)
	}
	for _, g := range l.GateInput(nil).TargetGroups {
		if g.Cluster == p.From {
			return gate.NewALBResidual(rt, cw, g, p.CloudWatchDelay)
		}
	}
	return nil, fmt.Errorf("retire: cloudWatch: the listener rules have no target group for %s", p.From)
}
