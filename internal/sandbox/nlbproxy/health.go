package nlbproxy

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/crossfade-io/crossfade/internal/sandbox/elb"
	"github.com/crossfade-io/crossfade/internal/sandbox/targetaddr"
)

// State is a target's health state, named as DescribeTargetHealth names it: the values
// are the ELBv2 store's (elb), so that the proxies and the API can never disagree.
type State string

// The ELBv2 target health states the proxy reports.
const (
	StateInitial   State = elb.StateInitial
	StateHealthy   State = elb.StateHealthy
	StateUnhealthy State = elb.StateUnhealthy
	StateUnused    State = elb.StateUnused
	StateDraining  State = elb.StateDraining
)

// The ELBv2 reason codes the proxy reports.
const (
	ReasonRegistrationInProgress   = elb.ReasonRegistrationInProgress
	ReasonInitialHealthChecking    = elb.ReasonInitialHealthChecking
	ReasonFailedHealthChecks       = elb.ReasonFailedHealthChecks
	ReasonNotInUse                 = elb.ReasonNotInUse
	ReasonDeregistrationInProgress = elb.ReasonDeregistrationInProgress
)

// Health is one target's health: State, and for every state but healthy a Reason and a
// Description.
type Health struct {
	State       State
	Reason      string
	Description string
}

var (
	hInitial   = Health{StateInitial, ReasonRegistrationInProgress, "Target registration is in progress"}
	hChecking  = Health{StateInitial, ReasonInitialHealthChecking, "Initial health checks in progress"}
	hHealthy   = Health{State: StateHealthy}
	hNotInUse  = Health{StateUnused, ReasonNotInUse, "Target group is not configured to receive traffic from the load balancer"}
	hDraining  = Health{StateDraining, ReasonDeregistrationInProgress, "Target deregistration is in progress"}
	hConnError = Health{StateUnhealthy, ReasonFailedHealthChecks, "Health checks failed"}
)

// noRouteHealth is a target the sandbox has no route to: unhealthy, and never dialled.
func noRouteHealth(err error) Health {
	return Health{StateUnhealthy, ReasonFailedHealthChecks, "Health checks failed: " + err.Error()}
}

// target is one registration of an address in a group; a re-registration after a
// deregistration is a new target.
type target struct {
	addr string
	// Guarded by group.mu.
	health          Health
	okRun, failRun  int
	checked         bool
	noRoute         bool
	drainUntil      time.Time
	drainTimer      *time.Timer
	terminated      bool // its connections were closed at the end of its drain
	flows           map[*flow]struct{}
	terminateOnDone bool // the group's connection termination, as of the deregistration
}

// group is the long-lived runtime of one target group: health state and round robin
// survive Apply calls that keep it.
type group struct {
	id string
	p  *Proxy

	mu       sync.Mutex
	cfg      TargetGroup
	hc       HealthCheck
	inUse    bool
	targets  map[string]*target // registered and draining, by address
	rr       int
	stopWork context.CancelFunc
	nudge    chan struct{}
	stopped  bool
}

func newGroup(p *Proxy, id string) *group {
	return &group{id: id, p: p, targets: map[string]*target{}, nudge: make(chan struct{}, 1)}
}

