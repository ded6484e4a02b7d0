package albproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crossfade-io/crossfade/internal/sandbox/elb"
	"github.com/crossfade-io/crossfade/internal/sandbox/targetaddr"
)

// State is a target's health state, named as DescribeTargetHealth names it: the values
// are the ELBv2 store's (elb), so that the proxies and the API can never disagree.
type State string

// The ELBv2 target health states.
const (
	StateInitial     State = elb.StateInitial
	StateHealthy     State = elb.StateHealthy
	StateUnhealthy   State = elb.StateUnhealthy
	StateUnused      State = elb.StateUnused
	StateDraining    State = elb.StateDraining
	StateUnavailable State = elb.StateUnavailable
)

// The ELBv2 target health reason codes the proxy reports.
const (
	ReasonRegistrationInProgress   = elb.ReasonRegistrationInProgress
	ReasonInitialHealthChecking    = elb.ReasonInitialHealthChecking
	ReasonResponseCodeMismatch     = elb.ReasonResponseCodeMismatch
	ReasonTimeout                  = elb.ReasonTimeout
	ReasonFailedHealthChecks       = elb.ReasonFailedHealthChecks
	ReasonNotRegistered            = elb.ReasonNotRegistered
	ReasonNotInUse                 = elb.ReasonNotInUse
	ReasonDeregistrationInProgress = elb.ReasonDeregistrationInProgress
	ReasonHealthCheckDisabled      = elb.ReasonHealthCheckDisabled
)

// Health is one target's TargetHealth: State, and for every state but healthy a Reason
// code and a Description in ELBv2's words.
type Health struct {
	State       State
	Reason      string
	Description string
}

var (
	hInitial   = Health{StateInitial, ReasonRegistrationInProgress, "Target registration is in progress"}
	hChecking  = Health{StateInitial, ReasonInitialHealthChecking, "Initial health checking in progress"}
	hHealthy   = Health{State: StateHealthy}
	hNotInUse  = Health{StateUnused, ReasonNotInUse, "Target group is not configured to receive traffic from the load balancer"}
	hDraining  = Health{StateDraining, ReasonDeregistrationInProgress, "Target deregistration is in progress"}
	hHCOff     = Health{StateUnavailable, ReasonHealthCheckDisabled, "Health checks disabled"}
	hTimeout   = Health{StateUnhealthy, ReasonTimeout, "Request timed out"}
	hConnError = Health{StateUnhealthy, ReasonFailedHealthChecks, "Health checks failed"}
)

// noRouteHealth is the health of a target the sandbox has no route to: ALB's reason for a
// connection that could not be made, with the sandbox's explanation. The description
// starts with the sandbox's words, "no route in the sandbox", for whoever reads it.
func noRouteHealth(addr string, err error) Health {
	var nr *targetaddr.NoRouteError
	if !errors.As(err, &nr) {
		// Not an IP:port at all: an instance the sandbox knows no private IP for.
		return Health{StateUnhealthy, ReasonFailedHealthChecks, fmt.Sprintf(
			"Health checks failed: no route in the sandbox to %s: not an IP:port (an instance target needs its private IP declared in the sandbox's EC2)", addr)}
	}
	return Health{StateUnhealthy, ReasonFailedHealthChecks, "Health checks failed: " + nr.Error()}
}

// target is one registration of an address in a group. A re-registration after a
// deregistration is a new target, so a late health check result or an in-flight request
// of the old one cannot touch the new one's state.
type target struct {
	addr     string
	inflight atomic.Int64

	// Guarded by group.mu.
	health     Health
	okRun      int // consecutive passed checks
	failRun    int // consecutive failed checks
	checked    bool
	drainUntil time.Time // set once deregistered
	// noRoute is set while health says the target has no route in the sandbox, so that a
	// route appearing makes it initial again rather than wait out the thresholds.
	noRoute bool
}

// setNoRoute marks t as having no route: unhealthy at once, without thresholds, because
// no check can reach it. Caller holds the group's lock.
func (t *target) setNoRoute(err error) {
	t.health, t.okRun, t.failRun, t.checked, t.noRoute = noRouteHealth(t.addr, err), 0, 0, true, true
}

