package sandbox

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/crossfade-io/crossfade/internal/sandbox/albproxy"
	"github.com/crossfade-io/crossfade/internal/sandbox/cloudwatchapi"
	"github.com/crossfade-io/crossfade/internal/sandbox/elb"
	"github.com/crossfade-io/crossfade/internal/sandbox/targetaddr"
	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

// This file joins the ELBv2 model (internal/sandbox/elb) to the weighted proxy that moves
// the traffic (internal/sandbox/albproxy), and the proxy's counts to the CloudWatch API:
//
//   - every ELBv2 snapshot becomes one albproxy.Config, applied before the API call that
//     made the change returns (a weight is live when ModifyRule answers, as on ALB);
//   - DescribeTargetHealth reads the proxy's health checks;
//   - GetMetricData reads the proxy's per-second buckets, by ARN suffix as CloudWatch's
//     LoadBalancer and TargetGroup dimensions name them;
//   - each ALB's DNS name answers 127.0.0.1 in the sandbox's DNS server when a Route 53
//     alias points at it;
//   - every target is addressed as registered (an instance as its private IP), and the
//     proxy connects to it only through the sandbox's targetaddr.Map: a loopback backend
//     or nothing (PUT /_sandbox/addresses).
//
// Locking. elb.Store calls the subscriber on the writer's goroutine while holding its
// write lock, so every snapshot reaches the proxy in version order and no later write can
// start before the proxy has it. The conversion is a walk over the snapshot; Apply takes
// the proxy's own lock and each group's lock only for bookkeeping (health checks probe
// outside them), binds new listeners with net.Listen on 127.0.0.1:0 (a local system call
// that waits on no peer), and closes removed ones without waiting for their requests. So
// Apply never blocks on the network or on a client, and doing it under the store's lock
// costs a write well under a millisecond while giving the guarantee that matters: when
// CreateListener, ModifyRule or DeregisterTargets answers, the proxy already routes by it.
// Handing snapshots to a goroutine would lose that guarantee for nothing. The proxy never
// calls back into the store, and the store calls the health source outside its locks, so
// the lock order is always store → proxy → group: no cycle.

// loopbackV4 is where every sandbox listener is served and what an ALB's DNS name answers.
var loopbackV4 = netip.MustParseAddr("127.0.0.1")

// albOptions are what the bridge takes beyond the stores.
type albOptions struct {
	// Dialer is how the proxy reaches targets (albproxy.Options.Dialer); nil: loopback
	// targets only.
	Dialer *targetaddr.Dialer
	// InstanceIP is an EC2 instance's private IP, by instance id; nil: no instances.
	InstanceIP func(id string) (netip.Addr, bool)
}

// albBridge keeps the proxy in step with the ELBv2 store.
type albBridge struct {
	log   *slog.Logger
	proxy *albproxy.Proxy
	lbs   *elb.Store
	zones *zones.Store
	// instanceIP is an EC2 instance's private IP, by instance id (nil: no instances): an
	// instance target is served at that IP and its port, through the address map like
	// any target. An instance without one has no route.
	instanceIP func(id string) (netip.Addr, bool)
	// registered maps, per target group ARN, the proxy's address of a target to the
	// address the store knows it by (Target.Address), where the two differ (instances).
	// Written by apply, read by DescribeTargetHealth outside the store's locks.
	registered atomic.Pointer[map[string]map[string]string]

	unsubscribe func()
	// dnsNames are the load balancer names the bridge has handled: true where it set the
	// DNS answer (so it removes only those), false where it left the name alone. Touched
	// only by apply, which the store serialises.
	dnsNames map[string]bool
}

// startALB starts the proxy, subscribes it to the ELBv2 store (which applies the current
// state, persisted listeners included, at once) and makes it the store's health source.
func startALB(ctx context.Context, log *slog.Logger, lbs *elb.Store, zs *zones.Store, opts albOptions) (*albBridge, error) {
	p := albproxy.New(albproxy.Options{Logger: log, Dialer: opts.Dialer})
	// Close stops the proxy, not the caller's context: the sandbox's servers all outlive
	// the context they were started with until Close.
	if err := p.Start(context.WithoutCancel(ctx)); err != nil {
		return nil, fmt.Errorf("alb proxy: %w", err)
	}
	b := &albBridge{log: log, proxy: p, lbs: lbs, zones: zs, instanceIP: opts.InstanceIP, dnsNames: map[string]bool{}}
	lbs.SetHealthSource(proxyHealth{p: p, registered: &b.registered})
	b.unsubscribe = lbs.Subscribe(b.apply)
	return b, nil
}

