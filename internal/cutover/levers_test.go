package cutover

import (
	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	leveralb "github.com/crossfade-io/crossfade/internal/cutover/lever/alb"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/cloudmap"
	lr53 "github.com/crossfade-io/crossfade/internal/cutover/lever/route53"
	"github.com/crossfade-io/crossfade/internal/cutover/levers"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// DNS is the Route 53 lever's provider, which the engine tests wrap to inject faults.
type DNS = lr53.DNS

// albLevers is the factory that pulls a plan's ALB lever over elb, its gates reading elb
// and cw.
func albLevers(elb leveralb.ELBv2, cw gate.MetricsAPI) lever.Factory {
	return func(p *spec.Plan) (lever.Lever, lever.GateClients, error) {
		lv, gc := levers.ALB(p, elb, cw)
		return lv, gc, nil
	}
}

// cloudMapLevers is the factory that pulls a plan's Cloud Map lever over sd.
func cloudMapLevers(sd cloudmap.ServiceDiscovery) lever.Factory {
	return func(p *spec.Plan) (lever.Lever, lever.GateClients, error) {
		lv, gc := levers.CloudMap(p, sd)
		return lv, gc, nil
	}
}
