package controller

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// NameDiscoveryErrors counts the discovery calls that failed when a Watcher asked
// whether the cluster serves a CRD-served kind, by API group.
const NameDiscoveryErrors = "crossfade_discovery_errors_total"

// WatchMetrics are a Watcher's collectors; a nil *WatchMetrics records nothing.
type WatchMetrics struct {
	discoveryErrors *prometheus.CounterVec
}

// NewWatchMetrics registers a Watcher's collectors on reg.
func NewWatchMetrics(reg prometheus.Registerer) (*WatchMetrics, error) {
	m := &WatchMetrics{discoveryErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: NameDiscoveryErrors,
		Help: "Discovery calls that failed (other than 404) while looking for the CRD-served kinds the sources read, by API group: while they fail, no record of the group's kinds is deleted.",
	}, []string{"group"})}
	if err := reg.Register(m.discoveryErrors); err != nil {
		return nil, fmt.Errorf("watch metrics: %w", err)
	}
	return m, nil
}

// discoveryError counts one failed discovery call for group.
func (m *WatchMetrics) discoveryError(group string) {
	if m == nil {
		return
	}
	m.discoveryErrors.WithLabelValues(group).Inc()
}
