package controller

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Names of the backoff's series.
const (
	NameReconcileFailures = "crossfade_reconcile_failures_total"
	NameReconcileBackoff  = "crossfade_reconcile_backoff_seconds"
)

// BackoffMetrics exports the backoff after failed reconciles: how many failed, and how
// long the controller waits before the next one. A nil *BackoffMetrics exports nothing.
type BackoffMetrics struct {
	failures prometheus.Counter
	backoff  prometheus.Gauge
}

// NewBackoffMetrics registers the backoff's series on reg.
func NewBackoffMetrics(reg prometheus.Registerer) (*BackoffMetrics, error) {
	m := &BackoffMetrics{
		failures: prometheus.NewCounter(prometheus.CounterOpts{Name: NameReconcileFailures,
			Help: "Reconciles that failed (a zone not listed or not fully written, or Cloud Map failing), each followed by a backoff."}),
		backoff: prometheus.NewGauge(prometheus.GaugeOpts{Name: NameReconcileBackoff,
			Help: "How long the controller waits after its last failed reconcile before the next one, whatever changes meanwhile; 0 once a reconcile succeeds."}),
	}
	for _, c := range []prometheus.Collector{m.failures, m.backoff} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("metrics: reconcile backoff: %w", err)
		}
	}
	return m, nil
}

// failed counts a failed reconcile and shows the wait it is followed by.
func (m *BackoffMetrics) failed(wait time.Duration) {
	if m == nil {
		return
	}
	m.failures.Inc()
	m.backoff.Set(wait.Seconds())
}

// succeeded shows that no backoff is running.
func (m *BackoffMetrics) succeeded() {
	if m == nil {
		return
	}
	m.backoff.Set(0)
}
