package cache

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
)

// DefaultResync is how long a zone (and the zone list) is trusted before it is listed
// again although no write failed.
const DefaultResync = time.Hour

// Config configures a Provider.
type Config struct {
	// Resync is how long a listing is trusted; 0 means DefaultResync.
	Resync time.Duration
	// Now tells the time; nil means time.Now. Tests move it forward.
	Now func() time.Time
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
}

// Provider is a provider.Provider that keeps each zone's record sets between calls and
// updates them from its own successful writes. It is safe for concurrent use.
type Provider struct {
	inner  provider.Provider
	resync time.Duration
	now    func() time.Time
	log    *slog.Logger

	mu sync.Mutex
	// zones is the zone list, valid while zonesOK.
	zones   []provider.Zone
	zonesOK bool
	zonesAt time.Time
	// entries are the zones listed so far, by zone id.
	entries map[string]*entry
	// gen counts, per zone id, the writes and invalidations of that zone, and epoch the
	// InvalidateAll calls: a listing that one of them overtook is returned but not kept,
	// since it may predate what they changed.
	gen   map[string]uint64
	epoch uint64
}

// entry is one zone's cached record sets.
type entry struct {
	// records are the zone as its last listing returned it, with every accepted write since
	// applied. They are never handed out: Records returns copies.
	records []*endpoint.Endpoint
	// listedAt is when the listing was made.
	listedAt time.Time
	// stale says why the zone must be listed again ("" while records are good).
	stale string
}

var _ provider.Provider = (*Provider)(nil)

// New wraps inner.
func New(inner provider.Provider, cfg Config) *Provider {
	p := &Provider{inner: inner, resync: cfg.Resync, now: cfg.Now, log: cfg.Logger,
		entries: map[string]*entry{}, gen: map[string]uint64{}}
	if p.resync <= 0 {
		p.resync = DefaultResync
	}
	if p.now == nil {
		p.now = time.Now
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	p.log = p.log.With("cache", "zones")
	return p
}

// Limits are the wrapped provider's.
func (p *Provider) Limits() changes.Limits { return p.inner.Limits() }

// Zones returns the zone list, listed by the wrapped provider at most once per resync
// interval (or after InvalidateAll).
func (p *Provider) Zones(ctx context.Context) ([]provider.Zone, error) {
	p.mu.Lock()
	if p.zonesOK && p.now().Sub(p.zonesAt) < p.resync {
		out := slices.Clone(p.zones)
		p.mu.Unlock()
		return out, nil
	}
	epoch := p.epoch
	p.mu.Unlock()

	at := p.now()
	zones, err := p.inner.Zones(ctx)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.epoch == epoch {
		p.zones, p.zonesOK, p.zonesAt = slices.Clone(zones), true, at
		// A zone that is gone (or no longer passes the filters) is not kept, nor is its
		// write counter: over months of zones coming and going the counters would be all
		// that is left of them. Forgetting a counter could let a listing already on its
		// way match a counter that restarted, so the epoch moves too and such a listing
		// is returned but not kept.
		gone := func(id string) bool {
			return !slices.ContainsFunc(zones, func(z provider.Zone) bool { return z.ID == id })
		}
		maps.DeleteFunc(p.entries, func(id string, _ *entry) bool { return gone(id) })
		n := len(p.gen)
		maps.DeleteFunc(p.gen, func(id string, _ uint64) bool { return gone(id) })
		if len(p.gen) < n {
			p.epoch++
		}
		p.log.DebugContext(ctx, "zones listed", "zones", len(zones))
	}
	return zones, nil
}

// Records returns a copy of zone's record sets, which the caller may change. The wrapped
// provider lists the zone only when it is not cached yet, when the resync interval has
// passed since it was listed, or when it was invalidated (a failed write, Invalidate,
// InvalidateAll).
func (p *Provider) Records(ctx context.Context, zone provider.Zone) ([]*endpoint.Endpoint, error) {
	p.mu.Lock()
	e := p.entries[zone.ID]
	why := p.staleness(e)
	if why == "" {
		out := copyRecords(e.records)
		p.mu.Unlock()
		return out, nil
	}
	gen, epoch := p.gen[zone.ID], p.epoch
	p.mu.Unlock()

	at := p.now()
	records, err := p.inner.Records(ctx, zone)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gen[zone.ID] == gen && p.epoch == epoch {
		p.entries[zone.ID] = &entry{records: records, listedAt: at}
		p.log.DebugContext(ctx, "zone listed", "zone", zone.Name, "zone_id", zone.ID, "records", len(records), "reason", why)
	} else {
		// A write or an invalidation finished while the listing ran: the listing may not
		// show it. It is still as good an answer as the caller could get, but the next
		// call lists again.
		p.log.DebugContext(ctx, "zone listed but not cached: it changed meanwhile", "zone", zone.Name, "zone_id", zone.ID)
	}
	return copyRecords(records), nil
}

// staleness says why e must be listed, "" when it is good.
func (p *Provider) staleness(e *entry) string {
	switch {
	case e == nil:
		return "not cached"
	case e.stale != "":
		return e.stale
	case p.now().Sub(e.listedAt) >= p.resync:
		return "resync"
	}
	return ""
}

// Apply writes batch through the wrapped provider. When it is accepted, the cached zone is
// brought to what the batch leaves behind; when it fails in any way that may have reached
// the service (refused, throttled, failed, cancelled), the zone is invalidated, since it
// may no longer be what the cache holds. A batch the provider could not even build
// (*provider.InvalidChangeError) was never sent and leaves the cache as it is.
func (p *Provider) Apply(ctx context.Context, zone provider.Zone, batch changes.Batch) error {
	err := p.inner.Apply(ctx, zone, batch)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gen[zone.ID]++
	var inv *provider.InvalidChangeError
	switch {
	case err == nil:
		if e := p.entries[zone.ID]; e != nil && e.stale == "" {
			e.records = applyBatch(e.records, batch)
		}
	case errors.As(err, &inv):
		// Nothing was sent. Invalidating here would list the zone again at every
		// reconcile for as long as the bad object exists.
	default:
		p.invalidateLocked(zone.ID, "a write failed")
		p.log.InfoContext(ctx, "zone cache invalidated: a write failed", "zone", zone.Name, "zone_id", zone.ID, "changes", len(batch), "err", err)
	}
	return err
}

// Invalidate makes the next Records of the zone list it again, e.g. when something says
// that another writer changed it.
func (p *Provider) Invalidate(zoneID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gen[zoneID]++
	p.invalidateLocked(zoneID, "invalidated on demand")
	p.log.Debug("zone cache invalidated on demand", "zone_id", zoneID)
}

// InvalidateAll makes the next Zones and the next Records of every zone list again.
func (p *Provider) InvalidateAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.epoch++
	p.zonesOK = false
	for id := range p.entries {
		p.invalidateLocked(id, "invalidated on demand")
	}
	p.log.Debug("zone cache invalidated on demand", "zones", len(p.entries))
}