// update applies the group's registrations and settings, and whether a listener uses it.
// New targets start initial and are checked at once; removed ones drain. Called with the
// proxy's lock held.
func (g *group) update(cfg TargetGroup, inUse bool, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.cfg, g.hc = cfg, cfg.HealthCheck.withDefaults()
	fresh := hInitial
	if !inUse {
		fresh = hNotInUse
	}
	want := map[string]bool{}
	added := false
	for _, addr := range cfg.Targets {
		want[addr] = true
		t := g.targets[addr]
		if t == nil || !t.drainUntil.IsZero() {
			if t != nil {
				g.endDrainLocked(t) // re-registered while draining: the old one is done
			}
			g.targets[addr] = &target{addr: addr, health: fresh, flows: map[*flow]struct{}{}}
			added = true
			continue
		}
		switch {
		case !inUse:
			t.health, t.okRun, t.failRun, t.checked, t.noRoute = hNotInUse, 0, 0, false, false
		case !g.inUse:
			t.health, t.okRun, t.failRun, t.checked, t.noRoute = hInitial, 0, 0, false, false
			added = true
		}
	}
	for _, t := range g.targets {
		if want[t.addr] || !t.drainUntil.IsZero() {
			continue
		}
		// Deregistered: no new connection; open ones continue for the delay.
		t.terminateOnDone = cfg.ConnectionTermination
		if cfg.DeregistrationDelay <= 0 {
			g.endDrainLocked(t)
			continue
		}
		t.drainUntil = now.Add(cfg.DeregistrationDelay)
		t.health = hDraining
		tt := t
		// The callback is counted in the proxy's wait group, so that Close waits for one
		// already running; stopDrainLocked releases one that will not run.
		g.p.wg.Add(1)
		t.drainTimer = time.AfterFunc(cfg.DeregistrationDelay, func() {
			defer g.p.wg.Done()
			g.mu.Lock()
			defer g.mu.Unlock()
			if g.targets[tt.addr] == tt {
				g.endDrainLocked(tt)
			}
		})
	}
	g.inUse = inUse
	need := inUse
	switch {
	case !need && g.stopWork != nil:
		g.stopWork()
		g.stopWork = nil
	case need && g.stopWork == nil && !g.stopped:
		ctx, cancel := context.WithCancel(g.p.ctx)
		g.stopWork = cancel
		g.p.wg.Add(1)
		go g.work(ctx)
	case need && added:
		select {
		case g.nudge <- struct{}{}:
		default:
		}
	}
}

// endDrainLocked forgets a deregistered target, closing its connections when the group
// terminates connections on deregistration. Caller holds g.mu.
func (g *group) endDrainLocked(t *target) {
	g.stopDrainLocked(t)
	if g.targets[t.addr] == t {
		delete(g.targets, t.addr)
	}
	if t.terminateOnDone {
		t.terminated = true
		for f := range t.flows {
			f.close()
		}
	}
}

// stop ends the group's health checks and drain timers; its connections are the proxy's
// to close.
func (g *group) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stopped = true
	if g.stopWork != nil {
		g.stopWork()
		g.stopWork = nil
	}
	for _, t := range g.targets {
		g.stopDrainLocked(t)
	}
}

// stopDrainLocked stops t's drain timer, if armed; a callback it kept from running is
// counted off the proxy's wait group (one already running counts itself off). Caller
// holds g.mu.
func (g *group) stopDrainLocked(t *target) {
	if t.drainTimer == nil {
		return
	}
	if t.drainTimer.Stop() {
		g.p.wg.Done()
	}
	t.drainTimer = nil
}

// attach picks the target a new connection goes to and counts the connection on it: the
// next healthy target in turn; with none healthy, the next registered one that has a
// route (an NLB fails open); nil when there is none.
func (g *group) attach(f *flow) *target {
	g.mu.Lock()
	defer g.mu.Unlock()
	var healthy, open []*target
	for _, t := range g.targets {
		if !t.drainUntil.IsZero() {
			continue
		}
		if t.health.State == StateHealthy {
			healthy = append(healthy, t)
		}
		if _, err := g.p.dialer.Map.Resolve(t.addr); !t.noRoute && err == nil {
			open = append(open, t)
		}
	}
	pool := healthy
	if len(pool) == 0 {
		pool = open
	}
	if len(pool) == 0 {
		return nil
	}
	sortTargets(pool)
	t := pool[g.rr%len(pool)]
	g.rr++
	t.flows[f] = struct{}{}
	return t
}

// connected records a flow's target connection, and reports false when the target was
// terminated meanwhile (the caller closes it).
func (g *group) connected(t *target, f *flow, backend net.Conn) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t.terminated {
		return false
	}
	f.backend = backend
	return true
}

func (g *group) detach(t *target, f *flow) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(t.flows, f)
}

// health reports each target's health by address.
func (g *group) health() map[string]Health {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make(map[string]Health, len(g.targets))
	for addr, t := range g.targets {
		out[addr] = t.health
	}
	return out
}

// work checks the group's targets every interval, and new ones at once.
func (g *group) work(ctx context.Context) {
	defer g.p.wg.Done()
	g.round(ctx, false)
	for {
		g.mu.Lock()
		interval := g.hc.Interval
		g.mu.Unlock()
		timer := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-g.nudge:
			timer.Stop()
			g.round(ctx, true)
		case <-timer.C:
			g.round(ctx, false)
		}
	}
}

