// Package albproxy is the data plane of the sandbox's Application Load Balancers: a real
// HTTP reverse proxy behind each listener that routes every request as ALB does. Listener
// rules are evaluated by priority (host-header and path-pattern conditions with ALB
// wildcards), a forward action picks a target group by weight per request (or by the
// AWSALBTG stickiness cookie), and a target within the group round-robin among the
// healthy ones. Health checks per group drive the ELBv2 target states; deregistered
// targets drain; every request is counted per load balancer and target group in
// per-second buckets from which CloudWatch's AWS/ApplicationELB metrics are served.
//
// The package knows nothing of the ELBv2 API: its caller hands it a complete Config on
// every change, and Apply makes it take effect for new requests before returning.
//
// Where ALB's documentation leaves room, the proxy chooses:
//   - Fail-open: when a group has no healthy target, requests go round-robin to all its
//     registered targets that are not draining (unhealthy and initial alike), as the
//     user guide says ALB does when every target fails its checks; 503 only when the
//     group has no such target.
//   - New targets: one passed check makes an initial target healthy (user guide: "it must
//     pass one health check"); an unhealthy one needs HealthyThreshold passes in a row;
//     UnhealthyThreshold failures in a row make initial or healthy targets unhealthy.
//   - Drain: a deregistered target gets no new request from the moment Apply returns,
//     keeps its requests in flight, and reports draining for the whole deregistration
//     delay even when nothing is in flight (ALB completes early only when the target has
//     no in-flight request and no open connection, which its keep-alive pool rarely
//     allows); then it is forgotten. Requests still running then are left to finish.
//   - Stickiness: the AWSALBTG cookie pins a client to a group until the duration from
//     the first choice ends; the pin holds while that group is in the action with a target
//     to route to, whatever its weight (a weight change does not move stuck clients).
//   - Addresses: targets are dialled only through Options.Dialer (targetaddr): a target
//     without a loopback backend has no route. It is unhealthy at once
//     (Target.FailedHealthChecks, "no route in the sandbox"), without thresholds since no
//     check can reach it, gets no request (fail-open leaves it out too), and no socket is
//     opened for it. A route gained later (RoutesChanged) makes it initial again, so one
//     passed check makes it healthy.
//   - Errors: 503 when no group or target can be chosen, 502 when the target refuses or
//     breaks the connection, 504 when it does not send response headers within the load
//     balancer's idle timeout or cannot be connected to within 10 s.
package albproxy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crossfade-io/crossfade/internal/sandbox/targetaddr"
)

// DefaultMetricsWindow is how long per-second metrics are kept when Options leaves it 0.
const DefaultMetricsWindow = 3 * time.Hour

// targetConnectTimeout is how long ALB waits to connect to a target before answering 504.
const targetConnectTimeout = 10 * time.Second

// Options configures a Proxy.
type Options struct {
	Logger *slog.Logger
	// MetricsWindow is how long per-second buckets are kept; 0 means DefaultMetricsWindow.
	MetricsWindow time.Duration
	// Dialer is the only way the proxy connects to a target, for requests and health
	// checks alike: a target's address goes through its Map to a loopback backend, and a
	// target without one is never dialled (it is unhealthy and gets no request). Nil is a
	// Dialer over an empty Map: loopback targets only. Its net.Dialer's zero Timeout and
	// KeepAlive take the proxy's (10 s, 30 s). Call RoutesChanged after changing its Map.
	Dialer *targetaddr.Dialer
}

// Proxy serves every listener of every load balancer in its Config.
type Proxy struct {
	log       *slog.Logger
	window    time.Duration
	sticky    *stickyCodec
	dialer    *targetaddr.Dialer
	transport *http.Transport
	rp        *httputil.ReverseProxy

	// snap is the routing state the request path reads without locks; Apply swaps it.
	snap atomic.Pointer[snapshot]

	mu        sync.Mutex // serializes Start, Apply, Close and guards the fields below
	started   bool
	closed    bool
	bg        *background
	cancel    context.CancelFunc
	stopAfter func() bool
	groups    map[string]*group
	listeners map[string]*listenerRT
	series    map[SeriesKey]*series
	serveWG   sync.WaitGroup

	// Requests in progress, so Close can wait for them.
	reqMu     sync.RWMutex
	reqClosed bool
	reqWG     sync.WaitGroup
}