func (p *Provider) invalidateLocked(zoneID, why string) {
	if e := p.entries[zoneID]; e != nil {
		e.records, e.stale = nil, why
	}
}

// Ages returns, by zone id, how long ago each cached zone was listed: the age of what the
// cache trusts. Zones not cached (never listed, or invalidated and not listed since) are
// absent.
func (p *Provider) Ages() map[string]time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	out := make(map[string]time.Duration, len(p.entries))
	for id, e := range p.entries {
		if e.stale == "" {
			out[id] = now.Sub(e.listedAt)
		}
	}
	return out
}

// AdjustEndpoints is the wrapped provider's.
func (p *Provider) AdjustEndpoints(desired []*endpoint.Endpoint) []*endpoint.Endpoint {
	return p.inner.AdjustEndpoints(desired)
}

// DryRun is the wrapped provider's (an error wrapping provider.ErrNoDryRun when it cannot
// render): a rendering reads nothing, so the cache has nothing to add.
func (p *Provider) DryRun(ctx context.Context, zone provider.Zone, batch changes.Batch) ([]byte, error) {
	return p.inner.DryRun(ctx, zone, batch)
}

// applyBatch returns records as the accepted batch leaves them: a CREATE or UPSERT puts
// the set (in the form a listing returns it), a DELETE removes the set of its key. A set
// keeps its place; new ones go last. Applying a batch to a listing that already shows it
// gives the same result, which is what makes a listing that overlapped the write safe.
func applyBatch(records []*endpoint.Endpoint, batch changes.Batch) []*endpoint.Endpoint {
	final := make(map[endpoint.Key]*endpoint.Endpoint, len(batch)) // nil: deleted
	var order []endpoint.Key
	for _, c := range batch {
		if c.Endpoint == nil {
			continue
		}
		s := Stored(c.Endpoint)
		k := s.Key()
		if _, seen := final[k]; !seen {
			order = append(order, k)
		}
		if c.Action == changes.Delete {
			final[k] = nil
		} else {
			final[k] = s
		}
	}
	// Most names are untouched: a lookup by name alone is the cheap first test.
	names := make(map[string]bool, len(order))
	for _, k := range order {
		names[k.Name] = true
	}
	out := make([]*endpoint.Endpoint, 0, len(records)+len(order))
	placed := make(map[endpoint.Key]bool, len(order))
	for _, r := range records {
		if !names[r.Name] {
			out = append(out, r)
			continue
		}
		k := r.Key()
		s, touched := final[k]
		switch {
		case !touched:
			out = append(out, r)
		case s != nil && !placed[k]:
			out = append(out, s)
			placed[k] = true
		}
	}
	for _, k := range order {
		if s := final[k]; s != nil && !placed[k] {
			out = append(out, s)
		}
	}
	return out
}

// defaultTTL is the TTL the Route 53 provider writes for a set whose TTL is not configured
// (route53.DefaultTTL).
const defaultTTL = 300

