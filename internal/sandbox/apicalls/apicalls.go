// Package apicalls counts the calls of every AWS API the sandbox serves (Route 53, ELBv2,
// CloudWatch, Cloud Map) in one pair of metrics keyed by operation, so that tests, benchmarks and the
// IAM check read every API's calls in one place.
package apicalls

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Metrics are the shared call counter and latency histogram.
type Metrics struct {
	calls   *prometheus.CounterVec
	latency *prometheus.HistogramVec
}

// New returns the metrics, registered in reg when it is not nil. Every API of one sandbox
// registers in the same registry: the first registers them, the others get the ones it
// already holds.
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: CallsMetric,
			Help: "AWS API calls to the sandbox (Route 53, ELBv2, CloudWatch) by operation and result (ok or the error code).",
		}, []string{"operation", "result"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "crossfade_sandbox_api_call_duration_seconds",
			Help:    "AWS API call latency in the sandbox, injected delay included.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 8),
		}, []string{"operation"}),
	}
	if reg == nil {
		return m, nil
	}
	var err error
	if m.calls, err = register(reg, m.calls); err != nil {
		return nil, err
	}
	if m.latency, err = register(reg, m.latency); err != nil {
		return nil, err
	}
	return m, nil
}

// Observe counts one call of op that ended with result (ok or the error code) after took.
func (m *Metrics) Observe(op, result string, took time.Duration) {
	m.calls.WithLabelValues(op, result).Inc()
	m.latency.WithLabelValues(op).Observe(took.Seconds())
}

// Count returns how many calls of op ended with result.
func (m *Metrics) Count(op, result string) float64 {
	var pb dto.Metric
	if err := m.calls.WithLabelValues(op, result).Write(&pb); err != nil {
		return 0
	}
	return pb.GetCounter().GetValue()
}

func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, fmt.Errorf("register sandbox API call metrics: %w", err)
}