// snapshot is one applied Config, compiled for the request path.
type snapshot struct {
	listeners map[string]*listenerView
}

// listenerView is a listener's routing table.
type listenerView struct {
	lb    *series
	idle  time.Duration
	port  string
	rules []compiledRule
	deflt *compiledAction
}

type compiledRule struct {
	conds  []compiledCondition
	action *compiledAction
}

// compiledAction is a forward action with its groups resolved to their runtimes.
type compiledAction struct {
	choices []choice // every group of the action, weight 0 included
	total   int      // sum of weights
	sticky  GroupStickiness
}

// choice is one group of an action, with the series its requests count into.
type choice struct {
	g      *group
	weight int
	series *series
	pinFor time.Duration // the action's stickiness duration
}

// listenerRT is a bound listener and its server.
type listenerRT struct {
	id      string
	cfgAddr string // as configured, so port 0 is not rebound on every Apply
	ln      net.Listener
	srv     *http.Server
}

// New returns a proxy; Start it, then Apply a Config.
func New(opts Options) *Proxy {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MetricsWindow <= 0 {
		opts.MetricsWindow = DefaultMetricsWindow
	}
	d := &targetaddr.Dialer{Map: targetaddr.New()}
	if opts.Dialer != nil {
		copied := *opts.Dialer // the proxy's defaults below must not change the caller's
		d = &copied
	}
	if d.Map == nil {
		d.Map = targetaddr.New()
	}
	if d.Dialer.Timeout == 0 {
		d.Dialer.Timeout = targetConnectTimeout
	}
	if d.Dialer.KeepAlive == 0 {
		d.Dialer.KeepAlive = 30 * time.Second
	}
	p := &Proxy{
		log:    opts.Logger,
		window: opts.MetricsWindow,
		sticky: newStickyCodec(),
		dialer: d,
		transport: &http.Transport{
			Proxy: nil,
			// The one way to a target: its loopback backend, or no connection at all.
			DialContext:         d.DialContext,
			MaxIdleConns:        1024,
			MaxIdleConnsPerHost: 256,
			IdleConnTimeout:     60 * time.Second,
			DisableCompression:  true, // bodies pass through as the target sent them
		},
		groups:    map[string]*group{},
		listeners: map[string]*listenerRT{},
		series:    map[SeriesKey]*series{},
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite:        p.rewrite,
		Transport:      p.transport,
		ModifyResponse: p.modifyResponse,
		ErrorHandler:   p.errorHandler,
		ErrorLog:       slog.NewLogLogger(p.log.Handler(), slog.LevelDebug),
		BufferPool:     &bufferPool{},
	}
	p.snap.Store(&snapshot{})
	return p
}

// Start makes the proxy ready for Apply. When ctx ends, the proxy closes itself.
func (p *Proxy) Start(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started || p.closed {
		return errors.New("albproxy: Start called twice or after Close")
	}
	bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p.bg = &background{ctx: bctx, checker: newChecker(p.dialer), routes: p.dialer.Map}
	p.cancel = cancel
	p.started = true
	p.stopAfter = context.AfterFunc(ctx, func() { _ = p.Close() })
	return nil
}

