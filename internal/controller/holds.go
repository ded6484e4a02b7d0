package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"

	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// Defaults of a HoldProber.
const (
	// DefaultHoldProbe is how often each name where the controller publishes weighted
	// record sets is probed for a cutover's authority record: a hold is confirmed within
	// this interval plus one reconcile, well inside the five minutes `cutover release
	// --wait` is told to expect.
	DefaultHoldProbe = 2 * time.Minute
	// DefaultHoldProbeTimeout bounds one DNS query.
	DefaultHoldProbeTimeout = 2 * time.Second
	// holdProbeErrorLog is the least time between two log lines about a zone's failing
	// probes; every failure is counted.
	holdProbeErrorLog = 10 * time.Minute
	// nameServerTTL is how long a zone's name servers' addresses are kept.
	nameServerTTL = time.Hour
)

// Probe results, as HoldProbeConfig.Observe receives them.
const (
	// ProbeSame: the name's hold is what the zone cache knows.
	ProbeSame = "same"
	// ProbeChanged: a hold appeared, changed or went: the zone is listed again.
	ProbeChanged = "changed"
	// ProbeError: no name server answered with authority.
	ProbeError = "error"
)

// HoldProbeConfig configures a HoldProber.
type HoldProbeConfig struct {
	// Interval is the time between two probes of a name; 0 means DefaultHoldProbe.
	Interval time.Duration
	// Timeout bounds one DNS query; 0 means DefaultHoldProbeTimeout.
	Timeout time.Duration
	// Servers are the name servers asked, as host:port; nil asks each zone's own (its
	// apex NS record, on port 53). A private zone is probed only through Servers: its
	// apex NS names public servers, which do not serve it.
	Servers []string
	// APIEndpoint is the Route 53 API URL the controller uses ("" for AWS's own). When it
	// is not AWS's (the sandbox, another emulator) and Servers is empty, no zone is probed
	// at all: the sandbox lists real AWS name servers in its zones' NS records, which do
	// not serve its zones, and asking them (or resolving their names) would leave the
	// machine for nothing.
	APIEndpoint string
	// Invalidate drops a zone from the zone cache, so that the next reconcile lists it.
	Invalidate func(zoneID string)
	// Observe counts each probe's result (ProbeSame, ProbeChanged, ProbeError); nil
	// counts nothing.
	Observe func(result string)
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
}

// HoldProber notices a cutover taking hold of (or letting go of) a name where this
// controller publishes weighted record sets, long before the zone cache's hourly resync
// would: it asks the zone's authoritative name servers, by DNS, for the name's authority
// record (TXT _crossfade-weights.NAME) every Interval. When the answer differs from what
// the zone cache's last listing showed, it invalidates the zone and says so on Changed:
// the reconcile that follows lists the zone, and its plan writes the publisher's
// confirmation of the hold (endpoint.ConfirmsHoldLabel) that `cutover release` waits for.
//
// DNS queries are not Route 53 API calls (no API throttle; Route 53 bills them as
// ordinary queries): a zone where the controller publishes no weighted set is never
// probed, and an idle controller still makes no Route 53 API call. A name is probed
// only while the controller publishes weighted sets there. A failed probe changes
// nothing: it is counted, and logged at most every ten minutes per zone. A zone whose
// servers all fail to answer is left for the round at its first such name (one error),
// and a round lasts at most Interval: the next takes up where it stopped.
type HoldProber struct {
	cfg     HoldProbeConfig
	log     *slog.Logger
	changed chan struct{}
	client  *dns.Client
	// lookup resolves a name server's host name; net.DefaultResolver's.
	lookup func(ctx context.Context, host string) ([]string, error)
	// off says why no zone is probed at all, "" when zones are probed.
	off string
	// budget bounds one round (ProbeOnce): Interval.
	budget time.Duration

	mu    sync.Mutex
	zones map[string]*probeZone // by zone id
	// offLogged says off was logged; resume is the zone a round starts with (the one
	// the last round ran out of time on), "" for the first; overLogged is when a round
	// that ran out of time was last logged.
	offLogged  bool
	resume     string
	overLogged time.Time
}

