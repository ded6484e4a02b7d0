package cloudmap

import (
	"fmt"
	"strings"
	"sync"

	"github.com/aws/smithy-go/middleware"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/crossfade-io/crossfade/internal/metrics"
)

// Metric names, for tests and dashboards.
const (
	NameInstances  = "crossfade_cloudmap_instances"
	NameOperations = "crossfade_cloudmap_operations_total"
	NameAPICalls   = "crossfade_cloudmap_api_calls_total"
	NameConflicts  = "crossfade_cloudmap_conflicts"
	NameRefused    = "crossfade_cloudmap_refused_instances"
)

// Results of an operation in crossfade_cloudmap_operations_total.
const (
	// ResultSuccess: Cloud Map's operation ended SUCCESS.
	ResultSuccess = "success"
	// ResultFail: the operation ended FAIL, or the call was refused as invalid.
	ResultFail = "fail"
	// ResultTimeout: the operation was still pending when the wait ended.
	ResultTimeout = "timeout"
	// ResultError: the call failed otherwise (throttled past the retries, a 5xx, the
	// network): whether it took effect is unknown until the service is listed again.
	ResultError = "error"
)

// Metrics are the Cloud Map publisher's metrics. A nil *Metrics records nothing.
type Metrics struct {
	instances  *prometheus.GaugeVec
	operations *prometheus.CounterVec
	apiCalls   *prometheus.CounterVec
	conflicts  prometheus.Gauge
	refused    prometheus.Gauge

	mu      sync.Mutex
	targets map[Target]bool
}

// NewMetrics registers the publisher's metrics with reg (the controller's registry, so
// that one /metrics serves them with the DNS side's).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		instances: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: NameInstances,
			Help: "Instances this cluster publishes in each Cloud Map service: the ready endpoints of the Services naming it, at the last reconcile.",
		}, []string{"namespace", "service"}),
		operations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameOperations,
			Help: "Instance registrations and deregistrations sent to Cloud Map, by operation (register, deregister) and result (success, fail, timeout, error).",
		}, []string{"operation", "result"}),
		apiCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameAPICalls,
			Help: "Cloud Map API requests sent, one per attempt (SDK retries included), by operation and result (ok, throttled, error).",
		}, []string{"operation", "result"}),
		conflicts: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: NameConflicts,
			Help: "Instances not written at the last reconcile because something stands in their way: another owner's instance holds the id, or Cloud Map refused it.",
		}),
		refused: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: NameRefused,
			Help: "Of " + NameConflicts + ", instances Cloud Map refused (or that are held back after a refusal).",
		}),
		targets: map[Target]bool{},
	}
	for _, c := range []prometheus.Collector{m.instances, m.operations, m.apiCalls, m.conflicts, m.refused} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("cloud map metrics: %w", err)
		}
	}
	for _, op := range []Action{Register, Deregister} {
		for _, r := range []string{ResultSuccess, ResultFail, ResultTimeout, ResultError} {
			m.operations.WithLabelValues(string(op), r)
		}
	}
	return m, nil
}

// APIOption returns an aws-sdk-go-v2 API option that counts every request of the client
// in NameAPICalls, as internal/metrics counts Route 53's: attempts, after the retry loop.
func (m *Metrics) APIOption() func(*middleware.Stack) error {
	return metrics.CountAttempts("crossfadeCloudMapAPICalls", m.apiCalls)
}

func (m *Metrics) operation(a Action, result string) {
	if m != nil {
		m.operations.WithLabelValues(string(a), result).Inc()
	}
}

// set replaces the gauges with one reconcile's numbers; a target no longer published
// loses its series.
func (m *Metrics) set(instances map[Target]int, conflicts, refused int) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := map[Target]bool{}
	for t, n := range instances {
		t = Target{Namespace: label(t.Namespace), Service: label(t.Service)}
		m.instances.WithLabelValues(t.Namespace, t.Service).Set(float64(n))
		now[t] = true
	}
	for t := range m.targets {
		if !now[t] {
			m.instances.DeleteLabelValues(t.Namespace, t.Service)
		}
	}
	m.targets = now
	m.conflicts.Set(float64(conflicts))
	m.refused.Set(float64(refused))
}

// label makes s a valid label value: annotations reach these labels.
func label(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }
