package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// NameDeletionsHeld is the gauge of the deletions the deletion guard held, by zone.
const NameDeletionsHeld = "crossfade_deletions_held"

// DeletionsHeld exports crossfade_deletions_held: how many of this owner's records the
// deletion guard kept in each zone at the last reconcile that planned the zone.
type DeletionsHeld struct {
	gauge *prometheus.GaugeVec

	mu    sync.Mutex
	zones map[string]bool // the zones with a series
}

// NewDeletionsHeld returns the gauge registered on reg (the controller's
// Metrics.Registry()).
func NewDeletionsHeld(reg prometheus.Registerer) (*DeletionsHeld, error) {
	d := &DeletionsHeld{
		gauge: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: NameDeletionsHeld,
			Help: "Deletions of this owner's records the deletion guard held in each zone at the last reconcile that planned it (all, or more than --max-delete-ratio and at least --max-delete-min, of the owner's records there); 0 when none.",
		}, []string{"zone"}),
		zones: map[string]bool{},
	}
	if err := reg.Register(d.gauge); err != nil {
		return nil, err
	}
	return d, nil
}

// Set records a reconcile: zones are the names of every zone reconciled (planned or
// not), held the held deletions of those planned, by name (0 included). A zone in zones
// but not in held could not be listed: it keeps its last count, since a failed listing
// says nothing of it. A zone absent from zones is no longer managed: its series goes.
func (d *DeletionsHeld) Set(zones []string, held map[string]int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.zones = setByZone(d.gauge, d.zones, zones, held)
}