// routeSet is what the request path reads, swapped whole whenever a state changes.
type routeSet struct {
	// healthy are the targets in service: healthy, or unavailable (checks disabled).
	healthy []*target
	// failOpen are all registered targets that are not draining, used when no target is
	// healthy (ALB "fails open").
	failOpen []*target
}

// group is the long-lived runtime of one target group: it outlives Apply calls that keep
// the group, so health state, round-robin position and stickiness survive them.
type group struct {
	id  string
	log *slog.Logger
	bg  *background

	routes atomic.Pointer[routeSet]
	rr     atomic.Uint64

	mu       sync.Mutex
	cfg      TargetGroup
	hc       HealthCheck // cfg.HealthCheck with defaults
	match    matcher
	inUse    bool
	targets  map[string]*target // registered and draining, by address
	stopWork context.CancelFunc // the health check worker's, nil when none runs
	nudge    chan struct{}      // asks the worker to check never-checked targets now
}

func newGroup(id string, log *slog.Logger, bg *background) *group {
	g := &group{id: id, log: log, bg: bg, targets: map[string]*target{}, nudge: make(chan struct{}, 1)}
	g.routes.Store(&routeSet{})
	return g
}

// pick chooses the next target round-robin among the healthy ones, or among all
// registered ones when none is healthy; nil when the group has nothing to route to.
func (g *group) pick() *target {
	rs := g.routes.Load()
	list := rs.healthy
	if len(list) == 0 {
		list = rs.failOpen
	}
	if len(list) == 0 {
		return nil
	}
	return list[(g.rr.Add(1)-1)%uint64(len(list))]
}

// routable reports whether the group has any target a request could go to.
func (g *group) routable() bool {
	rs := g.routes.Load()
	return len(rs.healthy)+len(rs.failOpen) > 0
}

// rebuildLocked recomputes the route set from the targets' states. Caller holds g.mu.
func (g *group) rebuildLocked() {
	rs := &routeSet{}
	if g.inUse {
		for _, addr := range g.cfg.Targets { // registration order keeps round-robin stable
			t := g.targets[addr]
			if t == nil || !t.drainUntil.IsZero() {
				continue
			}
			if _, err := g.bg.routes.Resolve(addr); err != nil {
				continue // no route: not even fail-open sends it a request
			}
			if t.health.State == StateHealthy || t.health.State == StateUnavailable {
				rs.healthy = append(rs.healthy, t)
			}
			rs.failOpen = append(rs.failOpen, t)
		}
	}
	g.routes.Store(rs)
}

// update applies a target group's new settings and registrations and whether a listener
// uses it. New targets start initial, removed ones drain. Caller must not hold g.mu.
func (g *group) update(cfg TargetGroup, inUse bool, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	hc := cfg.HealthCheck.withDefaults()
	m, _ := parseMatcher(hc.Matcher) // validated
	wasDisabled := g.hc.Disabled
	g.cfg, g.hc, g.match = cfg, hc, m

	fresh := func() Health {
		switch {
		case !inUse:
			return hNotInUse
		case hc.Disabled:
			return hHCOff
		}
		return hInitial
	}
	want := make(map[string]bool, len(cfg.Targets))
	added := false
	for _, addr := range cfg.Targets {
		want[addr] = true
		t := g.targets[addr]
		if t == nil || !t.drainUntil.IsZero() {
			// New, or re-registered while draining: a new registration.
			t = &target{addr: addr, health: fresh()}
			g.targets[addr] = t
			if _, err := g.bg.routes.Resolve(addr); err != nil && inUse && hc.Disabled {
				t.setNoRoute(err) // no check will run to say so
			}
			added = true
			continue
		}
		switch {
		case !inUse:
			t.health, t.okRun, t.failRun, t.checked, t.noRoute = hNotInUse, 0, 0, false, false
		case hc.Disabled:
			t.health, t.okRun, t.failRun, t.noRoute = hHCOff, 0, 0, false
			if _, err := g.bg.routes.Resolve(addr); err != nil {
				t.setNoRoute(err)
			}
		case !g.inUse || t.health.State == StateUnavailable || (t.noRoute && wasDisabled):
			// Coming into use, or checks turned back on: health is unknown again.
			t.health, t.okRun, t.failRun, t.checked, t.noRoute = hInitial, 0, 0, false, false
			added = true
		}
	}
	for addr, t := range g.targets {
		if want[addr] || !t.drainUntil.IsZero() {
			continue
		}
		if cfg.DeregistrationDelay <= 0 {
			delete(g.targets, addr)
			continue
		}
		t.drainUntil = now.Add(cfg.DeregistrationDelay)
		t.health = hDraining
	}
	g.purgeLocked(now)
	g.inUse = inUse
	g.rebuildLocked()

	needWorker := inUse && !hc.Disabled
	switch {
	case !needWorker && g.stopWork != nil:
		g.stopWork()
		g.stopWork = nil
	case needWorker && g.stopWork == nil:
		ctx, cancel := context.WithCancel(g.bg.ctx)
		g.stopWork = cancel
		g.bg.wg.Add(1)
		go g.work(ctx, g.bg.checker, g.bg.wg.Done)
	case added && needWorker:
		select {
		case g.nudge <- struct{}{}:
		default:
		}
	}
}