// close stops following the store, then stops every listener, health check and request
// of the proxy.
func (b *albBridge) close() error {
	b.unsubscribe()
	b.lbs.SetHealthSource(nil)
	return b.proxy.Close()
}

// apply hands one snapshot to the proxy; it runs under the store's write lock.
func (b *albBridge) apply(snap elb.Snapshot) {
	began := time.Now()
	cfg, registered := proxyConfig(snap, b.instanceIP)
	b.registered.Store(&registered)
	if err := b.proxy.Apply(cfg); err != nil {
		// Apply changes nothing when it fails. The one failure a config from a valid store
		// can meet is a new listener that cannot bind (no free port or descriptor): route
		// by the new state on the listeners already served rather than keep the old
		// weights everywhere, and try the others again with the next change.
		b.log.Error("alb proxy: applying the ELBv2 state", "version", snap.Version, "err", err)
		if err := b.proxy.Apply(b.boundOnly(cfg)); err != nil {
			b.log.Error("alb proxy: applying the ELBv2 state without its new listeners", "version", snap.Version, "err", err)
		}
	}
	b.syncDNS(snap)
	b.log.Debug("alb proxy: state applied", "version", snap.Version, "took", time.Since(began))
}

// boundOnly is cfg without the listeners the proxy does not serve yet.
func (b *albBridge) boundOnly(cfg albproxy.Config) albproxy.Config {
	out := cfg
	out.LoadBalancers = make([]albproxy.LoadBalancer, len(cfg.LoadBalancers))
	for i, lb := range cfg.LoadBalancers {
		lb.Listeners = slices.DeleteFunc(slices.Clone(lb.Listeners), func(l albproxy.Listener) bool {
			return b.proxy.Addr(l.ID) == ""
		})
		out.LoadBalancers[i] = lb
	}
	return out
}

// syncDNS makes each load balancer's DNS name answer 127.0.0.1, for Route 53 aliases that
// name it, and forgets the names of load balancers that are gone. Clients still need the
// listener's port (GET /_sandbox/elb/listeners): the proxy does not listen on 80 or 443. A
// name whose addresses someone set through /_sandbox/loadbalancers/ is left as they set it.
func (b *albBridge) syncDNS(snap elb.Snapshot) {
	want := map[string]bool{}
	for _, lb := range snap.LoadBalancers {
		want[lb.DNSName] = true
		if _, handled := b.dnsNames[lb.DNSName]; handled {
			continue
		}
		b.dnsNames[lb.DNSName] = false
		if _, taken := b.zones.LoadBalancerInfo(lb.DNSName); taken {
			continue
		}
		if _, err := b.zones.SetLoadBalancer(lb.DNSName, []netip.Addr{loopbackV4}); err != nil {
			b.log.Warn("alb proxy: load balancer DNS name", "load_balancer", lb.Name, "dns_name", lb.DNSName, "err", err)
			continue
		}
		b.dnsNames[lb.DNSName] = true
	}
	for name, ours := range b.dnsNames {
		if want[name] {
			continue
		}
		delete(b.dnsNames, name)
		if info, ok := b.zones.LoadBalancerInfo(name); ours && ok && slices.Equal(info.Addresses, []netip.Addr{loopbackV4}) {
			b.zones.DeleteLoadBalancer(name)
		}
	}
}

// listenerAddrs reports where each listener is served, by listener ARN.
func (b *albBridge) listenerAddrs(snap elb.Snapshot) map[string]string {
	out := make(map[string]string, len(snap.Listeners))
	for _, l := range snap.Listeners {
		if addr := b.proxy.Addr(l.ARN); addr != "" {
			out[l.ARN] = addr
		}
	}
	return out
}