// probeZone is what the prober knows of one zone.
type probeZone struct {
	id, name string
	private  bool
	// names maps each watched name to its hold as the zone cache's listing showed it.
	names map[string]string
	// ns are the apex NS host names; addrs their addresses (host:53), resolved at addrsAt.
	ns      []string
	addrs   []string
	addrsAt time.Time
	// triggered maps a name to the answer that last invalidated the zone: the same answer
	// does not invalidate it again while the listing still disagrees (the name servers
	// lag behind the API for up to a minute after a change), so a disagreement costs at
	// most one listing per change.
	triggered map[string]string
	// errLogged is when a failing probe of the zone was last logged; skipped says the
	// zone was logged as not probed.
	errLogged time.Time
	skipped   bool
}

// NewHoldProber returns a prober; Track tells it what to probe, Run probes.
func NewHoldProber(cfg HoldProbeConfig) *HoldProber {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultHoldProbe
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultHoldProbeTimeout
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &HoldProber{cfg: cfg, log: log.With("probe", "holds"), changed: make(chan struct{}, 1), budget: cfg.Interval,
		client: &dns.Client{Net: "udp", Timeout: cfg.Timeout}, lookup: net.DefaultResolver.LookupHost, zones: map[string]*probeZone{}}
	if len(cfg.Servers) == 0 && !AWSEndpoint(cfg.APIEndpoint) {
		p.off = "the Route 53 API " + cfg.APIEndpoint + " is not AWS's (a sandbox or an emulator), whose zones' NS records name name servers that need not serve them"
	}
	return p
}

// AWSEndpoint reports whether an API URL (--aws-endpoint, "host:port" accepted) is AWS's
// own: "" (the SDK's default) or a host under amazonaws.com, amazonaws.com.cn or api.aws.
// Anything else (a sandbox on loopback, an emulator reached by a compose service name) is
// not, whatever address it has.
func AWSEndpoint(endpoint string) bool {
	if endpoint == "" {
		return true
	}
	if !strings.Contains(endpoint, "://") {
		endpoint = "https://" + endpoint
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	for _, d := range []string{".amazonaws.com", ".amazonaws.com.cn", ".api.aws"} {
		if strings.HasSuffix(host, d) {
			return true
		}
	}
	return false
}

// Changed receives a value after a probe invalidated a zone: time to reconcile.
func (p *HoldProber) Changed() <-chan struct{} { return p.changed }

// Track takes the names to probe from a sync's report: every zone it listed, with the
// holds the listing showed. Zones it could not list keep what the prober knew; zones it
// did not report (gone, filtered out) are no longer probed. A nil report changes nothing.
func (p *HoldProber) Track(rep *Report) {
	if p == nil || rep == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	seen := map[string]bool{}
	for _, z := range rep.Zones {
		seen[z.Zone.ID] = true
		if z.Changes == nil {
			continue
		}
		pz := p.zones[z.Zone.ID]
		if len(z.Weighted) == 0 {
			delete(p.zones, z.Zone.ID)
			continue
		}
		if pz == nil {
			pz = &probeZone{id: z.Zone.ID, triggered: map[string]string{}}
			p.zones[z.Zone.ID] = pz
		}
		pz.name, pz.private, pz.names = z.Zone.Name, z.Zone.Private, z.Weighted
		if !slices.Equal(pz.ns, z.NameServers) {
			pz.ns, pz.addrs = slices.Clone(z.NameServers), nil
		}
		for n, obs := range pz.triggered {
			if known, ok := z.Weighted[n]; !ok || known == obs {
				delete(pz.triggered, n)
			}
		}
	}
	for id := range p.zones {
		if !seen[id] {
			delete(p.zones, id)
		}
	}
}

// Watched returns the number of names being probed, for logs and tests.
func (p *HoldProber) Watched() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, z := range p.zones {
		n += len(z.names)
	}
	return n
}

// Run probes every Interval until ctx ends.
func (p *HoldProber) Run(ctx context.Context) {
	tick := time.NewTicker(p.cfg.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			p.ProbeOnce(ctx)
		}
	}
}