// rerouted applies a change of the targets' routes (RoutesChanged): a target that lost
// its route is unhealthy at once; one that gained a route starts over as initial (or
// unavailable, with checks disabled) and is checked at once. Caller must not hold g.mu.
func (g *group) rerouted() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.inUse {
		return // unused targets are not checked and get no request: nothing to say
	}
	gained := false
	for _, t := range g.targets {
		if !t.drainUntil.IsZero() {
			continue
		}
		_, err := g.bg.routes.Resolve(t.addr)
		switch {
		case err != nil && !t.noRoute:
			t.setNoRoute(err)
		case err == nil && t.noRoute:
			t.okRun, t.failRun, t.checked, t.noRoute = 0, 0, false, false
			t.health = hInitial
			if g.hc.Disabled {
				t.health = hHCOff
			}
			gained = true
		}
	}
	g.rebuildLocked()
	if gained && !g.hc.Disabled {
		select {
		case g.nudge <- struct{}{}:
		default:
		}
	}
}

// purgeLocked forgets draining targets whose deregistration delay has passed.
func (g *group) purgeLocked(now time.Time) {
	for addr, t := range g.targets {
		if !t.drainUntil.IsZero() && !now.Before(t.drainUntil) {
			delete(g.targets, addr)
		}
	}
}

// health reports every target the group knows: registered and still draining.
func (g *group) health(now time.Time) map[string]Health {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.purgeLocked(now)
	out := make(map[string]Health, len(g.targets))
	for addr, t := range g.targets {
		out[addr] = t.health
	}
	return out
}

// stop ends the health check worker, if one runs.
func (g *group) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopWork != nil {
		g.stopWork()
		g.stopWork = nil
	}
}

// background is what the proxy's goroutines share: the context that Close cancels, the
// group Close waits for, the health check client, and the targets' routes.
type background struct {
	ctx     context.Context
	wg      sync.WaitGroup
	checker *checker
	routes  *targetaddr.Map
}

// checker sends the health check requests: a client that opens a new connection for
// every check and closes it after, as ALB does, through the proxy's Dialer.
type checker struct {
	routes *targetaddr.Map
	client *http.Client
}

