// Package metrics holds the controller's Prometheus metrics and serves them, with the
// health endpoints, over HTTP.
//
// Every Metrics has its own registry, so a process (or a test) may hold many. The
// controller reports through typed methods rather than label strings: actions are
// changes.Actions, invalid objects are InvalidKeys, results are derived here from errors,
// so no caller can misspell a label or mint an unbounded one.
//
// Counters count events (changes applied, API attempts, reconciles); gauges hold what is
// true now and are set whole at every reconcile (records managed, invalid objects,
// conflicts). The invalid-object and conflict counts are gauges, not counters, because a
// reconcile re-reads every object: the same broken Service is found again at every
// reconcile, so a counter would grow with the reconcile rate and say nothing about how
// many objects are broken. A gauge says exactly that, and falls to 0 once they are fixed,
// so `crossfade_invalid_objects > 0` alerts while, and only while, something is wrong.
package metrics

import (
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/crossfade-io/crossfade/internal/changes"
)

// Metric names, for tests and dashboards that look them up.
const (
	NameRecordsManaged    = "crossfade_records_managed"
	NameChangesApplied    = "crossfade_changes_applied_total"
	NameAPICalls          = "crossfade_provider_api_calls_total"
	NameReconcileDuration = "crossfade_reconcile_duration_seconds"
	NameReconciles        = "crossfade_reconciles_total"
	NameLastSuccess       = "crossfade_last_successful_reconcile_timestamp_seconds"
	NameZoneCacheAge      = "crossfade_zone_cache_age_seconds"
	NameInvalidObjects    = "crossfade_invalid_objects"
	NameConflicts         = "crossfade_conflicts"
	NameRefused           = "crossfade_refused_names"
	NameLeader            = "crossfade_leader"
)

// Result label values of crossfade_reconciles_total and crossfade_provider_api_calls_total.
const (
	ResultOK        = "ok"
	ResultError     = "error"
	ResultThrottled = "throttled" // API calls only
)

// ReconcileBuckets are the reconcile duration histogram's upper bounds, in seconds: from
// a reconcile answered from the zone cache (about a millisecond) to one that re-lists
// large zones under throttling (tens of seconds).
var ReconcileBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// Go runtime series added to client_golang's defaults, for the soak benchmark (issue 32)
// and for anyone watching a controller for a leak.
const (
	// NameGoHeapLive is the heap the last collection marked live (runtime/metrics
	// /gc/heap/live:bytes). Unlike go_memstats_heap_alloc_bytes it holds no garbage not
	// yet collected, so it stays flat at rest instead of following the GC's sawtooth.
	NameGoHeapLive = "go_gc_heap_live_bytes"
	// NameGoGCCycles counts completed collections (/gc/cycles/total:gc-cycles), so a
	// reader can tell whether two live-heap readings come from different collections.
	NameGoGCCycles = "go_gc_cycles_total_gc_cycles_total"
)

// liveHeapRules add NameGoHeapLive and NameGoGCCycles to the Go collector; its default
// series stay as they are.
var liveHeapRules = []collectors.GoRuntimeMetricsRule{
	{Matcher: regexp.MustCompile(`^/gc/heap/live:bytes$`)},
	{Matcher: regexp.MustCompile(`^/gc/cycles/total:gc-cycles$`)},
}

// InvalidKey labels a count of invalid objects: the object's kind ("Service") and the
// reason, the field in error without the annotation prefix or list indexes ("aws-weight").
// Both must come from a bounded set: each distinct pair is a time series kept for the
// life of the process.
type InvalidKey struct{ Kind, Reason string }

// Metrics is the controller's set of metrics. It is safe for concurrent use; the zero
// value is not: use New.
type Metrics struct {
	reg *prometheus.Registry
	now func() time.Time

	records     *prometheus.GaugeVec
	changes     *prometheus.CounterVec
	apiCalls    *prometheus.CounterVec
	duration    prometheus.Histogram
	reconciles  *prometheus.CounterVec
	lastSuccess prometheus.Gauge
	cacheAge    *cacheAges
	invalid     *prometheus.GaugeVec
	conflicts   prometheus.Gauge
	refused     prometheus.Gauge
	leader      prometheus.Gauge

	mu          sync.Mutex // serialises the whole-set updates below
	zones       map[string]bool
	invalidSeen map[InvalidKey]bool
}

// New returns a fresh set of metrics on its own registry, which also carries the Go
// runtime and process collectors (memory, CPU, file descriptors).
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		now: time.Now,
		records: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: NameRecordsManaged,
			Help: "Records the controller keeps in each zone: the desired records its sources asked for at the last reconcile.",
		}, []string{"zone"}),
		changes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameChangesApplied,
			Help: "Record-set changes the DNS provider accepted, by action (create, delete, upsert).",
		}, []string{"action"}),
		apiCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameAPICalls,
			Help: "DNS provider API requests sent, one per attempt (SDK retries included), by operation and result (ok, throttled, error).",
		}, []string{"operation", "result"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    NameReconcileDuration,
			Help:    "How long a reconcile took, from reading the objects to the last batch written.",
			Buckets: ReconcileBuckets,
		}),
		reconciles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameReconciles,
			Help: "Reconciles run, by result (ok, error).",
		}, []string{"result"}),
		lastSuccess: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: NameLastSuccess,
			Help: "When the last reconcile that wrote every zone ended, in Unix seconds; 0 before the first.",
		}),
		cacheAge: &cacheAges{desc: prometheus.NewDesc(NameZoneCacheAge,
			"How long ago each cached zone was listed from the DNS provider: the age of what the zone cache trusts. Zones not cached are absent.",
			[]string{"zone"}, nil)},
		invalid: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: NameInvalidObjects,
			Help: "Problems with source objects found at the last reconcile, by object kind and reason (the field in error); each got a Warning Event and nothing was published for it.",
		}, []string{"kind", "reason"}),
		conflicts: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: NameConflicts,
			Help: "Records not written at the last reconcile because something stands in their way (another owner's record, a pinned weight, a refusal by the provider).",
		}),
		refused: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: NameRefused,
			Help: "Names whose changes the DNS provider refused, or that are held back after a refusal, as of the last reconcile; also counted in " + NameConflicts + ".",
		}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: NameLeader,
			Help: "1 while this replica holds the leader lease (or runs without leader election) and writes, 0 on a standby.",
		}),
		zones:       map[string]bool{},
		invalidSeen: map[InvalidKey]bool{},
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(liveHeapRules...)),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.records, m.changes, m.apiCalls, m.duration, m.reconciles, m.lastSuccess,
		m.cacheAge, m.invalid, m.conflicts, m.refused, m.leader,
	)
	// Series whose label values are known up front start at 0, so that rate() and
	// increase() see the first event rather than a series appearing out of nothing.
	for _, a := range []changes.Action{changes.Create, changes.Delete, changes.Upsert} {
		m.changes.WithLabelValues(actionLabel(a))
	}
	m.reconciles.WithLabelValues(ResultOK)
	m.reconciles.WithLabelValues(ResultError)
	return m
}

