package sandbox

import (
	"context"
	"log/slog"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"

	"github.com/crossfade-io/crossfade/internal/sandbox/cloudwatchapi"
	"github.com/crossfade-io/crossfade/internal/sandbox/elb"
	"github.com/crossfade-io/crossfade/internal/sandbox/nlbproxy"
	"github.com/crossfade-io/crossfade/internal/sandbox/targetaddr"
)

// This file joins the ELBv2 model's Network Load Balancers to the weighted TCP proxy that
// serves them (internal/sandbox/nlbproxy), as alb.go does for ALBs:
//
//   - every ELBv2 snapshot's NLBs, their TCP listeners and TCP target groups become one
//     nlbproxy.Config, applied under the store's write lock, so a weight is live for new
//     connections when ModifyListener answers;
//   - DescribeTargetHealth of a TCP target group reads the proxy's TCP health checks; the
//     store takes one health source, so the bridge wraps the one it finds (the ALB
//     proxy's) and answers TCP groups itself;
//   - GetMetricData's AWS/NetworkELB metrics read the proxy's per-second flow counts, by
//     load balancer only, as AWS publishes them (no TargetGroup dimension).
//
// The proxy dials targets only through the sandbox's targetaddr.Map. Lock order as in
// alb.go: store → proxy → group; the proxy never calls back into the store.

// nlbBridge keeps the NLB proxy in step with the ELBv2 store.
type nlbBridge struct {
	log   *slog.Logger
	proxy *nlbproxy.Proxy
	lbs   *elb.Store
	// other is the health source the bridge found (the ALB proxy's): it answers every
	// group that is not TCP.
	other elb.HealthSource
	// instanceIP is an EC2 instance's private IP, by instance id (nil: none).
	instanceIP func(id string) (netip.Addr, bool)
	// registered maps, per TCP target group ARN, the proxy's address of a target to the
	// store's (Target.Address) where they differ (instance targets). Written by apply.
	registered atomic.Pointer[map[string]map[string]string]

	unsubscribe func()
}

// startNLB starts the TCP proxy with a dialer over addrs, subscribes it to the ELBv2 store
// and makes it, combined with the store's current health source, the store's health source.
// Start it after the ALB bridge and close it before.
func startNLB(log *slog.Logger, lbs *elb.Store, dialer *targetaddr.Dialer, instanceIP func(string) (netip.Addr, bool)) (*nlbBridge, error) {
	p, err := nlbproxy.New(nlbproxy.Options{Logger: log, Dialer: dialer})
	if err != nil {
		return nil, err
	}
	b := &nlbBridge{log: log, proxy: p, lbs: lbs, other: lbs.HealthSource(), instanceIP: instanceIP}
	lbs.SetHealthSource(b)
	b.unsubscribe = lbs.Subscribe(b.apply)
	return b, nil
}

// close stops following the store, gives the store back the health source it had, and
// stops every listener, health check and connection of the proxy.
func (b *nlbBridge) close() error {
	b.unsubscribe()
	b.lbs.SetHealthSource(b.other)
	return b.proxy.Close()
}

// apply hands one snapshot's NLBs to the proxy; it runs under the store's write lock.
func (b *nlbBridge) apply(snap elb.Snapshot) {
	cfg, registered := b.proxyConfig(snap)
	b.registered.Store(&registered)
	if err := b.proxy.Apply(cfg); err != nil {
		// Nothing changed; the next change tries again.
		b.log.Error("nlb proxy: applying the ELBv2 state", "version", snap.Version, "err", err)
	}
}

