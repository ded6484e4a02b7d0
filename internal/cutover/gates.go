package cutover

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// GateClients are what gates call besides the URLs their specs name.
type GateClients struct {
	// DNSServers are asked by DNS gates whose spec lists no servers (the zone's
	// authoritative servers, as the caller knows them).
	DNSServers []string
	// ELB reads target health for targetHealth gates.
	ELB gate.TargetHealthAPI
	// CloudWatch reads the ALB's metrics for albTraffic gates.
	CloudWatch gate.MetricsAPI
	// CloudWatchDelay is how long after a period ends CloudWatch holds all of it: the
	// plan's spec.alb.cloudWatch.delay (spec.Plan.CloudWatchDelay).
	CloudWatchDelay time.Duration
	// ServiceDiscovery calls DiscoverInstances for cloudMapDiscovery gates, with the
	// plan's service and query, CloudMap.
	ServiceDiscovery gate.DiscoveryAPI
	CloudMap         *spec.CloudMap
}

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
		return gate.NewDNS(g.Name, d)
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

// gateClients are the clients cfg gives its gates.
func (cfg Config) gateClients() GateClients {
	c := GateClients{DNSServers: cfg.DNSServers, CloudWatch: cfg.CloudWatch}
	if cfg.Plan != nil {
		c.CloudWatchDelay = cfg.Plan.CloudWatchDelay
		c.CloudMap = cfg.Plan.CloudMap
	}
	if cfg.ServiceDiscovery != nil {
		c.ServiceDiscovery = cfg.ServiceDiscovery
	}
	if cfg.ELB != nil {
		c.ELB = cfg.ELB
	}
	return c
}