// ProbeOnce probes every watched name once, within Interval, and returns the ids of the
// zones it invalidated. Zones are probed in order of id, starting with the first one the
// last round had no time left for.
func (p *HoldProber) ProbeOnce(ctx context.Context) []string {
	p.mu.Lock()
	if p.off != "" {
		if !p.offLogged {
			p.offLogged = true
			p.log.InfoContext(ctx, "not probing zones for cutover holds: "+p.off+"; pass --hold-probe-servers with the sandbox's DNS address (host:port) to probe it; "+
				"holds are confirmed at each zone's next listing meanwhile (at the latest its resync)")
		}
		p.mu.Unlock()
		return nil
	}
	type job struct {
		zone  probeZone
		names []string
	}
	var jobs []job
	for _, z := range p.zones {
		jobs = append(jobs, job{zone: *z, names: slices.Sorted(maps.Keys(z.names))})
	}
	resume := p.resume
	p.mu.Unlock()
	slices.SortFunc(jobs, func(a, b job) int { return strings.Compare(a.zone.id, b.zone.id) })
	if i := slices.IndexFunc(jobs, func(j job) bool { return j.zone.id >= resume }); i > 0 {
		jobs = slices.Concat(jobs[i:], jobs[:i])
	}

	deadline := time.Now().Add(p.budget)
	round, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	// A query cut by the deadline may fail before the context says it is done.
	spent := func() bool { return round.Err() != nil || !time.Now().Before(deadline) }
	var invalidated []string
	next := ""
	for k, j := range jobs {
		if spent() {
			if ctx.Err() == nil {
				next = p.overrun(ctx, j.zone.id, len(jobs)-k)
			}
			break
		}
		servers, err := p.servers(round, &j.zone)
		if err != nil {
			if !spent() {
				p.failed(ctx, j.zone.id, err)
			}
			continue
		}
		if servers == nil {
			continue
		}
		changed := false
		for _, n := range j.names {
			obs, err := p.ask(round, servers, n, len(p.cfg.Servers) == 0)
			if err != nil && spent() {
				// Out of time, not a failure of the servers.
				break
			}
			if err != nil {
				p.failed(ctx, j.zone.id, fmt.Errorf("%s: %w", registry.AuthorityName(n), err))
				if errors.Is(err, errNoAnswer) {
					// No server answered: the zone's other names would only wait
					// as long each. The zone is probed again next round.
					break
				}
				continue
			}
			if p.compare(j.zone.id, n, obs) {
				changed = true
			}
		}
		if changed {
			invalidated = append(invalidated, j.zone.id)
			if p.cfg.Invalidate != nil {
				p.cfg.Invalidate(j.zone.id)
			}
		}
	}
	p.mu.Lock()
	p.resume = next
	p.mu.Unlock()
	if len(invalidated) > 0 {
		select {
		case p.changed <- struct{}{}:
		default:
		}
	}
	return invalidated
}

// overrun logs, at most every ten minutes, that a round ran out of time with left zones
// unprobed, from zoneID on, and returns the zone the next round starts with: zoneID. (A
// zone the round ran out of time in goes last next time, so that no zone slow enough to
// use up every round keeps the others from being probed.)
func (p *HoldProber) overrun(ctx context.Context, zoneID string, left int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Since(p.overLogged) >= holdProbeErrorLog {
		p.overLogged = time.Now()
		p.log.WarnContext(ctx, "a round of probes for cutover holds ran out of time (--hold-probe-interval): the next round starts where it stopped",
			"budget", p.budget, "zones_left", left)
	}
	return zoneID
}

// compare records what a probe of name saw and reports whether the zone must be listed
// again: the answer differs from the listing and has not invalidated the zone before.
func (p *HoldProber) compare(zoneID, name, obs string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	z := p.zones[zoneID]
	if z == nil {
		return false
	}
	known, ok := z.names[name]
	switch {
	case !ok:
		return false
	case known == obs:
		delete(z.triggered, name)
		p.observe(ProbeSame)
		return false
	case hasValue(z.triggered, name, obs):
		// Invalidated for this very answer already, and the listing since disagrees:
		// the name servers lag behind the API; they catch up without another listing.
		p.observe(ProbeSame)
		return false
	}
	z.triggered[name] = obs
	p.observe(ProbeChanged)
	p.log.Info("a cutover's hold changed: listing the zone again to confirm it", "zone", z.name, "zone_id", zoneID,
		"name", name, "listed", describeHold(known), "answered", describeHold(obs))
	return true
}

func (p *HoldProber) observe(result string) {
	if p.cfg.Observe != nil {
		p.cfg.Observe(result)
	}
}

// describeHold renders a hold's state (registry.Authority.State) for logs.
func describeHold(s string) string {
	if s == "" {
		return "no hold"
	}
	return "hold " + s
}