// round checks the registered targets (only never-checked ones when onlyNew) with TCP
// connects, concurrently, and moves their states by the thresholds: a new target is
// healthy after one passed check, an unhealthy one after HealthyThreshold in a row; a
// healthy one is unhealthy after UnhealthyThreshold failures in a row. A target with no
// route is unhealthy at once and nothing is sent for it.
func (g *group) round(ctx context.Context, onlyNew bool) {
	g.mu.Lock()
	hc := g.hc
	var todo []*target
	for _, t := range g.targets {
		if t.drainUntil.IsZero() && (!onlyNew || !t.checked) {
			todo = append(todo, t)
		}
	}
	g.mu.Unlock()
	type result struct {
		ok   bool
		fail Health
		nr   bool
	}
	results := make([]result, len(todo))
	var wg sync.WaitGroup
	for i, t := range todo {
		wg.Go(func() {
			ok, fail, nr := g.probe(ctx, t.addr, hc)
			results[i] = result{ok, fail, nr}
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, t := range todo {
		if g.targets[t.addr] != t || !t.drainUntil.IsZero() || !g.inUse {
			continue
		}
		before := t.health.State
		t.checked = true
		r := results[i]
		switch {
		case r.nr:
			t.health, t.okRun, t.failRun, t.noRoute = r.fail, 0, 0, true
		case r.ok:
			t.noRoute = false
			t.okRun, t.failRun = t.okRun+1, 0
			if before == StateInitial || t.okRun >= g.hc.HealthyThreshold {
				t.health = hHealthy
			}
		default:
			wasNoRoute := t.noRoute
			t.noRoute = false
			t.okRun, t.failRun = 0, t.failRun+1
			switch {
			case t.failRun >= g.hc.UnhealthyThreshold || before == StateUnhealthy && !wasNoRoute:
				t.health = r.fail
			case before == StateInitial || wasNoRoute:
				t.health = hChecking
			}
		}
		if t.health.State != before {
			g.p.log.Debug("nlb proxy: target health changed", "target_group", g.id, "target", t.addr, "from", before, "to", t.health.State)
		}
	}
}

// probe is one TCP health check: a connect, closed at once.
func (g *group) probe(ctx context.Context, addr string, hc HealthCheck) (ok bool, fail Health, noRoute bool) {
	to, err := hc.checkAddr(addr)
	if err != nil {
		return false, hConnError, false
	}
	if _, err := g.p.dialer.Map.Resolve(to); err != nil {
		return false, noRouteHealth(err), true
	}
	ctx, cancel := context.WithTimeout(ctx, hc.Timeout)
	defer cancel()
	c, err := g.p.dialer.DialContext(ctx, "tcp", to)
	if err != nil {
		if nr := (*targetaddr.NoRouteError)(nil); errors.As(err, &nr) {
			return false, noRouteHealth(err), true
		}
		// A timeout too: Target.Timeout is an ALB's and a GWLB's reason only (ELBv2 API,
		// TargetHealth.Reason); an NLB reports every failed check as FailedHealthChecks.
		return false, hConnError, false
	}
	_ = c.Close()
	return true, Health{}, false
}

// sortTargets orders targets by address, so that the round robin's turn is stable across
// calls (the group keeps them in a map).
func sortTargets(ts []*target) {
	slices.SortFunc(ts, func(a, b *target) int { return strings.Compare(a.addr, b.addr) })
}

// RoutesChanged applies a change of the target address map: a target that lost its route
// is unhealthy at once (and gets no new connection unless every target is routeless), one
// that gained a route starts over as initial and is checked at once.
func (p *Proxy) RoutesChanged() {
	p.mu.Lock()
	groups := make([]*group, 0, len(p.groups))
	for _, g := range p.groups {
		groups = append(groups, g)
	}
	p.mu.Unlock()
	for _, g := range groups {
		g.rerouted()
	}
}

func (g *group) rerouted() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.inUse {
		return
	}
	gained := false
	for _, t := range g.targets {
		if !t.drainUntil.IsZero() {
			continue
		}
		to, err := g.hc.checkAddr(t.addr)
		if err == nil {
			_, err = g.p.dialer.Map.Resolve(to)
		}
		switch {
		case err != nil && !t.noRoute:
			t.health, t.okRun, t.failRun, t.checked, t.noRoute = noRouteHealth(err), 0, 0, true, true
		case err == nil && t.noRoute:
			t.health, t.okRun, t.failRun, t.checked, t.noRoute = hInitial, 0, 0, false, false
			gained = true
		}
	}
	if gained {
		select {
		case g.nudge <- struct{}{}:
		default:
		}
	}
}