// Apply makes cfg the proxy's whole state. When it returns, new requests are routed by
// cfg: weights and rules are in effect, new listeners accept connections, removed ones are
// closed, new targets are initial, deregistered targets get no new requests and drain.
// Requests in flight are not disturbed, except on a listener that is removed. An invalid
// cfg, or a new listener that cannot bind, changes nothing; a listener whose address
// changes is rebound, and is gone if that fails.
func (p *Proxy) Apply(cfg Config) error {
	if err := cfg.validate(); err != nil {
		return fmt.Errorf("albproxy: %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.started || p.closed {
		return errors.New("albproxy: Apply before Start or after Close")
	}
	now := time.Now()

	// Bind new listeners first: a bind failure is the one error a valid config can still
	// meet, and it must leave routing as it was.
	type lbListener struct {
		lb LoadBalancer
		l  Listener
	}
	wanted := map[string]lbListener{}
	var added []*listenerRT
	for _, lb := range cfg.LoadBalancers {
		for _, l := range lb.Listeners {
			wanted[l.ID] = lbListener{lb, l}
			if old := p.listeners[l.ID]; old != nil && old.cfgAddr == l.Addr {
				continue
			} else if old != nil {
				// The address changed: the old socket goes now, so the new one may reuse its port.
				_ = old.srv.Close()
				delete(p.listeners, l.ID)
			}
			rt, err := p.bind(l, lb)
			if err != nil {
				for _, a := range added {
					_ = a.ln.Close()
				}
				return fmt.Errorf("albproxy: listener %s: %w", l.ID, err)
			}
			added = append(added, rt)
		}
	}

	// Groups: a group is in use when any listener's action names it, whatever its weight.
	inUse := map[string]bool{}
	for _, lb := range cfg.LoadBalancers {
		for _, l := range lb.Listeners {
			for _, w := range l.DefaultAction.TargetGroups {
				inUse[w.TargetGroupID] = true
			}
			for _, r := range l.Rules {
				for _, w := range r.Action.TargetGroups {
					inUse[w.TargetGroupID] = true
				}
			}
		}
	}
	keep := map[string]bool{}
	for _, tg := range cfg.TargetGroups {
		keep[tg.ID] = true
		g := p.groups[tg.ID]
		if g == nil {
			g = newGroup(tg.ID, p.log, p.bg)
			p.groups[tg.ID] = g
		}
		g.update(tg, inUse[tg.ID], now)
	}
	for id, g := range p.groups {
		if !keep[id] {
			g.stop()
			delete(p.groups, id)
		}
	}

	for _, a := range added {
		p.listeners[a.id] = a
	}
	snap := &snapshot{listeners: map[string]*listenerView{}}
	for id, w := range wanted {
		snap.listeners[id] = p.compile(w.lb, w.l, p.listeners[id])
	}
	p.snap.Store(snap)

	for _, a := range added {
		p.serveWG.Add(1)
		go func() {
			defer p.serveWG.Done()
			if err := a.srv.Serve(a.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				p.log.Error("albproxy listener stopped", "listener", a.id, "err", err)
			}
		}()
		p.log.Info("albproxy listener started", "listener", a.id, "addr", a.ln.Addr().String())
	}
	for id, rt := range p.listeners {
		if _, ok := wanted[id]; !ok {
			_ = rt.srv.Close()
			delete(p.listeners, id)
			p.log.Info("albproxy listener stopped", "listener", id)
		}
	}
	return nil
}

// bind opens a listener's socket and builds its server (not yet serving).
func (p *Proxy) bind(l Listener, lb LoadBalancer) (*listenerRT, error) {
	addr := l.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	idle := lb.IdleTimeout
	if idle == 0 {
		idle = DefaultIdleTimeout
	}
	id := l.ID
	return &listenerRT{
		id:      id,
		cfgAddr: l.Addr,
		ln:      ln,
		srv: &http.Server{
			Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { p.serve(id, w, r) }),
			ReadHeaderTimeout: idle,
			// ALB closes a client connection idle this long. A later change of the load
			// balancer's idle timeout reaches the 504 timer at once, this only on rebind.
			IdleTimeout: idle,
			ErrorLog:    slog.NewLogLogger(p.log.Handler(), slog.LevelDebug),
		},
	}, nil
}

// seriesFor returns the series for key, creating it.
func (p *Proxy) seriesFor(key SeriesKey) *series {
	s := p.series[key]
	if s == nil {
		s = newSeries(p.window)
		p.series[key] = s
	}
	return s
}

