package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/cloudmap"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/metrics"
	"github.com/crossfade-io/crossfade/internal/source"
)

// Defaults of a Controller's timing.
const (
	// DefaultDebounce is how long the objects must be quiet before a reconcile: a rollout
	// that touches fifty Services becomes one reconcile, not fifty.
	DefaultDebounce = 300 * time.Millisecond
	// DefaultMaxDelay caps the wait for quiet, so a cluster that never stops changing
	// still converges.
	DefaultMaxDelay = 3 * time.Second
	// DefaultInterval is how often a reconcile runs without any event. It costs no DNS
	// API call while the zone cache is fresh.
	DefaultInterval = time.Minute
	// DefaultFullInterval is how often, with Incremental, every object is read again and
	// every name re-planned even when no event asks for it: the other reconciles, the
	// Interval's included, re-plan only what changed, which at rest is nothing.
	DefaultFullInterval = 10 * time.Minute
	// DefaultGrace is how long the reconcile in flight may run on after a stop, so a
	// batch is never cut off between its calls (Kubernetes' termination grace period
	// is 30 s by default).
	DefaultGrace = 25 * time.Second
)

// objects is what a Controller reads objects from; *Watcher implements it.
type objects interface {
	Changed() <-chan struct{}
	Snapshot() (*source.Snapshot, bool)
}

// CloudMap publishes the Services' endpoints as Cloud Map instances; *cloudmap.Publisher
// implements it.
type CloudMap interface {
	Reconcile(ctx context.Context, services []*corev1.Service, slices []*discoveryv1.EndpointSlice, complete bool) *cloudmap.Report
}

// Record puts s into m's series: the reconcile's duration and outcome, the changes
// written, the records managed per zone, the invalid objects, conflicts and refusals.
func (s Stats) Record(m *metrics.Metrics) {
	m.ObserveReconcile(s.Duration, s.Err)
	m.AddChanges(s.Written)
	m.SetRecords(s.Desired)
	inv := make(map[metrics.InvalidKey]int, len(s.Invalid))
	for k, n := range s.Invalid {
		inv[metrics.InvalidKey(k)] = n
	}
	m.SetInvalid(inv)
	m.SetConflicts(s.Conflicts, s.Refused)
}

// Observer receives each reconcile's outcome, e.g. to export metrics.
type Observer interface {
	Reconciled(Stats)
}

// Stats is one reconcile's outcome in numbers.
type Stats struct {
	Duration time.Duration
	// Err is the reconcile's failure, nil when every zone was written.
	Err error
	// Invalid counts the invalid objects' problems by kind and reason (the field in
	// error, e.g. "aws-weight").
	Invalid map[InvalidKey]int
	// Conflicts counts records not written because something stands in their way,
	// including the names the provider refused.
	//
	// Conflicts and Refused of a zone whose records could not be listed, and Conflicts,
	// Refused, Desired and ZoneNames when the zones could not be listed at all, are those
	// of the last reconcile that listed them: a failed listing says nothing of them, and
	// a gauge at 0, or a series gone, would say the problems or the zone were gone.
	Conflicts int
	// Refused counts the names the provider refused.
	Refused int
	// Written counts the changes written, by action.
	Written map[changes.Action]int
	// Desired counts the records each zone (by name) was asked to hold.
	Desired map[string]int
	// ZoneNames are the names of the zones reconciled, by zone id.
	ZoneNames map[string]string
	// CloudMapWritten counts the Cloud Map writes, by action; nil without Cloud Map.
	CloudMapWritten map[cloudmap.Action]int
	// DeletionsHeld counts, by zone name, the deletions the deletion guard held in each
	// zone planned this time (0 included). A zone of ZoneNames absent here could not be
	// listed, and its last count stands (RecordHeld).
	DeletionsHeld map[string]int
}

// InvalidKey labels a count of invalid objects.
type InvalidKey struct{ Kind, Reason string }

