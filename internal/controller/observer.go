package controller

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crossfade-io/crossfade/internal/metrics"
)

// MetricsObserver is the Observer a running controller exports its reconciles through:
// each reconcile's numbers go to the metrics, and it keeps what readiness and the zone
// cache's age gauge need (whether this replica leads, whether it has reconciled, the
// zones' names).
type MetricsObserver struct {
	m    *metrics.Metrics
	held *metrics.DeletionsHeld // nil records no held deletions

	leading, reconciled atomic.Bool
	mu                  sync.Mutex
	zoneNames           map[string]string // zone id → name
}

// NewMetricsObserver returns an observer exporting to m and, when not nil, held.
func NewMetricsObserver(m *metrics.Metrics, held *metrics.DeletionsHeld) *MetricsObserver {
	return &MetricsObserver{m: m, held: held}
}

// Reconciled records one reconcile's numbers.
func (o *MetricsObserver) Reconciled(s Stats) {
	s.Record(o.m)
	if o.held != nil {
		s.RecordHeld(o.held)
	}
	o.mu.Lock()
	o.zoneNames = s.ZoneNames
	o.mu.Unlock()
	o.reconciled.Store(true)
}

// SetLeading records whether this replica writes (leader election's callback).
func (o *MetricsObserver) SetLeading(b bool) {
	o.leading.Store(b)
	o.m.SetLeader(b)
}

// Ready is /readyz's check: the objects are synced (synced's error otherwise) and, on the
// leader, the first reconcile is done. A standby is ready, so that a rollout does not wait
// on it.
func (o *MetricsObserver) Ready(synced func() error) error {
	if err := synced(); err != nil {
		return err
	}
	if o.leading.Load() && !o.reconciled.Load() {
		return errors.New("first reconcile not done yet")
	}
	return nil
}

// ByName keys the zone cache's ages (by zone id) by zone name, as the other zone metrics
// are; a zone not reconciled yet is left out.
func (o *MetricsObserver) ByName(ages map[string]time.Duration) map[string]time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make(map[string]time.Duration, len(ages))
	for id, age := range ages {
		if name, ok := o.zoneNames[id]; ok {
			out[name] = age
		}
	}
	return out
}