// compile builds a listener's routing table against the current group runtimes.
func (p *Proxy) compile(lb LoadBalancer, l Listener, rt *listenerRT) *listenerView {
	idle := lb.IdleTimeout
	if idle == 0 {
		idle = DefaultIdleTimeout
	}
	_, port, _ := net.SplitHostPort(rt.ln.Addr().String())
	action := func(a ForwardAction) *compiledAction {
		ca := &compiledAction{sticky: a.Stickiness}
		for _, w := range a.TargetGroups {
			ca.choices = append(ca.choices, choice{
				g:      p.groups[w.TargetGroupID],
				weight: w.Weight,
				series: p.seriesFor(SeriesKey{LoadBalancer: lb.ID, TargetGroup: w.TargetGroupID}),
				pinFor: a.Stickiness.Duration,
			})
			ca.total += w.Weight
		}
		return ca
	}
	v := &listenerView{lb: p.seriesFor(SeriesKey{LoadBalancer: lb.ID}), idle: idle, port: port, deflt: action(l.DefaultAction)}
	for _, r := range sortedRules(l.Rules) {
		cr := compiledRule{action: action(r.Action)}
		for _, c := range r.Conditions {
			cr.conds = append(cr.conds, compileCondition(c))
		}
		v.rules = append(v.rules, cr)
	}
	return v
}

// match returns the action of the first rule, by priority, whose conditions all match.
func (v *listenerView) match(r *http.Request) *compiledAction {
	host := requestHost(r)
	for _, rule := range v.rules {
		ok := true
		for _, c := range rule.conds {
			if !c.match(host, r.URL.Path) {
				ok = false
				break
			}
		}
		if ok {
			return rule.action
		}
	}
	return v.deflt
}

// choose picks the action's group for a request: the one its stickiness cookie names, if
// stickiness is on and that group is still in the action with a target to route to
// (whatever its weight now: a weight change does not move a stuck client); otherwise one
// at random by weight. newPin says the response must carry a fresh cookie.
func (p *Proxy) choose(a *compiledAction, r *http.Request, now time.Time) (c *choice, newPin bool) {
	if a.sticky.Enabled {
		if id, ok := p.sticky.stuckGroup(r, now); ok {
			for i := range a.choices {
				if a.choices[i].g.id == id && a.choices[i].g.routable() {
					return &a.choices[i], false
				}
			}
		}
	}
	if a.total == 0 {
		return nil, false // no group, or every weight 0: ALB answers 503
	}
	n := rand.IntN(a.total)
	for i := range a.choices {
		if n < a.choices[i].weight {
			return &a.choices[i], a.sticky.Enabled
		}
		n -= a.choices[i].weight
	}
	return nil, false // unreachable: n < total
}

// reqState carries one request through the reverse proxy's callbacks.
type reqState struct {
	target *target
	port   string
	pin    string // the group to pin the client to, when a new cookie is due
	pinFor time.Duration
	timer  *time.Timer
	cause  func() error // the cause that ended the request's context
	sent   time.Time
	out    outcome
}

type stateKey struct{}

var errIdleTimeout = errors.New("target did not answer within the idle timeout")

