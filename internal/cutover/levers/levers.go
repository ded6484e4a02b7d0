// Package levers is the one place that maps a plan's lever to its constructor: the
// factory cmd (and any embedder) gives the cutover engine, building the lever a plan pulls
// and the clients its gates call from an AWS configuration and endpoints.
package levers

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/alb"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/cloudmap"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/route53"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// Env is what New builds levers and gate clients from. Nothing in it is called until a
// plan's lever is built, and building one calls no AWS API: a runner that only replays
// its journal (or takes commands) needs no credentials.
type Env struct {
	// AWS loads the configuration (credentials, region, retries) of the ALB and Cloud Map
	// levers' clients and of their gates'; nil when the caller has none: only a Route 53
	// plan can then be pulled.
	AWS func() (aws.Config, error)
	// ELBv2, CloudWatch and ServiceDiscovery are those APIs' endpoints ("" is AWS's),
	// e.g. the sandbox's URL.
	ELBv2, CloudWatch, ServiceDiscovery string
	// DNS builds the Route 53 lever's provider; nil leaves the lever without one (found
	// when it is pulled). Registry finds the members' ownership records, with the TXT
	// affixes their publishers use.
	DNS      func() (route53.DNS, error)
	Registry *registry.TXT
}

// Kind is the lever p pulls: lever.ALB for spec.alb, lever.CloudMap for spec.cloudMap,
// else lever.Route53 (its records).
func Kind(p *spec.Plan) string {
	switch {
	case p.ALB != nil:
		return lever.ALB
	case p.CloudMap != nil:
		return lever.CloudMap
	}
	return lever.Route53
}

// New returns the factory of every lever crossfade has, over env.
func New(env Env) lever.Factory {
	return func(p *spec.Plan) (lever.Lever, lever.GateClients, error) {
		switch kind := Kind(p); kind {
		case lever.ALB, lever.CloudMap:
			if env.AWS == nil {
				return nil, lever.GateClients{}, fmt.Errorf("cutover %s pulls the %s lever (spec.%s), and no AWS configuration is given", p.Name, kind, specField(kind))
			}
			cfg, err := env.AWS()
			if err != nil {
				return nil, lever.GateClients{}, fmt.Errorf("cutover %s: %s lever: AWS configuration: %w", p.Name, kind, err)
			}
			if kind == lever.CloudMap {
				lv, gc := CloudMap(p, cloudmap.NewServiceDiscovery(cfg, env.ServiceDiscovery))
				return lv, gc, nil
			}
			lv, gc := ALB(p, alb.NewELBv2(cfg, env.ELBv2), alb.NewCloudWatch(cfg, env.CloudWatch))
			return lv, gc, nil
		}
		var dns route53.DNS
		if env.DNS != nil {
			d, err := env.DNS()
			if err != nil {
				return nil, lever.GateClients{}, fmt.Errorf("cutover %s: route53 lever: %w", p.Name, err)
			}
			dns = d
		}
		lv, gc := Route53(p, dns, env.Registry)
		return lv, gc, nil
	}
}

// specField is the plan field that picks lever kind.
func specField(kind string) string {
	if kind == lever.ALB {
		return "alb"
	}
	return "cloudMap"
}

// Route53 is the Route 53 lever of p over dns and reg, and its gates' clients (none: DNS
// gates ask the servers the engine gives them).
func Route53(p *spec.Plan, dns route53.DNS, reg *registry.TXT) (lever.Lever, lever.GateClients) {
	return route53.New(p, dns, reg), lever.GateClients{}
}

// ALB is the ALB lever of p over elb, and its gates' clients: targetHealth gates read elb,
// albTraffic gates and retire.cloudWatch read cw.
func ALB(p *spec.Plan, elb alb.ELBv2, cw gate.MetricsAPI) (lever.Lever, lever.GateClients) {
	return alb.New(p, elb), lever.GateClients{ELB: elb, CloudWatch: cw, CloudWatchDelay: p.CloudWatchDelay}
}

// CloudMap is the Cloud Map lever of p over sd, and its gates' clients:
// cloudMapDiscovery gates call sd with the plan's service and query.
func CloudMap(p *spec.Plan, sd cloudmap.ServiceDiscovery) (lever.Lever, lever.GateClients) {
	return cloudmap.New(p, sd), lever.GateClients{ServiceDiscovery: sd, CloudMap: p.CloudMap}
}