// Config holds a Controller's parts and timing.
type Config struct {
	// Syncer plans and writes; its provider should cache zones (internal/provider/cache)
	// so that a reconcile with nothing to change calls no DNS API.
	Syncer *Syncer
	// Source turns objects into records.
	Source *source.Source
	// DropKinds are object kinds read only for lookups, whose own records are not
	// published (Services read for Istio Gateways when Services are not a source).
	DropKinds []string
	// Debounce, MaxDelay, Interval and Grace default to the Default* values when 0.
	Debounce, MaxDelay, Interval, Grace time.Duration
	// BackoffBase and BackoffMax shape the wait after a failed reconcile (a zone not
	// listed or not fully written, or Cloud Map failing): up to BackoffBase after the
	// first, doubling with each failure in a row up to BackoffMax, jittered. Changes, the
	// Interval and hold changes that come meanwhile wait for its end and make one
	// reconcile then. They default to DefaultBackoffBase and DefaultBackoffMax when 0.
	BackoffBase, BackoffMax time.Duration
	// BackoffMetrics, when set, counts the failed reconciles and shows the backoff.
	BackoffMetrics *BackoffMetrics
	// CloudMap, when set, publishes the Services' endpoints into Cloud Map at every
	// reconcile, after the zones are written; its failures fail the reconcile.
	CloudMap CloudMap
	// Events receives a Warning for every invalid object and conflict, and logs it when
	// it is new; nil sends none, and every reconcile logs every invalid object.
	Events *EventReporter
	// Observer receives each reconcile's numbers; nil discards them.
	Observer Observer
	// Holds, when set, probes the names where the controller publishes weighted record
	// sets for a cutover taking hold of them, and has the zone listed and reconciled at
	// once when one does, so that the hold is confirmed long before the zone cache's
	// resync. Run runs it; each reconcile tells it what to probe.
	Holds *HoldProber
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
	// Incremental re-plans, after a change, only the names of the records of the objects
	// it touched, when it can (see incremental.go for when it cannot, and the full
	// reconcile runs instead); a full reconcile still runs at least every FullInterval.
	Incremental bool
	// FullInterval is how often, with Incremental, a full reconcile runs whatever
	// happens; default DefaultFullInterval, and never less than Interval.
	FullInterval time.Duration
}

// Controller reconciles whenever watched objects change: debounced, against cached
// zones, one reconcile at a time.
type Controller struct {
	cfg     Config
	objects objects
	log     *slog.Logger

	mu   sync.Mutex
	last map[string]zoneNumbers // by zone id, as the last reconcile reported it
	// overridden are the set-aside annotations the last reconcile found, so that each is
	// logged once when it appears, not at every reconcile.
	overridden map[source.Skipped]bool
	// inc is what an incremental reconcile starts from; nil until a full one allows it.
	inc *incState
}

// zoneNumbers are a zone's figures in Stats.
type zoneNumbers struct {
	name                        string
	desired, conflicts, refused int
}

// New returns a Controller reading objects from w.
func New(w objects, cfg Config) (*Controller, error) {
	if cfg.Syncer == nil || cfg.Source == nil {
		return nil, errors.New("controller: Syncer and Source are required")
	}
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&cfg.Debounce, DefaultDebounce}, {&cfg.MaxDelay, DefaultMaxDelay}, {&cfg.Interval, DefaultInterval}, {&cfg.Grace, DefaultGrace},
		{&cfg.BackoffBase, DefaultBackoffBase}, {&cfg.BackoffMax, DefaultBackoffMax}} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	if cfg.FullInterval <= 0 {
		cfg.FullInterval = DefaultFullInterval
	}
	cfg.FullInterval = max(cfg.FullInterval, cfg.Interval)
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Controller{cfg: cfg, objects: w, log: log}, nil
}

// Run reconciles once, then after every burst of changes and every Interval, until ctx
// ends. After a failed reconcile it backs off (Config.BackoffBase, BackoffMax) and then
// reconciles once for whatever came meanwhile: a Route 53 that throttles or is down is
// not asked again at every change, which would feed the account's throttling. A
// reconcile in flight when ctx ends runs on for up to Grace, so its batches land whole;
// Run then returns nil.
func (c *Controller) Run(ctx context.Context) error {
	tick := time.NewTicker(c.cfg.Interval)
	defer tick.Stop()
	if c.cfg.Holds != nil {
		pctx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.cfg.Holds.Run(pctx)
		}()
		defer func() {
			stop()
			wg.Wait()
		}()
	}
	bo := newBackoff(c.cfg.BackoffBase, c.cfg.BackoffMax, nil)
	for ctx.Err() == nil {
		_, err := c.ReconcileOnce(ctx) // logged and observed there
		if ctx.Err() != nil {
			break // a reconcile cut short by the stop is no failure to back off from
		}
		var ok bool
		if err != nil {
			d := bo.fail()
			c.cfg.BackoffMetrics.failed(d)
			c.log.Warn("reconcile failed: backing off", "backoff", d.Round(time.Millisecond), "failures_in_a_row", bo.failures)
			retry := time.NewTimer(d)
			ok = c.waitBackoff(ctx, tick.C, retry.C)
			retry.Stop()
		} else {
			if bo.failures > 0 {
				c.log.Info("reconcile succeeded after failures: backoff ended", "failures_in_a_row", bo.failures)
			}
			bo.succeed()
			c.cfg.BackoffMetrics.succeeded()
			ok = c.wait(ctx, tick.C)
		}
		if !ok {
			break
		}
	}
	return nil
}