// proxyConfig converts a snapshot's NLB part: its TCP target groups (draining targets left
// out: the proxy drains what disappears) and its TCP listeners' default forward actions.
func (b *nlbBridge) proxyConfig(snap elb.Snapshot) (nlbproxy.Config, map[string]map[string]string) {
	var cfg nlbproxy.Config
	registered := map[string]map[string]string{}
	for _, tg := range snap.TargetGroups {
		if !tg.IsTCP() {
			continue
		}
		hc := tg.HealthCheck
		g := nlbproxy.TargetGroup{ID: tg.ARN, DeregistrationDelay: tg.DeregistrationDelay(), ConnectionTermination: tg.ConnectionTermination(),
			HealthCheck: nlbproxy.HealthCheck{Port: hc.Port, Interval: time.Duration(hc.IntervalSeconds) * time.Second,
				Timeout: time.Duration(hc.TimeoutSeconds) * time.Second, HealthyThreshold: hc.HealthyThreshold, UnhealthyThreshold: hc.UnhealthyThreshold}}
		for _, tr := range tg.Targets {
			if tr.Draining() {
				continue
			}
			if strings.HasPrefix(tr.ID, "i-") && b.instanceIP == nil {
				// Without EC2 an instance has no address at all: unlike the ALB, which
				// keeps an unroutable "i-…:port" to report unhealthy, the TCP proxy leaves
				// it out (never a placeholder an address mapping could route).
				continue
			}
			addr, ok := targetAddr(tr, b.instanceIP)
			if !ok {
				continue // not running, or unknown to EC2: unused, Target.InvalidState
			}
			if addr != tr.Address() {
				if registered[tg.ARN] == nil {
					registered[tg.ARN] = map[string]string{}
				}
				registered[tg.ARN][addr] = tr.Address()
			}
			g.Targets = append(g.Targets, addr)
		}
		cfg.TargetGroups = append(cfg.TargetGroups, g)
	}
	for _, lb := range snap.LoadBalancers {
		if !lb.IsNetwork() {
			continue
		}
		for _, l := range snap.Listeners {
			if l.LoadBalancerARN != lb.ARN || l.Protocol != elb.ProtocolTCP {
				continue
			}
			pl := nlbproxy.Listener{ID: l.ARN, LoadBalancer: lb.ARN, Addr: "127.0.0.1:0"}
			if f := forwardConfig(l.DefaultActions); f != nil {
				for _, w := range f.TargetGroups {
					pl.TargetGroups = append(pl.TargetGroups, nlbproxy.WeightedTargetGroup{TargetGroupID: w.TargetGroupARN, Weight: w.Weight})
				}
			}
			cfg.Listeners = append(cfg.Listeners, pl)
		}
	}
	return cfg, registered
}

// TargetHealth implements elb.HealthSource: the proxy's TCP checks for a TCP group, the
// other source's answer for any other.
func (b *nlbBridge) TargetHealth(targetGroupARN string) map[string]elb.TargetHealth {
	checked := b.proxy.TargetHealth(targetGroupARN)
	if checked == nil {
		if b.other == nil {
			return nil
		}
		return b.other.TargetHealth(targetGroupARN)
	}
	var reg map[string]string
	if m := b.registered.Load(); m != nil {
		reg = (*m)[targetGroupARN]
	}
	out := make(map[string]elb.TargetHealth, len(checked))
	for addr, th := range checked {
		if a, ok := reg[addr]; ok {
			addr = a
		}
		out[addr] = elb.TargetHealth{State: string(th.State), Reason: th.Reason, Description: th.Description}
	}
	return out
}

// listenerAddrs reports where each NLB listener is served, by listener ARN.
func (b *nlbBridge) listenerAddrs(snap elb.Snapshot) map[string]string {
	out := map[string]string{}
	for _, l := range snap.Listeners {
		if addr := b.proxy.Addr(l.ARN); addr != "" {
			out[l.ARN] = addr
		}
	}
	return out
}

// lbMetrics serves CloudWatch for both families: AWS/NetworkELB series (a LoadBalancer
// dimension "net/…") from the NLB proxy, the rest from the ALB's source.
type lbMetrics struct {
	alb cloudwatchapi.Source
	nlb *nlbBridge
}

// Series implements cloudwatchapi.Source.
func (m lbMetrics) Series(ctx context.Context, lb, tg, metric string, from, to time.Time) ([]cloudwatchapi.Point, error) {
	if !strings.HasPrefix(lb, "net/") {
		return m.alb.Series(ctx, lb, tg, metric, from, to)
	}
	if tg != "" {
		// AWS/NetworkELB has no per-target-group flow counts (the catalog refuses the
		// query before it gets here): never answer one, though the proxy counts them.
		return nil, nil
	}
	key, ok := m.nlb.seriesKey(lb, tg)
	if !ok {
		return nil, nil
	}
	buckets := m.nlb.proxy.Metrics(key, from, to)
	out := make([]cloudwatchapi.Point, 0, len(buckets))
	for _, bk := range buckets {
		switch metric {
		case cloudwatchapi.NewFlowCount:
			if bk.NewFlowCount > 0 {
				out = append(out, cloudwatchapi.CountPoint(bk.Start, float64(bk.NewFlowCount)))
			}
		case cloudwatchapi.ActiveFlowCount:
			out = append(out, cloudwatchapi.CountPoint(bk.Start, float64(bk.ActiveFlowCount)))
		case cloudwatchapi.TCPELBResetCount:
			if bk.ELBResetCount > 0 {
				out = append(out, cloudwatchapi.CountPoint(bk.Start, float64(bk.ELBResetCount)))
			}
		}
	}
	return out, nil
}

// seriesKey finds the proxy's series for a LoadBalancer dimension ("net/<name>/<hex>") and
// an optional TargetGroup one.
func (b *nlbBridge) seriesKey(lb, tg string) (nlbproxy.SeriesKey, bool) {
	for _, k := range b.proxy.SeriesKeys() {
		if lbDimension(k.LoadBalancer) == lb && (tg == "" && k.TargetGroup == "" || tg != "" && tgDimension(k.TargetGroup) == tg) {
			return k, true
		}
	}
	return nlbproxy.SeriesKey{}, false
}