// serve handles one request on listener id.
func (p *Proxy) serve(id string, w http.ResponseWriter, r *http.Request) {
	p.reqMu.RLock()
	if p.reqClosed {
		p.reqMu.RUnlock()
		writeELBError(w, http.StatusServiceUnavailable)
		return
	}
	p.reqWG.Add(1)
	p.reqMu.RUnlock()
	defer p.reqWG.Done()

	now := time.Now()
	v := p.snap.Load().listeners[id]
	if v == nil { // the listener was removed while this request was being read
		writeELBError(w, http.StatusServiceUnavailable)
		return
	}
	c, pin := p.choose(v.match(r), r, now)
	if c == nil {
		writeELBError(w, http.StatusServiceUnavailable)
		v.lb.record(now, outcome{status: http.StatusServiceUnavailable, fromELB: true})
		return
	}
	t := c.g.pick()
	if t == nil {
		writeELBError(w, http.StatusServiceUnavailable)
		o := outcome{status: http.StatusServiceUnavailable, fromELB: true}
		v.lb.record(now, o)
		c.series.record(now, o)
		return
	}

	t.inflight.Add(1)
	defer t.inflight.Add(-1)
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	st := &reqState{target: t, port: v.port, cause: func() error { return context.Cause(ctx) }}
	st.out.target = t.addr
	if pin {
		st.pin, st.pinFor = c.g.id, c.pinFor
	}
	st.timer = time.AfterFunc(v.idle, func() { cancel(errIdleTimeout) })
	defer st.timer.Stop()
	// Count in a defer: ReverseProxy aborts the handler with a panic when the body copy
	// fails after the headers went out, and that request still happened.
	defer func() {
		v.lb.record(now, st.out)
		c.series.record(now, st.out)
	}()
	p.rp.ServeHTTP(w, r.WithContext(context.WithValue(ctx, stateKey{}, st)))
}

// rewrite points the outgoing request at the chosen target, keeping the client's Host
// and adding the X-Forwarded-* headers ALB adds.
func (p *Proxy) rewrite(pr *httputil.ProxyRequest) {
	st := pr.In.Context().Value(stateKey{}).(*reqState)
	pr.Out.URL.Scheme = "http"
	pr.Out.URL.Host = st.target.addr
	pr.Out.Host = pr.In.Host
	pr.SetXForwarded()
	pr.Out.Header.Del("X-Forwarded-Host") // ALB does not send it
	pr.Out.Header.Set("X-Forwarded-Port", st.port)
	st.sent = time.Now()
}

// modifyResponse runs when the target's response headers arrive.
func (p *Proxy) modifyResponse(resp *http.Response) error {
	st := resp.Request.Context().Value(stateKey{}).(*reqState)
	st.timer.Stop() // the idle timeout guards the wait for the response, not its body
	st.out.status = resp.StatusCode
	st.out.rt = time.Since(st.sent)
	st.out.hasRT = true
	if st.pin != "" {
		p.sticky.setCookies(resp.Header, st.pin, time.Now(), st.pinFor)
	}
	return nil
}

// errorHandler answers when the target could not be reached or did not answer in time.
func (p *Proxy) errorHandler(w http.ResponseWriter, r *http.Request, err error) {
	st := r.Context().Value(stateKey{}).(*reqState)
	st.out.fromELB = true
	var ne net.Error
	switch {
	case errors.Is(st.cause(), errIdleTimeout):
		st.out.status = http.StatusGatewayTimeout
	case r.Context().Err() != nil:
		st.out.status = 460 // the client went away; nobody reads this answer
		return
	case errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		st.out.status = http.StatusGatewayTimeout // could not connect within 10 s
	default:
		st.out.status = http.StatusBadGateway
	}
	p.log.Debug("albproxy target error", "target", st.target.addr, "status", st.out.status, "err", err)
	writeELBError(w, st.out.status)
}

// bufferPool lends ReverseProxy its 32 KiB copy buffers, which it would otherwise
// allocate for every request.
type bufferPool struct{ p sync.Pool }

func (b *bufferPool) Get() []byte {
	if v, ok := b.p.Get().(*[]byte); ok {
		return *v
	}
	return make([]byte, 32<<10)
}

func (b *bufferPool) Put(buf []byte) { b.p.Put(&buf) }

// The bodies ALB answers its own errors with.
var elbPages = map[int]string{
	http.StatusBadGateway:         "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n",
	http.StatusServiceUnavailable: "<html>\r\n<head><title>503 Service Temporarily Unavailable</title></head>\r\n<body>\r\n<center><h1>503 Service Temporarily Unavailable</h1></center>\r\n</body>\r\n</html>\r\n",
	http.StatusGatewayTimeout:     "<html>\r\n<head><title>504 Gateway Time-out</title></head>\r\n<body>\r\n<center><h1>504 Gateway Time-out</h1></center>\r\n</body>\r\n</html>\r\n",
}

