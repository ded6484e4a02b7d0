package reconciler

import (
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/tools/cache"

	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
)

// Names of the Cutover series.
const (
	// NamePhase is 1 for each Cutover's phase and 0 for the five others.
	NamePhase = "crossfade_cutover_phase"
	// NameWeight is each Cutover's status.weights, by cluster.
	NameWeight = "crossfade_cutover_weight"
)

// phases are the values of crossfade_cutover_phase's phase label: every phase a Cutover's
// status may hold, each exported for every Cutover (the kube-state-metrics convention),
// so that a query for one phase finds a 0 rather than nothing.
var phases = []v1alpha1.Phase{v1alpha1.PhasePending, v1alpha1.PhaseProgressing, v1alpha1.PhasePaused,
	v1alpha1.PhaseCompleted, v1alpha1.PhaseRolledBack, v1alpha1.PhaseFailed}

// cutoverCollector exports the Cutovers of an informer's cache, read at each scrape: the
// series are what the cache holds now, so a deleted Cutover's series go with it, and no
// worker has to keep a gauge in step with its object.
type cutoverCollector struct {
	store         cache.Store
	phase, weight *prometheus.Desc
	log           *slog.Logger
}

// newCutoverCollector returns the collector of the Cutovers in store.
func newCutoverCollector(store cache.Store, log *slog.Logger) *cutoverCollector {
	return &cutoverCollector{store: store, log: log,
		phase: prometheus.NewDesc(NamePhase,
			"Each Cutover's phase (status.phase): 1 for the phase it is in, 0 for the others; all 0 before the controller has written its status.",
			[]string{"namespace", "cutover", "phase"}, nil),
		weight: prometheus.NewDesc(NameWeight,
			"Each Cutover's weights in effect (status.weights), by cluster: the last written and acknowledged.",
			[]string{"namespace", "cutover", "cluster"}, nil),
	}
}

// Describe sends the two descriptors.
func (c *cutoverCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.phase
	ch <- c.weight
}

// Collect sends the series of every Cutover in the cache.
func (c *cutoverCollector) Collect(ch chan<- prometheus.Metric) {
	for _, obj := range c.store.List() {
		co, ok := obj.(*v1alpha1.Cutover)
		if !ok {
			continue
		}
		for _, p := range phases {
			v := 0.0
			if co.Status.Phase == p {
				v = 1
			}
			c.send(ch, co, c.phase, v, string(p))
		}
		for cluster, w := range co.Status.Weights {
			c.send(ch, co, c.weight, float64(w), cluster)
		}
	}
}

// send sends one gauge of co. A label value Prometheus refuses (not UTF-8: a cluster name
// the CRD let through) drops that series alone, logged, rather than fail the whole scrape.
func (c *cutoverCollector) send(ch chan<- prometheus.Metric, co *v1alpha1.Cutover, d *prometheus.Desc, v float64, label string) {
	m, err := prometheus.NewConstMetric(d, prometheus.GaugeValue, v, co.Namespace, co.Name, label)
	if err != nil {
		c.log.Warn("cutover series not exported", "namespace", co.Namespace, "name", co.Name, "label", label, "err", err)
		return
	}
	ch <- m
}

// registerMetrics registers the collector of the Cutovers in store on cfg.Metrics (none
// when it is nil) and returns what unregisters it, so that a stopped Run leaves no series
// of a cache no longer kept up to date. A registry that already has the series (two
// reconcilers on one registry) is an error, not a panic.
func (r *Reconciler) registerMetrics(store cache.Store) (unregister func(), err error) {
	if r.cfg.Metrics == nil {
		return func() {}, nil
	}
	c := newCutoverCollector(store, r.log)
	if err := r.cfg.Metrics.Register(c); err != nil {
		return nil, fmt.Errorf("cutover reconciler: register %s and %s on Config.Metrics (is another reconciler running on this registry?): %w", NamePhase, NameWeight, err)
	}
	return func() { r.cfg.Metrics.Unregister(c) }, nil
}