func newChecker(d *targetaddr.Dialer) *checker {
	return &checker{routes: d.Map, client: &http.Client{
		Transport: &http.Transport{
			Proxy:             nil,
			DisableKeepAlives: true,
			DialContext:       d.DialContext,
		},
		// Health checks report redirects as the status they are, like ALB.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// probe runs one health check against addr and returns the health it indicates on its
// own (before thresholds); noRoute says addr has no route, and nothing was sent.
func (c *checker) probe(ctx context.Context, addr string, hc HealthCheck, m matcher) (ok bool, fail Health, noRoute bool) {
	if _, err := c.routes.Resolve(addr); err != nil {
		return false, noRouteHealth(addr, err), true
	}
	ctx, cancel := context.WithTimeout(ctx, hc.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+hc.Path, nil)
	if err != nil {
		return false, hConnError, false
	}
	req.Header.Set("User-Agent", "ELB-HealthChecker/2.0")
	resp, err := c.client.Do(req)
	if err != nil {
		if nr := (*targetaddr.NoRouteError)(nil); errors.As(err, &nr) {
			return false, noRouteHealth(addr, nr), true // the route went since Resolve
		}
		var ne net.Error
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
			return false, hTimeout, false
		}
		return false, hConnError, false
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if !m.match(resp.StatusCode) {
		return false, Health{StateUnhealthy, ReasonResponseCodeMismatch,
			fmt.Sprintf("Health checks failed with these codes: [%d]", resp.StatusCode)}, false
	}
	return true, Health{}, false
}

// work is the group's health check loop: every interval it checks every registered
// target concurrently, each with the timeout; a nudge checks new targets at once, off the
// regular schedule.
func (g *group) work(ctx context.Context, c *checker, done func()) {
	defer done()
	g.round(ctx, c, false)
	next := time.Now().Add(g.interval())
	timer := time.NewTimer(time.Until(next))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-g.nudge:
			g.round(ctx, c, true)
			continue
		case <-timer.C:
		}
		g.round(ctx, c, false)
		next = next.Add(g.interval())
		if now := time.Now(); next.Before(now) {
			next = now // fell behind: do not fire a burst of rounds
		}
		timer.Reset(time.Until(next))
	}
}

func (g *group) interval() time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.hc.Interval
}

// round checks the group's registered targets (only never-checked ones when onlyNew) and
// moves their states by the thresholds.
func (g *group) round(ctx context.Context, c *checker, onlyNew bool) {
	g.mu.Lock()
	hc, m := g.hc, g.match
	var todo []*target
	for _, t := range g.targets {
		if t.drainUntil.IsZero() && (!onlyNew || !t.checked) {
			todo = append(todo, t)
		}
	}
	g.mu.Unlock()
	if len(todo) == 0 {
		return
	}

	type result struct {
		ok, noRoute bool
		fail        Health
	}
	results := make([]result, len(todo))
	var wg sync.WaitGroup
	for i, t := range todo {
		wg.Go(func() {
			ok, fail, noRoute := c.probe(ctx, t.addr, hc, m)
			results[i] = result{ok: ok, noRoute: noRoute, fail: fail}
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return // stopped mid-round: a cancelled check says nothing about the target
	}

	g.mu.Lock()
	defer g.mu.Unlock()
	changed := false
	for i, t := range todo {
		if g.targets[t.addr] != t || !t.drainUntil.IsZero() || !g.inUse || g.hc.Disabled {
			continue // deregistered, re-registered or out of use meanwhile
		}
		before := t.health.State
		t.checked = true
		r := results[i]
		switch {
		case r.noRoute:
			// No check can reach it, so thresholds would only delay saying so.
			t.health, t.okRun, t.failRun, t.noRoute = r.fail, 0, 0, true
		case t.noRoute:
			// Checked through a route it has just gained, before RoutesChanged made it
			// initial: start over as a new target would, from this check.
			t.noRoute, t.okRun, t.failRun = false, 0, 0
			if r.ok {
				t.health, t.okRun = hHealthy, 1
			} else {
				t.health, t.failRun = hChecking, 1
			}
		case r.ok:
			t.okRun, t.failRun = t.okRun+1, 0
			// A new target needs one passed check to be healthy (ALB user guide); an
			// unhealthy one needs HealthyThreshold in a row.
			if before == StateInitial || t.okRun >= g.hc.HealthyThreshold {
				t.health = hHealthy
			}
		default:
			t.okRun, t.failRun = 0, t.failRun+1
			switch {
			case t.failRun >= g.hc.UnhealthyThreshold || before == StateUnhealthy:
				t.health = r.fail
			case before == StateInitial:
				t.health = hChecking
			}
		}
		if t.health.State != before {
			changed = true
			g.log.Debug("target health changed", "targetGroup", g.id, "target", t.addr,
				"from", before, "to", t.health.State, "reason", t.health.Reason)
		}
	}
	if changed {
		g.rebuildLocked()
	}
}