// proxyConfig converts an ELBv2 snapshot into the proxy's whole desired state. Every ID is
// an ARN. Every listener is served on a free loopback port, kept for as long as the
// listener exists (HTTPS listeners too, as plain HTTP: the sandbox has no certificates).
// An action other than forward (fixed-response, redirect) becomes a forward to no group,
// which the proxy answers 503. Draining targets are left out: the proxy drains what
// disappears from a group for the group's deregistration delay.
//
// A target is its registered address, except an instance, which is its private IP
// (instanceIP) and port; registered maps those back to the store's addresses, per group.
func proxyConfig(snap elb.Snapshot, instanceIP func(id string) (netip.Addr, bool)) (cfg albproxy.Config, registered map[string]map[string]string) {
	registered = map[string]map[string]string{}
	for _, tg := range snap.TargetGroups {
		if tg.IsTCP() {
			continue // the NLB's TCP proxy checks and serves it (nlb.go)
		}
		g := albproxy.TargetGroup{
			ID:                  tg.ARN,
			DeregistrationDelay: tg.DeregistrationDelay(),
			HealthCheck: albproxy.HealthCheck{
				Disabled:           !tg.HealthCheck.Enabled,
				Path:               tg.HealthCheck.Path,
				Interval:           time.Duration(tg.HealthCheck.IntervalSeconds) * time.Second,
				Timeout:            time.Duration(tg.HealthCheck.TimeoutSeconds) * time.Second,
				HealthyThreshold:   tg.HealthCheck.HealthyThreshold,
				UnhealthyThreshold: tg.HealthCheck.UnhealthyThreshold,
				Matcher:            tg.HealthCheck.Matcher,
			},
		}
		seen := map[string]bool{}
		for _, tr := range tg.Targets {
			if tr.Draining() {
				continue
			}
			addr, ok := targetAddr(tr, instanceIP)
			if !ok {
				// An instance that is not running (or that EC2 does not know): ELBv2
				// reports it unused, Target.InvalidState, and the proxy neither checks it
				// nor sends it anything. elb.Store re-applies when EC2 changes.
				continue
			}
			if seen[addr] {
				// Two instances with one private IP: the proxy can address only one, and a
				// duplicate would make the whole config invalid.
				continue
			}
			seen[addr] = true
			g.Targets = append(g.Targets, addr)
			if addr != tr.Address() {
				if registered[tg.ARN] == nil {
					registered[tg.ARN] = map[string]string{}
				}
				registered[tg.ARN][addr] = tr.Address()
			}
		}
		cfg.TargetGroups = append(cfg.TargetGroups, g)
	}
	for _, lb := range snap.LoadBalancers {
		if lb.IsNetwork() {
			continue // the NLB's TCP proxy serves its listeners (nlb.go)
		}
		plb := albproxy.LoadBalancer{ID: lb.ARN}
		for _, l := range snap.Listeners {
			if l.LoadBalancerARN != lb.ARN {
				continue
			}
			pl := albproxy.Listener{ID: l.ARN, Addr: "127.0.0.1:0", DefaultAction: forwardOf(l.DefaultActions)}
			for _, r := range snap.ListenerRules(l.ARN) {
				if r.IsDefault {
					continue
				}
				pr := albproxy.Rule{ID: r.ARN, Priority: r.Priority, Action: forwardOf(r.Actions)}
				for _, c := range r.Conditions {
					pr.Conditions = append(pr.Conditions, albproxy.Condition{Field: c.Field, Values: c.Patterns})
				}
				pl.Rules = append(pl.Rules, pr)
			}
			plb.Listeners = append(plb.Listeners, pl)
		}
		cfg.LoadBalancers = append(cfg.LoadBalancers, plb)
	}
	return cfg, registered
}

// targetAddr is the address the proxy knows a target by: IP:port, with an instance's
// private IP for an instance. ok is false for an instance with none (not running, or not
// known to EC2): it is not served at all. Without EC2 (instanceIP nil) an instance keeps
// its id ("i-0abc:8080"), which has no route: unhealthy, never dialled.
func targetAddr(tr elb.Target, instanceIP func(id string) (netip.Addr, bool)) (addr string, ok bool) {
	if !strings.HasPrefix(tr.ID, "i-") || instanceIP == nil {
		return tr.Address(), true
	}
	ip, ok := instanceIP(tr.ID)
	if !ok {
		return "", false
	}
	return netip.AddrPortFrom(ip.Unmap(), uint16(tr.Port)).String(), true
}

// forwardOf is the forward action among a rule's actions: its weighted groups and its
// group stickiness. A rule has at most one, and it is the last.
func forwardOf(actions []elb.Action) albproxy.ForwardAction {
	var fa albproxy.ForwardAction
	f := forwardConfig(actions)
	if f == nil {
		return fa
	}
	for _, w := range f.TargetGroups {
		fa.TargetGroups = append(fa.TargetGroups, albproxy.WeightedTargetGroup{TargetGroupID: w.TargetGroupARN, Weight: w.Weight})
	}
	if s := f.Stickiness; s.Enabled {
		fa.Stickiness = albproxy.GroupStickiness{Enabled: true, Duration: time.Duration(s.DurationSeconds) * time.Second}
	}
	return fa
}

