package nlbproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crossfade-io/crossfade/internal/sandbox/targetaddr"
)

// Options configure a Proxy.
type Options struct {
	Logger *slog.Logger
	// Dialer makes every connection to a target, health checks included. Required.
	Dialer *targetaddr.Dialer
	// ConnectTimeout bounds a connection to a target; default 10 s.
	ConnectTimeout time.Duration
}

// Proxy serves NLB TCP listeners. Its methods are safe for concurrent use.
type Proxy struct {
	log            *slog.Logger
	dialer         *targetaddr.Dialer
	connectTimeout time.Duration

	// ctx ends at Close; wg counts every goroutine the proxy starts (accept loops, flows,
	// health check workers), which Close waits for.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu        sync.Mutex
	closed    bool
	listeners map[string]*listener
	groups    map[string]*group
	series    map[SeriesKey]*series
	flows     map[*flow]struct{}
}

// New returns a proxy serving nothing; Apply gives it listeners.
func New(opts Options) (*Proxy, error) {
	if opts.Dialer == nil || opts.Dialer.Map == nil {
		return nil, errors.New("nlbproxy: no target dialer: every target is dialled through a targetaddr.Dialer")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = 10 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Proxy{log: opts.Logger, dialer: opts.Dialer, connectTimeout: opts.ConnectTimeout, ctx: ctx, cancel: cancel,
		listeners: map[string]*listener{}, groups: map[string]*group{}, series: map[SeriesKey]*series{}, flows: map[*flow]struct{}{}}, nil
}

// listener is one served NLB listener.
type listener struct {
	id, lb string
	ln     net.Listener
	// route is swapped whole by Apply; a connection reads it once, when it is accepted.
	route atomic.Pointer[route]
}

// route is a listener's forward action: its groups and weights, and the state of the
// smooth weighted round robin that spreads new connections exactly by the weights.
type route struct {
	mu      sync.Mutex
	groups  []*group
	weights []int
	current []int
}

// pick returns the group the next new connection goes to, nil when every weight is 0.
// Smooth weighted round robin: over any sum-of-weights consecutive picks each group gets
// exactly its weight, interleaved, so a 1:3 split is 1:3 from the first connections on.
func (r *route) pick() *group {
	r.mu.Lock()
	defer r.mu.Unlock()
	total, best := 0, -1
	for i, w := range r.weights {
		if w <= 0 {
			continue
		}
		total += w
		r.current[i] += w
		if best < 0 || r.current[i] > r.current[best] {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	r.current[best] -= total
	return r.groups[best]
}

// Apply makes cfg the proxy's state: new listeners are bound, removed ones closed (their
// open connections continue), every listener's weights are replaced (for new connections),
// and each group's targets and health checks follow its registrations. It changes nothing
// when it fails.
func (p *Proxy) Apply(cfg Config) error {
	if err := cfg.validate(); err != nil {
		return fmt.Errorf("nlbproxy: %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errors.New("nlbproxy: closed")
	}
	// Bind the new listeners first: a failure leaves everything as it was.
	fresh := map[string]net.Listener{}
	for _, l := range cfg.Listeners {
		if p.listeners[l.ID] != nil {
			continue
		}
		addr := l.Addr
		if addr == "" {
			addr = "127.0.0.1:0"
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			for _, f := range fresh {
				_ = f.Close()
			}
			return fmt.Errorf("nlbproxy: listener %s: %w", l.ID, err)
		}
		fresh[l.ID] = ln
	}
	inUse := map[string]bool{}
	for _, l := range cfg.Listeners {
		for _, w := range l.TargetGroups {
			inUse[w.TargetGroupID] = true
		}
	}
	now := time.Now()
	keep := map[string]bool{}
	for _, tg := range cfg.TargetGroups {
		keep[tg.ID] = true
		g := p.groups[tg.ID]
		if g == nil {
			g = newGroup(p, tg.ID)
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
	want := map[string]bool{}
	for _, l := range cfg.Listeners {
		want[l.ID] = true
		rt := &route{current: make([]int, len(l.TargetGroups))}
		for _, w := range l.TargetGroups {
			rt.groups = append(rt.groups, p.groups[w.TargetGroupID])
			rt.weights = append(rt.weights, w.Weight)
		}
		pl := p.listeners[l.ID]
		if pl == nil {
			pl = &listener{id: l.ID, lb: l.LoadBalancer, ln: fresh[l.ID]}
			pl.route.Store(rt)
			p.listeners[l.ID] = pl
			p.wg.Add(1)
			go p.accept(pl)
			p.log.Info("nlb proxy: listener served", "listener", l.ID, "addr", pl.ln.Addr().String())
			continue
		}
		if !sameRoute(pl.route.Load(), rt) {
			pl.route.Store(rt)
		}
	}
	for id, pl := range p.listeners {
		if !want[id] {
			_ = pl.ln.Close()
			delete(p.listeners, id)
		}
	}
	return nil
}

// sameRoute reports whether a and b forward alike, so that an unrelated change keeps the
// round robin's position.
func sameRoute(a, b *route) bool {
	return a != nil && slices.Equal(a.weights, b.weights) && slices.Equal(a.groups, b.groups)
}

// Addr is where the listener is served ("127.0.0.1:port"), "" when it is not.
func (p *Proxy) Addr(listenerID string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if l := p.listeners[listenerID]; l != nil {
		return l.ln.Addr().String()
	}
	return ""
}

// TargetHealth is what the health checks found of each target of a group, by address;
// nil for a group the proxy does not have.
func (p *Proxy) TargetHealth(groupID string) map[string]Health {
	p.mu.Lock()
	g := p.groups[groupID]
	p.mu.Unlock()
	if g == nil {
		return nil
	}
	return g.health()
}

// Close stops every listener, health check and connection, and waits for their
// goroutines.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	var errs []error
	for id, l := range p.listeners {
		if err := l.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, fmt.Errorf("listener %s: %w", id, err))
		}
	}
	for _, g := range p.groups {
		g.stop()
	}
	for f := range p.flows {
		f.close()
	}
	p.mu.Unlock()
	p.cancel()
	p.wg.Wait()
	return errors.Join(errs...)
}

// accept serves one listener until it is closed.
func (p *Proxy) accept(l *listener) {
	defer p.wg.Done()
	for {
		c, err := l.ln.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				p.log.Warn("nlb proxy: accept", "listener", l.id, "err", err)
			}
			return
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			_ = c.Close()
			return
		}
		p.wg.Add(1)
		p.mu.Unlock()
		go p.handle(l, c)
	}
}

// flow is one client connection and its target connection.
type flow struct {
	client, backend net.Conn
	once            sync.Once
}

func (f *flow) close() {
	f.once.Do(func() {
		_ = f.client.Close()
		if f.backend != nil {
			_ = f.backend.Close()
		}
	})
}

// reset refuses a connection the proxy cannot serve with a TCP reset, as an NLB does
// (counted as TCP_ELB_Reset_Count).
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

// handle routes one new connection: a group by the listener's weights as they are now, a
// target of it, then bytes both ways until both directions end.
func (p *Proxy) handle(l *listener, c net.Conn) {
	defer p.wg.Done()
	g := l.route.Load().pick()
	if g == nil {
		p.seriesFor(SeriesKey{LoadBalancer: l.lb}).reset(time.Now())
		p.log.Debug("nlb proxy: no target group with a weight above 0", "listener", l.id)
		reset(c)
		return
	}
	keys := []SeriesKey{{LoadBalancer: l.lb}, {LoadBalancer: l.lb, TargetGroup: g.id}}
	f := &flow{client: c}
	t := g.attach(f)
	if t == nil {
		for _, k := range keys {
			p.seriesFor(k).reset(time.Now())
		}
		p.log.Debug("nlb proxy: no routable target", "listener", l.id, "target_group", g.id)
		reset(c)
		return
	}
	ctx, cancel := context.WithTimeout(p.ctx, p.connectTimeout)
	backend, err := p.dialer.DialContext(ctx, "tcp", t.addr)
	cancel()
	if err != nil {
		g.detach(t, f)
		for _, k := range keys {
			p.seriesFor(k).reset(time.Now())
		}
		p.log.Debug("nlb proxy: target connection failed", "target_group", g.id, "target", t.addr, "err", err)
		reset(c)
		return
	}
	// The target may have been terminated (its drain ended) while the dial ran.
	if !g.connected(t, f, backend) {
		_ = backend.Close()
		g.detach(t, f)
		f.close()
		return
	}
	p.mu.Lock()
	closed := p.closed
	if !closed {
		p.flows[f] = struct{}{}
	}
	p.mu.Unlock()
	if closed {
		g.detach(t, f)
		f.close()
		return
	}
	for _, k := range keys {
		p.seriesFor(k).start(time.Now())
	}
	splice(f)
	for _, k := range keys {
		p.seriesFor(k).end(time.Now())
	}
	g.detach(t, f)
	p.mu.Lock()
	delete(p.flows, f)
	p.mu.Unlock()
}

// splice copies both ways; a direction that ends cleanly half-closes the other side, so a
// client that shuts down its writing still reads the rest of the answer. An error on
// either side closes both.
func splice(f *flow) {
	var wg sync.WaitGroup
	cp := func(dst, src net.Conn) {
		if _, err := io.Copy(dst, src); err != nil {
			f.close()
			return
		}
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		} else {
			f.close()
		}
	}
	wg.Go(func() { cp(f.backend, f.client) })
	cp(f.client, f.backend)
	wg.Wait()
	f.close()
}
