package controller

import (
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/metrics"
)

// TestMetricsObserverReady: a standby is ready once synced; a leader only after its first
// reconcile; an unsynced watcher's reason is what /readyz says.
func TestMetricsObserverReady(t *testing.T) {
	notSynced := errors.New("services (core) not synced yet")
	for _, tc := range []struct {
		name                string
		synced              error
		leading, reconciled bool
		want                string
	}{
		{name: "standby, synced", want: ""},
		{name: "not synced", synced: notSynced, want: notSynced.Error()},
		{name: "leader before its first reconcile", leading: true, want: "first reconcile not done yet"},
		{name: "leader after it", leading: true, reconciled: true, want: ""},
		{name: "leader, not synced", synced: notSynced, leading: true, reconciled: true, want: notSynced.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := NewMetricsObserver(metrics.New(), nil)
			o.SetLeading(tc.leading)
			if tc.reconciled {
				o.Reconciled(Stats{ZoneNames: map[string]string{}})
			}
			got := ""
			if err := o.Ready(func() error { return tc.synced }); err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("Ready() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestMetricsObserverByName: cache ages are keyed by the names the last reconcile gave the
// zones; a zone it did not name is left out.
func TestMetricsObserverByName(t *testing.T) {
	o := NewMetricsObserver(metrics.New(), nil)
	o.Reconciled(Stats{ZoneNames: map[string]string{"Z1": "example.com"}})
	got := o.ByName(map[string]time.Duration{"Z1": time.Minute, "Z2": time.Second})
	if want := map[string]time.Duration{"example.com": time.Minute}; !maps.Equal(got, want) {
		t.Errorf("ByName = %v, want %v", got, want)
	}
}