// forwardConfig is the forward action's configuration among actions (a rule's or a
// listener's default actions; ELBv2 allows at most one forward, and it is the last), or
// nil when none forwards. Both the ALB's and the NLB's proxy read their weights here.
func forwardConfig(actions []elb.Action) *elb.ForwardConfig {
	for _, a := range actions {
		if a.Type == elb.ActionForward && a.Forward != nil {
			return a.Forward
		}
	}
	return nil
}

// proxyHealth is the proxy's health checks as the ELBv2 store reads them, by the store's
// target addresses.
type proxyHealth struct {
	p          *albproxy.Proxy
	registered *atomic.Pointer[map[string]map[string]string]
}

// TargetHealth implements elb.HealthSource.
func (h proxyHealth) TargetHealth(targetGroupARN string) map[string]elb.TargetHealth {
	checked := h.p.TargetHealth(targetGroupARN)
	var names map[string]string
	if r := h.registered.Load(); r != nil {
		names = (*r)[targetGroupARN]
	}
	out := make(map[string]elb.TargetHealth, len(checked))
	for addr, th := range checked {
		if name, ok := names[addr]; ok {
			addr = name
		}
		d := th.Description
		if th.Reason == albproxy.ReasonInitialHealthChecking {
			d = "Initial health checks in progress" // ELBv2's words, as the store gives them
		}
		out[addr] = elb.TargetHealth{State: string(th.State), Reason: th.Reason, Description: d}
	}
	return out
}

// proxyMetrics serves CloudWatch's AWS/ApplicationELB metrics from the proxy's per-second
// buckets. The proxy keys its series by ARN; CloudWatch's dimensions carry ARN suffixes.
type proxyMetrics struct{ p *albproxy.Proxy }

// Series implements cloudwatchapi.Source.
func (m proxyMetrics) Series(_ context.Context, lb, tg, metric string, from, to time.Time) ([]cloudwatchapi.Point, error) {
	key, ok := m.key(lb, tg)
	if !ok {
		return nil, nil
	}
	buckets := m.p.Metrics(key, from, to)
	out := make([]cloudwatchapi.Point, 0, len(buckets))
	for _, b := range buckets {
		switch metric {
		case cloudwatchapi.RequestCount:
			out = append(out, cloudwatchapi.CountPoint(b.Start, float64(b.RequestCount)))
		case cloudwatchapi.HTTPCodeTarget5XXCount:
			out = append(out, cloudwatchapi.CountPoint(b.Start, float64(b.HTTPCodeTarget5XX)))
		case cloudwatchapi.HTTPCodeELB5XXCount:
			out = append(out, cloudwatchapi.CountPoint(b.Start, float64(b.HTTPCodeELB5XX())))
		case cloudwatchapi.TargetResponseTime:
			if b.TargetResponseTimeCount == 0 {
				continue
			}
			out = append(out, cloudwatchapi.Point{Time: b.Start, SampleCount: float64(b.TargetResponseTimeCount),
				Sum: b.TargetResponseTimeSum.Seconds(), Minimum: b.TargetResponseTimeMin.Seconds(), Maximum: b.TargetResponseTimeMax.Seconds()})
		}
	}
	return out, nil
}

// key finds the proxy's series for a LoadBalancer dimension ("app/<name>/<hex>") and an
// optional TargetGroup one ("targetgroup/<name>/<hex>"). The proxy keeps the series of a
// load balancer after it is deleted, so its history stays readable, as in CloudWatch.
func (m proxyMetrics) key(lb, tg string) (albproxy.SeriesKey, bool) {
	if lb == "" {
		return albproxy.SeriesKey{}, false
	}
	for _, k := range m.p.SeriesKeys() {
		if lbDimension(k.LoadBalancer) == lb && (tg == "" && k.TargetGroup == "" || tg != "" && tgDimension(k.TargetGroup) == tg) {
			return k, true
		}
	}
	return albproxy.SeriesKey{}, false
}

// arnResource is an ARN's resource part: what follows arn:partition:service:region:account:.
func arnResource(arn string) string {
	f := strings.SplitN(arn, ":", 6)
	if len(f) != 6 {
		return ""
	}
	return f[5]
}

// lbDimension is CloudWatch's LoadBalancer dimension of a load balancer ARN:
// "app/<name>/<hex>".
func lbDimension(arn string) string {
	rest, ok := strings.CutPrefix(arnResource(arn), "loadbalancer/")
	if !ok {
		return ""
	}
	return rest
}

// tgDimension is CloudWatch's TargetGroup dimension of a target group ARN:
// "targetgroup/<name>/<hex>".
func tgDimension(arn string) string {
	if r := arnResource(arn); strings.HasPrefix(r, "targetgroup/") {
		return r
	}
	return ""
}