// Registry is the registry the metrics live in, for the caller to add its own collectors
// (e.g. client-go's) so one /metrics serves them all.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// ObserveReconcile records one reconcile: its duration, its result, and, when err is
// nil (every zone written), the time of the last success.
func (m *Metrics) ObserveReconcile(d time.Duration, err error) {
	m.duration.Observe(d.Seconds())
	if err != nil {
		m.reconciles.WithLabelValues(ResultError).Inc()
		return
	}
	m.reconciles.WithLabelValues(ResultOK).Inc()
	m.lastSuccess.Set(float64(m.now().UnixNano()) / 1e9)
}

// AddChanges counts changes the provider accepted, by action. Counts of 0 or less are
// ignored.
func (m *Metrics) AddChanges(written map[changes.Action]int) {
	for a, n := range written {
		if n > 0 {
			m.changes.WithLabelValues(actionLabel(a)).Add(float64(n))
		}
	}
}

// actionLabel is an action as the label shows it: "create", "delete", "upsert".
func actionLabel(a changes.Action) string { return strings.ToLower(string(a)) }

// SetRecords sets the records managed in each zone, by zone name. It replaces the last
// call's set: a zone absent from byZone is no longer managed and its series is removed.
func (m *Metrics) SetRecords(byZone map[string]int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.zones = setByZone(m.records, m.zones, nil, byZone)
}

// setByZone sets g's series of each zone in values, keeps those of the zones in keep at
// their last value, removes the series of every other zone in last, and returns the zones
// (as labels) whose series now stand: the next call's last.
func setByZone(g *prometheus.GaugeVec, last map[string]bool, keep []string, values map[string]int) map[string]bool {
	now := make(map[string]bool, len(keep)+len(values))
	for _, z := range keep {
		now[label(z)] = true
	}
	for z, n := range values {
		z = label(z)
		g.WithLabelValues(z).Set(float64(n))
		now[z] = true
	}
	for z := range last {
		if !now[z] {
			g.DeleteLabelValues(z)
		}
	}
	return now
}

// SetInvalid sets the current count of invalid objects by kind and reason. It replaces
// the last call's counts: a key absent from counts drops to 0 (it stays, at 0, so that a
// graph shows the problem fixed rather than a series that stops).
func (m *Metrics) SetInvalid(counts map[InvalidKey]int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := make(map[InvalidKey]int, len(counts))
	for k, n := range counts {
		now[InvalidKey{Kind: label(k.Kind), Reason: label(k.Reason)}] += n
	}
	for k := range m.invalidSeen {
		if _, ok := now[k]; !ok {
			m.invalid.WithLabelValues(k.Kind, k.Reason).Set(0)
		}
	}
	for k, n := range now {
		m.invalid.WithLabelValues(k.Kind, k.Reason).Set(float64(n))
		m.invalidSeen[k] = true
	}
}

// label makes s a valid label value: client_golang panics on one that is not UTF-8, and
// names and annotations reach these labels from objects the controller does not control.
func label(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// SetConflicts sets the current number of conflicts and, among them, of names the
// provider refused (or that are held back after a refusal).
func (m *Metrics) SetConflicts(conflicts, refused int) {
	m.conflicts.Set(float64(conflicts))
	m.refused.Set(float64(refused))
}

// SetLeader says whether this replica writes: it holds the lease, or runs without
// leader election.
func (m *Metrics) SetLeader(leader bool) {
	v := 0.0
	if leader {
		v = 1
	}
	m.leader.Set(v)
}

// SetCacheAges installs the function that reports, by zone, how old each cached zone's
// listing is (e.g. internal/provider/cache's Ages, keyed by zone name). It is called at
// every scrape, so the age keeps growing between reconciles as it does in the cache;
// nil removes the metric's series.
func (m *Metrics) SetCacheAges(ages func() map[string]time.Duration) {
	m.cacheAge.set(ages)
}

// cacheAges is a collector that reads the zone ages at scrape time.
type cacheAges struct {
	desc *prometheus.Desc

	mu   sync.Mutex
	ages func() map[string]time.Duration
}

func (c *cacheAges) set(ages func() map[string]time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ages = ages
}

// Describe implements prometheus.Collector.
func (c *cacheAges) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector.
func (c *cacheAges) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	ages := c.ages
	c.mu.Unlock()
	if ages == nil {
		return
	}
	for zone, age := range ages() {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, age.Seconds(), label(zone))
	}
}