func writeELBError(w http.ResponseWriter, status int) {
	h := w.Header()
	h.Set("Server", "awselb/2.0")
	h.Set("Content-Type", "text/html")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, elbPages[status])
}

// Addr returns the address listener id is bound to, e.g. "127.0.0.1:41234", or "" when
// there is no such listener.
func (p *Proxy) Addr(listenerID string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if rt := p.listeners[listenerID]; rt != nil {
		return rt.ln.Addr().String()
	}
	return ""
}

// TargetHealth returns the health of every target the group has registered or is still
// draining, by address; nil for an unknown group.
func (p *Proxy) TargetHealth(groupID string) map[string]Health {
	p.mu.Lock()
	g := p.groups[groupID]
	p.mu.Unlock()
	if g == nil {
		return nil
	}
	return g.health(time.Now())
}

// Counts returns the group's cumulative counts over every load balancer routing to it.
func (p *Proxy) Counts(groupID string) Counts {
	p.mu.Lock()
	var list []*series
	for k, s := range p.series {
		if k.TargetGroup == groupID && groupID != "" {
			list = append(list, s)
		}
	}
	p.mu.Unlock()
	var c Counts
	for _, s := range list {
		c.add(s.counts())
	}
	return c
}

// Metrics returns the series' non-empty one-second buckets that lie wholly inside
// [from, to) and are still retained, oldest first. Seconds missing from the result had no
// requests. A consumer sums them into CloudWatch periods.
func (p *Proxy) Metrics(key SeriesKey, from, to time.Time) []Bucket {
	p.mu.Lock()
	s := p.series[key]
	p.mu.Unlock()
	if s == nil {
		return nil
	}
	return s.buckets(from, to)
}

// SeriesKeys lists every series the proxy has counted into or may count into: each load
// balancer, and each target group with the load balancer routing to it.
func (p *Proxy) SeriesKeys() []SeriesKey {
	p.mu.Lock()
	defer p.mu.Unlock()
	keys := slices.Collect(maps.Keys(p.series))
	slices.SortFunc(keys, func(a, b SeriesKey) int {
		return cmp.Or(cmp.Compare(a.LoadBalancer, b.LoadBalancer), cmp.Compare(a.TargetGroup, b.TargetGroup))
	})
	return keys
}

// RoutesChanged makes a change of the Dialer's Map take effect: a target that lost its
// route is unhealthy ("no route in the sandbox") and out of the routing at once; one that
// gained a route is initial again and is checked at once, so one passed check makes it
// healthy; pooled connections are closed, so the next request to a remapped target goes
// to its new backend. Requests in flight are not disturbed.
func (p *Proxy) RoutesChanged() {
	p.mu.Lock()
	groups := slices.Collect(maps.Values(p.groups))
	p.mu.Unlock()
	for _, g := range groups {
		g.rerouted()
	}
	p.transport.CloseIdleConnections()
}

// Close stops every listener and health check, waits for requests in flight to end (their
// client connections are closed, which cancels them) and for every goroutine the proxy
// started. It is safe to call more than once.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	listeners := p.listeners
	p.listeners = map[string]*listenerRT{}
	started := p.started
	if p.stopAfter != nil {
		p.stopAfter()
	}
	p.mu.Unlock()

	p.reqMu.Lock()
	p.reqClosed = true
	p.reqMu.Unlock()
	if !started {
		return nil
	}
	p.cancel() // health check workers and their checks in flight
	for _, rt := range listeners {
		_ = rt.srv.Close()
	}
	p.serveWG.Wait()
	p.reqWG.Wait()
	p.bg.wg.Wait()
	p.transport.CloseIdleConnections()
	p.bg.checker.client.CloseIdleConnections()
	return nil
}