// failed counts a failed probe of a zone and logs, at most every ten minutes per zone.
func (p *HoldProber) failed(ctx context.Context, zoneID string, err error) {
	p.observe(ProbeError)
	p.mu.Lock()
	defer p.mu.Unlock()
	z := p.zones[zoneID]
	if z == nil || time.Since(z.errLogged) < holdProbeErrorLog {
		return
	}
	z.errLogged = time.Now()
	p.log.WarnContext(ctx, "probing a zone's names for cutover holds failed: holds there are confirmed at the zone's next listing instead (at the latest its resync)",
		"zone", z.name, "zone_id", zoneID, "err", err)
}

// servers returns the addresses to ask about zone z: the configured ones, else its
// name servers' addresses; nil (and no error) for a zone that is not probed.
func (p *HoldProber) servers(ctx context.Context, z *probeZone) ([]string, error) {
	if len(p.cfg.Servers) > 0 {
		return p.cfg.Servers, nil
	}
	if z.private || len(z.ns) == 0 {
		p.mu.Lock()
		defer p.mu.Unlock()
		if pz := p.zones[z.id]; pz != nil && !pz.skipped {
			pz.skipped = true
			why := "its listing shows no apex NS record"
			if z.private {
				why = "it is a private zone, which its public name servers do not serve"
			}
			p.log.InfoContext(ctx, "not probing a zone for cutover holds: "+why+"; holds there are confirmed at the zone's next listing (at the latest its resync), or set --hold-probe-servers",
				"zone", z.name, "zone_id", z.id)
		}
		return nil, nil
	}
	if z.addrs != nil && time.Since(z.addrsAt) < nameServerTTL {
		return z.addrs, nil
	}
	var addrs []string
	var errs []error
	for _, ns := range z.ns {
		ips, err := p.lookup(ctx, strings.TrimSuffix(ns, "."))
		if err != nil {
			errs = append(errs, fmt.Errorf("name server %s: %w", ns, err))
			continue
		}
		for _, ip := range ips {
			addrs = append(addrs, net.JoinHostPort(ip, "53"))
		}
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("no name server of zone %s resolved: %w", z.name, errors.Join(errs...))
	}
	p.mu.Lock()
	if pz := p.zones[z.id]; pz != nil {
		pz.addrs, pz.addrsAt = addrs, time.Now()
	}
	p.mu.Unlock()
	return addrs, nil
}

// errNoAnswer is ask's error when no server answered at all (each timed out or refused).
var errNoAnswer = errors.New("no name server answered")

// ask queries servers in turn for name's authority record, until one answers (with
// authority, when authoritative: the zone's own name servers), and returns the hold it
// states (registry.Authority.State), "" for none; errNoAnswer when none answered at all. Servers named by the operator may be resolvers (a
// private zone's VPC resolver), whose answers carry no authority: a stale answer from
// one only delays a confirmation, since an answer never writes anything itself, it
// only has the zone listed again.
func (p *HoldProber) ask(ctx context.Context, servers []string, name string, authoritative bool) (string, error) {
	q := new(dns.Msg)
	q.SetQuestion(dns.Fqdn(registry.AuthorityName(name)), dns.TypeTXT)
	q.RecursionDesired = false
	var errs []error
	answered := false
	for _, s := range servers {
		r, _, err := p.client.ExchangeContext(ctx, q, s)
		if err == nil {
			answered = true
		}
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", s, err))
			continue
		case authoritative && !r.Authoritative:
			errs = append(errs, fmt.Errorf("%s: answered without authority", s))
			continue
		case r.Rcode == dns.RcodeNameError:
			return "", nil
		case r.Rcode != dns.RcodeSuccess:
			errs = append(errs, fmt.Errorf("%s: %s", s, dns.RcodeToString[r.Rcode]))
			continue
		}
		for _, rr := range r.Answer {
			txt, ok := rr.(*dns.TXT)
			if !ok {
				continue
			}
			rec := &endpoint.Endpoint{Name: registry.AuthorityName(name), Type: endpoint.TypeTXT,
				Targets: endpoint.Targets{strconv.Quote(strings.Join(txt.Txt, ""))}}
			if a, ok := registry.ParseAuthority(rec); ok {
				return a.State(), nil
			}
		}
		return "", nil
	}
	if !answered {
		return "", fmt.Errorf("%w: %w", errNoAnswer, errors.Join(errs...))
	}
	return "", errors.Join(errs...)
}

// hasValue reports whether m holds v under k.
func hasValue(m map[string]string, k, v string) bool {
	got, ok := m[k]
	return ok && got == v
}