// waitBackoff is wait after a failed reconcile: it blocks until retry fires (the end of
// the backoff), whatever comes meanwhile, and takes what came as read by the reconcile
// that follows, which is due then even if nothing came. It reports false when ctx ended.
func (c *Controller) waitBackoff(ctx context.Context, tick, retry <-chan time.Time) bool {
	select {
	case <-ctx.Done():
		return false
	case <-retry:
	}
	// The reconcile that follows reads the objects as they are now, and lists a zone a
	// hold changed in (the prober invalidated it before signalling): a change, tick or
	// hold signal still pending is answered by it and must not start another.
	var holds <-chan struct{}
	if c.cfg.Holds != nil {
		holds = c.cfg.Holds.Changed()
	}
	for _, ch := range []<-chan struct{}{c.objects.Changed(), holds} {
		select {
		case <-ch:
		default:
		}
	}
	select {
	case <-tick:
	default:
	}
	return true
}

// wait blocks until the objects have been quiet for Debounce after a change (at most
// MaxDelay after the first one), or the interval ticks. It reports false when ctx ended.
func (c *Controller) wait(ctx context.Context, tick <-chan time.Time) bool {
	var holds <-chan struct{} // nil without a prober: never ready
	if c.cfg.Holds != nil {
		holds = c.cfg.Holds.Changed()
	}
	select {
	case <-ctx.Done():
		return false
	case <-tick:
		return true
	case <-holds:
		// A cutover's hold changed: its zone is invalidated, reconcile now.
		return true
	case <-c.objects.Changed():
	}
	ceiling := time.NewTimer(c.cfg.MaxDelay)
	defer ceiling.Stop()
	quiet := time.NewTimer(c.cfg.Debounce)
	defer quiet.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-ceiling.C:
			return true
		case <-quiet.C:
			return true
		case <-c.objects.Changed():
			quiet.Reset(c.cfg.Debounce)
		}
	}
}

// ReconcileOnce reads the objects, plans and writes every zone, and reports: one
// Warning event per new problem, logs and the observer's numbers. Stopping ctx lets the
// reconcile finish within Grace.
func (c *Controller) ReconcileOnce(ctx context.Context) (*Report, error) {
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stop := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(c.cfg.Grace, cancel)
		context.AfterFunc(rctx, func() { t.Stop() })
	})
	defer stop()

	start := time.Now()
	var snap *source.Snapshot
	complete := true
	res, rep, err, done := c.reconcileIncremental(rctx, start)
	if !done {
		snap, complete = c.objects.Snapshot()
		var idx source.Index
		if c.cfg.Incremental {
			res, idx = c.cfg.Source.EndpointsIndexed(snap)
		} else {
			res = c.cfg.Source.Endpoints(snap)
		}
		res = dropKinds(res, c.cfg.DropKinds)
		if !complete {
			c.log.Warn("some objects are not known yet: no record is deleted this time")
		}
		rep, err = c.syncGuarded(rctx, res.Endpoints, Keep{Resources: res.Held, All: !complete})
		if err == nil {
			err = rep.Err()
		}
		c.rememberFull(start, res, idx, rep, err, complete)
	}
	var cm *cloudmap.Report
	if c.cfg.CloudMap != nil {
		// After the zones: a slow Cloud Map operation never delays a DNS record.
		cm = c.cfg.CloudMap.Reconcile(rctx, snap.Services, snap.EndpointSlices, complete)
		err = errors.Join(err, cm.Err)
	}
	st := Stats{Duration: time.Since(start), Err: err, Invalid: map[InvalidKey]int{}, Written: map[changes.Action]int{}, Desired: map[string]int{},
		ZoneNames: map[string]string{}}
	invalid := res.Invalid
	if cm != nil {
		invalid = append(slices.Clip(invalid), cm.Invalid...)
		st.CloudMapWritten = cm.Written
	}
	c.logOverridden(res.Overridden)
	for _, e := range invalid {
		st.Invalid[InvalidKey{Kind: e.Object.Kind, Reason: reasonOf(e.Field)}]++
		if c.cfg.Events == nil {
			c.log.Error("invalid object", "kind", e.Object.Kind, "namespace", e.Object.Namespace, "name", e.Object.Name,
				"field", e.Field, "value", e.Value, "reason", e.Reason)
		}
	}
	if cm != nil && c.cfg.Events == nil {
		for _, p := range cm.Problems {
			c.log.Error("cloud map "+string(p.Kind), "kind", p.Object.Kind, "namespace", p.Object.Namespace, "name", p.Object.Name,
				"instance", p.ID, "message", p.Message)
		}
	}
	if rep != nil {
		for _, z := range rep.Zones {
			if c.cfg.Syncer.DryRun && z.Changes != nil && len(z.Changes.Batches) > 0 {
				c.log.Info("dry run: would change", "zone", z.Zone.Name, "plan", z.Summary())
				for i, doc := range z.DryRun {
					c.log.Debug("dry run: batch", "zone", z.Zone.Name, "batch", i, "change_batch", string(doc))
				}
			}
			for a, n := range z.Written {
				st.Written[a] += n
			}
		}
	}
	for id, z := range c.zoneNumbers(rep) {
		st.Desired[z.name] += z.desired
		st.ZoneNames[id] = z.name
		st.Conflicts += z.conflicts
		st.Refused += z.refused
	}
	st.DeletionsHeld = c.reportHeld(rep)
	if c.cfg.Events != nil {
		c.cfg.Events.ReportAll(res, rep, cm, time.Now())
	}
	c.cfg.Holds.Track(rep)
	if c.cfg.Observer != nil {
		c.cfg.Observer.Reconciled(st)
	}
	attrs := []any{"records", len(res.Endpoints), "invalid", len(invalid), "conflicts", st.Conflicts,
		"refused", st.Refused, "written", st.Written, "took", st.Duration.Round(time.Millisecond)}
	if cm != nil {
		attrs = append(attrs, "cloudmap_problems", len(cm.Problems), "cloudmap_written", cm.Written)
	}
	if rep != nil && rep.Incremental {
		attrs = append(attrs, "incremental", true)
	}
	if err != nil {
		c.log.Error("reconcile", append(attrs, "err", err)...)
		return rep, fmt.Errorf("reconcile: %w", err)
	}
	if len(st.Written) > 0 || len(st.CloudMapWritten) > 0 {
		c.log.Info("reconciled", attrs...)
	} else {
		c.log.Debug("reconciled", attrs...)
	}
	return rep, nil
}