// hostnameTypes are the types whose values the Route 53 provider reads lower case without a
// trailing dot (route53's hostnameTypes); every other type's values are read verbatim.
var hostnameTypes = map[string]bool{
	endpoint.TypeA: true, endpoint.TypeAAAA: true, endpoint.TypeCNAME: true, endpoint.TypeNS: true,
	endpoint.TypePTR: true, endpoint.TypeMX: true, endpoint.TypeSRV: true,
}

// Stored returns the set e writes as the Route 53 provider (crossfade's one provider) lists
// it afterwards, so that the cache holds what a fresh listing would and a reconcile over it
// plans nothing new. A provider that reads its writes back otherwise needs its own rules
// here. The rules mirror route53's toRecordSet and toEndpoint; TestWrittenFormIsListedForm
// and TestCacheEqualsListing fail when the two drift apart:
//
//   - the name lower case without its trailing dot; no labels (ownership lives in TXT
//     records, which the registry reads into labels after listing);
//   - simple routing carries no weight or role; a failover role is upper case;
//   - an alias (alias property true, any type) has no TTL, its one target lower case
//     without the trailing dot, "alias" = "true", EvaluateTargetHealth only when false, and
//     an explicit target zone id without "/hostedzone/";
//   - any other set has a TTL (300 when not configured; endpoint.TTLZero stays a TTL of 0),
//     values sorted, those of hostname types lower case without the trailing dot, the rest
//     (TXT with its quotes) byte for byte;
//   - a health check id when there is one, and no other provider property.
//
// One difference remains: a listing leaves out an alias's target zone id when it is the
// one the provider would find itself (a load balancer's canonical zone, the zone holding
// the target), which only the provider knows. The cache keeps an explicit id as written;
// the planner ignores the property (Endpoint.SameRecord), and a DELETE rendered from either
// form names the same zone.
func Stored(e *endpoint.Endpoint) *endpoint.Endpoint {
	s := &endpoint.Endpoint{
		Name:          endpoint.NormalizeName(e.Name),
		Type:          strings.ToUpper(e.Type),
		SetIdentifier: e.SetIdentifier,
		TTL:           e.TTL,
	}
	switch e.Policy.Kind {
	case endpoint.Weighted:
		s.Policy = endpoint.WeightedPolicy(e.Policy.Weight)
	case endpoint.Failover:
		s.Policy = endpoint.FailoverPolicy(e.Policy.Role)
	}
	if id := e.ProviderSpecific[endpoint.PropHealthCheckID]; id != "" {
		s.SetProp(endpoint.PropHealthCheckID, id)
	}
	if alias, _ := strconv.ParseBool(e.ProviderSpecific[endpoint.PropAlias]); alias {
		s.TTL = 0
		if len(e.Targets) > 0 {
			s.Targets = endpoint.Targets{endpoint.NormalizeName(e.Targets[0])}
		}
		s.SetProp(endpoint.PropAlias, "true")
		if v, ok := e.Prop(endpoint.PropEvaluateTargetHealth); ok {
			if eval, err := strconv.ParseBool(v); err == nil && !eval {
				s.SetProp(endpoint.PropEvaluateTargetHealth, "false")
			}
		}
		if id := strings.TrimPrefix(strings.TrimPrefix(e.ProviderSpecific[endpoint.PropAliasZoneID], "/"), "hostedzone/"); id != "" {
			s.SetProp(endpoint.PropAliasZoneID, id)
		}
		return s
	}
	if !s.TTL.IsConfigured() {
		s.TTL = defaultTTL
	}
	s.Targets = make(endpoint.Targets, len(e.Targets))
	for i, v := range e.Targets {
		if hostnameTypes[s.Type] {
			v = endpoint.NormalizeTarget(v)
		}
		s.Targets[i] = v
	}
	slices.Sort(s.Targets)
	return s
}

// copyRecords deep-copies records in three allocations plus one per property or label
// map: the endpoints, the pointers and every value share one backing array each. Callers
// may change what they get: the registry labels the records it reads (registry.TXT.Read),
// and nothing else in the planner or the Syncer changes them, but a copy is cheaper than
// an invariant that every future caller must keep.
func copyRecords(records []*endpoint.Endpoint) []*endpoint.Endpoint {
	n := 0
	for _, r := range records {
		n += len(r.Targets)
	}
	eps := make([]endpoint.Endpoint, len(records))
	out := make([]*endpoint.Endpoint, len(records))
	values := make([]string, n)
	for i, r := range records {
		eps[i] = *r
		k := copy(values, r.Targets)
		// Capacity capped at the length: an append by the caller reallocates instead of
		// writing into the next record's values.
		eps[i].Targets, values = values[:k:k], values[k:]
		if r.Targets == nil {
			eps[i].Targets = nil
		}
		eps[i].Labels = maps.Clone(r.Labels)
		eps[i].ProviderSpecific = maps.Clone(r.ProviderSpecific)
		out[i] = &eps[i]
	}
	return out
}