// zoneNumbers returns each zone's figures for Stats, by zone id: from rep, but the last
// known conflicts of a zone rep could not list, and every zone's last figures when there
// is no rep (the zones could not be listed).
func (c *Controller) zoneNumbers(rep *Report) map[string]zoneNumbers {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rep == nil {
		return c.last
	}
	now := make(map[string]zoneNumbers, len(rep.Zones))
	for _, z := range rep.Zones {
		n := zoneNumbers{name: z.Zone.Name, desired: z.Desired, conflicts: len(z.Refused), refused: len(z.Refused)}
		if z.Changes != nil {
			n.conflicts += len(z.Changes.Conflicts)
		} else if last, ok := c.last[z.Zone.ID]; ok {
			n.conflicts, n.refused = last.conflicts, last.refused
		}
		now[z.Zone.ID] = n
	}
	c.last = now
	return now
}

// dropKinds removes everything objects of kinds yield or report.
func dropKinds(r source.Result, kinds []string) source.Result {
	if len(kinds) == 0 {
		return r
	}
	drop := func(ref endpoint.ObjectRef) bool {
		for _, k := range kinds {
			if ref.Kind == k {
				return true
			}
		}
		return false
	}
	out := source.Result{}
	for _, e := range r.Endpoints {
		if ref, ok := refOfResource(e.Resource()); !ok || !drop(ref) {
			out.Endpoints = append(out.Endpoints, e)
		}
	}
	for _, e := range r.Invalid {
		if !drop(e.Object) {
			out.Invalid = append(out.Invalid, e)
		}
	}
	for _, h := range r.Held {
		if ref, ok := refOfResource(h); !ok || !drop(ref) {
			out.Held = append(out.Held, h)
		}
	}
	for _, p := range r.Pending {
		if !drop(p.Object) {
			out.Pending = append(out.Pending, p)
		}
	}
	for _, s := range r.Skipped {
		if !drop(s.Object) {
			out.Skipped = append(out.Skipped, s)
		}
	}
	for _, s := range r.Overridden {
		if !drop(s.Object) {
			out.Overridden = append(out.Overridden, s)
		}
	}
	return out
}

// logOverridden warns of each annotation set aside (a legacy-prefix value that lost to
// the same key under the configured prefix, as external-dns v0.23 warns) when it first
// appears, and forgets those that are gone, so a fixed object that regresses is logged
// again.
func (c *Controller) logOverridden(found []source.Skipped) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := make(map[source.Skipped]bool, len(found))
	for _, o := range found {
		now[o] = true
		if !c.overridden[o] {
			c.log.Warn("annotation set aside", "kind", o.Object.Kind, "namespace", o.Object.Namespace, "name", o.Object.Name, "reason", o.Reason)
		}
	}
	c.overridden = now
}
